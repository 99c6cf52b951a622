/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The published copy of a key, fetched through the user's own dirmngr (so through the keyserver,
 * proxy and Tor settings the user gave GnuPG) and read without importing it (upstream-read.c).
 *
 * Does not: import, write to the keyring, compare, run a thread of its own, or log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "types.h"

/* An answer beyond this is no key anyone publishes on purpose: the transfer is abandoned. */
#define UPSTREAM_DATA_MAX (1024u * 1024u)

/*
 * Asks dirmngr (of home; NULL: the default) `KS_GET -- 0xFPR` and reads the answer. When dirmngr
 * is not running, launch says whether to start it the way GnuPG does (`gpgconf --launch`): not
 * from keyctld.service's sandbox, whose dirmngr would have no network and would then serve the
 * user's own gpg too (dirmngr.socket starts it outside instead). Blocking: runs on a worker thread,
 * whose waiter bounds it (watch-upstream.c). On success *ret holds the published key (key_done()).
 * Returns 0; -ENOENT when the keyserver has no such key; -EMSGSIZE over UPSTREAM_DATA_MAX;
 * -EHOSTDOWN when dirmngr cannot be reached; -EHOSTUNREACH when the keyserver cannot (DNS,
 * routing, connection: err says "could not reach the keyserver", which counts as offline);
 * -ETIMEDOUT; -EBADMSG (not a key) or -EXDEV (another key) from upstream_read_key(); err says
 * which.
 */
int upstream_fetch(const char *home, const char *fpr, bool launch, struct key *ret, char *err,
                   size_t errsize);

/*
 * The same through the Web Key Directory of mail's domain (dirmngr's `WKD_GET -- MAIL`: the
 * https server of openpgpkey.DOMAIN or DOMAIN, as dirmngr finds it) for the key fpr. -ENOENT also
 * when the directory serves keys for mail but not fpr; -EHOSTUNREACH ("could not reach the Web Key
 * Directory of DOMAIN") when it cannot be reached; -EINVAL when mail is no address.
 */
int upstream_fetch_wkd(const char *home, const char *mail, const char *fpr, bool launch,
                       struct key *ret, char *err, size_t errsize);
