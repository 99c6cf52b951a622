/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the PIV application of a token (NIST SP 800-73-4) over the same abstract APDU
 * transport as card-openpgp.h: SELECT PIV, GET DATA of the CHUID and of the certificate of each
 * key slot (9A 9C 9D 9E, the retired 82-95), then SELECT OpenPGP again, so that the card is left
 * as the OpenPGP read found it. Nothing here needs or sends a PIN: certificates and the CHUID are
 * readable by anyone (SP 800-73-4, 3.1: "always" access), and only SELECT, GET DATA and
 * GET RESPONSE pass card_ins_allowed().
 *
 * card-piv-object.c holds the pure parsers of what the card answers (the 53 wrapper, the CHUID,
 * GET METADATA) and the bounded gzip inflate; card-piv-cert.c turns a certificate's DER into a
 * struct piv_cert with GnuTLS (the one file that includes it).
 *
 * Does not: know PC/SC (card-pcsc.c), decide when the card may be read (watch-pcsc-worker.c),
 * or log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "card-openpgp.h"
#include "types.h"

/* The longest object a PIV GET DATA may answer. A YubiKey stores at most 3052 bytes in one
 * object (yubico-piv-tool's CB_OBJ_MAX); other cards more: ample room. */
#define PIV_OBJECT_MAX 16384
/* A compressed certificate may inflate to no more than this: past it, the slot is in error. */
#define PIV_INFLATE_MAX (64 * 1024)
/* The first and last retired key-management slot (Yubico's "RETIRED1".."RETIRED20"). */
#define PIV_SLOT_RETIRED_FIRST 0x82
#define PIV_SLOT_RETIRED_LAST 0x95

extern const uint8_t card_piv_aid[5];

/* The object tag (5FC1xx) that holds the certificate of a key slot; 0 for another byte. */
uint32_t piv_slot_object(uint8_t slot);

/*
 * Selects PIV and reads the CHUID's expiry and every slot's certificate into *ret (zeroed
 * first). With reselect_openpgp, selects OpenPGP again before returning, also after an error of
 * the card (not after a transport error: the card is gone or reset then). Returns 0 with
 * ret->state PIV_READ_OK (a slot's error is in that slot, the others read), or PIV_READ_NONE
 * when the card has no PIV application; PIV_READ_ERROR with ret->error when the application
 * answered what could not be read; transport errors as they come (ret then holds what was read).
 */
int card_read_piv(const struct card_transport *t, bool reselect_openpgp, struct piv_app *ret);

/* ---- card-piv-object.c: pure parsers of what the card answers ---- */

/* The parts of a certificate object (SP 800-73-4, Table 10: 53 { 70 cert, 71 certinfo, FE }). */
struct piv_cert_object {
	const uint8_t *cert; /* points into the answer */
	size_t cert_len;
	bool compressed; /* certinfo 71 01: the certificate is gzip-compressed */
};

/* The value of the 53 wrapper that a GET DATA answers: -EBADMSG when the answer does not start
 * with tag 53, or its length runs past the answer. */
int piv_parse_wrapper(const uint8_t *p, size_t n, const uint8_t **ret_val, size_t *ret_len);
/* A certificate object (the 53 wrapper included): -EBADMSG when malformed, -ENOENT when it holds
 * no certificate (70 absent or empty: an empty slot some tools leave). */
int piv_parse_cert_object(const uint8_t *p, size_t n, struct piv_cert_object *ret);
/* The CHUID (the 53 wrapper included): *ret_expiry the epoch of its expiration date (tag 35,
 * "YYYYMMDD", the day's start in UTC), 0 when it has none. -EBADMSG when malformed, -ERANGE for
 * a date that does not exist ("00000101", "20230230") or is before 1970 ("00300101"). */
int piv_parse_chuid(const uint8_t *p, size_t n, int64_t *ret_expiry);
/* "YYYYMMDD" (n == 8 digits) to the epoch of that day's start in UTC; -EBADMSG / -ERANGE. */
int piv_parse_date(const uint8_t *p, size_t n, int64_t *ret);

/* What Yubico's GET METADATA (INS F7, firmware >= 5.3) says about a key slot (yubikit's
 * piv.py, SlotMetadata): each field 0 when absent. */
struct piv_metadata {
	uint8_t algorithm; /* 01: 07 RSA-2048, 11 ECC P-256, E0 Ed25519, ... */
	uint8_t pin_policy, touch_policy; /* 02 */
	uint8_t origin; /* 03: 1 generated, 2 imported */
	bool is_default; /* 05 */
	bool has_public_key; /* 04 */
};
/* -EBADMSG when malformed (a field of the wrong size included). */
int piv_parse_metadata(const uint8_t *p, size_t n, struct piv_metadata *ret);
/* The name of a PIV algorithm byte as keyctl shows key algorithms ("rsa2048", "nistp256",
 * "ed25519"); NULL for one it does not know. */
const char *piv_algorithm_name(uint8_t algorithm);

/* gzip (or zlib) data inflated into out: 0 and *ret_len, -EFBIG when it inflates past size,
 * -EBADMSG when it is not compressed data or ends early. */
int piv_inflate(const uint8_t *p, size_t n, uint8_t *out, size_t size, size_t *ret_len);

/* One slot's GET DATA answer (the 53 wrapper included) into *c (slot set by the caller):
 * unwrapped, inflated when compressed, parsed. Returns 0; -ENOENT for an empty object; else the
 * error, with the reason in c->error ("certificate: ..."). */
int piv_read_cert_answer(const uint8_t *p, size_t n, struct piv_cert *c);

/* ---- card-piv-cert.c: the certificate, by GnuTLS ---- */

/* DER into *c's subject, issuer, validity, self_signed and key_algorithm. Returns 0, or
 * -EBADMSG with the reason in c->error (not a certificate, a date that is no date). */
int piv_cert_parse(const uint8_t *der, size_t n, struct piv_cert *c);
