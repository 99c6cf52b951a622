/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the OpenPGP card application (OpenPGP card 3.4) over an abstract APDU transport: SELECT,
 * GET DATA, GET RESPONSE chaining, and Yubico's GET VERSION. Read-only by construction: the only
 * instructions this file can send are in card_ins_allowed(). Status words are mapped here
 * (0x6a82 -> -ENOENT, 0x6982 -> -EACCES, other -> -EIO).
 *
 * Does not: know PC/SC (watch-pcsc.c provides the transport), hold transactions, or log.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Longest response we accept for one data object after chaining (extended length max). */
#define CARD_RESPONSE_MAX 4096
#define CARD_APDU_MAX 261

struct card_transport {
	/* The application was selected by the card's owner (scdaemon, through SCD APDU): send
	 * only GET DATA and GET RESPONSE, never SELECT or GET VERSION. */
	bool get_data_only;
	/* Sends one command APDU and receives the response including SW1 SW2. *resp_len is the
	 * capacity on entry and the length on return. Returns 0, or -ENODEV (card removed),
	 * -ECONNRESET (card was reset by someone else), -ETIMEDOUT, -EIO. */
	int (*transmit)(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
	                size_t *resp_len);
	void *userdata;
};

/* True for the read-only instructions keyctl may send: SELECT (A4), GET DATA (CA, CB),
 * GET RESPONSE (C0) and Yubico's GET VERSION (F1). */
bool card_ins_allowed(uint8_t ins);

/* Selects the OpenPGP application and reads everything keyctl shows into *ret (zeroed first).
 * Returns 0 (ret->error may still name an optional DO that was broken); -ENOENT when the card
 * has no OpenPGP application; -EBADMSG when the AID, PW status or fingerprints could not be
 * read; -EIO / -EACCES when the card refused (ret->error says what it answered); transport
 * errors as they come. On failure *ret holds what was read before it. */
int card_read_openpgp(const struct card_transport *t, struct openpgp_card *ret);

/* Sends one command APDU and collects the whole answer: 61xx is followed by GET RESPONSE, 6Cxx is
 * resent once with the Le the card asked for. Refuses (-EPERM, nothing sent) any APDU whose INS
 * is not card_ins_allowed() or whose CLA is not 00. Returns 0 with the data in buf and the final
 * status word in *ret_sw (not mapped: the caller decides what a status means); -EMSGSIZE when
 * the data exceed size; -EBADMSG when the card's answer is not an APDU response; transport
 * errors as they come. */
int card_exchange(const struct card_transport *t, const uint8_t *apdu, size_t n, uint8_t *buf,
                  size_t size, size_t *ret_len, uint16_t *ret_sw);

/* Maps a status word: 9000 -> 0, 6A82/6A88 -> -ENOENT, 6982 -> -EACCES, other -> -EIO. */
int card_sw_to_errno(uint16_t sw);

/* ---- card-do.c: pure parsers of the data objects, exposed for tests and fuzzers ---- */

#define CARD_AID_PREFIX_LEN 6
extern const uint8_t card_openpgp_aid_prefix[CARD_AID_PREFIX_LEN];

/* Which members of 6E were seen, and which of them parsed. */
enum {
	CARD_DO_AID = 1u << 0, /* 4F */
	CARD_DO_PW_STATUS = 1u << 1, /* C4 */
	CARD_DO_FPR = 1u << 2, /* C5 */
	CARD_DO_CREATED = 1u << 3, /* CD */
};
#define CARD_DO_ALGO(slot) (1u << (4 + (slot))) /* C1-C3 */
#define CARD_DO_UIF(slot) (1u << (7 + (slot))) /* D6-D8 */
#define CARD_DO_MANDATORY (CARD_DO_AID | CARD_DO_PW_STATUS | CARD_DO_FPR)
struct card_dos {
	unsigned seen, valid;
};

/* Records the first error in c->error (later ones are its consequences); returns r. */
int card_note_error(struct openpgp_card *c, int r, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
/* Strips the DO's own tag when the answer is exactly one item with that tag. */
void card_unwrap(uint32_t tag, const uint8_t **p, size_t *n);
/* The CARD_DO_* bit of a member of 6E; 0 for any other tag. */
unsigned card_do_bit(uint32_t tag);

/* Each returns 0, or -EBADMSG / -EMSGSIZE with the reason in c->error. */
int card_parse_aid(const uint8_t *p, size_t n, struct openpgp_card *c);
/* True when two OpenPGP AIDs in hex (32 digits) name the same card: RID, application,
 * manufacturer and serial alike; the version and the RFU bytes may differ. GnuPG 2.4 writes
 * the version as 0100 in SERIALNO and in its stubs whatever the card's (Debian 13's gpg 2.4.7:
 * D2760001240100000006876543210000 for a card whose AID has 0304), and the version moves with
 * the firmware while the keys stay. */
bool card_aid_same_card(const char *a, const char *b);
/* 0..15 for a hex digit of either case, else -1. */
int card_hex_digit(uint8_t ch);
/* card_parse_aid() of the AID as n hex digits (scdaemon's SERIALNO): -EBADMSG unless 32 of them. */
int card_parse_aid_hex(const uint8_t *p, size_t n, struct openpgp_card *c);
/* The 8-digit serial inside a full OpenPGP AID in hex (OpenPGP card 3.4, 4.2.1) into buf; NULL
 * when aid is not one. */
const char *card_aid_serial(const char *aid, char buf[static 9]);
/* DO 6E, with or without its outer tag and the 73 wrapper. Unknown tags are skipped; a broken
 * member is noted and the others are still read. dos may be NULL. */
int card_parse_application_data(const uint8_t *p, size_t n, struct openpgp_card *c,
                                struct card_dos *dos);
/* One member of 6E (4F, C1-C5, CD, D6-D8), as found in 6E or asked for on its own; other tags
 * are ignored (0). */
int card_parse_do(uint32_t tag, const uint8_t *p, size_t n, struct openpgp_card *c,
                  struct card_dos *dos);
int card_parse_security_template(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 7A */
int card_parse_cardholder(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 65 */
int card_parse_url(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 5F50 */
/* Algorithm attributes (DO C1-C3, OpenPGP card 3.4, 4.4.3.9) -> GnuPG's name ("rsa2048",
 * "ed25519", "nistp256"; "unknown" for what it does not know). -EBADMSG when empty. */
int card_parse_algorithm(const uint8_t *p, size_t n, char ret[static ALGO_NAME_MAX]);
/* The touch policy of a user interaction flag (D6-D8); TOUCH_UNKNOWN for a byte no spec
 * defines yet. Both read paths use it. */
enum touch_policy card_touch_from_uif(const uint8_t *p, size_t n);

/* ---- card-manufacturer.c ---- */

/* GnuPG's name for an OpenPGP card manufacturer id; "unknown" when it has none. */
const char *card_manufacturer_name(uint16_t id);
/* The name as shown: card_manufacturer_name(), or "unknown (0xNNNN)". */
void card_manufacturer_format(uint16_t id, char *ret, size_t size);
