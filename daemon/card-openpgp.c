/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads the OpenPGP card application (OpenPGP card 3.4) through a struct card_transport: SELECT
 * by AID, GET DATA for 4F, 6E, 7A, 65 and 5F50 (and D6-D8 when 6E lacks them), Yubico's GET
 * VERSION on YubiKeys, with 61xx/6Cxx handling for cards that answer in pieces. The parsers turn
 * data objects into struct openpgp_card: what GnuPG's `gpg --card-status` shows, in its words.
 *
 * Does not: send anything that is not in card_ins_allowed() (no VERIFY, no PUT DATA, never a
 * PIN), know PC/SC, hold transactions, retry, or log. Status words are mapped to errno here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "card-openpgp.h"
#include "tlv.h"

#define SW_OK 0x9000
#define SHORT_RESPONSE_MAX (256 + 2)
#define FPR_LEN_V4 20
#define FPR_LEN_V5 32

/* OpenPGP card 3.4, 4.2.1: RID D2 76 00 01 24, application 01. */
static const uint8_t openpgp_aid_prefix[] = { 0xd2, 0x76, 0x00, 0x01, 0x24, 0x01 };
#define AID_LEN 16
#define MANUFACTURER_YUBICO 0x0006

bool card_ins_allowed(uint8_t ins)
{
	switch (ins) {
	case 0xa4: /* SELECT */
	case 0xca: /* GET DATA */
	case 0xcb: /* GET DATA (odd) */
	case 0xc0: /* GET RESPONSE */
	case 0xf1: /* Yubico GET VERSION */
		return true;
	default:
		return false;
	}
}

int card_sw_to_errno(uint16_t sw)
{
	switch (sw) {
	case SW_OK:
		return 0;
	case 0x6a82: /* file or application not found */
	case 0x6a88: /* referenced data not found */
		return -ENOENT;
	case 0x6982: /* security status not satisfied */
		return -EACCES;
	default:
		return -EIO;
	}
}

/* The one place that hands bytes to the transport: everything sent passes the whitelist. */
static int transmit_checked(const struct card_transport *t, const uint8_t *apdu, size_t n,
                            uint8_t *resp, size_t *resp_len)
{
	size_t len = *resp_len;
	int r;

	if (n < 4 || n > CARD_APDU_MAX)
		return -EINVAL;
	/* CLA bit 0x10 is command chaining, which only writes use; secure messaging neither. */
	if (apdu[0] != 0x00 || !card_ins_allowed(apdu[1]))
		return -EPERM;

	r = t->transmit(t->userdata, apdu, n, resp, &len);
	if (r < 0)
		return r;
	if (len < 2 || len > *resp_len)
		return -EBADMSG;
	*resp_len = len;
	return 0;
}

int card_exchange(const struct card_transport *t, const uint8_t *apdu, size_t n, uint8_t *buf,
                  size_t size, size_t *ret_len, uint16_t *ret_sw)
{
	uint8_t cmd[CARD_APDU_MAX], resp[SHORT_RESPONSE_MAX];
	bool resent = false, empty_61 = false;
	size_t cmd_len = n, used = 0;
	int r;

	if (n < 4 || n > sizeof(cmd))
		return -EINVAL;
	memcpy(cmd, apdu, n);

	for (;;) {
		size_t len = sizeof(resp), data_len;
		uint8_t sw1, sw2;

		r = transmit_checked(t, cmd, cmd_len, resp, &len);
		if (r < 0)
			return r;
		data_len = len - 2;
		sw1 = resp[data_len];
		sw2 = resp[data_len + 1];

		/* 6Cxx: wrong Le, xx is the right one (ISO 7816-4, 5.1.3). Every command we send
		 * ends with its Le byte. Once only: a card that keeps asking is broken. */
		if (sw1 == 0x6c && !resent && cmd_len > 4) {
			cmd[cmd_len - 1] = sw2;
			resent = true;
			continue;
		}

		if (data_len > size - used)
			return -EMSGSIZE;
		if (data_len > 0)
			memcpy(buf + used, resp, data_len);
		used += data_len;

		if (sw1 == 0x61) {
			/* Every GET RESPONSE must bring data, or a card could keep us here forever;
			 * only the first answer (T=0 style) may be a bare 61xx. */
			if (data_len == 0) {
				if (empty_61)
					return -EBADMSG;
				empty_61 = true;
			}
			cmd[0] = 0x00;
			cmd[1] = 0xc0;
			cmd[2] = 0x00;
			cmd[3] = 0x00;
			cmd[4] = sw2;
			cmd_len = 5;
			continue;
		}

		*ret_len = used;
		*ret_sw = (uint16_t)(sw1 << 8 | sw2);
		return 0;
	}
}

/* A short APDU with Le=00 (256): every card supports it; longer answers come as 61xx. */
static int command(const struct card_transport *t, uint8_t ins, uint8_t p1, uint8_t p2,
                   const uint8_t *data, size_t data_len, uint8_t *buf, size_t size, size_t *ret_len)
{
	uint8_t apdu[CARD_APDU_MAX];
	size_t n = 0, len;
	uint16_t sw;
	int r;

	if (data_len > 255)
		return -EINVAL;
	apdu[n++] = 0x00;
	apdu[n++] = ins;
	apdu[n++] = p1;
	apdu[n++] = p2;
	if (data_len > 0) {
		apdu[n++] = (uint8_t)data_len;
		memcpy(apdu + n, data, data_len);
		n += data_len;
	}
	apdu[n++] = 0x00;

	r = card_exchange(t, apdu, n, buf, size, &len, &sw);
	if (r < 0)
		return r;
	r = card_sw_to_errno(sw);
	if (r < 0)
		return r;
	*ret_len = len;
	return 0;
}

static int get_data(const struct card_transport *t, uint16_t tag, uint8_t *buf, size_t size,
                    size_t *ret_len)
{
	return command(t, 0xca, tag >> 8, tag & 0xff, NULL, 0, buf, size, ret_len);
}

/* Cards differ in whether GET DATA answers with the DO's own tag around the value (6E 82 01 37
 * ...) or with the bare value; accept both, unwrapping only an exact single wrapper. */
static void unwrap(uint32_t tag, const uint8_t **p, size_t *n)
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

static void hex_upper(const uint8_t *p, size_t n, char *ret)
{
	static const char digits[] = "0123456789ABCDEF";

	for (size_t i = 0; i < n; i++) {
		ret[2 * i] = digits[p[i] >> 4];
		ret[2 * i + 1] = digits[p[i] & 0xf];
	}
	ret[2 * n] = 0;
}

const char *card_manufacturer_name(uint16_t id)
{
	/* GnuPG's table (scd/app-openpgp.c, app_openpgp_manufacturer), so the names match what
	 * `gpg --card-status` prints. */
	switch (id) {
	case 0x0001:
		return "PPC Card Systems";
	case 0x0002:
		return "Prism";
	case 0x0003:
		return "OpenFortress";
	case 0x0004:
		return "Wewid";
	case 0x0005:
		return "ZeitControl";
	case 0x0006:
		return "Yubico";
	case 0x0007:
		return "OpenKMS";
	case 0x0008:
		return "LogoEmail";
	case 0x0009:
		return "Fidesmo";
	case 0x000a:
		return "VivoKey";
	case 0x000b:
		return "Feitian Technologies";
	case 0x000d:
		return "Dangerous Things";
	case 0x000e:
		return "Excelsecu";
	case 0x000f:
		return "Nitrokey";
	case 0x002a:
		return "Magrathea";
	case 0x0042:
		return "GnuPG e.V.";
	case 0x1337:
		return "Warsaw Hackerspace";
	case 0x2342:
		return "warpzone";
	case 0x4354:
		return "Confidential Technologies";
	case 0x5343:
		return "SSE Carte à puce";
	case 0x5443:
		return "TIF-IT e.V.";
	case 0x63af:
		return "Trustica";
	case 0xba53:
		return "c-base e.V.";
	case 0xbd0e:
		return "Paranoidlabs";
	case 0xf1d0:
		return "CanoKeys";
	case 0xf517:
		return "FSIJ";
	case 0xf5ec:
		return "F-Secure";
	case 0x0000:
	case 0xffff:
		return "test card"; /* OpenPGP card 3.4, 4.2.1 */
	default:
		/* 0xFF00-0xFFFE: serial numbers the card made up itself. */
		return (id & 0xff00) == 0xff00 ? "unmanaged S/N range" : "unknown";
	}
}

int card_parse_aid(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	unwrap(0x4f, &p, &n);
	/* OpenPGP card 3.4, 4.2.1: RID(5) PIX(11) = app(1) version(2) manufacturer(2) serial(4)
	 * RFU(2). */
	if (n != AID_LEN || memcmp(p, openpgp_aid_prefix, sizeof(openpgp_aid_prefix)) != 0)
		return -EBADMSG;

	hex_upper(p, n, c->aid);
	snprintf(c->version, sizeof(c->version), "%u.%u", p[6], p[7]);
	c->manufacturer_id = (uint16_t)(p[8] << 8 | p[9]);
	strcpy_trunc(c->manufacturer, sizeof(c->manufacturer),
	             card_manufacturer_name(c->manufacturer_id));
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

static enum touch_policy touch_from_uif(const uint8_t *p, size_t n)
{
	/* OpenPGP card 3.4, 4.4.3.6: first byte of D6-D8; the second is the button's features. */
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
		return TOUCH_UNKNOWN; /* a later spec's policy: not worth failing the read */
	}
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int card_parse_application_data(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	static const uint32_t algo_tags[SLOT_MAX] = { 0xc1, 0xc2, 0xc3 };
	static const uint32_t uif_tags[SLOT_MAX] = { 0xd6, 0xd7, 0xd8 };
	const uint8_t *v;
	size_t len, fpr_len;
	int r;

	unwrap(0x6e, &p, &n);

	/* The AID inside 6E; GET DATA 4F gave the same, but parsing it here keeps this function
	 * whole for the fuzzer. */
	r = tlv_find_recursive(p, n, 0x4f, &v, &len);
	if (r < 0)
		return r;
	if (r > 0) {
		r = card_parse_aid(v, len, c);
		if (r < 0)
			return r;
	}

	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		r = tlv_find_recursive(p, n, algo_tags[s], &v, &len);
		if (r < 0)
			return r;
		if (r > 0) {
			r = card_parse_algorithm(v, len, c->slots[s].algorithm);
			if (r < 0)
				return r;
		}

		r = tlv_find_recursive(p, n, uif_tags[s], &v, &len);
		if (r < 0)
			return r;
		c->slots[s].touch = r > 0 ? touch_from_uif(v, len) : TOUCH_UNKNOWN;
	}

	/* PW status bytes (4.4.3.5): validity, 3 max lengths, then retries of PW1, RC, PW3. */
	r = tlv_find_recursive(p, n, 0xc4, &v, &len);
	if (r < 0)
		return r;
	if (r == 0 || len < 7)
		return -EBADMSG;
	memcpy(c->pin_retries, v + 4, 3);

	/* Fingerprints (4.4.3.7): three of 20 bytes; all zero is an empty slot. */
	r = tlv_find_recursive(p, n, 0xc5, &v, &len);
	if (r < 0)
		return r;
	if (r == 0 || (len != 3 * FPR_LEN_V4 && len != 3 * FPR_LEN_V5))
		return -EBADMSG;
	fpr_len = len / 3;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const uint8_t *f = v + s * fpr_len;

		if (all_zero(f, fpr_len))
			c->slots[s].fingerprint[0] = 0;
		else
			hex_upper(f, fpr_len, c->slots[s].fingerprint);
	}

	/* Generation times (4.4.3.8): three big-endian 4-byte epoch seconds. Optional. */
	r = tlv_find_recursive(p, n, 0xcd, &v, &len);
	if (r < 0)
		return r;
	if (r > 0) {
		if (len != 3 * 4)
			return -EBADMSG;
		for (enum key_slot s = 0; s < SLOT_MAX; s++) {
			const uint8_t *q = v + 4 * s;

			c->slots[s].created =
			        (int64_t)((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 |
			                  (uint32_t)q[2] << 8 | q[3]);
		}
	}
	return 0;
}

int card_parse_security_template(const uint8_t *p, size_t n, struct openpgp_card *c)
{
	const uint8_t *v;
	size_t len;
	int r;

	unwrap(0x7a, &p, &n);
	/* 4.4.1: 93 is the digital signature counter, 3 bytes. */
	r = tlv_find_recursive(p, n, 0x93, &v, &len);
	if (r < 0)
		return r;
	if (r == 0 || len != 3)
		return -EBADMSG;
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

	unwrap(0x65, &p, &n);
	r = tlv_find_recursive(p, n, 0x5b, &v, &len);
	if (r < 0)
		return r;
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
			return -EBADMSG;
		if (b == '<') {
			if (i + 1 < len && v[i + 1] == '<')
				i++;
			b = ' ';
		}
		if (b < 0x80 || utf8) {
			if (out + 1 >= sizeof(name))
				return -EMSGSIZE;
			name[out++] = (char)b;
		} else {
			if (out + 2 >= sizeof(name))
				return -EMSGSIZE;
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
	unwrap(0x5f50, &p, &n);
	if (n >= sizeof(c->url))
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x21 || p[i] > 0x7e) /* a URL is printable ASCII without spaces */
			return -EBADMSG;
	if (n > 0)
		memcpy(c->url, p, n);
	c->url[n] = 0;
	return 0;
}

/* Yubico's GET VERSION inside the OpenPGP application answers three BCD bytes (yubikit's
 * openpgp.py, _read_version). A card that does not know it keeps firmware "". */
static int read_yubico_version(const struct card_transport *t, struct openpgp_card *c)
{
	static const uint8_t apdu[] = { 0x00, 0xf1, 0x00, 0x00, 0x00 };
	uint8_t buf[SHORT_RESPONSE_MAX];
	unsigned v[3];
	size_t len;
	uint16_t sw;
	int r;

	r = card_exchange(t, apdu, sizeof(apdu), buf, sizeof(buf), &len, &sw);
	if (r < 0)
		return r;
	if (sw != SW_OK || len != 3)
		return 0;
	for (size_t i = 0; i < 3; i++) {
		if ((buf[i] >> 4) > 9 || (buf[i] & 0xf) > 9)
			return 0;
		v[i] = (buf[i] >> 4) * 10u + (buf[i] & 0xfu);
	}
	snprintf(c->firmware, sizeof(c->firmware), "%u.%u.%u", v[0], v[1], v[2]);
	return 0;
}

/* GET DATA for a DO that not every card has: 6A88/6A82 is "absent" (*ret_present false, 0). */
static int get_data_optional(const struct card_transport *t, uint16_t tag, uint8_t *buf,
                             size_t size, size_t *ret_len, bool *ret_present)
{
	int r;

	r = get_data(t, tag, buf, size, ret_len);
	if (r == -ENOENT) {
		*ret_len = 0;
		*ret_present = false;
		return 0;
	}
	if (r < 0)
		return r;
	*ret_present = true;
	return 0;
}

/* The user interaction flag of one slot, asked for on its own. Any refusal by the card (6A88,
 * but also 6D00 or 6B00 from cards that predate 3.x) means "no button": unknown, not an error;
 * only the transport's errors fail the read. */
static int read_uif(const struct card_transport *t, uint16_t tag, enum touch_policy *ret)
{
	uint8_t apdu[] = { 0x00, 0xca, tag >> 8, tag & 0xff, 0x00 };
	uint8_t buf[SHORT_RESPONSE_MAX];
	const uint8_t *p = buf;
	size_t len;
	uint16_t sw;
	int r;

	r = card_exchange(t, apdu, sizeof(apdu), buf, sizeof(buf), &len, &sw);
	if (r < 0)
		return r;
	if (sw != SW_OK) {
		*ret = TOUCH_UNKNOWN;
		return 0;
	}
	unwrap(tag, &p, &len);
	*ret = touch_from_uif(p, len);
	return 0;
}

static const struct {
	uint16_t tag;
	int (*parse)(const uint8_t *p, size_t n, struct openpgp_card *c);
} optional_dos[] = {
	{ 0x007a, card_parse_security_template }, /* signature counter */
	{ 0x0065, card_parse_cardholder },
	{ 0x5f50, card_parse_url },
};

int card_read_openpgp(const struct card_transport *t, struct openpgp_card *ret)
{
	static const uint16_t uif_tags[SLOT_MAX] = { 0xd6, 0xd7, 0xd8 };
	uint8_t buf[CARD_RESPONSE_MAX];
	bool present;
	size_t len;
	int r;

	memset(ret, 0, sizeof(*ret));

	r = command(t, 0xa4, 0x04, 0x00, openpgp_aid_prefix, sizeof(openpgp_aid_prefix), buf,
	            sizeof(buf), &len);
	if (r < 0)
		return r;

	/* From here on the application is there (SELECT said so): a mandatory DO it says it does
	 * not have (6A88) is a broken read, not a card without OpenPGP. */
	r = get_data(t, 0x004f, buf, sizeof(buf), &len);
	if (r < 0)
		return r == -ENOENT ? -EIO : r;
	r = card_parse_aid(buf, len, ret);
	if (r < 0)
		return r;

	if (ret->manufacturer_id == MANUFACTURER_YUBICO) {
		r = read_yubico_version(t, ret);
		if (r < 0)
			return r;
	}

	r = get_data(t, 0x006e, buf, sizeof(buf), &len);
	if (r < 0)
		return r == -ENOENT ? -EIO : r;
	r = card_parse_application_data(buf, len, ret);
	if (r < 0)
		return r;

	/* Some cards keep the user interaction flags out of 6E (4.4.3.6); ask for each. A card
	 * without a button answers 6A88: the policy stays unknown. */
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		if (ret->slots[s].touch != TOUCH_UNKNOWN)
			continue;
		r = read_uif(t, uif_tags[s], &ret->slots[s].touch);
		if (r < 0)
			return r;
	}

	/* The rest is optional (OpenPGP card 3.4, 4.4.1): absent on some cards, read when there. */
	for (size_t i = 0; i < ELEMENTSOF(optional_dos); i++) {
		r = get_data_optional(t, optional_dos[i].tag, buf, sizeof(buf), &len, &present);
		if (r < 0)
			return r;
		if (present) {
			r = optional_dos[i].parse(buf, len, ret);
			if (r < 0)
				return r;
		}
	}
	return 0;
}
