/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OpenPGP card reader against recorded APDU transcripts (tests/data/NAME.apdu): a fake
 * transport answers from the transcript and fails the test on any APDU that is not exactly the
 * next one recorded, so each transcript is also the proof of what keyctl sends (and that it never
 * sends VERIFY or a write). Then the pure parsers, the status word mapping and the refusals of
 * card_exchange() on their own. The transcripts are found through KEYCTL_TEST_DATA, else next to
 * this file: __FILE__ is relative to the build root, which is where `meson test` runs tests.
 */
#include <errno.h>
#include <libgen.h>

#include "card-openpgp.h"
#include "test.h"

#define STEPS_MAX 64
#define RESP_MAX (256 + 2)

struct step {
	unsigned line;
	uint8_t apdu[CARD_APDU_MAX];
	size_t apdu_len;
	uint8_t resp[RESP_MAX];
	size_t resp_len;
	int error; /* "< !ENODEV": the transport fails instead of answering */
};

struct replay {
	char path[512];
	struct step steps[STEPS_MAX];
	size_t n_steps, next;
};

static const char *data_dir(void)
{
	static char dir[512];
	const char *e = getenv("KEYCTL_TEST_DATA");
	char file[512];

	if (e)
		return e;
	/* tests/unit/test-card-openpgp.c -> tests/data */
	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(dir, sizeof(dir), "%s/../data", dirname(file));
	return dir;
}

static size_t parse_hex(const char *s, uint8_t *out, size_t size, const char *where)
{
	size_t n = 0;

	for (;;) {
		unsigned b;
		int k;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == 0 || *s == '\n')
			return n;
		if (sscanf(s, "%2x%n", &b, &k) != 1 || k != 2)
			TEST_FAIL("%s: bad hex at \"%s\"", where, s);
		if (n >= size)
			TEST_FAIL("%s: line too long", where);
		out[n++] = (uint8_t)b;
		s += k;
	}
}

static void replay_load(struct replay *r, const char *name)
{
	char line[4096], where[600];
	unsigned lineno = 0;
	FILE *f;

	memset(r, 0, sizeof(*r));
	if (snprintf(r->path, sizeof(r->path), "%s/%s.apdu", data_dir(), name) >=
	    (int)sizeof(r->path))
		TEST_FAIL("path too long for %s", name);
	f = fopen(r->path, "re");
	if (!f)
		TEST_FAIL("%s: %s", r->path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct step *s = r->n_steps ? &r->steps[r->n_steps - 1] : NULL;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", r->path, lineno);
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (line[0] == '>') {
			if (s && s->resp_len == 0 && !s->error)
				TEST_FAIL("%s: command without answer before this one", where);
			if (r->n_steps >= STEPS_MAX)
				TEST_FAIL("%s: too many steps", where);
			s = &r->steps[r->n_steps++];
			s->line = lineno;
			s->apdu_len = parse_hex(line + 1, s->apdu, sizeof(s->apdu), where);
		} else if (line[0] == '<') {
			if (!s || s->resp_len > 0 || s->error)
				TEST_FAIL("%s: answer without command", where);
			if (strncmp(line, "< !ENODEV", 9) == 0)
				s->error = -ENODEV;
			else if (strncmp(line, "< !ECONNRESET", 13) == 0)
				s->error = -ECONNRESET;
			else {
				s->resp_len = parse_hex(line + 1, s->resp, sizeof(s->resp), where);
				if (s->resp_len < 2)
					TEST_FAIL("%s: answer without status word", where);
			}
		} else
			TEST_FAIL("%s: unknown line \"%s\"", where, line);
	}
	fclose(f);
	if (r->n_steps == 0)
		TEST_FAIL("%s: empty transcript", r->path);
}

static void hex_dump(const uint8_t *p, size_t n, char *out, size_t size)
{
	size_t k = 0;

	out[0] = 0;
	for (size_t i = 0; i < n && k + 4 < size; i++)
		k += (size_t)snprintf(out + k, size - k, "%s%02X", i ? " " : "", p[i]);
}

static int replay_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                           size_t *resp_len)
{
	struct replay *r = userdata;
	char got[CARD_APDU_MAX * 3 + 1], want[CARD_APDU_MAX * 3 + 1];
	const struct step *s;

	hex_dump(apdu, n, got, sizeof(got));
	/* Whatever the transcript says: a command that writes or verifies never reaches a card. */
	if (n < 4 || !card_ins_allowed(apdu[1]))
		TEST_FAIL("%s: forbidden APDU sent: %s", r->path, got);
	if (r->next >= r->n_steps)
		TEST_FAIL("%s: APDU after the end of the transcript: %s", r->path, got);
	s = &r->steps[r->next++];
	hex_dump(s->apdu, s->apdu_len, want, sizeof(want));
	if (n != s->apdu_len || memcmp(apdu, s->apdu, n) != 0)
		TEST_FAIL("%s:%u: sent %s, transcript expects %s", r->path, s->line, got, want);
	if (s->error)
		return s->error;
	if (s->resp_len > *resp_len)
		TEST_FAIL("%s:%u: answer of %zu bytes for a buffer of %zu", r->path, s->line,
		          s->resp_len, *resp_len);
	memcpy(resp, s->resp, s->resp_len);
	*resp_len = s->resp_len;
	return 0;
}

/* Runs a transcript; every recorded APDU must have been sent, in order, and nothing else. */
static int replay_run(const char *name, struct openpgp_card *c)
{
	static struct replay r;
	struct card_transport t = { .transmit = replay_transmit, .userdata = &r };
	int ret;

	replay_load(&r, name);
	memset(c, 0xaa, sizeof(*c)); /* card_read_openpgp zeroes it first */
	ret = card_read_openpgp(&t, c);
	if (r.next != r.n_steps)
		TEST_FAIL("%s: %zu of %zu APDUs sent; next expected at line %u", r.path, r.next,
		          r.n_steps, r.steps[r.next].line);
	return ret;
}

/* GnuPG 2.4 names a card by its AID with the version as 0100 (SERIALNO, stubs). */
TEST(aid_same_card)
{
	ASSERT_TRUE(card_aid_same_card("D2760001240103040006876543210000",
	                               "D2760001240100000006876543210000"));
	ASSERT_TRUE(card_aid_same_card("d2760001240103040006876543210000",
	                               "D2760001240103040006876543210001"));
	ASSERT_FALSE(card_aid_same_card("D2760001240103040006876543210000",
	                                "D2760001240103040006123456780000"));
	ASSERT_FALSE(card_aid_same_card("D2760001240103040006876543210000",
	                                "D2760001240103040005876543210000"));
	ASSERT_FALSE(card_aid_same_card("D2760001240103040006876543210000",
	                                "D2760001250103040006876543210000"));
	ASSERT_FALSE(card_aid_same_card("D27600012401030400068765432100",
	                                "D27600012401030400068765432100"));
	ASSERT_FALSE(card_aid_same_card(NULL, "D2760001240103040006876543210000"));
}

TEST(yubikey5)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("yubikey5", &c));
	ASSERT_STREQ(c.aid, "D2760001240103040006123456780000");
	ASSERT_STREQ(c.version, "3.4");
	ASSERT_EQ(c.manufacturer_id, 0x0006);
	ASSERT_STREQ(c.manufacturer, "Yubico");
	ASSERT_STREQ(c.serial, "12345678");
	ASSERT_STREQ(c.firmware, "5.4.3");

	ASSERT_STREQ(c.slots[SLOT_SIGN].fingerprint, "3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E");
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].fingerprint, "8A1B2C3D4E5F60718293A4B5C6D7E8F901234567");
	ASSERT_STREQ(c.slots[SLOT_AUTH].fingerprint, "F0E1D2C3B4A5968778695A4B3C2D1E0F11223344");
	ASSERT_EQ(c.slots[SLOT_SIGN].created, 1700000000);
	ASSERT_EQ(c.slots[SLOT_ENCRYPT].created, 1700000100);
	ASSERT_EQ(c.slots[SLOT_AUTH].created, 1700000200);
	ASSERT_STREQ(c.slots[SLOT_SIGN].algorithm, "ed25519");
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].algorithm, "cv25519");
	ASSERT_STREQ(c.slots[SLOT_AUTH].algorithm, "ed25519");
	ASSERT_EQ(c.slots[SLOT_SIGN].touch, TOUCH_ON);
	ASSERT_EQ(c.slots[SLOT_ENCRYPT].touch, TOUCH_OFF);
	ASSERT_EQ(c.slots[SLOT_AUTH].touch, TOUCH_CACHED_FIXED);

	ASSERT_EQ(c.signature_counter, 42);
	ASSERT_EQ(c.pin_retries[0], 3);
	ASSERT_EQ(c.pin_retries[1], 0);
	ASSERT_EQ(c.pin_retries[2], 3);
	ASSERT_STREQ(c.url, "https://keys.example.org/alice.asc");
	ASSERT_STREQ(c.cardholder, "Tester Alice");
}

/* scdaemon selected OpenPGP (and may hold a verified PIN): the transcript has no SELECT, and the
 * replay fails on any APDU that is not the next one, so none is sent. */
TEST(selected_already_no_select)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("selected", &c));
	ASSERT_STREQ(c.aid, "D2760001240103040006123456780000");
	ASSERT_STREQ(c.firmware, "5.4.3");
	ASSERT_STREQ(c.slots[SLOT_SIGN].fingerprint, "3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E");
	ASSERT_EQ(c.signature_counter, 42);
}

/* Another application answers GET DATA 4F with 16 bytes that are no OpenPGP AID: SELECT. */
TEST(other_application_selected)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("other-selected", &c));
	ASSERT_STREQ(c.aid, "D2760001240103040006123456780000");
	ASSERT_EQ(c.signature_counter, 42);
}

TEST(nitrokey_rsa_without_uif)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("nitrokey-rsa", &c));
	ASSERT_EQ(c.manufacturer_id, 0x000f);
	ASSERT_STREQ(c.manufacturer, "Nitrokey");
	ASSERT_STREQ(c.serial, "A1B2C3D4");
	ASSERT_STREQ(c.firmware, ""); /* GET VERSION is Yubico's: not sent */
	ASSERT_STREQ(c.slots[SLOT_SIGN].algorithm, "rsa2048");
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].algorithm, "rsa2048");
	ASSERT_STREQ(c.slots[SLOT_AUTH].algorithm, "rsa4096");
	ASSERT_STREQ(c.slots[SLOT_SIGN].fingerprint, "1111222233334444555566667777888899990000");
	ASSERT_STREQ(c.slots[SLOT_AUTH].fingerprint, "0123456789ABCDEF0123456789ABCDEF01234567");
	ASSERT_EQ(c.slots[SLOT_SIGN].created, 1650000000);
	ASSERT_EQ(c.slots[SLOT_AUTH].created, 1650000002);
	for (int s = 0; s < SLOT_MAX; s++)
		ASSERT_EQ(c.slots[s].touch, TOUCH_UNKNOWN);
	ASSERT_EQ(c.signature_counter, 7);
	ASSERT_EQ(c.pin_retries[0], 3);
	ASSERT_EQ(c.pin_retries[1], 3);
	ASSERT_EQ(c.pin_retries[2], 3);
	ASSERT_STREQ(c.url, "");
	ASSERT_STREQ(c.cardholder, "Tester Bob");
}

TEST(blank_card)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("blank", &c));
	ASSERT_EQ(c.manufacturer_id, 0xff00);
	ASSERT_STREQ(c.manufacturer, "unmanaged S/N range");
	ASSERT_STREQ(c.serial, "00000001");
	for (int s = 0; s < SLOT_MAX; s++) {
		ASSERT_STREQ(c.slots[s].fingerprint, "");
		ASSERT_EQ(c.slots[s].created, 0);
		ASSERT_STREQ(c.slots[s].algorithm, "rsa2048");
		ASSERT_EQ(c.slots[s].touch, TOUCH_UNKNOWN); /* 6D00 to GET DATA D6-D8 */
	}
	ASSERT_EQ(c.signature_counter, 0);
	ASSERT_STREQ(c.cardholder, "");
	ASSERT_STREQ(c.url, "");
}

TEST(chaining_64_bytes)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("chaining", &c));
	ASSERT_STREQ(c.manufacturer, "FSIJ");
	ASSERT_STREQ(c.serial, "00C0FFEE");
	ASSERT_STREQ(c.slots[SLOT_SIGN].algorithm, "nistp384");
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].algorithm, "brainpoolP256r1");
	ASSERT_STREQ(c.slots[SLOT_AUTH].algorithm, "rsa2048");
	ASSERT_STREQ(c.slots[SLOT_SIGN].fingerprint, "00112233445566778899AABBCCDDEEFF00112233");
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].fingerprint, "FFEEDDCCBBAA99887766554433221100FFEEDDCC");
	ASSERT_STREQ(c.slots[SLOT_AUTH].fingerprint, "");
	ASSERT_EQ(c.slots[SLOT_ENCRYPT].created, 1600000001);
	ASSERT_EQ(c.signature_counter, 1234567);
	ASSERT_EQ(c.pin_retries[0], 2);
	/* ISO 8859-1 on the card, UTF-8 for everyone else */
	ASSERT_STREQ(c.cardholder, "M\xc3\xbcller J\xc3\xbcrgen");
	ASSERT_STREQ(c.url, "https://example.org/k");
}

TEST(wrong_le_resent_once)
{
	struct openpgp_card c;

	ASSERT_OK(replay_run("wrong-le", &c));
	ASSERT_STREQ(c.serial, "A1B2C3D4");
	ASSERT_STREQ(c.slots[SLOT_SIGN].algorithm, "rsa2048");
}

TEST(no_openpgp_application)
{
	struct openpgp_card c;

	ASSERT_ERR(replay_run("no-openpgp", &c), ENOENT);
	ASSERT_STREQ(c.serial, "");
}

TEST(malformed_6e)
{
	struct openpgp_card c;

	ASSERT_ERR(replay_run("malformed-6e", &c), EBADMSG);
	/* what was read before the cut, and after it, stays; the reason names the tag */
	ASSERT_STREQ(c.serial, "A1B2C3D4");
	ASSERT_EQ(c.pin_retries[0], 3);
	ASSERT_STREQ(c.slots[SLOT_AUTH].algorithm, "rsa4096");
	ASSERT_EQ(c.signature_counter, 7);
	ASSERT_STREQ(c.cardholder, "Tester Bob");
	ASSERT_STREQ(c.error, "73: the item at byte 45 (tag C5) runs past its end");
}

TEST(unplugged_mid_read)
{
	struct openpgp_card c;

	ASSERT_ERR(replay_run("unplugged", &c), ENODEV);
	ASSERT_STREQ(c.serial, "12345678");
	ASSERT_STREQ(c.firmware, "5.4.3");
	ASSERT_STREQ(c.slots[SLOT_SIGN].fingerprint, "3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E");
	ASSERT_EQ(c.signature_counter, 0); /* 7A was the answer that never came */
}

/* ---- card_exchange() against scripted answers ---- */

struct script {
	unsigned calls;
	uint8_t last[CARD_APDU_MAX];
	size_t last_len;
	int mode;
};

enum {
	SCRIPT_OK, /* 01 02 90 00 */
	SCRIPT_ENDLESS_61, /* 256 bytes + 61 00, forever */
	SCRIPT_EMPTY_61, /* bare 61 10, forever */
	SCRIPT_6C_TWICE, /* 6C 10 each time */
	SCRIPT_SHORT, /* one byte: not even a status word */
	SCRIPT_TOO_LONG, /* claims more than the buffer holds */
};

static int script_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                           size_t *resp_len)
{
	struct script *s = userdata;

	s->calls++;
	memcpy(s->last, apdu, n);
	s->last_len = n;
	switch (s->mode) {
	case SCRIPT_OK:
		memcpy(resp, (const uint8_t[]){ 0x01, 0x02, 0x90, 0x00 }, 4);
		*resp_len = 4;
		return 0;
	case SCRIPT_ENDLESS_61:
		memset(resp, 0x5a, 256);
		resp[256] = 0x61;
		resp[257] = 0x00;
		*resp_len = 258;
		return 0;
	case SCRIPT_EMPTY_61:
		resp[0] = 0x61;
		resp[1] = 0x10;
		*resp_len = 2;
		return 0;
	case SCRIPT_6C_TWICE:
		resp[0] = 0x6c;
		resp[1] = 0x10;
		*resp_len = 2;
		return 0;
	case SCRIPT_SHORT:
		resp[0] = 0x90;
		*resp_len = 1;
		return 0;
	case SCRIPT_TOO_LONG:
		*resp_len += 1;
		return 0;
	}
	return -EIO;
}

TEST(whitelist)
{
	/* Every INS: the whitelist decides, and a refused APDU never reaches the transport. */
	for (unsigned ins = 0; ins < 256; ins++) {
		struct script s = { .mode = SCRIPT_OK };
		struct card_transport t = { .transmit = script_transmit, .userdata = &s };
		uint8_t apdu[] = { 0x00, (uint8_t)ins, 0x00, 0x00, 0x00 }, buf[16];
		bool allowed =
		        ins == 0xa4 || ins == 0xca || ins == 0xcb || ins == 0xc0 || ins == 0xf1;
		size_t len;
		uint16_t sw;
		int r;

		ASSERT_EQ(card_ins_allowed((uint8_t)ins), allowed);
		r = card_exchange(&t, apdu, sizeof(apdu), buf, sizeof(buf), &len, &sw);
		if (allowed) {
			ASSERT_OK(r);
			ASSERT_EQ(sw, 0x9000);
			ASSERT_EQ(len, 2);
			ASSERT_EQ(s.calls, 1);
		} else {
			ASSERT_ERR(r, EPERM);
			ASSERT_EQ(s.calls, 0);
		}
	}
}

TEST(refuses_verify_and_chaining)
{
	struct script s = { .mode = SCRIPT_OK };
	struct card_transport t = { .transmit = script_transmit, .userdata = &s };
	/* VERIFY PW1 "123456", PUT DATA, and a GET DATA with the command-chaining CLA bit */
	static const uint8_t verify[] = {
		0x00, 0x20, 0x00, 0x81, 0x06, '1', '2', '3', '4', '5', '6'
	};
	static const uint8_t put_data[] = { 0x00, 0xda, 0x00, 0x5b, 0x01, 'x' };
	static const uint8_t chained[] = { 0x10, 0xca, 0x00, 0x6e, 0x00 };
	static const uint8_t sm[] = { 0x0c, 0xca, 0x00, 0x6e, 0x00 };
	uint8_t buf[16];
	size_t len;
	uint16_t sw;

	ASSERT_ERR(card_exchange(&t, verify, sizeof(verify), buf, sizeof(buf), &len, &sw), EPERM);
	ASSERT_ERR(card_exchange(&t, put_data, sizeof(put_data), buf, sizeof(buf), &len, &sw),
	           EPERM);
	ASSERT_ERR(card_exchange(&t, chained, sizeof(chained), buf, sizeof(buf), &len, &sw), EPERM);
	ASSERT_ERR(card_exchange(&t, sm, sizeof(sm), buf, sizeof(buf), &len, &sw), EPERM);
	ASSERT_ERR(card_exchange(&t, verify, 3, buf, sizeof(buf), &len, &sw), EINVAL);
	ASSERT_EQ(s.calls, 0);
}

TEST(exchange_limits)
{
	static const uint8_t get_6e[] = { 0x00, 0xca, 0x00, 0x6e, 0x00 };
	static uint8_t buf[CARD_RESPONSE_MAX];
	struct script s = { 0 };
	struct card_transport t = { .transmit = script_transmit, .userdata = &s };
	size_t len;
	uint16_t sw;

	/* a card that never stops: refused when the answer would pass CARD_RESPONSE_MAX */
	s.mode = SCRIPT_ENDLESS_61;
	ASSERT_ERR(card_exchange(&t, get_6e, sizeof(get_6e), buf, sizeof(buf), &len, &sw),
	           EMSGSIZE);
	ASSERT_EQ(s.calls, CARD_RESPONSE_MAX / 256 + 1);
	ASSERT_EQ(s.last[1], 0xc0); /* GET RESPONSE */
	ASSERT_EQ(s.last[4], 0x00);

	/* 61xx without data, again and again: one is a T=0 habit, two is a loop */
	s = (struct script){ .mode = SCRIPT_EMPTY_61 };
	ASSERT_ERR(card_exchange(&t, get_6e, sizeof(get_6e), buf, sizeof(buf), &len, &sw), EBADMSG);
	ASSERT_EQ(s.calls, 2);
	ASSERT_EQ(s.last[4], 0x10);

	/* 6Cxx: resent once with Le=xx, then the status goes to the caller */
	s = (struct script){ .mode = SCRIPT_6C_TWICE };
	ASSERT_OK(card_exchange(&t, get_6e, sizeof(get_6e), buf, sizeof(buf), &len, &sw));
	ASSERT_EQ(s.calls, 2);
	ASSERT_EQ(s.last[4], 0x10);
	ASSERT_EQ(sw, 0x6c10);
	ASSERT_ERR(card_sw_to_errno(sw), EIO);

	s = (struct script){ .mode = SCRIPT_SHORT };
	ASSERT_ERR(card_exchange(&t, get_6e, sizeof(get_6e), buf, sizeof(buf), &len, &sw), EBADMSG);
	s = (struct script){ .mode = SCRIPT_TOO_LONG };
	ASSERT_ERR(card_exchange(&t, get_6e, sizeof(get_6e), buf, sizeof(buf), &len, &sw), EBADMSG);

	/* the caller's buffer is the limit too */
	s = (struct script){ .mode = SCRIPT_OK };
	ASSERT_ERR(card_exchange(&t, get_6e, sizeof(get_6e), buf, 1, &len, &sw), EMSGSIZE);
}

/* A card that answers SELECT, then chains every GET DATA forever (2 MiB of 61xx and more): the read
 * ends, says what and which DO, and never loops. */
static int endless_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                            size_t *resp_len)
{
	unsigned *calls = userdata;

	(*calls)++;
	ASSERT_TRUE(*calls < 100000);
	if (apdu[1] == 0xa4) {
		resp[0] = 0x90;
		resp[1] = 0x00;
		*resp_len = 2;
		return 0;
	}
	memset(resp, 0x73, 256);
	resp[256] = 0x61;
	resp[257] = 0x00;
	*resp_len = 258;
	return 0;
}

TEST(endless_chaining_is_an_error_not_a_hang)
{
	unsigned calls = 0;
	struct card_transport t = { .transmit = endless_transmit, .userdata = &calls };
	struct openpgp_card c;

	ASSERT_ERR(card_read_openpgp(&t, &c), EMSGSIZE);
	ASSERT_STREQ(c.error, "6E: answer longer than 4096 bytes");
	/* GET DATA 4F (is OpenPGP selected?) chained to the buffer's end too, then SELECT, then 6E.
	 */
	ASSERT_TRUE(calls <= 2 * (CARD_RESPONSE_MAX / 256 + 1) + 1);
}

TEST(status_words)
{
	ASSERT_EQ(card_sw_to_errno(0x9000), 0);
	ASSERT_ERR(card_sw_to_errno(0x6a82), ENOENT);
	ASSERT_ERR(card_sw_to_errno(0x6a88), ENOENT);
	ASSERT_ERR(card_sw_to_errno(0x6982), EACCES);
	ASSERT_ERR(card_sw_to_errno(0x6d00), EIO);
	ASSERT_ERR(card_sw_to_errno(0x6700), EIO);
	ASSERT_ERR(card_sw_to_errno(0x6285), EIO);
}

TEST(manufacturers)
{
	ASSERT_STREQ(card_manufacturer_name(0x0006), "Yubico");
	ASSERT_STREQ(card_manufacturer_name(0x000f), "Nitrokey");
	ASSERT_STREQ(card_manufacturer_name(0x0001), "PPC Card Systems");
	ASSERT_STREQ(card_manufacturer_name(0x000b), "Feitian Technologies");
	ASSERT_STREQ(card_manufacturer_name(0x0042), "GnuPG e.V.");
	ASSERT_STREQ(card_manufacturer_name(0x1337), "Warsaw Hackerspace");
	ASSERT_STREQ(card_manufacturer_name(0xf517), "FSIJ");
	ASSERT_STREQ(card_manufacturer_name(0x0000), "test card");
	ASSERT_STREQ(card_manufacturer_name(0xffff), "test card");
	ASSERT_STREQ(card_manufacturer_name(0xff00), "unmanaged S/N range");
	ASSERT_STREQ(card_manufacturer_name(0xfffe), "unmanaged S/N range");
	ASSERT_STREQ(card_manufacturer_name(0x0c00), "unknown");
	/* every name fits the model's field */
	for (unsigned id = 0; id <= 0xffff; id++)
		ASSERT_TRUE(strlen(card_manufacturer_name((uint16_t)id)) <
		            sizeof(((struct openpgp_card *)0)->manufacturer));
}

static void algo(const char *hex, const char *want)
{
	uint8_t b[32];
	char name[ALGO_NAME_MAX];
	size_t n = parse_hex(hex, b, sizeof(b), hex);

	ASSERT_OK(card_parse_algorithm(b, n, name));
	ASSERT_STREQ(name, want);
}

TEST(algorithms)
{
	char name[ALGO_NAME_MAX];

	algo("01 08 00 00 20 00", "rsa2048");
	algo("01 0C 00 00 20 00", "rsa3072");
	algo("01 10 00 00 20 00", "rsa4096");
	algo("01 08 00 00 20", "rsa2048"); /* v2 cards: no import format byte */
	algo("16 2B 06 01 04 01 DA 47 0F 01", "ed25519");
	algo("16 2B 06 01 04 01 DA 47 0F 01 FF", "ed25519"); /* import with public key */
	algo("12 2B 06 01 04 01 97 55 01 05 01", "cv25519");
	algo("13 2A 86 48 CE 3D 03 01 07", "nistp256");
	algo("12 2A 86 48 CE 3D 03 01 07", "nistp256");
	algo("13 2B 81 04 00 22", "nistp384");
	algo("13 2B 81 04 00 23", "nistp521");
	algo("13 2B 81 04 00 0A", "secp256k1");
	algo("13 2B 24 03 03 02 08 01 01 07", "brainpoolP256r1");
	algo("13 2B 24 03 03 02 08 01 01 0B", "brainpoolP384r1");
	algo("13 2B 24 03 03 02 08 01 01 0D", "brainpoolP512r1");
	algo("16 2B 65 71", "ed448");
	algo("12 2B 65 6F", "cv448");
	algo("13 2B 06 01 04 01", "unknown");
	algo("13", "unknown");
	algo("42 01 02", "unknown");
	ASSERT_ERR(card_parse_algorithm((const uint8_t[]){ 0 }, 0, name), EBADMSG);
	ASSERT_ERR(card_parse_algorithm((const uint8_t[]){ 0x01, 0x08 }, 2, name), EBADMSG);
}

TEST(aid)
{
	static const uint8_t aid[] = { 0xd2, 0x76, 0x00, 0x01, 0x24, 0x01, 0x02, 0x01,
		                       0x00, 0x05, 0x00, 0x00, 0x1a, 0x2b, 0x00, 0x00 };
	struct openpgp_card c = { 0 };
	uint8_t wrapped[18] = { 0x4f, 0x10 }, bad[16];

	ASSERT_OK(card_parse_aid(aid, sizeof(aid), &c));
	ASSERT_STREQ(c.version, "2.1");
	ASSERT_STREQ(c.manufacturer, "ZeitControl");
	ASSERT_STREQ(c.serial, "00001A2B");
	memcpy(wrapped + 2, aid, sizeof(aid));
	memset(&c, 0, sizeof(c));
	ASSERT_OK(card_parse_aid(wrapped, sizeof(wrapped), &c));
	ASSERT_STREQ(c.serial, "00001A2B");

	ASSERT_ERR(card_parse_aid(aid, sizeof(aid) - 1, &c), EBADMSG);
	memcpy(bad, aid, sizeof(bad));
	bad[5] = 0x02; /* not the OpenPGP application */
	ASSERT_ERR(card_parse_aid(bad, sizeof(bad), &c), EBADMSG);
}

static int cardholder(const char *raw, struct openpgp_card *c)
{
	uint8_t buf[128];
	size_t n = strlen(raw);

	buf[0] = 0x5b;
	buf[1] = (uint8_t)n;
	memcpy(buf + 2, raw, n);
	return card_parse_cardholder(buf, n + 2, c);
}

TEST(cardholder_names)
{
	struct openpgp_card c = { 0 };

	ASSERT_OK(cardholder("Doe<<John<Paul", &c));
	ASSERT_STREQ(c.cardholder, "Doe John Paul");
	ASSERT_OK(cardholder("Doe<<", &c));
	ASSERT_STREQ(c.cardholder, "Doe");
	ASSERT_OK(cardholder("", &c));
	ASSERT_STREQ(c.cardholder, "");
	ASSERT_OK(cardholder("Gr\xc3\xbc\xc3\x9f<<J\xc3\xb6rg", &c)); /* already UTF-8: kept */
	ASSERT_STREQ(c.cardholder, "Gr\xc3\xbc\xc3\x9f J\xc3\xb6rg");
	ASSERT_OK(cardholder("\xe9tienne", &c)); /* Latin-1 */
	ASSERT_STREQ(c.cardholder, "\xc3\xa9tienne");
	ASSERT_ERR(cardholder("Evil\nName", &c), EBADMSG);
	/* 63 bytes fit the field, 64 do not: refused, not cut */
	ASSERT_OK(
	        cardholder("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &c));
	ASSERT_ERR(
	        cardholder("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &c),
	        EMSGSIZE);
	ASSERT_ERR(cardholder("\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9"
	                      "\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9\xe9",
	                      &c),
	           EMSGSIZE);
	/* no 5B at all: no name */
	ASSERT_OK(card_parse_cardholder((const uint8_t[]){ 0x5f, 0x35, 0x01, 0x39 }, 4, &c));
	ASSERT_STREQ(c.cardholder, "");
}

/* A 128-byte name as a card sends it (65 81 83 5B 81 80 ...): too long, and the token's error
 * says so (issue 32: the message said only "name longer than"). */
TEST(cardholder_too_long)
{
	struct openpgp_card c = { 0 };
	uint8_t buf[6 + 128];

	memcpy(buf, (const uint8_t[]){ 0x65, 0x81, 0x83, 0x5b, 0x81, 0x80 }, 6);
	memset(buf + 6, 'a', 128);
	ASSERT_ERR(card_parse_cardholder(buf, sizeof(buf), &c), EMSGSIZE);
	ASSERT_STREQ(c.error, "65: cardholder name too long (over 63 bytes)");
	ASSERT_STREQ(c.cardholder, "");
}

TEST(url)
{
	struct openpgp_card c = { 0 };
	char long_url[URL_MAX + 1];

	ASSERT_OK(card_parse_url((const uint8_t *)"https://a.example/k", 19, &c));
	ASSERT_STREQ(c.url, "https://a.example/k");
	ASSERT_ERR(card_parse_url((const uint8_t *)"https://a b", 11, &c), EBADMSG);
	ASSERT_ERR(card_parse_url((const uint8_t *)"http://\x01", 8, &c), EBADMSG);
	memset(long_url, 'a', sizeof(long_url));
	ASSERT_ERR(card_parse_url((const uint8_t *)long_url, URL_MAX, &c), EMSGSIZE);
	ASSERT_OK(card_parse_url((const uint8_t *)long_url, URL_MAX - 1, &c));
	ASSERT_OK(card_parse_url(NULL, 0, &c));
	ASSERT_STREQ(c.url, "");
}

TEST(application_data_errors)
{
	struct openpgp_card c = { 0 };
	/* 73 with C4 but no C5 */
	static const uint8_t no_c5[] = { 0x73, 0x09, 0xc4, 0x07, 0, 0x7f, 0x7f, 0x7f, 3, 0, 3 };
	/* C4 too short */
	static const uint8_t short_c4[] = { 0x73, 0x05, 0xc4, 0x03, 0, 0x7f, 0x7f };
	/* C5 of 59 bytes */
	uint8_t odd_c5[2 + 9 + 2 + 59] = { 0x73, 9 + 2 + 59, 0xc4, 0x07, 0,    0x7f, 0x7f,
		                           0x7f, 3,          0,    3,    0xc5, 59 };

	struct card_dos dos = {};

	/* A missing C5 is not the parser's call (old cards keep it outside 6E): it says what it
	 * saw, and the reader asks for the rest. */
	ASSERT_OK(card_parse_application_data(no_c5, sizeof(no_c5), &c, &dos));
	ASSERT_EQ(dos.seen, CARD_DO_PW_STATUS);
	ASSERT_EQ(dos.valid, CARD_DO_PW_STATUS);
	ASSERT_EQ(c.pin_retries[0], 3);

	dos = (struct card_dos){};
	ASSERT_ERR(card_parse_application_data(short_c4, sizeof(short_c4), &c, &dos), EBADMSG);
	ASSERT_EQ(dos.seen, CARD_DO_PW_STATUS);
	ASSERT_EQ(dos.valid, 0);
	ASSERT_STREQ(c.error, "C4: 3 bytes, not 7");

	memset(&c, 0, sizeof(c));
	dos = (struct card_dos){};
	ASSERT_ERR(card_parse_application_data(odd_c5, sizeof(odd_c5), &c, &dos), EBADMSG);
	ASSERT_EQ(dos.valid, CARD_DO_PW_STATUS); /* C4 before the broken C5 still counts */
	ASSERT_STREQ(c.error, "C5: 59 bytes, not 3 or 4 fingerprints");
	dos = (struct card_dos){};
	ASSERT_OK(card_parse_application_data(NULL, 0, &c, &dos));
	ASSERT_EQ(dos.seen, 0);
	memset(&c, 0, sizeof(c));
	ASSERT_ERR(card_parse_security_template((const uint8_t[]){ 0x93, 0x02, 0, 1 }, 4, &c),
	           EBADMSG);
	ASSERT_OK(card_parse_security_template((const uint8_t[]){ 0x93, 0x03, 1, 0, 0 }, 5, &c));
	ASSERT_EQ(c.signature_counter, 65536);
}

int main(void)
{
	RUN(aid_same_card);
	RUN(yubikey5);
	RUN(selected_already_no_select);
	RUN(other_application_selected);
	RUN(nitrokey_rsa_without_uif);
	RUN(blank_card);
	RUN(chaining_64_bytes);
	RUN(wrong_le_resent_once);
	RUN(no_openpgp_application);
	RUN(malformed_6e);
	RUN(unplugged_mid_read);
	RUN(whitelist);
	RUN(refuses_verify_and_chaining);
	RUN(exchange_limits);
	RUN(endless_chaining_is_an_error_not_a_hang);
	RUN(status_words);
	RUN(manufacturers);
	RUN(algorithms);
	RUN(aid);
	RUN(cardholder_names);
	RUN(cardholder_too_long);
	RUN(url);
	RUN(application_data_errors);
	return 0;
}
