/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's memory across restarts: the tokens it has seen (serial, model, card slots, when
 * last seen, highest signature counter), so that "card not seen for 30 days" and "signature
 * counter went down" hold across logins. One JSON file in the state directory
 * ($STATE_DIRECTORY under systemd, else $XDG_STATE_HOME/keyctl), written atomically after token
 * events, coalesced into one write per loop iteration (and one per burst while a write is still
 * under way). The write itself runs on a thread of its own: a slow disk never stalls the loop.
 * It also holds the acknowledged findings (ack-store.h, acks.json beside tokens.json) and saves
 * them when the audit forgot one.
 *
 * Does not: remember keys (the keyring is the truth for those) or notifications (the notifier's).
 */
#pragma once

#include <systemd/sd-event.h>

#include "model.h"

#define STATE_FILE_MAX (1024u * 1024u)

/* Parses a state file's bytes into tokens (present false, error cleared). Pure. Returns the
 * number of tokens (at most TOKENS_MAX) or -EBADMSG/-EMSGSIZE. */
int state_parse(const uint8_t *p, size_t n, struct token *ret, size_t max);

/* Serialises the tokens worth remembering (those with a serial) into a malloc'd string. */
int state_format(const struct token *tokens, size_t n, char **ret);

int state_default_dir(char *buf, size_t size);

struct state;
/* Loads dir/tokens.json into the model (before anything subscribes, so no events), then
 * subscribes to keep it current and starts the writer thread. A missing file is an empty memory;
 * a corrupt one is reported through *ret_error (a sentence; "" when fine) and ignored. The model
 * is read on the loop thread only. */
int state_new(sd_event *e, struct model *m, const char *dir, char *ret_error, size_t errsize,
              struct state **ret);
/* Hands over a change not yet saved and waits until the writer has written everything it was
 * given (so it may block for as long as the disk takes). */
struct state *state_free(struct state *s);
static inline void state_freep(struct state **s)
{
	if (*s)
		state_free(*s);
}
