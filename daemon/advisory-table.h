/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Vendors' security advisories about tokens keyctld watches: one row per advisory and product
 * line, with the firmware range as its vendor prints it ("5.0.0" up to but excluding "5.7.0"),
 * which applications and which keys it concerns, what to do, and where it is published. The
 * versions are parsed once, when the table is compiled; a row whose version does not parse is
 * left out and the rest still work. The token-advisory rule (audit-token.c) words the findings.
 *
 * Does not: look at devices, test a key's modulus (ROCA's fingerprint test is a rule of its
 * own, still to come), or know PIV slots (keyctld does not read PIV yet).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* The longest version string: a token's firmware field, NUL excluded. */
#define ADVISORY_VERSION_MAX 15
#define ADVISORY_MODELS_MAX 5
#define ADVISORY_ALGOS_MAX 8

struct advisory_version {
	uint16_t major, minor, patch;
};

/* The applications an advisory concerns (a row's apps). */
#define ADVISORY_APP_OPENPGP 0x1u
#define ADVISORY_APP_PIV 0x2u
#define ADVISORY_APP_FIDO 0x4u /* affected whatever keys it holds: FIDO's own credentials */

#define ADVISORY_SLOT(s) (1u << (s))
#define ADVISORY_SLOTS_ALL \
	(ADVISORY_SLOT(SLOT_SIGN) | ADVISORY_SLOT(SLOT_ENCRYPT) | ADVISORY_SLOT(SLOT_AUTH))

struct advisory_row {
	const char *id; /* "YSA-2024-03" */
	const char *vendor; /* "Yubico" */
	const char *title; /* "Infineon ECDSA side channel (EUCLEAK)" */
	enum token_kind kind;
	/* The products, as keyctld names a token's model (card-usb-table.c, card-usb.c,
	 * card-pcsc.c); NULL after the last. */
	const char *models[ADVISORY_MODELS_MAX + 1];
	const char *from, *before; /* the affected firmware: from <= firmware < before */
	/* The range is the OpenPGP application's own version (Yubico's GET VERSION inside it,
	 * openpgp_card.firmware), not the device's: on a YubiKey NEO the applet's "1.0.9" is not
	 * the device's "3.4.x". */
	bool applet_version;
	/* How a user reads the version keyctld could not: "ykman info". */
	const char *version_check;
	unsigned apps; /* ADVISORY_APP_* */
	/* The OpenPGP keys it concerns, by the start of card_slot.algorithm ("nistp", "rsa");
	 * NULL after the last; none at all: every key. */
	const char *algorithms[ADVISORY_ALGOS_MAX + 1];
	/* ADVISORY_SLOT(): the card slots where such a key is affected; none: no OpenPGP key is,
	 * and a PIV row concerns the PIV application as a whole. */
	unsigned slots;
	/* Only keys generated on the card are affected; keyctld cannot tell a generated key from
	 * an imported one, so the finding says so. */
	bool generated_only;
	const char *remedy; /* what to do, one or two sentences */
	const char *url;
};

/* A row with its versions parsed. */
struct advisory {
	const struct advisory_row *row;
	struct advisory_version from, before;
};

/* Parses "major.minor.patch" from [p, p+n): three decimal numbers of at most 5 digits, no sign,
 * no leading zero, no space. 0, -EBADMSG when malformed, -EMSGSIZE when longer than
 * ADVISORY_VERSION_MAX or a number is above 65535. Pure; never reads past p+n. */
int advisory_version_parse(const uint8_t *p, size_t n, struct advisory_version *ret);
/* The same, of a NUL-terminated string read at most ADVISORY_VERSION_MAX + 1 bytes far. */
int advisory_version_parse_string(const char *s, struct advisory_version *ret);
int advisory_version_cmp(const struct advisory_version *a, const struct advisory_version *b);

/* Called for a row left out of the table: the version that did not parse and why. */
typedef void (*advisory_bad_row_fn)(const struct advisory_row *row, const char *version, int error,
                                    void *userdata);

/* Parses the rows into ret (room for n), in their order, leaving out (and reporting to bad, when
 * not NULL) each row whose versions do not parse or whose range is empty. Returns how many it
 * kept. Pure. */
size_t advisory_compile(const struct advisory_row *rows, size_t n, struct advisory *ret,
                        advisory_bad_row_fn bad, void *userdata);

/* The built-in rows, as written. */
size_t advisory_rows_builtin(const struct advisory_row **ret);
/* The built-in table, compiled at the first call (which logs each row left out, once). */
size_t advisory_builtin(const struct advisory **ret);

enum advisory_match {
	ADVISORY_MATCH_NO,
	ADVISORY_MATCH_YES, /* its product, its firmware in the range */
	ADVISORY_MATCH_UNKNOWN, /* its product, firmware unknown or unreadable */
};

/* Whether a concerns token t: t's kind and model are among the row's products and its firmware
 * (its OpenPGP application's version for an applet_version row) is in the range. A version that
 * is "" or does not parse gives UNKNOWN, never a guess; NO when the model is only the kind's
 * name ("YubiKey"), which names no product without a version. */
enum advisory_match advisory_match(const struct advisory *a, const struct token *t);
/* The card slots (ADVISORY_SLOT()) whose keys a concerns on card c: filled slots, in the row's
 * slots, whose algorithm starts with one of the row's. */
unsigned advisory_slots(const struct advisory *a, const struct openpgp_card *c);
