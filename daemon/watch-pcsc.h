/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches PC/SC readers and cards (pcsc-lite) and reports each reader's card to the model as a
 * PC/SC sighting. The waiting and the card reads run on one worker thread; results reach the
 * sd-event loop through a loop wake (loop-wake.c), so nothing here blocks the loop.
 *
 * Does not: parse card data (card-openpgp.c), talk to gpg-agent itself (card-scd.c), or
 * merge sightings into tokens (model.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "model.h"
#include "types.h"
#include "watch-hooks.h"

struct pcsc_watch;

/* Starts watching. pcscd being absent is not an error: the watcher then waits for its socket
 * (daemon_info.pcsc_available tells which; pcsc_error says why when pcscd refuses us). hooks
 * (may be NULL) learns when the first look is complete: every card present at the first
 * context read, or pcscd found absent or refusing. Returns 0 or -errno. */
int pcsc_watch_new(sd_event *e, struct model *m, const struct watch_hooks *hooks,
                   struct pcsc_watch **ret);
/* Stops the worker thread (SCardCancel) and releases everything. Takes NULL. */
struct pcsc_watch *pcsc_watch_free(struct pcsc_watch *w);
static inline void pcsc_watch_freep(struct pcsc_watch **w)
{
	if (*w)
		pcsc_watch_free(*w);
}

/* Something changed that may let pcscd in again (a token was plugged in): a watcher waiting
 * out its backoff tries at once, and the backoff starts over. */
void pcsc_watch_kick(struct pcsc_watch *w);

/* Re-reads every present card at the next occasion (Reload, resume). *ret_seq (may be NULL)
 * names this request for pcsc_watch_rescanned(). */
int pcsc_watch_rescan(struct pcsc_watch *w, uint64_t *ret_seq);
/* Whether the reads of rescan request seq are done: every card present then has been read
 * again, or there is no PC/SC context to read with. The hooks' rescanned() is called on the loop
 * when this may have become true. */
bool pcsc_watch_rescanned(struct pcsc_watch *w, uint64_t seq);

/* The system is about to sleep (true): no card read starts until it resumes, and a read the
 * sleep cuts is dropped, never reported as an error. Resumed (false): every present card is read
 * again, as if it had been inserted anew, since any may have been swapped meanwhile. */
void pcsc_watch_set_asleep(struct pcsc_watch *w, bool asleep);
