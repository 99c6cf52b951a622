/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A key's published copy against the local one: what the published copy knows that we do not
 * (a revocation), and what it lacks that we have (an owner's later expiry, a subkey, a
 * revocation not sent). Pure: no I/O, no clock; audit.c turns the answers into findings.
 *
 * Does not: fetch, log, or decide levels.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define UPSTREAM_KEYS_MAX 96 /* owned keys and relied-on ones checked in one run */
/* RFC 5321's longest path, 254 characters, and a NUL. */
#define UPSTREAM_MAIL_MAX 255

/* One key's last check: the keyserver's copy, and the Web Key Directory's when there is a mail
 * address to ask it for. */
struct upstream_result {
	char fingerprint[FPR_HEX_MAX];
	bool relied_on; /* from [upstream] relied-on: only a revocation matters */
	char mail[UPSTREAM_MAIL_MAX]; /* whose WKD to ask; "" when none */
	int r; /* 0: published is the keyserver's copy; -ENOENT: not published; other: failed */
	int64_t checked; /* epoch seconds */
	char error[ERROR_TEXT_MAX]; /* why it failed; "" when r is 0 */
	struct key published; /* when r is 0; owned by the result (key_done()) */
	bool wkd_asked; /* the rest only then */
	int wkd_r; /* as r, for the WKD's copy */
	char wkd_error[ERROR_TEXT_MAX];
	struct key wkd; /* when wkd_asked and wkd_r is 0 */
};

void upstream_result_done(struct upstream_result *u);

/* The mail address in a user id ("Name <a@b.example>", or a bare address) into buf: a local
 * part and a domain with a dot, printable ASCII without spaces or '%' (Assuan's escape: the
 * address goes on dirmngr's command line as it is). Pure. Returns whether there is
 * one (buf "" when not). */
bool upstream_uid_mail(const char *uid, char *buf, size_t size);

/*
 * Whether published reveals a revocation that local (NULL: not in the keyring) lacks: of the key,
 * or of a subkey local holds unrevoked. what (may be NULL) says which ("the key", "subkey
 * 0x1234...").
 */
bool upstream_revoked_news(const struct key *local, const struct key *published, char *what,
                           size_t size);

/*
 * Whether published is behind local (an owner's copy): a revocation local has and published
 * lacks, a subkey missing from it, or a subkey whose published expiry comes before the local
 * one. why (may be NULL) says the first such difference.
 */
bool upstream_stale(const struct key *local, const struct key *published, char *why, size_t size);
