/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parsers of the OpenPGP card's data objects (OpenPGP card 3.4, 4.4): the AID (4F),
 * application related data (6E, with or without its outer tag, with or without the 73 wrapper),
 * each of its members on its own (C1-C5, CD, D6-D8, as old cards answer them one by one), the
 * security support template (7A, or a bare 93), cardholder data (65) and the URL (5F50).
 *
 * Real cards differ from the spec's happy path (tests/data/cards/README.md lists what each
 * taught us), so the rule here is: unknown tags are skipped, a broken member is noted in
 * c->error and the others are still read; only the caller decides what is mandatory.
 *
 * Does not: send APDUs (card-openpgp.c), allocate, or log.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "card-openpgp.h"
#include "card-tlv.h"

#define AID_LEN 16
#define FPR_LEN_V4 20
#define FPR_LEN_V5 32
/* 6E > 73 > C5 is as deep as a card nests; a 6E inside a 6E (seen when a card wraps twice) is
 * one more. */
#define CONTAINER_DEPTH_MAX 3

/* OpenPGP card 3.4, 4.2.1: RID D2 76 00 01 24, application 01. */
const uint8_t card_openpgp_aid_prefix[CARD_AID_PREFIX_LEN] = { 0xd2, 0x76, 0x00, 0x01, 0x24, 0x01 };

int card_note_error(struct openpgp_card *c, int r, const char *fmt, ...)
{
	va_list ap;

	/* The first error is the cause; later ones are usually its consequences. */
	if (!c->error[0]) {
		va_start(ap, fmt);
		vsnprintf(c->error, sizeof(c->error), fmt, ap);
		va_end(ap);
	}
	return r;
}

/* Cards differ in whether GET DATA answers with the DO's own tag around the value (6E 82 01 37
 * ...) or with the bare value; accept both, unwrapping only an exact single wrapper. */
void card_unwrap(uint32_t tag, const uint8_t **p, size_t *n)
{
	struct tlv_cursor c;
	const uint8_t *val;
	size_t len;
	uint32_t t;

	tlv_init(&c, *p, *n);
	if (tlv_next(&c, &t, &val, &len) <= 0 || t != tag || c.left != 0)
		return;
	*p = val;
	*n = len;
}

int card_hex_digit(uint8_t ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	return -1;
}

static void hex_upper(const uint8_t *p, size_t n, char *ret)
{
	static const char digits[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		ret[2 * i] = digits[p[i] >> 4];
		ret[2 * i + 1] = digits[p[i] & 0xf];
	}
	ret[2 * n] = 0;
}

int card_parse_aid(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	card_unwrap(0x4f, &p, &n);
	/* OpenPGP card 3.4, 4.2.1: RID(5) PIX(11) = app(1) version(2) manufacturer(2) serial(4)
	 * RFU(2). The RFU bytes are not checked: SmartPGP sets them. */
	if (n != AID_LEN ||
	    memcmp(p, card_openpgp_aid_prefix, sizeof(card_openpgp_aid_prefix)) != 0)
		return card_note_error(c, -EBADMSG, "4F: not an OpenPGP AID (%zu bytes)", n);

	hex_upper(p, n, c->aid);
	snprintf(c->version, sizeof(c->version), "%u.%u", p[6], p[7]);
	c->manufacturer_id = (uint16_t)(p[8] << 8 | p[9]);
	card_manufacturer_format(c->manufacturer_id, c->manufacturer, sizeof(c->manufacturer));
	/* GnuPG prints the four serial bytes as hex; Yubico stores its decimal serial as BCD, so a
	 * YubiKey's serial reads the same in both. */
	hex_upper(p + 10, 4, c->serial);
	return 0;
}

struct curve {
	const char *name;
	uint8_t oid_len;
	uint8_t oid[10];
};

/* DER contents of the curve OIDs (RFC 6637, RFC 8410, draft-ietf-openpgp-crypto-refresh),
 * named as GnuPG names them. */
static const struct curve curves[] = {
	{ "nistp256", 8, { 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07 } },
	{ "nistp384", 5, { 0x2b, 0x81, 0x04, 0x00, 0x22 } },
	{ "nistp521", 5, { 0x2b, 0x81, 0x04, 0x00, 0x23 } },
	{ "secp256k1", 5, { 0x2b, 0x81, 0x04, 0x00, 0x0a } },
	{ "brainpoolP256r1", 9, { 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x07 } },
	{ "brainpoolP384r1", 9, { 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x0b } },
	{ "brainpoolP512r1", 9, { 0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01, 0x0d } },
	{ "ed25519", 9, { 0x2b, 0x06, 0x01, 0x04, 0x01, 0xda, 0x47, 0x0f, 0x01 } },
	{ "cv25519", 10, { 0x2b, 0x06, 0x01, 0x04, 0x01, 0x97, 0x55, 0x01, 0x05, 0x01 } },
	{ "ed448", 3, { 0x2b, 0x65, 0x71 } },
	{ "cv448", 3, { 0x2b, 0x65, 0x6f } },
};

static const char *curve_name(const uint8_t *oid, size_t n)
{
	for (size_t i = 0; i < ELEMENTSOF(curves); i++)
		if (curves[i].oid_len == n && memcmp(curves[i].oid, oid, n) == 0)
			return curves[i].name;
	return NULL;
}

int card_parse_algorithm(const uint8_t *p, size_t n, char ret[static ALGO_NAME_MAX])
{
	const char *name;

	if (n == 0)
		return -EBADMSG;

	switch (p[0]) {
	case 0x01: /* RSA: modulus bits(2) exponent bits(2) import format(1) */
		if (n < 3)
			return -EBADMSG;
		snprintf(ret, ALGO_NAME_MAX, "rsa%u", (unsigned)(p[1] << 8 | p[2]));
		return 0;
	case 0x12: /* ECDH */
	case 0x13: /* ECDSA */
	case 0x16: /* EdDSA */
		/* OID contents, then optionally FF: "import with public key" (4.4.3.9). */
		name = curve_name(p + 1, n - 1);
		if (!name && n > 2 && p[n - 1] == 0xff)
			name = curve_name(p + 1, n - 2);
		strcpy_trunc(ret, ALGO_NAME_MAX, name ? name : "unknown");
		return 0;
	default:
		strcpy_trunc(ret, ALGO_NAME_MAX, "unknown");
		return 0;
	}
}

enum touch_policy card_touch_from_uif(const uint8_t *p, size_t n)
{
	/* OpenPGP card 3.4, 4.4.3.6: first byte of D6-D8; the second is the button's features. A
	 * policy byte of a later spec is "unknown" on both read paths, never a failed read. */
	if (n == 0)
		return TOUCH_UNKNOWN;
	switch (p[0]) {
	case 0x00:
		return TOUCH_OFF;
	case 0x01:
		return TOUCH_ON;
	case 0x02:
		return TOUCH_FIXED;
	case 0x03:
		return TOUCH_CACHED;
	case 0x04:
		return TOUCH_CACHED_FIXED;
	default:
		return TOUCH_UNKNOWN;
	}
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Fingerprints (4.4.3.7): 20 bytes (v4) or 32 (v5) per slot, three slots, or four where the
 * card keeps an attestation key (YubiKey >= 5.2: C5 is 80 bytes). All zero: an empty slot. */
static int parse_fingerprints(const uint8_t *v, size_t len, struct openpgp_card *c)
{
	size_t fl;

	if (len % FPR_LEN_V4 == 0 && (len / FPR_LEN_V4 == 3 || len / FPR_LEN_V4 == 4))
		fl = FPR_LEN_V4;
	else if (len % FPR_LEN_V5 == 0 && (len / FPR_LEN_V5 == 3 || len / FPR_LEN_V5 == 4))
		fl = FPR_LEN_V5;
	else
		return card_note_error(c, -EBADMSG, "C5: %zu bytes, not 3 or 4 fingerprints", len);
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const uint8_t *f = v + s * fl;

		if (all_zero(f, fl))
			c->slots[s].fingerprint[0] = 0;
		else
			hex_upper(f, fl, c->slots[s].fingerprint);
	}
	c->key_slots = (uint8_t)(len / fl);
	return 0;
}

/* Generation times (4.4.3.8): big-endian 4-byte epoch seconds, one per slot (3, or 4). */
static int parse_times(const uint8_t *v, size_t len, struct openpgp_card *c)
{
	if (len != 3 * 4 && len != 4 * 4)
		return card_note_error(c, -EBADMSG, "CD: %zu bytes, not 3 or 4 dates", len);
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const uint8_t *q = v + 4 * s;

		c->slots[s].created = (int64_t)((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
		                                (uint32_t)q[2] << 8 | q[3]);
	}
	return 0;
}

unsigned card_do_bit(uint32_t tag)
{
	switch (tag) {
	case 0x4f:
		return CARD_DO_AID;
	case 0xc4:
		return CARD_DO_PW_STATUS;
	case 0xc5:
		return CARD_DO_FPR;
	case 0xcd:
		return CARD_DO_CREATED;
	case 0xc1:
	case 0xc2:
	case 0xc3:
		return CARD_DO_ALGO(tag - 0xc1);
	case 0xd6:
	case 0xd7:
	case 0xd8:
		return CARD_DO_UIF(tag - 0xd6);
	default:
		return 0;
	}
}

int card_parse_do(uint32_t tag, const uint8_t *p, size_t n, struct openpgp_card *c,
                  struct card_dos *dos)
{
	unsigned bit = card_do_bit(tag);
	int r = 0;

	switch (tag) {
	case 0x4f:
		r = card_parse_aid(p, n, c);
		break;
	case 0xc1:
	case 0xc2:
	case 0xc3:
		r = card_parse_algorithm(p, n, c->slots[tag - 0xc1].algorithm);
		if (r < 0)
			card_note_error(c, r, "%02X: empty algorithm attributes", tag);
		break;
	case 0xc4:
		/* PW status bytes (4.4.3.5): validity, 3 max lengths, then retries of PW1, RC,
		 * PW3. Some cards send 0xFF as the first byte: it is not looked at. */
		if (n < 7)
			r = card_note_error(c, -EBADMSG, "C4: %zu bytes, not 7", n);
		else
			memcpy(c->pin_retries, p + 4, 3);
		break;
	case 0xc5:
		r = parse_fingerprints(p, n, c);
		break;
	case 0xcd:
		r = parse_times(p, n, c);
		break;
	case 0xd6:
	case 0xd7:
	case 0xd8:
		c->slots[tag - 0xd6].touch = card_touch_from_uif(p, n);
		break;
	default:
		return 0; /* not ours: 5F52, 7F66, 7F74, C0, C6, D9, DA, DE, later specs' DOs */
	}
	dos->seen |= bit;
	if (r == 0)
		dos->valid |= bit;
	return r;
}

/* The tag at p (after padding), as hex, for an error message about an item that is not
 * well-formed; and for the containers we descend into, the value that is there when its
 * length runs past the end. */
static uint32_t broken_item(const uint8_t *p, size_t n, const uint8_t **ret_val, size_t *ret_len)
{
	size_t i = 0, len;
	uint32_t tag;

	while (i < n && (p[i] == 0x00 || p[i] == 0xff))
		i++;
	if (i >= n)
		return 0;
	tag = p[i++];
	if ((tag & 0x1f) == 0x1f && i < n)
		tag = tag << 8 | p[i++];
	*ret_val = NULL;
	*ret_len = 0;
	if (i >= n)
		return tag;
	len = p[i++];
	if (len == 0x81 && i < n)
		len = p[i++];
	else if (len == 0x82 && i + 1 < n) {
		len = (size_t)p[i] << 8 | p[i + 1];
		i += 2;
	} else if (len >= 0x80)
		return tag;
	if (len > n - i) {
		*ret_val = p + i;
		*ret_len = n - i;
	}
	return tag;
}

static bool is_container(uint32_t tag)
{
	return tag == 0x6e || tag == 0x73;
}

static int walk(const uint8_t *p, size_t n, uint32_t parent, unsigned depth, struct openpgp_card *c,
                struct card_dos *dos)
{
	struct tlv_cursor cur;
	const uint8_t *v;
	size_t len;
	uint32_t tag;
	int r, ret = 0;

	tlv_init(&cur, p, n);
	for (;;) {
		size_t at = n - cur.left;

		r = tlv_next(&cur, &tag, &v, &len);
		if (r == 0)
			return ret;
		if (r < 0) {
			tag = broken_item(p + at, n - at, &v, &len);
			card_note_error(c, -EBADMSG,
			                "%02X: the item at byte %zu (tag %02X) runs "
			                "past its end",
			                parent, at, tag);
			/* A truncated 6E or 73 still holds whole members before the cut. */
			if (is_container(tag) && v && depth < CONTAINER_DEPTH_MAX)
				(void)walk(v, len, tag, depth + 1, c, dos);
			return -EBADMSG;
		}
		if (is_container(tag)) {
			if (depth >= CONTAINER_DEPTH_MAX)
				return card_note_error(c, -EBADMSG, "6E: nested too deep");
			if (walk(v, len, tag, depth + 1, c, dos) < 0)
				ret = -EBADMSG;
			continue;
		}
		if (card_parse_do(tag, v, len, c, dos) < 0)
			ret = -EBADMSG;
	}
}

int card_parse_application_data(const uint8_t *p, size_t n, struct openpgp_card *c,
                                struct card_dos *dos)
{
	struct card_dos ignored = {};

	if (!dos)
		dos = &ignored;
	/* With or without its outer tag (Nitrokey Pro and ZeitControl 2.x answer without), with
	 * or without the 73 wrapper (old YubiKeys): every member is looked for where it is. */
	return walk(p, n, 0x6e, 0, c, dos);
}

int card_parse_security_template(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	const uint8_t *v;
	size_t len;
	int r;

	/* 4.4.1: 93 is the digital signature counter, 3 bytes; some cards answer a bare 93. */
	card_unwrap(0x7a, &p, &n);
	r = tlv_find_recursive(p, n, 0x93, &v, &len);
	if (r < 0)
		return card_note_error(c, r, "7A: malformed TLV");
	if (r == 0)
		return card_note_error(c, -EBADMSG, "7A: no signature counter (93)");
	if (len != 3)
		return card_note_error(c, -EBADMSG, "7A: signature counter of %zu bytes, not 3",
		                       len);
	c->signature_counter = (uint32_t)v[0] << 16 | (uint32_t)v[1] << 8 | v[2];
	return 0;
}

/* Length of the UTF-8 sequence at p, or 0 when it is not valid UTF-8. */
static size_t utf8_sequence(const uint8_t *p, size_t left)
{
	size_t k;
	uint32_t cp, min;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0) {
		k = 2;
		cp = p[0] & 0x1f;
		min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		k = 3;
		cp = p[0] & 0x0f;
		min = 0x800;
	} else if ((p[0] & 0xf8) == 0xf0) {
		k = 4;
		cp = p[0] & 0x07;
		min = 0x10000;
	} else
		return 0;
	if (k > left)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return k;
}

static bool is_utf8(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = utf8_sequence(p + i, n - i);

		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

int card_parse_cardholder(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	char name[CARDHOLDER_MAX];
	const uint8_t *v;
	size_t len, out = 0;
	bool utf8;
	int r;

	card_unwrap(0x65, &p, &n);
	r = tlv_find_recursive(p, n, 0x5b, &v, &len);
	if (r < 0)
		return card_note_error(c, r, "65: malformed TLV");
	if (r == 0) {
		c->cardholder[0] = 0;
		return 0;
	}

	/* 4.4.3.3: ISO 8859-1, "<<" between surname and given names, "<" between names. GnuPG
	 * writes what the user typed, often UTF-8: keep valid UTF-8, convert anything else. */
	utf8 = is_utf8(v, len);
	for (size_t i = 0; i < len; i++) {
		uint8_t b = v[i];

		if (b < 0x20 || b == 0x7f)
			return card_note_error(c, -EBADMSG,
			                       "65: control character 0x%02X in the name", b);
		if (b == '<') {
			if (i + 1 < len && v[i + 1] == '<')
				i++;
			b = ' ';
		}
		if (b < 0x80 || utf8) {
			if (out + 1 >= sizeof(name))
				return card_note_error(c, -EMSGSIZE,
				                       "65: cardholder name too long (over %zu "
				                       "bytes)",
				                       sizeof(name) - 1);
			name[out++] = (char)b;
		} else {
			if (out + 2 >= sizeof(name))
				return card_note_error(c, -EMSGSIZE,
				                       "65: cardholder name too long (over %zu "
				                       "bytes)",
				                       sizeof(name) - 1);
			name[out++] = (char)(0xc0 | b >> 6);
			name[out++] = (char)(0x80 | (b & 0x3f));
		}
	}
	while (out > 0 && name[out - 1] == ' ')
		out--;
	name[out] = 0;
	memcpy(c->cardholder, name, out + 1);
	return 0;
}

int card_parse_url(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	card_unwrap(0x5f50, &p, &n);
	if (n >= sizeof(c->url))
		return card_note_error(c, -EMSGSIZE, "5F50: URL longer than %zu bytes",
		                       sizeof(c->url) - 1);
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x21 || p[i] > 0x7e) /* a URL is printable ASCII without spaces */
			return card_note_error(c, -EBADMSG, "5F50: byte 0x%02X in the URL", p[i]);
	if (n > 0)
		memcpy(c->url, p, n);
	c->url[n] = 0;
	return 0;
}

int card_parse_aid_hex(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	uint8_t b[AID_LEN];

	if (n != 2 * sizeof(b))
		return -EBADMSG;
	for (size_t i = 0; i < sizeof(b); i++) {
		int hi = card_hex_digit(p[2 * i]), lo = card_hex_digit(p[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EBADMSG;
		b[i] = (uint8_t)(hi << 4 | lo);
	}
	return card_parse_aid(b, sizeof(b), c);
}

const char *card_aid_serial(const char *aid, char buf[static 9])
{
	/* RID and application (12 hex digits), version (4), manufacturer (4), serial (8). */
	if (!aid || strlen(aid) != 2 * AID_LEN || strncasecmp(aid, "D27600012401", 12) != 0)
		return NULL;
	memcpy(buf, aid + 20, 8);
	buf[8] = 0;
	return buf;
}

bool card_aid_same_card(const char *a, const char *b)
{
	return a && b && strlen(a) == 32 && strlen(b) == 32 && strncasecmp(a, b, 12) == 0 &&
	       strncasecmp(a + 16, b + 16, 12) == 0;
}
