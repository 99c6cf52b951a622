/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tells when an OpenPGP card waits for a touch (doc/touch.md, section 3): gpg-agent opening the
 * key stub of a slot whose touch policy asks for one (inotify on private-keys-v1.d), confirmed
 * by a probe of scdaemon's own socket (`GETINFO card_list`, which waits while an operation holds
 * the card and sends the card nothing) still waiting after 300 ms while no pinentry runs for the
 * agent. Sets and clears the token's touch_pending in the model.
 *
 * Does not: send an APDU, start gpg-agent or scdaemon, send LEARN, keep a connection open, or
 * wake up while no key stub is opened.
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "model.h"

struct touch_openpgp;

/* Watches gnupghome/private-keys-v1.d (gnupghome "": gpg's default home). A directory that does
 * not exist yet is watched from the next touch_openpgp_rewatch(). Returns 0 or -errno. */
int touch_openpgp_new(sd_event *e, struct model *m, const char *gnupghome,
                      struct touch_openpgp **ret);
struct touch_openpgp *touch_openpgp_free(struct touch_openpgp *t);
static inline void touch_openpgp_freep(struct touch_openpgp **t)
{
	if (*t)
		touch_openpgp_free(*t);
}

/* After a keyring change: watches private-keys-v1.d again if it was missing or replaced. */
void touch_openpgp_rewatch(struct touch_openpgp *t);
