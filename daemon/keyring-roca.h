/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ROCA test (roca.h) of every RSA (sub)key the listing holds: own, tracked and relied-on.
 * gpgme gives no key material, so the moduli come from one more gpg run on the listing's thread,
 * `gpg --with-colons --with-key-data --list-keys FPR...` (its pkd records: the public key's
 * numbers in hex), naming only the keys with an RSA subkey not tested before. A fingerprint is
 * a hash over the key material, so a verdict never changes: the listing keeps them by
 * fingerprint (struct keyring_roca, in keyring_owned) and a keyring whose RSA subkeys were all
 * seen runs nothing more. The colon lines are read as they come, each modulus tested and
 * dropped: keyctld keeps no key material.
 *
 * Why not an export: `gpg --export` of the same keys gives the packets, but then the fingerprint
 * of each key packet must be computed (SHA-1, SHA-256 for v5/v6) to tell which subkey a modulus
 * belongs to, where the colon listing prints it.
 *
 * Does not: list keys (keyring-list.c), decide findings (audit.c's key-roca-weak), or log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "colon-lines.h"
#include "roca.h"
#include "types.h"

/* Verdicts kept between listings; the RSA subkeys beyond are tested at each listing. */
#define KEYRING_ROCA_KNOWN_MAX 1024
/* A pkd line of a 16384-bit modulus is 4,107 bytes; a longer line is skipped. */
#define KEYRING_ROCA_LINE_MAX (2 * ROCA_MODULUS_MAX + 64)

struct roca_verdict {
	char fpr[FPR_HEX_MAX]; /* upper case */
	bool weak;
};

struct keyring_roca {
	size_t n;
	struct roca_verdict known[KEYRING_ROCA_KNOWN_MAX];
};

/* A (sub)key's verdict, as the scan reaches it: fpr is 40 or 64 upper-case hex digits. */
typedef void (*roca_verdict_fn)(void *userdata, const char *fpr, bool weak);

struct key_data_scan {
	roca_verdict_fn fn;
	void *userdata;
	uint8_t line[KEYRING_ROCA_LINE_MAX];
	struct colon_lines lines; /* over line; lines.skipped counts the overlong ones */
	/* The (sub)key being read: RSA (algorithm 1, 2 or 3), its fingerprint once its fpr record
	 * came, its test's outcome once its first pkd record came (-1 before; gpg prints fpr
	 * first, and the other order is read as well), and whether fn heard of it. */
	bool rsa, want_fpr, told;
	char fpr[FPR_HEX_MAX];
	int verdict;
};

void key_data_scan_init(struct key_data_scan *s, roca_verdict_fn fn, void *userdata);
/* Reads the next n bytes of gpg's colon output; chunks may split lines anywhere. Pure: what is
 * not a well-formed line of interest is skipped (and counted). */
void key_data_scan_feed(struct key_data_scan *s, const uint8_t *p, size_t n);
/* The last line, after the last chunk. */
void key_data_scan_finish(struct key_data_scan *s);

/*
 * Sets roca_weak on each RSA subkey of keys: from known for those it holds (known NULL: none),
 * else from one gpg run in home naming their keys' primaries (gpg_path: the listing's gpg;
 * cancel may be NULL). known is then rewritten with this listing's RSA subkeys. Returns 0, or
 * -ECANCELED, -EIO (gpg failed), -ENOMEM: the subkeys not tested stay unmarked and are asked
 * for again at the next listing.
 */
struct keyring_cancel;
int keyring_roca_mark(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                      struct keyring_roca *known, struct key *keys, size_t n_keys);
