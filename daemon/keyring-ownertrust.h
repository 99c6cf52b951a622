/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The owner trust the user gave keys, as `gpg --export-ownertrust` prints it from trustdb.gpg:
 * one "FINGERPRINT:VALUE:" line per key with an owner trust, '#' comments. gpg gives every key it
 * generates ultimate owner trust, so the ultimately trusted keys are where the user's own keys
 * are found without gpg -K's scan over every key (keyring-list.c checks that they are all), and
 * the keys trusted fully or ultimately are the keys the user relies on.
 *
 * Reading it writes nothing: trustdb.gpg is only opened (and not at all when missing, since gpg
 * would create it), and export takes no lock.
 *
 * Does not: list keys, judge validity (keyctl shows none), or log.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* gpg's owner trust levels (trustdb.h TRUST_*), the low four bits of the value. */
#define OWNERTRUST_MARGINAL 4
#define OWNERTRUST_FULLY 5
#define OWNERTRUST_ULTIMATE 6
/* More than any trustdb holds; what is longer is not read as one. */
#define OWNERTRUST_OUTPUT_MAX (2u * 1024u * 1024u)
#define OWNERTRUST_KEYS_MAX 20000

struct ownertrust {
	char fpr[FPR_HEX_MAX]; /* upper case */
	unsigned level; /* OWNERTRUST_*: the value without its flags */
};

/* The lines in p..n whose level is at least min_level, into a malloc'd *ret of *ret_n (NULL when
 * none). Pure. -EBADMSG on any line that is not a comment, empty, or "HEX:DIGITS:" with 40 or 64
 * hex digits; -E2BIG beyond OWNERTRUST_KEYS_MAX lines. */
int ownertrust_parse(const uint8_t *p, size_t n, unsigned min_level, struct ownertrust **ret,
                     size_t *ret_n);

/* Runs gpg_path (the listing context's gpg) --export-ownertrust in home and parses its output as
 * ownertrust_parse() does; cancel (may be NULL) can stop it from another thread. 0 with none when
 * home is NULL or has no trustdb.gpg; -EFBIG past OWNERTRUST_OUTPUT_MAX; -EIO when gpg failed. */
struct keyring_cancel;
int ownertrust_read(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                    unsigned min_level, struct ownertrust **ret, size_t *ret_n);
