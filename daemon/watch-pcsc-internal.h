/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the two halves of the PC/SC watcher share: watch-pcsc.c (the loop side) and
 * watch-pcsc-worker.c (the thread in SCardGetStatusChange). Private to those two files.
 */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <winscard.h>

#include "loop-wake.h"
#include "model.h"
#include "path-wait.h"
#include "types.h"
#include "watch-hooks.h"

#define PNP_READER "\\\\?PnP?\\Notification"
#define READERS_MAX 32

enum msg_type {
	MSG_UP, /* context established */
	MSG_SETTLED, /* every card present at the start of this context has been read */
	MSG_DOWN, /* pcscd went away or refused; the worker has ended */
	MSG_CARD, /* a card's token (possibly with an error) */
	MSG_GONE, /* no card in the reader, or the reader is gone */
	MSG_RESCANNED, /* every card present when rescan `seq` was taken has been read again */
};

struct msg {
	struct msg *next;
	enum msg_type type;
	char reader[READER_NAME_MAX];
	struct token token;
	bool was_up; /* DOWN: the context had been established */
	LONG rv; /* DOWN: what ended it */
	uint64_t seq; /* RESCANNED: the rescan request it answers */
};

struct pcsc_watch {
	sd_event *event;
	struct model *model;
	char socket_path[PATH_MAX];
	char gnupghome[PATH_MAX];

	struct loop_wake *wake; /* posted by the worker after each msg */
	struct path_wait socket_wait; /* while pcscd is away */
	sd_event_source *socket_source;
	sd_event_source *retry_source;
	unsigned retries;
	sd_event_source *backoff_source;
	uint64_t backoff_usec; /* the wait before the next attempt; 0: at once */
	struct watch_hooks hooks;
	bool settled; /* the first look is complete, and the hook was told */
	sd_event_source *nudge_source; /* repeats SCardCancel until the worker took a rescan */
	unsigned nudges;

	pthread_t thread;
	bool thread_running;

	pthread_mutex_t lock; /* guards everything below */
	SCARDCONTEXT ctx;
	bool ctx_valid;
	bool stopping;
	bool rescan;
	uint64_t rescan_asked; /* counts pcsc_watch_rescan() calls; the worker answers the last */
	/* Between PrepareForSleep(true) and (false): no read starts. sleep_gen moves at each sleep,
	 * so a read begun before it is known as cut by it. */
	bool asleep;
	unsigned sleep_gen;
	struct msg *queue, **queue_tail;

	/* loop side only: the last rescan whose reads are all done (MSG_RESCANNED) */
	uint64_t rescan_done;
	/* loop side only: readers that have a PC/SC sighting in the model */
	char sighted[READERS_MAX][READER_NAME_MAX];
	size_t n_sighted;
};

/* The worker thread's body (p: the struct pcsc_watch); it posts msgs and ends on MSG_DOWN. */
void *pcsc_worker_main(void *p);
/* Any thread: under w->lock. */
bool pcsc_watch_is_stopping(struct pcsc_watch *w);
