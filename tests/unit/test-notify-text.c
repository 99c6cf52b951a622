/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's texts, exactly as a user reads them: summary, body and urgency for subkeys 0,
 * 1, 5, 20 and 400 days from expiry, with and without a renewal URL, token naming, the text for
 * a plugged-in token, for an audit finding and for a token waiting for a touch.
 */
#include "expiry-math.h"
#include "notify-text.h"
#include "test.h"

#define NOW INT64_C(1767225600) /* 2026-01-01T00:00:00Z */
#define PRIMARY "0123456789ABCDEF0123456789ABCDEF01234567"
#define SUB "AAAABBBBCCCCDDDDEEEEFFFF0000111122223333"
#define RENEW "Renew: gpg --quick-set-expire " PRIMARY " 1y " SUB

static struct subkey subs[2];
static struct key key;
static struct token yk;

static void setup(int64_t days, enum level level)
{
	memset(subs, 0, sizeof(subs));
	memset(&key, 0, sizeof(key));
	memset(&yk, 0, sizeof(yk));
	strcpy(subs[0].fingerprint, PRIMARY);
	subs[0].is_primary = true;
	subs[0].capabilities = CAP_CERTIFY;
	subs[0].secret = SECRET_DISK;
	key.has_secret = true;
	strcpy(subs[1].fingerprint, SUB);
	strcpy(subs[1].algorithm, "ed25519");
	subs[1].capabilities = CAP_SIGN;
	subs[1].created = NOW - 365 * SECONDS_PER_DAY;
	subs[1].expires = NOW + days * SECONDS_PER_DAY;
	subs[1].secret = SECRET_CARD;
	strcpy(subs[1].token_id, "yubikey-12345678");
	subs[1].level = level;
	strcpy(key.fingerprint, PRIMARY);
	strcpy(key.uid, "Alice Tester <alice@example.org>");
	key.n_subkeys = 2;
	key.subkeys = subs;
	strcpy(yk.id, "yubikey-12345678");
	yk.kind = TOKEN_KIND_YUBIKEY;
	strcpy(yk.model, "YubiKey 5 NFC");
	strcpy(yk.serial, "12345678");
	yk.present = true;
}

TEST(expiry_days)
{
	static const struct {
		int64_t days;
		enum level level;
		const char *summary, *date;
		enum notify_text_urgency urgency;
	} cases[] = {
		{ 0, LEVEL_EXPIRED, "OpenPGP signing subkey expired today",
		  "2026-01-01, expired today", NOTIFY_TEXT_URGENCY_CRITICAL },
		{ 1, LEVEL_CRITICAL, "OpenPGP signing subkey expires in 1 day",
		  "2026-01-02, in 1 day", NOTIFY_TEXT_URGENCY_CRITICAL },
		{ 5, LEVEL_WARNING, "OpenPGP signing subkey expires in 5 days",
		  "2026-01-06, in 5 days", NOTIFY_TEXT_URGENCY_NORMAL },
		{ 20, LEVEL_NOTICE, "OpenPGP signing subkey expires in 20 days",
		  "2026-01-21, in 20 days", NOTIFY_TEXT_URGENCY_NORMAL },
		{ 400, LEVEL_OK, "OpenPGP signing subkey expires in 400 days",
		  "2027-02-05, in 400 days", NOTIFY_TEXT_URGENCY_LOW },
	};
	struct notify_text t;
	char body[1024];

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		setup(cases[i].days, cases[i].level);
		notify_text_expiry(&key, &subs[1], &yk, NULL, false, NOW, &t);
		ASSERT_STREQ(t.summary, cases[i].summary);
		snprintf(body, sizeof(body),
		         "Alice Tester <alice@example.org>\n"
		         "Subkey 0000111122223333 (sign) on YubiKey 5 NFC #12345678\n"
		         "Expiry: %s\n" RENEW,
		         cases[i].date);
		ASSERT_STREQ(t.body, body);
		ASSERT_EQ(t.urgency, cases[i].urgency);

		notify_text_expiry(&key, &subs[1], &yk, "https://wiki.example.org/renew", false,
		                   NOW, &t);
		ASSERT_STREQ(t.summary, cases[i].summary);
		strcat(body, "\nInstructions: https://wiki.example.org/renew");
		ASSERT_STREQ(t.body, body);
	}

	/* 2 days past expiry. */
	setup(-2, LEVEL_EXPIRED);
	notify_text_expiry(&key, &subs[1], NULL, "", false, NOW, &t);
	ASSERT_STREQ(t.summary, "OpenPGP signing subkey expired 2 days ago");

	/* The subkey git signs with says so, before how to renew it. */
	setup(5, LEVEL_WARNING);
	subs[1].git_signs = true;
	notify_text_expiry(&key, &subs[1], &yk, NULL, false, NOW, &t);
	ASSERT_STREQ(t.body, "Alice Tester <alice@example.org>\n"
	                     "Subkey 0000111122223333 (sign) on YubiKey 5 NFC #12345678\n"
	                     "Expiry: 2026-01-06, in 5 days\n"
	                     "Git signs your commits with it\n" RENEW);
	subs[1].git_signs = false;
}

/* The renewal the popup proposes runs where it is read, or says where it runs: with the primary
 * secret offline (sec#) on the machine that holds it; someone else's key only its owner renews,
 * so ours is to fetch what they published. */
TEST(expiry_renew_where)
{
	struct notify_text t;

	setup(5, LEVEL_WARNING);
	subs[0].secret = SECRET_NONE;
	notify_text_expiry(&key, &subs[1], &yk, NULL, false, NOW, &t);
	ASSERT_TRUE(strstr(t.body, "\nRenew: On the machine that holds the primary key: gpg "
	                           "--quick-set-expire " PRIMARY " 1y " SUB));
	setup(5, LEVEL_WARNING);
	subs[0].secret = SECRET_NONE;
	subs[1].secret = SECRET_NONE;
	key.has_secret = false;
	notify_text_expiry(&key, &subs[1], &yk, NULL, false, NOW, &t);
	ASSERT_TRUE(strstr(t.body, "\nRenew: gpg --refresh-keys " PRIMARY));
}

TEST(expiry_details)
{
	struct notify_text t;

	setup(5, LEVEL_WARNING);
	notify_text_expiry(&key, &subs[1], &yk, NULL, true, NOW, &t);
	ASSERT_STREQ(t.body, "Alice Tester <alice@example.org>\n"
	                     "Subkey 0000111122223333 (sign) on YubiKey 5 NFC #12345678\n"
	                     "Expiry: 2026-01-06, in 5 days\n" RENEW "\n\n"
	                     "Fingerprint: AAAA BBBB CCCC DDDD EEEE  FFFF 0000 1111 2222 3333\n"
	                     "Algorithm: ed25519, created 2025-01-01\n"
	                     "Primary key: 0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567");
}

TEST(where_and_primary)
{
	struct notify_text t;

	/* No token known: the stub's AID names the card by the serial GnuPG prints. */
	setup(5, LEVEL_WARNING);
	strcpy(subs[1].card_serial, "D2760001240103040006123456780000");
	notify_text_expiry(&key, &subs[1], NULL, NULL, false, NOW, &t);
	ASSERT_TRUE(strstr(t.body, "Subkey 0000111122223333 (sign) on card #12345678\n"));
	subs[1].secret = SECRET_DISK;
	subs[1].capabilities = CAP_ENCRYPT;
	notify_text_expiry(&key, &subs[1], NULL, NULL, false, NOW, &t);
	ASSERT_STREQ(t.summary, "OpenPGP encryption subkey expires in 5 days");
	ASSERT_TRUE(strstr(t.body, "Subkey 0000111122223333 (encrypt) on disk\n"));
	subs[1].capabilities = CAP_SIGN | CAP_AUTH;
	subs[1].secret = SECRET_NONE;
	notify_text_expiry(&key, &subs[1], NULL, NULL, false, NOW, &t);
	ASSERT_STREQ(t.summary, "OpenPGP sign/auth subkey expires in 5 days");
	ASSERT_TRUE(strstr(t.body, "Subkey 0000111122223333 (sign/auth)\n"));

	/* The primary key: renewed without a subkey argument. */
	subs[0].expires = NOW + 3 * SECONDS_PER_DAY;
	subs[0].level = LEVEL_CRITICAL;
	notify_text_expiry(&key, &subs[0], NULL, NULL, false, NOW, &t);
	ASSERT_STREQ(t.summary, "OpenPGP primary key expires in 3 days");
	ASSERT_STREQ(t.body, "Alice Tester <alice@example.org>\n"
	                     "Key 89ABCDEF01234567 (certify) on disk\n"
	                     "Expiry: 2026-01-04, in 3 days\n"
	                     "Renew: gpg --quick-set-expire " PRIMARY " 1y");
	ASSERT_EQ(t.urgency, NOTIFY_TEXT_URGENCY_CRITICAL);

	/* No uid: the key's long id stands in. */
	key.uid[0] = 0;
	notify_text_expiry(&key, &subs[0], NULL, NULL, false, NOW, &t);
	ASSERT_TRUE(strncmp(t.body, "89ABCDEF01234567\n", 17) == 0);
}

TEST(token_name)
{
	struct token t = { 0 };
	char buf[NOTIFY_TOKEN_NAME_MAX];

	setup(5, LEVEL_WARNING);
	token_display_name(&yk, buf, sizeof(buf));
	ASSERT_STREQ(buf, "YubiKey 5 NFC #12345678");
	t.kind = TOKEN_KIND_NITROKEY;
	strcpy(t.openpgp.serial, "000F1234");
	token_display_name(&t, buf, sizeof(buf));
	ASSERT_STREQ(buf, "Nitrokey #000F1234");
	t.kind = TOKEN_KIND_UNKNOWN;
	t.openpgp.serial[0] = 0;
	token_display_name(&t, buf, sizeof(buf));
	ASSERT_STREQ(buf, "Token");
	t.kind = TOKEN_KIND_OPENPGP_CARD;
	strcpy(t.serial, "0A1B2C3D");
	token_display_name(&t, buf, sizeof(buf));
	ASSERT_STREQ(buf, "OpenPGP card #0A1B2C3D");
}

TEST(fpr_helpers)
{
	char buf[80];

	ASSERT_STREQ(notify_text_short_fpr(SUB), "0000111122223333");
	ASSERT_STREQ(notify_text_short_fpr("ABCD"), "ABCD");
	notify_text_group_fpr(buf, sizeof(buf), SUB);
	ASSERT_STREQ(buf, "AAAA BBBB CCCC DDDD EEEE  FFFF 0000 1111 2222 3333");
	notify_text_group_fpr(buf, sizeof(buf), "ABC");
	ASSERT_STREQ(buf, "ABC");
	notify_text_usage(buf, sizeof(buf), 0);
	ASSERT_STREQ(buf, "");
	notify_text_usage(buf, sizeof(buf), CAP_SIGN | CAP_ENCRYPT | CAP_AUTH | CAP_CERTIFY);
	ASSERT_STREQ(buf, "sign/encrypt/auth/certify");
	ASSERT_EQ(notify_text_urgency_for(LEVEL_OK), NOTIFY_TEXT_URGENCY_LOW);
	ASSERT_EQ(notify_text_urgency_for(LEVEL_NOTICE), NOTIFY_TEXT_URGENCY_NORMAL);
	ASSERT_EQ(notify_text_urgency_for(LEVEL_WARNING), NOTIFY_TEXT_URGENCY_NORMAL);
	ASSERT_EQ(notify_text_urgency_for(LEVEL_CRITICAL), NOTIFY_TEXT_URGENCY_CRITICAL);
	ASSERT_EQ(notify_text_urgency_for(LEVEL_EXPIRED), NOTIFY_TEXT_URGENCY_CRITICAL);
}

TEST(token_inserted)
{
	struct subkey more[3];
	struct key k2;
	struct notify_text t;

	setup(5, LEVEL_WARNING);
	ASSERT_OK(notify_text_token_inserted(&yk, &key, 1, NULL, NOW, &t));
	ASSERT_STREQ(t.summary, "YubiKey 5 NFC #12345678: signing subkey expires in 5 days");
	ASSERT_STREQ(t.body, "Alice Tester <alice@example.org>\n"
	                     "Subkey 0000111122223333 (sign): 2026-01-06, in 5 days\n" RENEW);
	ASSERT_EQ(t.urgency, NOTIFY_TEXT_URGENCY_NORMAL);

	/* Another token holds nothing warned. */
	strcpy(yk.id, "yubikey-1");
	ASSERT_ERR(notify_text_token_inserted(&yk, &key, 1, NULL, NOW, &t), ENOENT);
	strcpy(yk.id, "yubikey-12345678");

	/* Level ok: nothing to say. */
	subs[1].level = LEVEL_OK;
	ASSERT_ERR(notify_text_token_inserted(&yk, &key, 1, NULL, NOW, &t), ENOENT);

	/* Two warned subkeys, one expired: counted, worst urgency. */
	subs[1].level = LEVEL_WARNING;
	memcpy(more, subs, sizeof(subs));
	memset(&more[2], 0, sizeof(more[2]));
	strcpy(more[2].fingerprint, "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB");
	more[2].capabilities = CAP_ENCRYPT;
	more[2].expires = NOW - 3 * SECONDS_PER_DAY;
	more[2].level = LEVEL_EXPIRED;
	strcpy(more[2].token_id, "yubikey-12345678");
	k2 = key;
	k2.subkeys = more;
	k2.n_subkeys = 3;
	ASSERT_OK(notify_text_token_inserted(&yk, &k2, 1, "https://x.example/r", NOW, &t));
	ASSERT_STREQ(t.summary, "YubiKey 5 NFC #12345678: 2 subkeys need renewal");
	ASSERT_STREQ(t.body, "Alice Tester <alice@example.org>\n"
	                     "Subkey 0000111122223333 (sign): 2026-01-06, in 5 days\n" RENEW "\n\n"
	                     "Alice Tester <alice@example.org>\n"
	                     "Subkey BBBBBBBBBBBBBBBB (encrypt): 2025-12-29, expired 3 days ago\n"
	                     "Renew: gpg --quick-set-expire " PRIMARY
	                     " 1y BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB\n"
	                     "Instructions: https://x.example/r");
	ASSERT_EQ(t.urgency, NOTIFY_TEXT_URGENCY_CRITICAL);
}

TEST(finding)
{
	struct finding f = { 0 };
	struct notify_text t;

	setup(5, LEVEL_WARNING);
	strcpy(f.rule, "pin-retries-low");
	f.level = LEVEL_WARNING;
	strcpy(f.message, "YubiKey 5 NFC #12345678 has 1 user PIN try left");
	strcpy(f.token, "yubikey-12345678");
	strcpy(f.hint, "gpg --card-edit, then admin, unblock");
	notify_text_finding(&f, NULL, &yk, &t);
	ASSERT_STREQ(t.summary, "YubiKey 5 NFC #12345678 has 1 user PIN try left");
	ASSERT_STREQ(t.body, "Token: YubiKey 5 NFC #12345678\n"
	                     "What to do: gpg --card-edit, then admin, unblock\n"
	                     "Rule: pin-retries-low");
	ASSERT_EQ(t.urgency, NOTIFY_TEXT_URGENCY_NORMAL);

	memset(&f, 0, sizeof(f));
	strcpy(f.rule, "revoked-key-on-card");
	f.level = LEVEL_CRITICAL;
	strcpy(f.key, PRIMARY);
	strcpy(f.subkey, SUB);
	notify_text_finding(&f, &key, NULL, &t);
	ASSERT_STREQ(t.summary, "revoked-key-on-card");
	ASSERT_STREQ(t.body, "Key: Alice Tester <alice@example.org> (89ABCDEF01234567)\n"
	                     "Subkey: 0000111122223333\n"
	                     "Rule: revoked-key-on-card");
	ASSERT_EQ(t.urgency, NOTIFY_TEXT_URGENCY_CRITICAL);
}

TEST(touch)
{
	struct notify_text t;

	setup(5, LEVEL_WARNING);
	ASSERT_ERR(notify_text_touch(&yk, &t), ENOENT);
	yk.touch_waiting = true;
	yk.touch.application = TOUCH_APP_OPENPGP;
	strcpy(yk.touch.slot, "sig");
	yk.touch.since = NOW;
	strcpy(yk.touch.requester, "git");
	ASSERT_OK(notify_text_touch(&yk, &t));
	ASSERT_STREQ(t.summary, "YubiKey 5 NFC #12345678 waits for a touch");
	ASSERT_STREQ(t.body, "signing key; likely git");
	ASSERT_EQ(t.urgency, NOTIFY_TEXT_URGENCY_NORMAL);

	/* No requester known: no guess. FIDO has no slot. */
	memset(yk.touch.requester, 0, sizeof(yk.touch.requester));
	strcpy(yk.touch.slot, "dec");
	ASSERT_OK(notify_text_touch(&yk, &t));
	ASSERT_STREQ(t.body, "decryption key");
	memset(&yk.touch, 0, sizeof(yk.touch));
	yk.touch.application = TOUCH_APP_FIDO;
	strcpy(yk.touch.requester, "firefox");
	ASSERT_OK(notify_text_touch(&yk, &t));
	ASSERT_STREQ(t.body, "FIDO; likely firefox");
}

int main(void)
{
	RUN(expiry_days);
	RUN(expiry_renew_where);
	RUN(expiry_details);
	RUN(where_and_primary);
	RUN(token_name);
	RUN(fpr_helpers);
	RUN(token_inserted);
	RUN(finding);
	RUN(touch);
	return 0;
}
