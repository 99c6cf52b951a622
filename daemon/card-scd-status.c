/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parser of the status lines scdaemon answers SERIALNO and GETATTR with (formats of
 * GnuPG 2.2/2.4 scd/app-openpgp.c, values percent-plus escaped by scd/command.c), for card-scd.c.
 * Bytes from scdaemon are untrusted like a card's: every length is checked, fuzzed by
 * fuzz-scd-status.c.
 *
 * Does not: talk to gpg-agent (card-scd.c) or to a card.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "card-openpgp.h"
#include "card-scd.h"

struct cursor {
	const uint8_t *p;
	size_t left;
};

/* Next space-separated word of the raw (escaped) line. */
static bool next_word(struct cursor *c, const uint8_t **ret, size_t *ret_len)
{
	size_t k = 0;

	while (c->left > 0 && *c->p == ' ') {
		c->p++;
		c->left--;
	}
	if (c->left == 0)
		return false;
	while (k < c->left && c->p[k] != ' ')
		k++;
	*ret = c->p;
	*ret_len = k;
	c->p += k;
	c->left -= k;
	return true;
}

/* The rest of the line after one separating space. */
static void rest(struct cursor *c, const uint8_t **ret, size_t *ret_len)
{
	if (c->left > 0 && *c->p == ' ') {
		c->p++;
		c->left--;
	}
	*ret = c->p;
	*ret_len = c->left;
}

/* Undoes Assuan's percent-plus escaping into out[size]. Returns the length, -EBADMSG on a bad
 * escape, -EMSGSIZE when it does not fit. With text, NUL and control bytes are refused. */
static int unescape(const uint8_t *p, size_t n, uint8_t *out, size_t size, bool text)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t b = p[i];

		if (b == '+')
			b = ' ';
		else if (b == '%') {
			int hi, lo;

			if (n - i < 3)
				return -EBADMSG;
			hi = card_hex_digit(p[i + 1]);
			lo = card_hex_digit(p[i + 2]);
			if (hi < 0 || lo < 0)
				return -EBADMSG;
			b = (uint8_t)(hi << 4 | lo);
			i += 2;
		}
		if (text && b < 0x20)
			return -EBADMSG;
		if (o >= size)
			return -EMSGSIZE;
		out[o++] = b;
	}
	return (int)o;
}

static int unescape_text(const uint8_t *p, size_t n, char *out, size_t size)
{
	int k;

	if (size == 0)
		return -EMSGSIZE;
	k = unescape(p, n, (uint8_t *)out, size - 1, true);
	if (k < 0)
		return k;
	out[k] = 0;
	return 0;
}

static int parse_u64(const uint8_t *p, size_t n, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (n == 0 || n > 20)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EBADMSG;
		if (v > (max - (uint64_t)(p[i] - '0')) / 10)
			return -EBADMSG;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	*ret = v;
	return 0;
}

static bool word_is(const uint8_t *p, size_t n, const char *s)
{
	return n == strlen(s) && memcmp(p, s, n) == 0;
}

/* "1".."3" -> slot index. */
static int parse_keyno(struct cursor *c)
{
	const uint8_t *w;
	size_t n;

	if (!next_word(c, &w, &n) || n != 1 || w[0] < '1' || w[0] > '3')
		return -EBADMSG;
	return w[0] - '1';
}

static int parse_hex_upper(const uint8_t *p, size_t n, char *out, size_t size)
{
	if (n + 1 > size)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		if (card_hex_digit(p[i]) < 0)
			return -EBADMSG;
		out[i] = (char)(p[i] >= 'a' ? p[i] - 'a' + 'A' : p[i]);
	}
	out[n] = 0;
	return 0;
}

/* The full AID as hex (GnuPG's card serial number), decoded by the one AID parser both read
 * paths share. */
/* "Ed25519", "Curve25519", "nistp256", "NIST P-256", "brainpoolP256r1" -> keyctl's names. */
static int curve_to_algorithm(const char *curve, char *out, size_t size)
{
	static const struct {
		const char *scd, *name;
	} map[] = {
		{ "Ed25519", "ed25519" },
		{ "ed25519", "ed25519" },
		{ "Curve25519", "cv25519" },
		{ "cv25519", "cv25519" },
		{ "Ed448", "ed448" },
		{ "X448", "cv448" },
		{ "cv448", "cv448" },
		{ "NIST P-256", "nistp256" },
		{ "nistp256", "nistp256" },
		{ "NIST P-384", "nistp384" },
		{ "nistp384", "nistp384" },
		{ "NIST P-521", "nistp521" },
		{ "nistp521", "nistp521" },
		{ "secp256k1", "secp256k1" },
		{ "brainpoolP256r1", "brainpoolP256r1" },
		{ "brainpoolP384r1", "brainpoolP384r1" },
		{ "brainpoolP512r1", "brainpoolP512r1" },
	};

	for (size_t i = 0; i < ELEMENTSOF(map); i++)
		if (streq(curve, map[i].scd))
			return strcpy_bounded(out, size, map[i].name);
	/* An unknown curve is shown as scdaemon names it, if it is a plain word. */
	for (const char *s = curve; *s; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && *s != '-')
			return -EBADMSG;
	return strcpy_bounded(out, size, curve);
}

/* "1 1 rsa2048 17 0" (RSA) or "1 22 Ed25519" (ECC), GnuPG's send_key_attr(). */
static int parse_key_attr(struct cursor *c, struct openpgp_card *card)
{
	const uint8_t *w, *v;
	size_t n, vn;
	uint64_t algo;
	char name[ALGO_NAME_MAX];
	int slot, r;

	slot = parse_keyno(c);
	if (slot < 0)
		return slot;
	if (!next_word(c, &w, &n) || parse_u64(w, n, 255, &algo) < 0)
		return -EBADMSG;
	if (algo == 1 || algo == 2 || algo == 3) {
		uint64_t bits;

		if (!next_word(c, &v, &vn))
			return -EBADMSG;
		/* 2.2 sends "rsa2048", older ones the bare number. */
		if (vn > 3 && memcmp(v, "rsa", 3) == 0) {
			v += 3;
			vn -= 3;
		}
		if (parse_u64(v, vn, 16384, &bits) < 0 || bits == 0)
			return -EBADMSG;
		snprintf(card->slots[slot].algorithm, ALGO_NAME_MAX, "rsa%" PRIu64, bits);
		return 0;
	}
	if (algo != 18 && algo != 19 && algo != 22)
		return -EBADMSG;
	rest(c, &v, &vn);
	r = unescape_text(v, vn, name, sizeof(name));
	if (r < 0)
		return r;
	return curve_to_algorithm(name, card->slots[slot].algorithm, ALGO_NAME_MAX);
}

/* One function per keyword of the status lines; c is past the keyword. */
static int st_serialno(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	const uint8_t *w;
	size_t wn;

	if (!next_word(c, &w, &wn) || c->left != 0)
		return -EBADMSG;
	return card_parse_aid_hex(w, wn, card);
}

static int st_manufacturer(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	const uint8_t *w;
	size_t wn;
	uint64_t v;

	/* The name is ours, from the id: GnuPG 2.2's table lacks makers added since (it says
	 * "unknown" for Nitrokey's 000F), and both paths must name a card alike. */
	if (!next_word(c, &w, &wn) || parse_u64(w, wn, 0xffff, &v) < 0)
		return -EBADMSG;
	card->manufacturer_id = (uint16_t)v;
	card_manufacturer_format(card->manufacturer_id, card->manufacturer,
	                         sizeof(card->manufacturer));
	return 0;
}

static int st_key_fpr(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	int slot = parse_keyno(c);
	const uint8_t *w;
	size_t wn;

	if (slot < 0)
		return slot;
	if (!next_word(c, &w, &wn) || (wn != 40 && wn != 64) || c->left != 0)
		return -EBADMSG;
	return parse_hex_upper(w, wn, card->slots[slot].fingerprint, FPR_HEX_MAX);
}

static int st_key_time(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	int slot = parse_keyno(c);
	const uint8_t *w;
	size_t wn;
	uint64_t v;

	if (slot < 0)
		return slot;
	if (!next_word(c, &w, &wn) || c->left != 0 || parse_u64(w, wn, INT64_MAX, &v) < 0)
		return -EBADMSG;
	card->slots[slot].created = (int64_t)v;
	return 0;
}

static int st_sig_counter(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	const uint8_t *w;
	size_t wn;
	uint64_t v;

	if (!next_word(c, &w, &wn) || c->left != 0 || parse_u64(w, wn, UINT32_MAX, &v) < 0)
		return -EBADMSG;
	card->signature_counter = (uint32_t)v;
	return 0;
}

static int st_chv_status(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	/* " 1 127 127 127 3 0 3" escaped as "+1+127+127+127+3+0+3": PW1 validity, three maximum
	 * lengths, three retry counters (OpenPGP card 3.4, 4.4.1, DO C4). */
	char buf[7 * 4 + 8];
	struct cursor t;
	unsigned vals[7], k = 0;
	const uint8_t *w;
	size_t wn;
	uint64_t v;
	int r;

	rest(c, &w, &wn);
	r = unescape_text(w, wn, buf, sizeof(buf));
	if (r < 0)
		return r == -EMSGSIZE ? -EBADMSG : r;
	t = (struct cursor){ .p = (const uint8_t *)buf, .left = strlen(buf) };
	while (next_word(&t, &w, &wn)) {
		if (k >= ELEMENTSOF(vals) || parse_u64(w, wn, 255, &v) < 0)
			return -EBADMSG;
		vals[k++] = (unsigned)v;
	}
	if (k != ELEMENTSOF(vals))
		return -EBADMSG;
	for (unsigned i = 0; i < 3; i++)
		card->pin_retries[i] = (uint8_t)vals[4 + i];
	return 0;
}

static int st_disp_name(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	/* The raw DO 5B; converted exactly as our own card read converts it ("<<" and "<" to
	 * spaces, ISO 8859-1 to UTF-8) by handing it to card-openpgp.c's parser, whose limit is
	 * the one limit: room here for any line, and the length in BER's long form from 128 on
	 * (a short-form 0x80 would read as malformed, not as too long). */
	uint8_t tlv[4 + SCD_LINE_MAX], *t = tlv + 4;
	const uint8_t *w;
	size_t wn;
	int k;

	rest(c, &w, &wn);
	k = unescape(w, wn, t, sizeof(tlv) - 4, true);
	if (k < 0)
		return k;
	/* Built backwards: the length byte(s), 81 or 82 before them from 128 on, then 5B. */
	*--t = (uint8_t)k;
	if (k > 0xff)
		*--t = (uint8_t)(k >> 8);
	if (k >= 0x80)
		*--t = k > 0xff ? 0x82 : 0x81;
	*--t = 0x5b;
	return card_parse_cardholder(t, (size_t)(tlv + 4 - t) + (size_t)k, card);
}

static int st_pubkey_url(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	/* The raw DO 5F50, checked by the same rule as our own read's. */
	uint8_t raw[URL_MAX];
	const uint8_t *w;
	size_t wn;
	int k;

	rest(c, &w, &wn);
	k = unescape(w, wn, raw, sizeof(raw), true);
	if (k < 0)
		return k;
	return card_parse_url(raw, (size_t)k, card);
}

static int st_key_attr(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	return parse_key_attr(c, card);
}

static int st_uif(struct cursor *c, const uint8_t *kw, struct openpgp_card *card)
{
	/* The raw DO D6..D8 (OpenPGP card 3.4, 4.4.3.6): policy byte, feature byte; a policy byte
	 * no spec defines yet is "unknown", as on our own read. */
	int slot = kw[4] - '1';
	uint8_t raw[2];
	const uint8_t *w;
	size_t wn;
	int k;

	rest(c, &w, &wn);
	k = unescape(w, wn, raw, sizeof(raw), false);
	if (k < 0)
		return k == -EMSGSIZE ? -EBADMSG : k;
	if (k != 2)
		return -EBADMSG;
	card->slots[slot].touch = card_touch_from_uif(raw, (size_t)k);
	return 0;
}

static const struct {
	const char *keyword;
	int (*parse)(struct cursor *c, const uint8_t *kw, struct openpgp_card *card);
} status_keywords[] = {
	{ "SERIALNO", st_serialno },
	{ "MANUFACTURER", st_manufacturer },
	{ "KEY-FPR", st_key_fpr },
	{ "KEY-TIME", st_key_time },
	{ "SIG-COUNTER", st_sig_counter },
	{ "CHV-STATUS", st_chv_status },
	{ "DISP-NAME", st_disp_name },
	{ "PUBKEY-URL", st_pubkey_url },
	{ "KEY-ATTR", st_key_attr },
	{ "UIF-1", st_uif },
	{ "UIF-2", st_uif },
	{ "UIF-3", st_uif },
};

int scd_parse_status(const uint8_t *p, size_t n, struct openpgp_card *card)
{
	struct cursor c = { .p = p, .left = n };
	const uint8_t *kw;
	size_t kwn;

	if (!next_word(&c, &kw, &kwn))
		return -EBADMSG;
	for (size_t i = 0; i < ELEMENTSOF(status_keywords); i++)
		if (word_is(kw, kwn, status_keywords[i].keyword))
			return status_keywords[i].parse(&c, kw, card);
	return 0; /* a keyword we did not ask for: scdaemon may add more over time */
}
