/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the OpenPGP card application (OpenPGP card 3.4) over an abstract APDU transport: SELECT,
 * GET DATA, GET RESPONSE chaining, and Yubico's GET VERSION. Read-only by construction: the only
 * instructions this file can send are in card_ins_allowed(). Status words are mapped here
 * (0x6a82 -> -ENOENT, 0x6982 -> -EACCES, other -> -EIO).
 *
 * Does not: know PC/SC (pcsc-watch.c provides the transport), hold transactions, or log.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Longest response we accept for one data object after chaining (extended length max). */
#define CARD_RESPONSE_MAX 4096
#define CARD_APDU_MAX 261

struct card_transport {
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
 * Returns 0; -ENOENT when the card has no OpenPGP application; -EBADMSG on malformed data;
 * transport errors as they come. On failure *ret holds what was read before it. */
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

/* Pure parsers, exposed for tests and fuzzers. */
int card_parse_aid(const uint8_t *p, size_t n, struct openpgp_card *c);
int card_parse_application_data(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 6E */
int card_parse_security_template(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 7A */
int card_parse_cardholder(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 65 */
int card_parse_url(const uint8_t *p, size_t n, struct openpgp_card *c); /* DO 5F50 */
/* Algorithm attributes (DO C1-C3, OpenPGP card 3.4, 4.4.3.9) -> GnuPG's name ("rsa2048",
 * "ed25519", "nistp256"; "unknown" for what it does not know). -EBADMSG when empty. */
int card_parse_algorithm(const uint8_t *p, size_t n, char ret[static ALGO_NAME_MAX]);
/* GnuPG's name for an OpenPGP card manufacturer id; "unknown" when it has none. */
const char *card_manufacturer_name(uint16_t id);
