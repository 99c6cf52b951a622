/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the last full listing learnt about which keys are the user's own: their fingerprints,
 * and the keygrips in private-keys-v1.d at that moment. While the keygrips are the same, no secret
 * key was added or removed, so a refresh may ask gpg for those fingerprints alone (one short run)
 * instead of the whole-keyring scan that `gpg -K` is. Kept in memory by the keyring watch and in
 * one small file in the state directory, so that a restart can take the short way too.
 *
 * Keygrips come from the directory, not from gpg-agent's KEYINFO --list or HAVEKEY --list: since
 * GnuPG 2.3 those also ask scdaemon for the keys on inserted cards, which starts scdaemon and may
 * make it take a card for itself. The directory is where the agent keeps every key it owns.
 *
 * Does not: list keys (keyring-list.c), or decide when a listing runs (watch-keyring.c).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keyring-roca.h"
#include "types.h"

#define KEYGRIP_HEX 40
/* Beyond these a home always takes the full listing: the cache is for the common case. */
#define KEYRING_GRIPS_MAX 512
#define KEYRING_OWNED_MAX 256
#define KEYRING_OWNED_FILE_MAX (64u * 1024u)
#define KEYRING_RELIED_MAX 64

struct keyring_owned {
	bool valid;
	char home[PATH_MAX];
	size_t n_grips;
	char grips[KEYRING_GRIPS_MAX][KEYGRIP_HEX + 1]; /* upper case, sorted */
	size_t n_fprs;
	char fprs[KEYRING_OWNED_MAX][FPR_HEX_MAX]; /* primaries with a secret part */

	/* Not in the file: [upstream] relied-on-trusted. relied_wanted (in) asks for the keys with
	 * full or ultimate owner trust; they are read again whenever trustdb.gpg's mtime is not
	 * trustdb_mtime_ns (0: never read), and kept here (at most KEYRING_RELIED_MAX). */
	bool relied_wanted;
	int64_t trustdb_mtime_ns;
	size_t n_relied;
	char relied[KEYRING_RELIED_MAX][FPR_HEX_MAX];
	/* Not in the file: the keys an own key certified, as the last scan found them
	 * (keyring-certified.c), listed as relied on while relied_wanted. scan_certified (in) asks
	 * the listing to scan first; the keyring watch decides when (watch-keyring.c). */
	bool scan_certified;
	size_t n_certified;
	char certified[KEYRING_RELIED_MAX][FPR_HEX_MAX];
	/* Not in the file: the ROCA verdicts of the last listing's RSA subkeys (keyring-roca.h). */
	struct keyring_roca roca;
};

/* The keygrips of home/private-keys-v1.d/ *.key, upper case and sorted, into o->grips. A missing
 * directory is none. -E2BIG over KEYRING_GRIPS_MAX; -errno when unreadable. */
int keyring_grips_read(const char *home, struct keyring_owned *o);

/* Whether a and b hold the same keygrips. */
bool keyring_grips_equal(const struct keyring_owned *a, const struct keyring_owned *b);

/* Parses the cache file's bytes into *ret (valid on success). Pure. -EBADMSG on anything that is
 * not exactly what keyring_owned_format() writes, -E2BIG over the bounds. */
int keyring_owned_parse(const uint8_t *p, size_t n, struct keyring_owned *ret);

/* The file's text for o, malloc'd. */
int keyring_owned_format(const struct keyring_owned *o, char **ret, size_t *ret_n);

/* Reads path (missing: -ENOENT) and parses it. */
int keyring_owned_load(const char *path, struct keyring_owned *ret);

/* Writes o to path atomically. */
int keyring_owned_save(const char *path, const struct keyring_owned *o);
