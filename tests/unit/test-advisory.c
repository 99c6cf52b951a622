/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The vendors' advisories: the version parser (good, malformed, overlong), the built-in table's
 * ranges at their boundaries, a table with a row that does not parse, and the token-advisory
 * finding through audit_run() with the words a user reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "advisory-table.h"
#include "audit.h"
#include "config.h"
#include "test.h"

#define NOW INT64_C(1796256000) /* 2026-12-03 00:00:00 UTC */
#define FPR_SIG "9190F2BBC6D1062907230F84123FE942CEC8B16E"
#define FPR_ENC "21F8DD6CF3528146A3B138DC416BF1B32F5D4F5B"
#define FPR_AUT "0D5C1A32C9E3B1F2A6D7E8F90A1B2C3D4E5F6071"

static int parse(const char *s, struct advisory_version *v)
{
	return advisory_version_parse((const uint8_t *)s, strlen(s), v);
}

TEST(version_parse)
{
	struct advisory_version v;

	ASSERT_OK(parse("5.7.0", &v));
	ASSERT_EQ(v.major, 5);
	ASSERT_EQ(v.minor, 7);
	ASSERT_EQ(v.patch, 0);
	ASSERT_OK(parse("5.10.1", &v));
	ASSERT_EQ(v.minor, 10);
	ASSERT_OK(parse("0.0.0", &v));
	ASSERT_OK(parse("65535.1.65535", &v));
	ASSERT_EQ(v.major, 65535);
	ASSERT_EQ(v.patch, 65535);
	/* Only the n bytes given count. */
	ASSERT_OK(advisory_version_parse((const uint8_t *)"4.3.4xyz", 5, &v));
	ASSERT_EQ(v.patch, 4);

	ASSERT_ERR(parse("5.7", &v), EBADMSG);
	ASSERT_ERR(parse("5", &v), EBADMSG);
	ASSERT_ERR(parse("", &v), EBADMSG);
	ASSERT_ERR(parse("5.7.0.1", &v), EBADMSG);
	ASSERT_ERR(parse("5.7.", &v), EBADMSG);
	ASSERT_ERR(parse(".5.7", &v), EBADMSG);
	ASSERT_ERR(parse("5..7", &v), EBADMSG);
	ASSERT_ERR(parse("5.07.0", &v), EBADMSG);
	ASSERT_ERR(parse(" 5.7.0", &v), EBADMSG);
	ASSERT_ERR(parse("-5.7.0", &v), EBADMSG);
	ASSERT_ERR(parse("5.7.0a", &v), EBADMSG);
	ASSERT_ERR(parse("garbage", &v), EBADMSG);
	ASSERT_ERR(advisory_version_parse((const uint8_t *)"5.7\0.0", 6, &v), EBADMSG);
	ASSERT_ERR(parse("65536.0.0", &v), EMSGSIZE);
	ASSERT_ERR(parse("123456.0.0", &v), EMSGSIZE);
	ASSERT_ERR(parse("1.2.34567890123", &v), EMSGSIZE);
	ASSERT_ERR(parse("5.7.0.........", &v), EBADMSG); /* 14 bytes: malformed, not long */
	ASSERT_ERR(parse("5.7.0..........", &v), EBADMSG); /* 15: the longest looked at */
	ASSERT_ERR(parse("5.7.0...........", &v), EMSGSIZE); /* 16 */
	ASSERT_ERR(advisory_version_parse_string(NULL, &v), EBADMSG);
	ASSERT_ERR(advisory_version_parse_string("1.2.3456789012345678", &v), EMSGSIZE);
	ASSERT_OK(advisory_version_parse_string("4.3.5", &v));
}

TEST(version_cmp)
{
	struct advisory_version a, b;

	/* Numbers, not strings: 5.10.1 comes after 5.7.0. */
	ASSERT_OK(parse("5.10.1", &a));
	ASSERT_OK(parse("5.7.0", &b));
	ASSERT_EQ(advisory_version_cmp(&a, &b), 1);
	ASSERT_EQ(advisory_version_cmp(&b, &a), -1);
	ASSERT_EQ(advisory_version_cmp(&a, &a), 0);
	ASSERT_OK(parse("4.3.4", &a));
	ASSERT_OK(parse("4.3.5", &b));
	ASSERT_EQ(advisory_version_cmp(&a, &b), -1);
}

/* Every built-in row compiles, and says what a finding needs. */
TEST(builtin_table)
{
	const struct advisory_row *rows;
	const struct advisory *table;
	size_t n_rows = advisory_rows_builtin(&rows), n = advisory_builtin(&table);

	ASSERT_EQ(n, n_rows);
	ASSERT_TRUE(n >= 3);
	for (size_t i = 0; i < n; i++) {
		const struct advisory_row *r = table[i].row;

		ASSERT_TRUE(!isempty(r->id) && !isempty(r->vendor) && !isempty(r->title));
		ASSERT_TRUE(!isempty(r->remedy) && r->models[0] && r->apps != 0);
		ASSERT_TRUE(!isempty(r->version_check));
		ASSERT_TRUE(strncmp(r->url, "https://", 8) == 0);
	}
	ASSERT_STREQ(table[0].row->id, "YSA-2024-03");
}

static void set_token(struct token *t, enum token_kind kind, const char *model,
                      const char *firmware)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->id, "yubikey-12345678");
	strcpy(t->serial, "12345678");
	t->kind = kind;
	strcpy(t->model, model);
	strcpy(t->firmware, firmware);
	t->present = true;
	t->has_openpgp = true;
	strcpy(t->openpgp.serial, "12345678");
	t->openpgp.pin_retries[0] = t->openpgp.pin_retries[2] = 3;
}

/* The built-in advisory ids that match a token of model, firmware and OpenPGP application
 * version (GET VERSION inside it), or "" (several: ","; "?" after one it cannot tell). */
static const char *matches_applet(const char *model, const char *firmware, const char *applet,
                                  char *buf, size_t size)
{
	const struct advisory *table;
	size_t n = advisory_builtin(&table);
	struct token t;

	set_token(&t, TOKEN_KIND_YUBIKEY, model, firmware);
	strcpy(t.openpgp.firmware, applet);
	buf[0] = 0;
	for (size_t i = 0; i < n; i++) {
		enum advisory_match m = advisory_match(&table[i], &t);

		if (m == ADVISORY_MATCH_NO)
			continue;
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s%s", buf[0] ? "," : "",
		         table[i].row->id, m == ADVISORY_MATCH_UNKNOWN ? "?" : "");
	}
	return buf;
}

static const char *matches(const char *model, const char *firmware, char *buf, size_t size)
{
	return matches_applet(model, firmware, "", buf, size);
}

TEST(builtin_ranges)
{
	char b[128];

	/* ROCA: from 4.2.0 (Yubico's own check) to 4.3.4; 4.3.5 is fixed. */
	ASSERT_STREQ(matches("YubiKey 4", "4.1.9", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey 4", "4.2.0", b, sizeof(b)), "YSA-2017-01");
	ASSERT_STREQ(matches("YubiKey 4", "4.2.5", b, sizeof(b)), "YSA-2017-01");
	ASSERT_STREQ(matches("YubiKey 4", "4.2.6", b, sizeof(b)), "YSA-2017-01");
	ASSERT_STREQ(matches("YubiKey 4", "4.3.4", b, sizeof(b)), "YSA-2017-01");
	ASSERT_STREQ(matches("YubiKey 4", "4.3.5", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey", "4.3.1", b, sizeof(b)), "YSA-2017-01");
	/* The FIPS series' firmware. */
	ASSERT_STREQ(matches("YubiKey 4", "4.4.1", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey 4", "4.4.2", b, sizeof(b)), "YSA-2019-02");
	ASSERT_STREQ(matches("YubiKey 4", "4.4.4", b, sizeof(b)), "YSA-2019-02");
	ASSERT_STREQ(matches("YubiKey 4", "4.4.5", b, sizeof(b)), "");
	/* EUCLEAK: the YubiKey 5 and Security Key before 5.7.0, the Bio before 5.7.2. */
	ASSERT_STREQ(matches("YubiKey 5", "4.9.9", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey 5", "5.0.0", b, sizeof(b)), "YSA-2024-03");
	ASSERT_STREQ(matches("YubiKey 5", "5.6.9", b, sizeof(b)), "YSA-2024-03");
	ASSERT_STREQ(matches("YubiKey 5", "5.7.0", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey 5", "5.7.1", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey 5", "5.10.1", b, sizeof(b)), "");
	ASSERT_STREQ(matches("YubiKey", "5.4.3", b, sizeof(b)), "YSA-2024-03");
	ASSERT_STREQ(matches("Security Key by Yubico", "5.4.3", b, sizeof(b)), "YSA-2024-03");
	ASSERT_STREQ(matches("YubiKey Bio", "5.7.1", b, sizeof(b)), "YSA-2024-03");
	ASSERT_STREQ(matches("YubiKey Bio", "5.7.2", b, sizeof(b)), "");
	/* Another product, or another maker's: nothing. */
	ASSERT_STREQ(matches("YubiKey Plus", "5.4.3", b, sizeof(b)), "");
	ASSERT_STREQ(matches("", "5.4.3", b, sizeof(b)), "");
	/* Firmware unknown or unreadable: no guess, for the products a row names. */
	ASSERT_STREQ(matches("YubiKey 5", "", b, sizeof(b)), "YSA-2024-03?");
	ASSERT_STREQ(matches("YubiKey 5", "5.x", b, sizeof(b)), "YSA-2024-03?");
	ASSERT_STREQ(matches("YubiKey 4", "", b, sizeof(b)), "YSA-2017-01?,YSA-2019-02?");
	ASSERT_STREQ(matches("YubiKey Plus", "", b, sizeof(b)), "");
	/* "YubiKey" alone (read through scdaemon) names a product only with its firmware. */
	ASSERT_STREQ(matches("YubiKey", "", b, sizeof(b)), "");
	{
		const struct advisory *table;
		struct token t;

		ASSERT_TRUE(advisory_builtin(&table) > 0);
		set_token(&t, TOKEN_KIND_NITROKEY, "YubiKey 5", "5.4.3");
		ASSERT_EQ(advisory_match(&table[0], &t), ADVISORY_MATCH_NO);
	}
}

/* YSA-2015-1 is about the NEO's OpenPGP applet: its version, not the device's firmware. */
TEST(neo_applet_ranges)
{
	char b[128];

	ASSERT_STREQ(matches_applet("YubiKey NEO", "3.4.9", "1.0.9", b, sizeof(b)), "YSA-2015-1");
	ASSERT_STREQ(matches_applet("YubiKey NEO", "3.4.9", "1.0.5", b, sizeof(b)), "YSA-2015-1");
	ASSERT_STREQ(matches_applet("YubiKey NEO", "", "0.9.0", b, sizeof(b)), "YSA-2015-1");
	ASSERT_STREQ(matches_applet("YubiKey NEO", "3.4.9", "1.0.10", b, sizeof(b)), "");
	ASSERT_STREQ(matches_applet("YubiKey NEO", "3.4.9", "1.0.11", b, sizeof(b)), "");
	/* The device's firmware says nothing of the applet: "cannot tell", never a guess. */
	ASSERT_STREQ(matches_applet("YubiKey NEO", "3.4.9", "", b, sizeof(b)), "YSA-2015-1?");
	ASSERT_STREQ(matches_applet("YubiKey NEO", "1.0.9", "1.0.x", b, sizeof(b)), "YSA-2015-1?");
	/* A NEO read through PC/SC alone is plain "YubiKey", its GET VERSION the applet's. */
	ASSERT_STREQ(matches_applet("YubiKey", "1.0.9", "1.0.9", b, sizeof(b)), "YSA-2015-1");
	ASSERT_STREQ(matches_applet("YubiKey", "", "", b, sizeof(b)), "");
	/* A YubiKey 4 or 5 answers its firmware there: never in the applet's range. */
	ASSERT_STREQ(matches_applet("YubiKey", "5.4.3", "5.4.3", b, sizeof(b)), "YSA-2024-03");
	ASSERT_STREQ(matches_applet("YubiKey 5", "5.7.1", "5.7.1", b, sizeof(b)), "");
	ASSERT_STREQ(matches_applet("YubiKey 4", "4.3.5", "4.3.5", b, sizeof(b)), "");
}

/* The one built-in row of id, and how it judges a token of kind, model and firmware. */
static enum advisory_match match_row(const char *id, enum token_kind kind, const char *model,
                                     const char *firmware)
{
	const struct advisory *table;
	size_t n = advisory_builtin(&table);
	struct token t;

	set_token(&t, kind, model, firmware);
	for (size_t i = 0; i < n; i++)
		if (streq(table[i].row->id, id))
			return advisory_match(&table[i], &t);
	ASSERT_TRUE(false);
	return ADVISORY_MATCH_NO;
}

/* Nitrokey 3's PIV admin key: stable 1.8.0 only; keyctld learns no Nitrokey firmware, so the
 * realistic case is the unknown one. */
TEST(nitrokey3_ranges)
{
	const char *id = "CVE-2025-25201";

	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey 3", "1.8.0"), ADVISORY_MATCH_YES);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey 3", "1.8.1"), ADVISORY_MATCH_NO);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey 3", "1.8.3"), ADVISORY_MATCH_NO);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey 3", "1.7.2"), ADVISORY_MATCH_NO);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey 3", ""), ADVISORY_MATCH_UNKNOWN);
	/* A test release's version is no x.y.z: unknown, not a guess. */
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey 3", "1.5.0-test.2023"),
	          ADVISORY_MATCH_UNKNOWN);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey Pro", ""), ADVISORY_MATCH_NO);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "Nitrokey", ""), ADVISORY_MATCH_NO);
	ASSERT_EQ(match_row(id, TOKEN_KIND_NITROKEY, "", ""), ADVISORY_MATCH_NO);
	ASSERT_EQ(match_row(id, TOKEN_KIND_YUBIKEY, "Nitrokey 3", "1.8.0"), ADVISORY_MATCH_NO);
	/* No Yubico row speaks of another maker's token. */
	ASSERT_EQ(match_row("YSA-2015-1", TOKEN_KIND_NITROKEY, "Nitrokey 3", "1.0.9"),
	          ADVISORY_MATCH_NO);
}

TEST(slots)
{
	const struct advisory *table;
	size_t n = advisory_builtin(&table);
	struct openpgp_card c;
	const struct advisory *eucleak = &table[0], *roca = NULL;

	for (size_t i = 0; i < n; i++)
		if (streq(table[i].row->id, "YSA-2017-01"))
			roca = &table[i];
	ASSERT_TRUE(roca != NULL);
	memset(&c, 0, sizeof(c));
	strcpy(c.slots[SLOT_SIGN].fingerprint, FPR_SIG);
	strcpy(c.slots[SLOT_SIGN].algorithm, "nistp256");
	strcpy(c.slots[SLOT_ENCRYPT].fingerprint, FPR_ENC);
	strcpy(c.slots[SLOT_ENCRYPT].algorithm, "nistp256"); /* ECDH: not what leaks */
	strcpy(c.slots[SLOT_AUTH].fingerprint, FPR_AUT);
	strcpy(c.slots[SLOT_AUTH].algorithm, "ed25519");
	ASSERT_EQ(advisory_slots(eucleak, &c), ADVISORY_SLOT(SLOT_SIGN));
	strcpy(c.slots[SLOT_AUTH].algorithm, "brainpoolP384r1");
	ASSERT_EQ(advisory_slots(eucleak, &c), ADVISORY_SLOT(SLOT_SIGN) | ADVISORY_SLOT(SLOT_AUTH));
	ASSERT_EQ(advisory_slots(roca, &c), 0);
	strcpy(c.slots[SLOT_ENCRYPT].algorithm, "rsa2048");
	ASSERT_EQ(advisory_slots(roca, &c), ADVISORY_SLOT(SLOT_ENCRYPT));
	/* An empty slot holds no key, whatever its algorithm attribute says. */
	c.slots[SLOT_ENCRYPT].fingerprint[0] = 0;
	ASSERT_EQ(advisory_slots(roca, &c), 0);
}

/* clang-format off */
#define TEST_ROW(id_, from_, before_, remedy_, ...) {                                  \
	.id = id_, .vendor = "V", .title = id_, .kind = TOKEN_KIND_YUBIKEY,           \
	.models = { "YubiKey 5", NULL }, .from = from_, .before = before_,             \
	.apps = ADVISORY_APP_OPENPGP, .algorithms = { __VA_ARGS__ },                   \
	.slots = ADVISORY_SLOTS_ALL, .remedy = remedy_, .url = "https://example.org/" id_ }
/* clang-format on */

/* Good, malformed, an empty range, a malformed upper bound, good with an algorithm. */
static const struct advisory_row test_rows[] = {
	TEST_ROW("T-1", "5.0.0", "5.7.0", "Do one.", NULL),
	TEST_ROW("T-BAD", "5.0", "5.7.0", "Never.", NULL),
	TEST_ROW("T-EMPTY", "5.7.0", "5.7.0", "Never.", NULL),
	TEST_ROW("T-2", "5.4.0", "5.4.x", "Never.", NULL),
	TEST_ROW("T-3", "5.4.0", "5.5.0", "Do three.", "nistp", NULL),
};

struct bad_log {
	char text[256];
	size_t n;
};

static void note_bad(const struct advisory_row *row, const char *version, int error, void *ud)
{
	struct bad_log *log = ud;
	size_t used = strlen(log->text);

	snprintf(log->text + used, sizeof(log->text) - used, "%s%s %s %d", used ? "; " : "",
	         row->id, version, error);
	log->n++;
}

TEST(bad_row_skipped)
{
	struct advisory table[ELEMENTSOF(test_rows)];
	struct bad_log log = {};
	size_t n = advisory_compile(test_rows, ELEMENTSOF(test_rows), table, note_bad, &log);
	char want[256];
	struct token t;

	ASSERT_EQ(n, 2);
	ASSERT_EQ(log.n, 3);
	snprintf(want, sizeof(want), "T-BAD 5.0 %d; T-EMPTY 5.7.0 %d; T-2 5.4.x %d", -EBADMSG,
	         -ERANGE, -EBADMSG);
	ASSERT_STREQ(log.text, want);
	ASSERT_STREQ(table[0].row->id, "T-1");
	ASSERT_STREQ(table[1].row->id, "T-3");
	set_token(&t, TOKEN_KIND_YUBIKEY, "YubiKey 5", "5.4.3");
	ASSERT_EQ(advisory_match(&table[0], &t), ADVISORY_MATCH_YES);
	ASSERT_EQ(advisory_match(&table[1], &t), ADVISORY_MATCH_YES);
	/* Without a callback the rows are still left out. */
	ASSERT_EQ(advisory_compile(test_rows, ELEMENTSOF(test_rows), table, NULL, NULL), 2);
}

/* The token-advisory findings audit_run() raises for t, with table (NULL: the built-in one). */
static size_t run(const struct token *t, const struct advisory *table, size_t n_table,
                  struct finding **ret)
{
	struct audit_daemon dmn = { .keys_listed = false,
		                    .advisories = table,
		                    .n_advisories = n_table };
	struct config cfg;
	struct finding *f = NULL;
	size_t n = 0, kept = 0;

	config_init(&cfg);
	ASSERT_OK(audit_run(t, 1, NULL, 0, &cfg, &dmn, NOW, &f, &n));
	for (size_t i = 0; i < n; i++) {
		fprintf(stderr, "    [%s] %s: %s | %s\n", level_to_string(f[i].level), f[i].rule,
		        f[i].message, f[i].hint);
		if (streq(f[i].rule, "token-advisory"))
			f[kept++] = f[i];
	}
	*ret = f;
	return kept;
}

static void set_slot(struct token *t, enum key_slot s, const char *fpr, const char *algo)
{
	strcpy(t->openpgp.slots[s].fingerprint, fpr);
	strcpy(t->openpgp.slots[s].algorithm, algo);
	t->openpgp.slots[s].touch = TOUCH_ON;
}

/* A YubiKey of model and firmware with USB interfaces ifs and keys of these algorithms in the
 * signature and encryption slots ("" for none). */
static void set_keys(struct token *t, const char *model, const char *firmware, unsigned ifs,
                     const char *sig, const char *enc)
{
	set_token(t, TOKEN_KIND_YUBIKEY, model, firmware);
	t->usb_interfaces = ifs;
	if (*sig)
		set_slot(t, SLOT_SIGN, FPR_SIG, sig);
	if (*enc)
		set_slot(t, SLOT_ENCRYPT, FPR_ENC, enc);
}

/* The one token-advisory finding of the built-in table about t: its level and words. */
static struct finding *expect_one(const struct token *t, enum level level, const char *message)
{
	struct finding *f;

	ASSERT_EQ(run(t, NULL, 0, &f), 1);
	ASSERT_EQ(f[0].level, level);
	ASSERT_STREQ(f[0].message, message);
	return f;
}

TEST(finding_ecdsa)
{
	struct finding *f;
	char id[FINDING_ID_MAX];
	struct token t;

	set_keys(&t, "YubiKey 5", "5.4.3", USB_IFACE_FIDO | USB_IFACE_CCID, "nistp256", "nistp256");
	set_slot(&t, SLOT_AUTH, FPR_AUT, "nistp256");
	f = expect_one(&t, LEVEL_WARNING,
	               "YubiKey #12345678 (firmware 5.4.3) is affected by YSA-2024-03, Infineon "
	               "ECDSA side channel (EUCLEAK): the signature slot's nistp256 key "
	               "0x123FE942CEC8B16E, the authentication slot's nistp256 key "
	               "0x0A1B2C3D4E5F6071; its FIDO credentials too");
	ASSERT_TRUE(strstr(f[0].hint, "firmware 5.7 or later") != NULL);
	ASSERT_TRUE(strstr(f[0].hint,
	                   "See https://www.yubico.com/support/security-advisories/ysa-2024-03/"));
	ASSERT_STREQ(f[0].key, "YSA-2024-03");
	ASSERT_STREQ(f[0].subkey, "");
	ASSERT_STREQ(f[0].token, "yubikey-12345678");
	finding_id(&f[0], id, sizeof(id));
	ASSERT_STREQ(id, "token-advisory:YSA-2024-03@yubikey-12345678");
	free(f);

	/* Fixed firmware: nothing. */
	strcpy(t.firmware, "5.7.0");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
}

TEST(finding_fido_only)
{
	struct finding *f;
	struct token t;

	set_keys(&t, "YubiKey 5", "5.4.3", USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID,
	         "ed25519", "cv25519");
	f = expect_one(&t, LEVEL_NOTICE,
	               "YubiKey #12345678 (firmware 5.4.3) is affected by YSA-2024-03, Infineon "
	               "ECDSA side channel (EUCLEAK): its FIDO credentials are, whatever they are "
	               "used for; the OpenPGP keys on it are not");
	free(f);

	/* A Security Key has no OpenPGP application at all. */
	set_keys(&t, "Security Key by Yubico", "5.4.3", USB_IFACE_FIDO, "", "");
	t.has_openpgp = false;
	ASSERT_EQ(run(&t, NULL, 0, &f), 1);
	ASSERT_TRUE(strstr(f[0].message, "its OpenPGP keys were not read") != NULL);
	free(f);

	/* Not known to have FIDO (a card read through a reader that does not say): nothing. */
	set_keys(&t, "YubiKey", "5.4.3", 0, "ed25519", "");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
}

TEST(finding_roca)
{
	struct finding *f;
	struct token t;

	set_keys(&t, "YubiKey 4", "4.3.4", USB_IFACE_FIDO | USB_IFACE_CCID, "rsa2048", "rsa4096");
	f = expect_one(&t, LEVEL_WARNING,
	               "YubiKey #12345678 (firmware 4.3.4) is affected by YSA-2017-01, Infineon "
	               "weak RSA key generation (ROCA): the signature slot's rsa2048 key "
	               "0x123FE942CEC8B16E, the encryption slot's rsa4096 key 0x416BF1B32F5D4F5B, "
	               "if generated on the card (a key imported into it is not affected; keyctl "
	               "cannot tell which)");
	ASSERT_TRUE(strstr(f[0].hint, "ysa-2017-01") != NULL);
	free(f);

	/* ROCA concerns RSA keys only; no FIDO part: ed25519 keys raise nothing. */
	set_slot(&t, SLOT_SIGN, FPR_SIG, "ed25519");
	set_slot(&t, SLOT_ENCRYPT, FPR_ENC, "cv25519");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
	strcpy(t.firmware, "4.3.5");
	set_slot(&t, SLOT_SIGN, FPR_SIG, "rsa2048");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
}

TEST(finding_firmware_unknown)
{
	struct finding *f;
	struct token t;

	set_keys(&t, "YubiKey 5", "", 0, "nistp256", "");
	f = expect_one(&t, LEVEL_OK,
	               "Firmware of YubiKey #12345678 unknown: cannot tell whether "
	               "YSA-2024-03, Infineon ECDSA side channel (EUCLEAK), applies");
	ASSERT_STREQ(f[0].key, "YSA-2024-03");
	free(f);

	/* A model no advisory names: nothing, known firmware or not. */
	set_keys(&t, "", "", 0, "nistp256", "");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
	set_token(&t, TOKEN_KIND_YUBIKEY, "YubiKey Plus", "");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
}

TEST(finding_neo_applet)
{
	struct finding *f;
	struct token t;

	/* Every key is concerned, whatever its algorithm: the PIN is what is bypassed. */
	set_keys(&t, "YubiKey NEO", "3.4.9", USB_IFACE_OTP | USB_IFACE_CCID, "rsa2048", "rsa2048");
	strcpy(t.openpgp.firmware, "1.0.9");
	f = expect_one(&t, LEVEL_WARNING,
	               "YubiKey #12345678 (OpenPGP application 1.0.9) is affected by YSA-2015-1, "
	               "YubiKey NEO OpenPGP applet PIN bypass: the signature slot's rsa2048 key "
	               "0x123FE942CEC8B16E, the encryption slot's rsa2048 key 0x416BF1B32F5D4F5B");
	ASSERT_TRUE(strstr(f[0].hint, "without the PIN") != NULL);
	ASSERT_TRUE(strstr(f[0].hint, "See https://developers.yubico.com/ykneo-openpgp/"
	                              "SecurityAdvisory%202015-04-14.html") != NULL);
	ASSERT_STREQ(f[0].key, "YSA-2015-1");
	free(f);

	/* The fixed applet: nothing. */
	strcpy(t.openpgp.firmware, "1.0.10");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);

	/* The applet's version unread (the NEO seen on USB only): said so, with how to read it. */
	t.openpgp.firmware[0] = 0;
	f = expect_one(&t, LEVEL_OK,
	               "OpenPGP application version of YubiKey #12345678 unknown: cannot tell "
	               "whether YSA-2015-1, YubiKey NEO OpenPGP applet PIN bypass, applies");
	ASSERT_TRUE(strstr(f[0].hint, "scd apdu 00 f1 00 00") != NULL);
	free(f);
}

static void set_nitrokey3(struct token *t, const char *firmware)
{
	set_token(t, TOKEN_KIND_NITROKEY, "Nitrokey 3", firmware);
	strcpy(t->id, "nitrokey-12345678");
	t->usb_interfaces = USB_IFACE_FIDO | USB_IFACE_CCID;
	set_slot(t, SLOT_SIGN, FPR_SIG, "ed25519");
}

TEST(finding_nitrokey3)
{
	struct finding *f;
	struct token t;

	/* As keyctld sees one today: no firmware. */
	set_nitrokey3(&t, "");
	f = expect_one(&t, LEVEL_OK,
	               "Firmware of Nitrokey #12345678 unknown: cannot tell whether "
	               "CVE-2025-25201, Nitrokey 3 PIV admin key not validated, applies");
	ASSERT_STREQ(f[0].hint, "Check its firmware version (nitropy nk3 status); see "
	                        "https://github.com/Nitrokey/nitrokey-3-firmware/security/"
	                        "advisories/GHSA-jfhm-ppq8-7hgx");
	ASSERT_STREQ(f[0].key, "CVE-2025-25201");
	free(f);

	/* Affected, with a PIV application: a notice about it, none of the OpenPGP keys. */
	set_nitrokey3(&t, "1.8.0");
	t.piv.state = PIV_READ_OK;
	f = expect_one(
	        &t, LEVEL_NOTICE,
	        "Nitrokey #12345678 (firmware 1.8.0) is affected by CVE-2025-25201, Nitrokey "
	        "3 PIV admin key not validated: its PIV application is, whatever it holds; "
	        "the OpenPGP keys on it are not");
	ASSERT_TRUE(strstr(f[0].hint, "1.8.1 or later (nitropy nk3 update)") != NULL);
	free(f);

	/* No PIV application seen, or the fixed firmware: nothing. */
	t.piv.state = PIV_READ_NONE;
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
	t.piv.state = PIV_READ_OK;
	strcpy(t.firmware, "1.8.1");
	ASSERT_EQ(run(&t, NULL, 0, &f), 0);
	free(f);
}

/* A table with rows that do not parse still raises the others' findings through the audit. */
TEST(finding_injected_table)
{
	struct advisory table[ELEMENTSOF(test_rows)];
	size_t n = advisory_compile(test_rows, ELEMENTSOF(test_rows), table, NULL, NULL);
	struct finding *f;
	struct token t;

	set_keys(&t, "YubiKey 5", "5.4.3", 0, "nistp384", "");
	ASSERT_EQ(run(&t, table, n, &f), 2);
	ASSERT_STREQ(f[0].key, "T-1");
	ASSERT_STREQ(f[1].key, "T-3");
	ASSERT_STREQ(f[1].hint, "Do three. See https://example.org/T-3");
	free(f);
}

int main(void)
{
	RUN(version_parse);
	RUN(version_cmp);
	RUN(builtin_table);
	RUN(builtin_ranges);
	RUN(neo_applet_ranges);
	RUN(nitrokey3_ranges);
	RUN(slots);
	RUN(bad_row_skipped);
	RUN(finding_ecdsa);
	RUN(finding_fido_only);
	RUN(finding_roca);
	RUN(finding_firmware_unknown);
	RUN(finding_neo_applet);
	RUN(finding_nitrokey3);
	RUN(finding_injected_table);
	return 0;
}
