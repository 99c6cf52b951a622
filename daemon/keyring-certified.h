/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keys the user certified with one of their own keys ([upstream] relied-on-trusted): a key
 * the user signed is a key they vouched for, so its revocation upstream concerns them. Found in
 * two gpg runs. `gpg --fast-list-mode --list-sigs` over the whole keyring names the candidates
 * (0.6 s at 10,000 keys) but checks no signature, so anyone can claim an issuer; `--check-sigs`
 * over the candidates alone (at most CERTIFIED_MAX) keeps those whose certification gpg verifies.
 * A scan over every signature of every key is too slow for each listing: watch-keyring.c asks for
 * one, rate-limited, and keyring-list.c runs it before the listing that names what it found.
 *
 * The output is read as it comes, line by line, never whole: a keyring with flooded keys prints
 * hundreds of megabytes, and keyctld's memory must not follow it.
 *
 * Does not: list keys (keyring-list.c), judge validity, write the trustdb (gpg runs with
 * --trust-model=always), or log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "colon-lines.h"
#include "types.h"

/* The newest certifications are kept beyond this many keys: what the user signed lately. */
#define CERTIFIED_MAX 64
/* gpg's colon lines of keys and signatures are far shorter; a longer one is skipped. */
#define CERTIFIED_LINE_MAX 4096
#define CERTIFIED_OWN_MAX 256

struct certified {
	char fpr[FPR_HEX_MAX]; /* upper case, the certified key's primary */
	int64_t when; /* the newest standing certification by an own key */
};

struct certified_scan {
	/* In. */
	const char (*own)[FPR_HEX_MAX]; /* the user's primary fingerprints (certify-capable) */
	size_t n_own;
	int64_t now; /* certifications that expired before it do not count */
	bool verified_only; /* --check-sigs output: only signatures gpg marks good ('!') count */
	/* The line being gathered across chunks; lines.skipped counts the overlong ones. */
	uint8_t line[CERTIFIED_LINE_MAX];
	struct colon_lines lines;
	/* The key and user id being read. */
	char key_fpr[FPR_HEX_MAX];
	char key_id[17];
	bool want_fpr, in_uid;
	int64_t uid_sig, uid_rev, key_best;
	/* Out: the CERTIFIED_MAX keys with the newest certifications, in no order. */
	struct certified found[CERTIFIED_MAX];
	size_t n_found;
};

/* Ready to read: own (n_own at most CERTIFIED_OWN_MAX) must outlive the scan. */
void certified_scan_init(struct certified_scan *s, const char (*own)[FPR_HEX_MAX], size_t n_own,
                         int64_t now, bool verified_only);

/* Reads the next n bytes of gpg's colon output; chunks may split lines anywhere. Pure. Returns 0:
 * what is not a line of interest, or not well-formed, is skipped (and counted). */
int certified_scan_feed(struct certified_scan *s, const uint8_t *p, size_t n);

/* The last line and key, after the last chunk. */
void certified_scan_finish(struct certified_scan *s);

/* Runs both gpg passes in home and leaves the keys whose own-key certification gpg verified in
 * ret (at most CERTIFIED_MAX), newest first. cancel (may be NULL) can stop gpg from another
 * thread; gpg_path is the listing context's gpg. -ECANCELED; -EIO when gpg failed; -ENOENT
 * without a gpg. */
struct keyring_cancel;
int certified_read(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                   const char (*own)[FPR_HEX_MAX], size_t n_own, int64_t now,
                   struct certified ret[static CERTIFIED_MAX], size_t *ret_n);
