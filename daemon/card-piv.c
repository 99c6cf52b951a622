/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads the PIV application through a struct card_transport: SELECT PIV (A0 00 00 03 08), GET DATA
 * of the CHUID (5FC102) and of each slot's certificate object (SP 800-73-4 Part 1, Table 3: 9A
 * 5FC105, 9C 5FC10A, 9D 5FC10B, 9E 5FC101, retired 82-95 5FC10D-5FC120), then SELECT OpenPGP
 * again. An empty slot answers 6A82 and is skipped; a broken one gets its error and the rest are
 * read. card-piv-object.c and card-piv-cert.c turn the bytes into struct piv_app.
 *
 * Does not: send anything that is not in card_ins_allowed() (no VERIFY, never a PIN), know PC/SC,
 * hold transactions, retry, or log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "card-piv.h"

#define SW_OK 0x9000

const uint8_t card_piv_aid[5] = { 0xa0, 0x00, 0x00, 0x03, 0x08 };

/* The slots in the order shown: the four of SP 800-73-4, then the retired ones. */
static const uint8_t slots[] = { 0x9a, 0x9c, 0x9d, 0x9e, 0x82, 0x83, 0x84, 0x85,
	                         0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d,
	                         0x8e, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95 };

uint32_t piv_slot_object(uint8_t slot)
{
	switch (slot) {
	case 0x9a:
		return 0x5fc105;
	case 0x9c:
		return 0x5fc10a;
	case 0x9d:
		return 0x5fc10b;
	case 0x9e:
		return 0x5fc101;
	default:
		if (slot >= PIV_SLOT_RETIRED_FIRST && slot <= PIV_SLOT_RETIRED_LAST)
			return 0x5fc10d + (uint32_t)(slot - PIV_SLOT_RETIRED_FIRST);
		return 0;
	}
}

static int select_aid(const struct card_transport *t, const uint8_t *aid, size_t n,
                      uint16_t *ret_sw)
{
	uint8_t apdu[5 + 16 + 1] = { 0x00, 0xa4, 0x04, 0x00, (uint8_t)n };
	uint8_t buf[CARD_RESPONSE_MAX];
	size_t len;

	memcpy(apdu + 5, aid, n);
	apdu[5 + n] = 0x00;
	return card_exchange(t, apdu, 5 + n + 1, buf, sizeof(buf), &len, ret_sw);
}

/* GET DATA of one object: `00 CB 3F FF 05 5C 03 5F C1 xx 00`, longer answers as 61xx. */
static int get_object(const struct card_transport *t, uint32_t object, uint8_t *buf, size_t size,
                      size_t *ret_len, uint16_t *ret_sw)
{
	const uint8_t apdu[] = { 0x00,
		                 0xcb,
		                 0x3f,
		                 0xff,
		                 0x05,
		                 0x5c,
		                 0x03,
		                 (uint8_t)(object >> 16),
		                 (uint8_t)(object >> 8),
		                 (uint8_t)object,
		                 0x00 };

	return card_exchange(t, apdu, sizeof(apdu), buf, size, ret_len, ret_sw);
}

static void note(struct piv_app *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct piv_app *a, const char *fmt, ...)
{
	va_list ap;

	if (a->error[0])
		return; /* the first says most; the rest are read anyway */
	va_start(ap, fmt);
	vsnprintf(a->error, sizeof(a->error), fmt, ap);
	va_end(ap);
}

static int read_chuid(const struct card_transport *t, uint8_t *buf, struct piv_app *a)
{
	size_t len;
	uint16_t sw;
	int r;

	r = get_object(t, 0x5fc102, buf, PIV_OBJECT_MAX, &len, &sw);
	if (r == -EMSGSIZE || r == -EBADMSG) {
		note(a, "CHUID: answer too long or in endless pieces");
		return 0;
	}
	if (r < 0 || sw != SW_OK)
		return r; /* no CHUID (6A82): nothing to say */
	r = piv_parse_chuid(buf, len, &a->chuid_expiry);
	if (r == -ERANGE)
		note(a, "CHUID: expiration date (tag 35) is not a date");
	else if (r < 0)
		note(a, "CHUID: malformed (a length runs past its %zu bytes)", len);
	return 0;
}

/* One slot: a certificate or an error goes into the next entry; an empty slot adds nothing. */
static int read_slot(const struct card_transport *t, uint8_t slot, uint8_t *buf, struct piv_app *a)
{
	struct piv_cert *c = &a->certs[a->n_certs];
	size_t len;
	uint16_t sw;
	int r;

	memset(c, 0, sizeof(*c));
	snprintf(c->slot, sizeof(c->slot), "%02x", slot);
	r = get_object(t, piv_slot_object(slot), buf, PIV_OBJECT_MAX, &len, &sw);
	if (r == -EMSGSIZE || r == -EBADMSG)
		snprintf(c->error, sizeof(c->error), "answer %s",
		         r == -EMSGSIZE ? "longer than 16 KiB" : "in pieces that never end");
	else if (r < 0)
		return r;
	else if (sw == 0x6a82 || sw == 0x6a88)
		return 0; /* empty slot */
	else if (sw != SW_OK)
		snprintf(c->error, sizeof(c->error), "GET DATA answered %04X", sw);
	else if (piv_read_cert_answer(buf, len, c) == -ENOENT)
		return 0; /* an object without a certificate: empty too */
	if (c->error[0]) {
		/* Nothing half-read is shown beside an error. */
		char error[sizeof(c->error)];

		memcpy(error, c->error, sizeof(error));
		memset(c, 0, sizeof(*c));
		snprintf(c->slot, sizeof(c->slot), "%02x", slot);
		memcpy(c->error, error, sizeof(error));
	}
	a->n_certs++;
	return 0;
}

static int read_application(const struct card_transport *t, struct piv_app *ret)
{
	_cleanup_(freep) uint8_t *buf = malloc(PIV_OBJECT_MAX);
	uint16_t sw;
	int r;

	if (!buf)
		return -ENOMEM;
	r = select_aid(t, card_piv_aid, sizeof(card_piv_aid), &sw);
	if (r < 0)
		return r;
	if (sw == 0x6a82 || sw == 0x6a88)
		return 0; /* no PIV application: state stays none */
	if (sw != SW_OK) {
		ret->state = PIV_READ_ERROR;
		snprintf(ret->error, sizeof(ret->error), "SELECT PIV answered %04X", sw);
		return 0;
	}
	ret->state = PIV_READ_OK;
	r = read_chuid(t, buf, ret);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(slots) && ret->n_certs < PIV_CERTS_MAX; i++) {
		r = read_slot(t, slots[i], buf, ret);
		if (r < 0)
			return r;
	}
	return 0;
}

int card_read_piv(const struct card_transport *t, bool reselect_openpgp, struct piv_app *ret)
{
	uint16_t sw;
	int r, q;

	memset(ret, 0, sizeof(*ret));
	if (t->get_data_only)
		return -EPERM; /* the application is its owner's to select */
	r = read_application(t, ret);
	if (r < 0 && r != -ENOMEM)
		return r; /* gone or reset: nothing to select again */
	if (reselect_openpgp) {
		/* As the OpenPGP read left it: scdaemon finds OpenPGP selected, as it does when
		 * keyctld reads no PIV (card-openpgp.c, openpgp_selected). */
		q = select_aid(t, card_openpgp_aid_prefix, CARD_AID_PREFIX_LEN, &sw);
		if (q < 0)
			return q;
		if (sw != SW_OK && r >= 0)
			note(ret, "SELECT OpenPGP after the PIV read answered %04X", sw);
	}
	return r;
}
