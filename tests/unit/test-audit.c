/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit rules and subkey-to-token matching over hand-built structs. A clean world (a key
 * whose subkeys live on one inserted YubiKey, primary offline, sane expiry) raises nothing; each
 * test changes one thing and checks that exactly its rule fires, with the words a user reads,
 * and that a near miss keeps the rule quiet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"
#include "config.h"
#include "expiry.h"
#include "test.h"

#define DAY SECONDS_PER_DAY
#define NOW INT64_C(1796256000) /* 2026-12-03 00:00:00 UTC */

#define FPR_PRI "C26E5BD792EB8F4EC1606B68B82E9F4BA59A4309"
#define FPR_SIG "9190F2BBC6D1062907230F84123FE942CEC8B16E"
#define FPR_ENC "21F8DD6CF3528146A3B138DC416BF1B32F5D4F5B"
#define FPR_AUT "0D5C1A32C9E3B1F2A6D7E8F90A1B2C3D4E5F6071"
#define AID_A "D2760001240103040006123456780000"
#define AID_B "D2760001240103040006876543210000"

#define WORLD_SUBS 5

struct world {
	struct config cfg;
	struct token tokens[2];
	size_t n_tokens;
	struct subkey subs[WORLD_SUBS];
	struct key key;
	struct finding *f;
	size_t n;
	bool scd_ccid_on;
	const char *gnupghome;
	const char *git_key; /* git's user.signingkey */
	struct upstream_result up[2]; /* published copies; their subkeys point into pub_subs */
	struct subkey pub_subs[WORLD_SUBS]; /* as many as subs: publish() copies them all */
	size_t n_up;
};

static void set_subkey(struct subkey *s, const char *fpr, unsigned caps, enum secret_location loc)
{
	memset(s, 0, sizeof(*s));
	strcpy(s->fingerprint, fpr);
	strcpy(s->algorithm, "ed25519");
	s->capabilities = caps;
	s->created = NOW - 100 * DAY;
	s->expires = NOW + 365 * DAY;
	s->secret = loc;
	if (loc == SECRET_CARD)
		strcpy(s->card_serial, AID_A);
}

static void set_token(struct token *t, const char *id, const char *serial, const char *aid)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->id, id);
	t->kind = TOKEN_KIND_YUBIKEY;
	strcpy(t->serial, serial);
	t->present = true;
	t->first_seen = NOW - 50 * DAY;
	t->last_seen = NOW;
	t->has_openpgp = true;
	strcpy(t->openpgp.aid, aid);
	strcpy(t->openpgp.serial, serial);
	strcpy(t->openpgp.slots[SLOT_SIGN].fingerprint, FPR_SIG);
	strcpy(t->openpgp.slots[SLOT_ENCRYPT].fingerprint, FPR_ENC);
	strcpy(t->openpgp.slots[SLOT_AUTH].fingerprint, FPR_AUT);
	for (int i = 0; i < SLOT_MAX; i++)
		t->openpgp.slots[i].touch = TOUCH_ON;
	t->openpgp.pin_retries[0] = 3;
	t->openpgp.pin_retries[2] = 3;
}

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	config_init(&w->cfg);
	set_token(&w->tokens[0], "yubikey-12345678", "12345678", AID_A);
	w->n_tokens = 1;
	set_subkey(&w->subs[0], FPR_PRI, CAP_CERTIFY, SECRET_NONE);
	w->subs[0].is_primary = true;
	set_subkey(&w->subs[1], FPR_SIG, CAP_SIGN, SECRET_CARD);
	set_subkey(&w->subs[2], FPR_ENC, CAP_ENCRYPT, SECRET_CARD);
	set_subkey(&w->subs[3], FPR_AUT, CAP_AUTH, SECRET_CARD);
	strcpy(w->key.fingerprint, FPR_PRI);
	strcpy(w->key.uid, "Alice <alice@example.org>");
	w->key.has_secret = true;
	w->key.subkeys = w->subs;
	w->key.n_subkeys = 4;
}

static void world_run(struct world *w, const char *default_key)
{
	struct audit_daemon dmn = {
		.default_key = default_key,
		.keys_listed = true,
		.scd_ccid_on = w->scd_ccid_on,
		.gnupghome = w->gnupghome,
		.git_signing_key = w->git_key,
		.upstream = w->up,
		.n_upstream = w->n_up,
	};

	free(w->f);
	w->f = NULL;
	expiry_apply(&w->key, 1, &w->cfg, NOW);
	audit_match(w->tokens, w->n_tokens, &w->key, 1);
	ASSERT_OK(audit_run(w->tokens, w->n_tokens, &w->key, 1, &w->cfg, &dmn, NOW, &w->f, &w->n));
	for (size_t i = 0; i < w->n; i++)
		fprintf(stderr, "    [%s] %s: %s | %s\n", level_to_string(w->f[i].level),
		        w->f[i].rule, w->f[i].message, w->f[i].hint);
}

static size_t count(const struct world *w, const char *rule)
{
	size_t c = 0;

	for (size_t i = 0; i < w->n; i++)
		c += streq(w->f[i].rule, rule);
	return c;
}

static const struct finding *get(const struct world *w, const char *rule)
{
	for (size_t i = 0; i < w->n; i++)
		if (streq(w->f[i].rule, rule))
			return &w->f[i];
	TEST_FAIL("no finding %s", rule);
}

/* Only `rule` fires (n times). */
static void expect_only(const struct world *w, const char *rule, size_t n)
{
	ASSERT_EQ(count(w, rule), n);
	ASSERT_EQ(w->n, n);
}

static void world_done(struct world *w)
{
	free(w->f);
	w->f = NULL;
}

static void world_reset(struct world *w)
{
	world_done(w);
	world_init(w);
}

TEST(clean)
{
	struct world w;

	world_init(&w);
	world_run(&w, FPR_PRI);
	ASSERT_EQ(w.n, 0);
	/* Matching: fingerprint on the inserted card. */
	ASSERT_STREQ(w.subs[1].token_id, "yubikey-12345678");
	ASSERT_STREQ(w.subs[0].token_id, "");
	world_done(&w);
}

TEST(match)
{
	struct world w;
	struct openpgp_card c;

	memset(&c, 0, sizeof(c));
	strcpy(c.aid, AID_A);
	strcpy(c.serial, "12345678");
	ASSERT_TRUE(audit_card_serial_matches(AID_A, &c));
	ASSERT_TRUE(audit_card_serial_matches("d2760001240103040006123456780001", &c));
	/* GnuPG 2.4's stubs carry version 0100, whatever the card's. */
	ASSERT_TRUE(audit_card_serial_matches("D2760001240100000006123456780000", &c));
	ASSERT_FALSE(audit_card_serial_matches("D2760001240100000006876543210000", &c));
	ASSERT_FALSE(audit_card_serial_matches("D2760001240103040005123456780000", &c));
	ASSERT_FALSE(audit_card_serial_matches(AID_B, &c));
	ASSERT_FALSE(audit_card_serial_matches("", &c));
	c.aid[0] = 0;
	ASSERT_TRUE(audit_card_serial_matches(AID_A, &c));
	ASSERT_TRUE(audit_card_serial_matches("12345678", &c));

	/* The stub's serial alone ties a subkey to a card whose slots were not read. */
	world_init(&w);
	memset(w.tokens[0].openpgp.slots, 0, sizeof(w.tokens[0].openpgp.slots));
	w.tokens[0].present = false;
	audit_match(w.tokens, 1, &w.key, 1);
	ASSERT_STREQ(w.subs[2].token_id, "yubikey-12345678");

	/* Two cards with the same keys: the one the stub names wins, even when absent. */
	world_reset(&w);
	set_token(&w.tokens[1], "yubikey-87654321", "87654321", AID_B);
	w.tokens[0].present = false;
	w.n_tokens = 2;
	audit_match(w.tokens, 2, &w.key, 1);
	ASSERT_STREQ(w.subs[1].token_id, "yubikey-12345678");

	/* Unknown everywhere. */
	world_reset(&w);
	audit_match(w.tokens, 0, &w.key, 1);
	ASSERT_STREQ(w.subs[1].token_id, "");
}

TEST(subkey_expiring)
{
	struct world w;
	const struct finding *f;

	world_init(&w);
	w.subs[1].expires = NOW + 6 * DAY;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiring", 1);
	f = get(&w, "subkey-expiring");
	ASSERT_EQ(f->level, LEVEL_WARNING);
	ASSERT_STREQ(f->message, "Signing subkey 0x123FE942CEC8B16E of Alice <alice@example.org> "
	                         "on YubiKey #12345678 expires in 6 days (2026-12-09)");
	/* The primary secret is offline (sec#): gpg here cannot renew, the hint says where. */
	ASSERT_STREQ(f->hint,
	             "On the machine that holds the primary key: gpg --quick-set-expire " FPR_PRI
	             " 1y " FPR_SIG);
	ASSERT_STREQ(f->key, FPR_PRI);
	ASSERT_STREQ(f->subkey, FPR_SIG);
	/* the message names the token: so does the finding */
	ASSERT_STREQ(f->token, w.tokens[0].id);
	w.subs[1].expires = NOW + 2 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(get(&w, "subkey-expiring")->level, LEVEL_CRITICAL);
	w.subs[1].expires = NOW + 20 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(get(&w, "subkey-expiring")->level, LEVEL_NOTICE);

	/* Quiet: 31 days left; or a successor already exists; or it is revoked. */
	w.subs[1].expires = NOW + 31 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	w.subs[1].expires = NOW + 6 * DAY;
	w.subs[3].capabilities |= CAP_SIGN;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "subkey-expiring"), 0);
	w.subs[3].capabilities = CAP_AUTH;
	w.subs[1].revoked = true;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "subkey-expiring"), 0);
	world_done(&w);
}

TEST(subkey_expired_no_replacement)
{
	struct world w;

	world_init(&w);
	w.subs[2].expires = NOW - 2 * DAY;
	w.subs[2].expired = true;
	/* Keep the card from also reporting it. */
	w.tokens[0].openpgp.slots[SLOT_ENCRYPT].fingerprint[0] = 0;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expired-no-replacement", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_CRITICAL);
	ASSERT_STREQ(w.f[0].message, "Encryption subkey 0x416BF1B32F5D4F5B of Alice "
	                             "<alice@example.org> on YubiKey #12345678 expired 2 days ago "
	                             "(2026-12-01) and nothing replaces it");

	/* Quiet: a newer encryption subkey exists. */
	w.subs[3].capabilities = CAP_ENCRYPT;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "subkey-expired-no-replacement"), 0);
	world_done(&w);
}

/* A newer signing subkey (index 4) beside the one the card holds (index 1). */
static void add_replacement(struct world *w, int64_t old_expires, enum secret_location loc,
                            const char *card)
{
	w->subs[1].expires = old_expires;
	w->subs[1].expired = old_expires <= NOW;
	set_subkey(&w->subs[4], "5A1E0F3C9B7D2E4F6A8C0B1D3E5F7A9C2B4D6E80", CAP_SIGN, loc);
	w->subs[4].created = NOW - 2 * DAY;
	if (card)
		strcpy(w->subs[4].card_serial, card);
	w->key.n_subkeys = 5;
}

TEST(replaced_subkey)
{
	struct world w;

	/* Replaced before its expiry, the replacement moved to the same card: quiet. */
	world_init(&w);
	add_replacement(&w, NOW + 5 * DAY, SECRET_CARD, AID_A);
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	/* Replaced after its expiry: no expiry finding, nor the card's. */
	add_replacement(&w, NOW - 5 * DAY, SECRET_CARD, AID_A);
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	/* A revoked subkey: nothing either. */
	world_reset(&w);
	w.subs[2].expires = NOW - 5 * DAY;
	w.subs[2].expired = true;
	w.subs[2].revoked = true;
	w.tokens[0].openpgp.slots[SLOT_ENCRYPT].fingerprint[0] = 0;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(replacement_not_on_card)
{
	struct world w;
	const struct finding *f;

	/* The carried card A holds the old signing subkey; its replacement is on backup card B. */
	world_init(&w);
	add_replacement(&w, NOW + 2 * DAY, SECRET_CARD, AID_B);
	world_run(&w, NULL);
	expect_only(&w, "replacement-not-on-card", 1);
	f = get(&w, "replacement-not-on-card");
	ASSERT_EQ(f->level, LEVEL_WARNING);
	ASSERT_STREQ(f->subkey, FPR_SIG);
	ASSERT_STREQ(f->message, "Signing subkey 0x123FE942CEC8B16E of Alice <alice@example.org> "
	                         "on YubiKey #12345678 expires in 2 days (2026-12-05); its "
	                         "replacement 0x3E5F7A9C2B4D6E80 is not on that card yet");
	ASSERT_STREQ(f->hint, "Move the replacement to the card: gpg --edit-key " FPR_PRI
	                      ", then \"key 4\" and \"keytocard\"");
	/* Expired on the card: still a warning, and the card's own finding is this one. */
	add_replacement(&w, NOW - 1 * DAY, SECRET_CARD, AID_B);
	world_run(&w, NULL);
	expect_only(&w, "replacement-not-on-card", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_WARNING);
	ASSERT_STREQ(w.f[0].message, "Signing subkey 0x123FE942CEC8B16E of Alice "
	                             "<alice@example.org> on YubiKey #12345678 expired 1 day ago "
	                             "(2026-12-02); its replacement 0x3E5F7A9C2B4D6E80 is not on "
	                             "that card yet");
	world_done(&w);
}

TEST(retired_key)
{
	struct world w;

	world_init(&w);
	w.subs[0].expires = NOW - 10 * DAY;
	w.subs[0].expired = true;
	w.subs[0].secret = SECRET_DISK;
	world_run(&w, NULL);
	ASSERT_TRUE(w.n > 0);
	w.cfg.n_retired = 1;
	strcpy(w.cfg.retired[0], FPR_PRI);
	world_run(&w, NULL);
	ASSERT_TRUE(w.key.retired);
	ASSERT_EQ(w.key.level, LEVEL_OK);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(subkey_no_expiry)
{
	struct world w;

	world_init(&w);
	w.subs[0].expires = 0;
	world_run(&w, NULL);
	expect_only(&w, "subkey-no-expiry", 1);
	ASSERT_STREQ(w.f[0].hint,
	             "On the machine that holds the primary key: gpg --quick-set-expire " FPR_PRI
	             " 2y");
	/* Quiet on a revoked subkey without expiry. */
	world_reset(&w);
	w.subs[3].expires = 0;
	w.subs[3].revoked = true;
	w.tokens[0].openpgp.slots[SLOT_AUTH].fingerprint[0] = 0;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(subkey_expiry_too_far)
{
	struct world w;

	world_init(&w);
	w.subs[1].created = NOW;
	w.subs[1].expires = NOW + 731 * DAY;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiry-too-far", 1);
	ASSERT_STREQ(w.f[0].subkey, FPR_SIG);
	/* The validity counts (expiry less creation), not the time left: made 400 days ago for 800
	 * days, 400 are left. */
	w.subs[1].created = NOW - 400 * DAY;
	w.subs[1].expires = NOW + 400 * DAY;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiry-too-far", 1);
	ASSERT_STREQ(w.f[0].message,
	             "Signing subkey 0x123FE942CEC8B16E of Alice <alice@example.org> "
	             "on YubiKey #12345678 is valid for 800 days, more than 730: it "
	             "expires in 400 days (2028-01-07)");
	/* Made 100 days ago for 730 days: 630 left, within the limit. */
	w.subs[1].created = NOW - 100 * DAY;
	w.subs[1].expires = NOW + 630 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	/* Quiet at exactly the limit, and with the rule switched off. */
	w.subs[1].created = NOW;
	w.subs[1].expires = NOW + 730 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	w.subs[1].expires = NOW + 3000 * DAY;
	w.cfg.max_validity_days = 0;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(primary_secret_on_disk)
{
	struct world w;

	world_init(&w);
	w.subs[0].secret = SECRET_DISK;
	world_run(&w, NULL);
	expect_only(&w, "primary-secret-on-disk", 1);
	ASSERT_STREQ(w.f[0].message, "The secret primary key of Alice <alice@example.org> "
	                             "(0xB82E9F4BA59A4309) is on this computer's disk");
	/* Quiet when the primary lives on a card. */
	w.subs[0].secret = SECRET_CARD;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(subkey_secret_on_disk)
{
	struct world w;

	world_init(&w);
	w.subs[2].secret = SECRET_DISK;
	w.subs[2].card_serial[0] = 0;
	w.tokens[0].openpgp.slots[SLOT_ENCRYPT].fingerprint[0] = 0;
	world_run(&w, NULL);
	expect_only(&w, "subkey-secret-on-disk", 1);
	ASSERT_STREQ(w.f[0].hint, "After an offline backup: gpg --edit-key " FPR_PRI
	                          ", then \"key 2\" and \"keytocard\"");
	/* Quiet when the subkey is public only (secret elsewhere). */
	w.subs[2].secret = SECRET_NONE;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(key_on_card_revoked_expired)
{
	struct world w;

	world_init(&w);
	w.subs[1].revoked = true;
	world_run(&w, NULL);
	expect_only(&w, "revoked-key-on-card", 1);
	ASSERT_STREQ(w.f[0].token, "yubikey-12345678");
	ASSERT_STREQ(w.f[0].message, "The signature slot of YubiKey #12345678 holds Signing subkey "
	                             "0x123FE942CEC8B16E of Alice <alice@example.org>, which is "
	                             "revoked");

	world_reset(&w);
	w.subs[1].expires = NOW - DAY;
	w.subs[3].capabilities |= CAP_SIGN; /* a replacement: only the card rule speaks */
	world_run(&w, NULL);
	expect_only(&w, "expired-key-on-card", 1);

	/* Quiet: the expired subkey is no longer on the card. */
	w.tokens[0].openpgp.slots[SLOT_SIGN].fingerprint[0] = 0;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(revoked_default_key)
{
	struct world w;

	world_init(&w);
	w.key.revoked = true;
	w.tokens[0].openpgp.slots[SLOT_SIGN].fingerprint[0] = 0;
	w.tokens[0].openpgp.slots[SLOT_ENCRYPT].fingerprint[0] = 0;
	w.tokens[0].openpgp.slots[SLOT_AUTH].fingerprint[0] = 0;
	world_run(&w, "0xB82E9F4BA59A4309");
	expect_only(&w, "revoked-default-key", 1);
	world_run(&w, "alice@example.org");
	expect_only(&w, "revoked-default-key", 1);
	world_run(&w, FPR_PRI "!");
	expect_only(&w, "revoked-default-key", 1);
	/* A default-key that names no key here: gpg cannot sign by default either. */
	world_run(&w, "bob@example.org");
	expect_only(&w, "default-key-missing", 1);
	ASSERT_STREQ(w.f[0].message, "gpg.conf's default-key (bob@example.org) names no key with a "
	                             "secret part on this computer");
	ASSERT_STREQ(w.f[0].hint, "point default-key in gpg.conf at NEWFPR");
	world_run(&w, "0x0000000000000001");
	expect_only(&w, "default-key-missing", 1);
	/* Quiet: none. */
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	/* Quiet: the default key is fine. */
	w.key.revoked = false;
	world_run(&w, "alice@example.org");
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(default_key_unusable)
{
	struct world w;

	world_init(&w);
	/* The signing subkey's secret is nowhere here: gpg cannot sign with the default key. */
	w.subs[1].secret = SECRET_NONE;
	w.tokens[0].openpgp.slots[SLOT_SIGN].fingerprint[0] = 0;
	world_run(&w, "alice@example.org");
	expect_only(&w, "default-key-missing", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_WARNING);
	ASSERT_STREQ(w.f[0].message,
	             "gpg.conf's default-key (alice@example.org) signs with Signing subkey "
	             "0x123FE942CEC8B16E of Alice <alice@example.org>, which has no secret part "
	             "here, neither on disk nor on a card");
	ASSERT_STREQ(w.f[0].hint, "Insert the card that holds it and run gpg --card-status; or "
	                          "point default-key in gpg.conf at NEWFPR");
	/* Quiet: the secret is on disk. */
	w.subs[1].secret = SECRET_DISK;
	world_run(&w, "alice@example.org");
	ASSERT_EQ(count(&w, "default-key-missing"), 0);
	world_done(&w);
}

/* An expired default key is its own rule, not revoked-default-key's: with its own words and the
 * renewal as the hint. */
TEST(default_key_expired)
{
	struct world w;

	world_init(&w);
	memset(w.tokens[0].openpgp.slots, 0, sizeof(w.tokens[0].openpgp.slots));
	w.subs[0].expires = NOW - 3 * DAY;
	world_run(&w, "alice@example.org");
	ASSERT_EQ(count(&w, "default-key-expired"), 1);
	ASSERT_EQ(count(&w, "revoked-default-key"), 0);
	ASSERT_STREQ(
	        get(&w, "default-key-expired")->message,
	        "gpg.conf names Alice <alice@example.org> (0xB82E9F4BA59A4309) as default-key, but "
	        "that key has expired");
	ASSERT_STREQ(get(&w, "default-key-expired")->hint,
	             "On the machine that holds the primary key: gpg --quick-set-expire " FPR_PRI
	             " 1y; or point default-key in gpg.conf at NEWFPR");
	/* The expired primary's own finding says what an expired primary means. */
	ASSERT_STREQ(
	        get(&w, "subkey-expired-no-replacement")->message,
	        "Primary key 0xB82E9F4BA59A4309 of Alice <alice@example.org> expired 3 days ago "
	        "(2026-11-30): none of its subkeys can be used until it is renewed");
	/* Only the signing subkey expired: the default key still names it. */
	world_reset(&w);
	w.tokens[0].openpgp.slots[SLOT_SIGN].fingerprint[0] = 0;
	w.subs[1].expires = NOW - DAY;
	world_run(&w, FPR_PRI);
	ASSERT_EQ(count(&w, "default-key-expired"), 1);
	ASSERT_TRUE(strstr(get(&w, "default-key-expired")->message,
	                   "signs with Signing subkey 0x123FE942CEC8B16E") != NULL);
	ASSERT_EQ(count(&w, "default-key-missing") + count(&w, "revoked-default-key"), 0);
	world_done(&w);
}

/* Someone else's key (tracked, no secret part here): only its owner renews it, so the hint
 * fetches the renewal and the message says why. An own key with its primary on disk: the plain
 * command, which runs here. */
TEST(expiry_hint_whose_key)
{
	struct world w;
	const struct finding *f;

	world_init(&w);
	w.n_tokens = 0;
	for (size_t i = 0; i < WORLD_SUBS; i++)
		w.subs[i].secret = SECRET_NONE;
	w.key.has_secret = false;
	w.key.tracked = true;
	w.subs[1].expires = NOW + 2 * DAY;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiring", 1);
	f = get(&w, "subkey-expiring");
	ASSERT_STREQ(f->message, "Signing subkey 0x123FE942CEC8B16E of Alice <alice@example.org> "
	                         "expires in 2 days (2026-12-05); only its owner can renew it");
	ASSERT_STREQ(f->hint, "gpg --refresh-keys " FPR_PRI);
	w.subs[1].expires = NOW - 2 * DAY;
	world_run(&w, NULL);
	f = get(&w, "subkey-expired-no-replacement");
	ASSERT_TRUE(strstr(f->message, "nothing replaces it; only its owner can renew it") != NULL);
	ASSERT_STREQ(f->hint, "gpg --refresh-keys " FPR_PRI);

	world_reset(&w);
	w.subs[0].secret = SECRET_DISK;
	w.subs[1].expires = NOW + 6 * DAY;
	world_run(&w, NULL);
	ASSERT_STREQ(get(&w, "subkey-expiring")->hint,
	             "gpg --quick-set-expire " FPR_PRI " 1y " FPR_SIG);
	ASSERT_TRUE(strstr(get(&w, "subkey-expiring")->message, "owner") == NULL);
	/* The primary on a card: gpg here renews with it inserted. */
	w.subs[0].secret = SECRET_CARD;
	world_run(&w, NULL);
	ASSERT_STREQ(get(&w, "subkey-expiring")->hint,
	             "gpg --quick-set-expire " FPR_PRI " 1y " FPR_SIG);
	world_done(&w);
}

#define FPR_SIG2 "6A1B2C3D4E5F60718293A4B5C6D7E8F901234567"

/* Alice gets a second, newer signing subkey, its stub naming the same card. */
static void add_second_signing_subkey(struct world *w)
{
	set_subkey(&w->subs[4], FPR_SIG2, CAP_SIGN, SECRET_CARD);
	w->subs[4].created = NOW - 10 * DAY;
	w->subs[4].expires = NOW + 300 * DAY;
	w->key.n_subkeys = 5;
}

static const struct finding *git_finding(struct world *w, const char *spec)
{
	w->git_key = spec;
	world_run(w, NULL);
	ASSERT_EQ(count(w, "git-signing-key-unusable"), 1);
	return get(w, "git-signing-key-unusable");
}

static void git_quiet(struct world *w, const char *spec)
{
	w->git_key = spec;
	world_run(w, NULL);
	ASSERT_EQ(count(w, "git-signing-key-unusable"), 0);
}

TEST(git_signing_key)
{
	struct world w;
	const struct finding *f;

	world_init(&w);
	/* Usable: the primary's fingerprint, the signing subkey's long and short id, with '!'. */
	git_quiet(&w, FPR_PRI);
	ASSERT_EQ(w.n, 0);
	git_quiet(&w, "0x123FE942CEC8B16E");
	git_quiet(&w, "CEC8B16E");
	git_quiet(&w, FPR_SIG "!");
	git_quiet(&w, "alice@example.org");
	git_quiet(&w, NULL);

	/* Not in the keyring at all. */
	f = git_finding(&w, "0x0000000000000001");
	ASSERT_EQ(f->level, LEVEL_CRITICAL);
	ASSERT_STREQ(f->message, "git's user.signingkey (0x0000000000000001) names no key with a "
	                         "secret part on this computer: git cannot sign commits");
	/* The hint names the key that can sign. */
	ASSERT_STREQ(f->hint, "git config --global user.signingkey " FPR_PRI);
	ASSERT_STREQ(f->key, "");
	expect_only(&w, "git-signing-key-unusable", 1);

	/* '!' names a subkey that cannot sign. */
	f = git_finding(&w, FPR_ENC "!");
	ASSERT_STREQ(f->subkey, FPR_ENC);
	ASSERT_TRUE(strstr(f->message, "Encryption subkey 0x416BF1B32F5D4F5B") != NULL);

	/* Expired. */
	w.subs[1].expires = NOW - DAY;
	f = git_finding(&w, "CEC8B16E");
	ASSERT_STREQ(f->message, "git's user.signingkey (CEC8B16E) signs with Signing subkey "
	                         "0x123FE942CEC8B16E of Alice <alice@example.org>, which has "
	                         "expired: git cannot sign commits");
	ASSERT_STREQ(f->hint,
	             "On the machine that holds the primary key: gpg --quick-set-expire " FPR_PRI
	             " 1y " FPR_SIG "; or git config --global user.signingkey NEWFPR");
	ASSERT_STREQ(f->key, FPR_PRI);
	ASSERT_STREQ(f->subkey, FPR_SIG);

	/* Revoked. */
	world_reset(&w);
	w.subs[1].revoked = true;
	f = git_finding(&w, FPR_PRI);
	ASSERT_TRUE(strstr(f->message, "which is revoked: git cannot sign") != NULL);

	/* No secret part: neither on disk nor a stub (the card holds it: card-key-no-stub too). */
	world_reset(&w);
	w.subs[1].secret = SECRET_NONE;
	f = git_finding(&w, "0x123FE942CEC8B16E");
	ASSERT_TRUE(strstr(f->message, "which has no secret part here") != NULL);
	ASSERT_EQ(count(&w, "card-key-no-stub"), 1);
	ASSERT_EQ(w.n, 2);

	/* Without '!', a revoked subkey's id names its key, whose newer subkey signs; with '!',
	 * exactly the revoked one. The hint then names the key that can sign. */
	world_reset(&w);
	add_second_signing_subkey(&w);
	w.subs[1].revoked = true;
	git_quiet(&w, FPR_SIG);
	git_quiet(&w, "0x123FE942CEC8B16E");
	f = git_finding(&w, "0x123FE942CEC8B16E!");
	ASSERT_STREQ(f->subkey, FPR_SIG);
	f = git_finding(&w, "CEC8B16E!");
	ASSERT_STREQ(f->subkey, FPR_SIG);
	/* The hint names the same key's usable signing subkey, as exactly as the spec did. */
	ASSERT_STREQ(f->hint, "git config --global user.signingkey " FPR_SIG2 "!");
	git_quiet(&w, FPR_SIG2 "!");
	world_done(&w);
}

TEST(git_committer_identity)
{
	struct world w;
	const struct finding *f;

	world_init(&w);
	/* commit.gpgSign without user.signingkey: gpg matches "Name <email>" in a user id. */
	git_quiet(&w, "Alice <alice@example.org>");
	ASSERT_EQ(w.n, 0);
	f = git_finding(&w, "Al <alice@example.org>");
	ASSERT_STREQ(f->message, "git's committer identity (commit.gpgSign, no user.signingkey) "
	                         "(Al <alice@example.org>) names no key with a secret part on this "
	                         "computer: git cannot sign commits");
	ASSERT_STREQ(f->hint, "git config --global user.signingkey " FPR_PRI);
	w.subs[1].expires = NOW - DAY;
	f = git_finding(&w, "Alice <alice@example.org>");
	ASSERT_STREQ(f->subkey, FPR_SIG);
	ASSERT_TRUE(strstr(f->message, "which has expired: git cannot sign") != NULL);
	world_done(&w);
}

TEST(default_key_lines)
{
	struct world w;

	world_init(&w);
	/* gpg takes the last line that names a key it may use: a key not here is passed over. */
	world_run(&w, "0x0000000000000001\nalice@example.org");
	ASSERT_EQ(w.n, 0);
	world_run(&w, "alice@example.org\n0x0000000000000001");
	ASSERT_EQ(w.n, 0);
	/* Alice's signing subkey expired, her encryption subkey still counts for gpg: it takes her
	 * key (the last line) and cannot sign. */
	w.subs[1].expires = NOW - DAY;
	world_run(&w, "0x0000000000000001\n" FPR_PRI);
	ASSERT_EQ(count(&w, "default-key-expired"), 1);
	ASSERT_TRUE(strstr(get(&w, "default-key-expired")->message,
	                   "(" FPR_PRI ") signs with Signing subkey") != NULL);
	/* A revoked key is passed over; when every line is, gpg ignores them: the last is named. */
	world_reset(&w);
	w.key.revoked = true;
	world_run(&w, "bob@example.org\nalice@example.org");
	ASSERT_EQ(count(&w, "revoked-default-key"), 1);
	ASSERT_TRUE(strstr(get(&w, "revoked-default-key")->message, "but that key is revoked") !=
	            NULL);
	world_done(&w);
}

TEST(expiring_names_git)
{
	struct world w;

	world_init(&w);
	w.subs[1].expires = NOW + 6 * DAY;
	w.git_key = FPR_PRI;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiring", 1);
	ASSERT_STREQ(w.f[0].message, "Signing subkey 0x123FE942CEC8B16E of Alice "
	                             "<alice@example.org> on YubiKey #12345678 expires in 6 days "
	                             "(2026-12-09) (git signs with it)");
	/* A newer signing subkey expiring in 10 days replaces the old one: it alone is named,
	 * with git only while git signs with it (not with '!' on the old one). */
	add_second_signing_subkey(&w);
	w.subs[4].expires = NOW + 10 * DAY;
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiring", 1);
	ASSERT_STREQ(w.f[0].subkey, FPR_SIG2);
	ASSERT_TRUE(strstr(w.f[0].message, "(git signs with it)") != NULL);
	w.git_key = FPR_SIG "!";
	world_run(&w, NULL);
	expect_only(&w, "subkey-expiring", 1);
	ASSERT_TRUE(strstr(w.f[0].message, "git") == NULL);
	world_done(&w);
}

TEST(card_key_no_stub)
{
	struct world w;
	const struct finding *f;

	world_init(&w);
	w.subs[2].secret = SECRET_NONE;
	world_run(&w, NULL);
	expect_only(&w, "card-key-no-stub", 1);
	f = &w.f[0];
	ASSERT_EQ(f->level, LEVEL_WARNING);
	ASSERT_STREQ(f->message, "The encryption slot of YubiKey #12345678 holds Encryption subkey "
	                         "0x416BF1B32F5D4F5B of Alice <alice@example.org>, but gpg does "
	                         "not know the card has its secret (no stub)");
	ASSERT_STREQ(f->hint, "With the card inserted, run gpg --card-status: it writes the stubs");
	ASSERT_STREQ(f->key, FPR_PRI);
	ASSERT_STREQ(f->subkey, FPR_ENC);
	ASSERT_STREQ(f->token, "yubikey-12345678");
	/* Quiet: the card is away, or the secret is on disk, or the subkey is revoked (that is
	 * revoked-key-on-card's). */
	w.tokens[0].present = false;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "card-key-no-stub"), 0);
	w.tokens[0].present = true;
	w.subs[2].secret = SECRET_DISK;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "card-key-no-stub"), 0);
	w.subs[2].secret = SECRET_NONE;
	w.subs[2].revoked = true;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "card-key-no-stub"), 0);
	ASSERT_EQ(count(&w, "revoked-key-on-card"), 1);
	world_done(&w);
}

TEST(pin_retries)
{
	struct world w;

	world_init(&w);
	w.tokens[0].openpgp.pin_retries[0] = 2;
	world_run(&w, NULL);
	expect_only(&w, "pin-retries-low", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_WARNING);
	ASSERT_STREQ(w.f[0].message, "The user PIN of YubiKey #12345678 has 2 tries left");
	w.tokens[0].openpgp.pin_retries[0] = 0;
	world_run(&w, NULL);
	ASSERT_EQ(get(&w, "pin-retries-low")->level, LEVEL_CRITICAL);

	world_reset(&w);
	w.tokens[0].openpgp.pin_retries[2] = 0;
	world_run(&w, NULL);
	expect_only(&w, "admin-pin-retries-low", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_CRITICAL);

	/* Quiet: 3 tries, or counters that were never read (the card read failed). */
	world_reset(&w);
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	memset(w.tokens[0].openpgp.pin_retries, 0, 3);
	strcpy(w.tokens[0].error, "card removed while reading");
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(touch_off_signing)
{
	struct world w;

	world_init(&w);
	w.tokens[0].openpgp.slots[SLOT_SIGN].touch = TOUCH_OFF;
	world_run(&w, NULL);
	expect_only(&w, "touch-off-signing", 1);
	ASSERT_STREQ(w.f[0].hint, "ykman openpgp keys set-touch sig on");
	/* Quiet: no button at all, or touch off only for authentication. */
	w.tokens[0].openpgp.slots[SLOT_SIGN].touch = TOUCH_UNKNOWN;
	w.tokens[0].openpgp.slots[SLOT_AUTH].touch = TOUCH_OFF;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(card_slot_unknown_key)
{
	struct world w;

	world_init(&w);
	strcpy(w.tokens[0].openpgp.slots[SLOT_AUTH].fingerprint,
	       "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF");
	world_run(&w, NULL);
	expect_only(&w, "card-slot-unknown-key", 1);
	ASSERT_STREQ(w.f[0].subkey, "FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF");
	/* Quiet: fingerprints compare case-insensitively. */
	world_reset(&w);
	strcpy(w.tokens[0].openpgp.slots[SLOT_AUTH].fingerprint,
	       "0d5c1a32c9e3b1f2a6d7e8f90a1b2c3d4e5f6071");
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(backup_token)
{
	struct world w;

	world_init(&w);
	/* The inserted card is B; every stub names A, which is away. */
	set_token(&w.tokens[0], "yubikey-87654321", "87654321", AID_B);
	world_run(&w, NULL);
	expect_only(&w, "backup-token", 1);
	ASSERT_STREQ(w.f[0].message, "YubiKey #87654321 holds the same keys of Alice "
	                             "<alice@example.org> as card #12345678, which gpg expects: it "
	                             "looks like a backup token");
	ASSERT_STREQ(w.f[0].hint, "To use it instead, with it inserted: gpg-connect-agent \"scd "
	                          "serialno\" \"learn --force\" /bye");
	/* Quiet: the card the stubs name is the one inserted. */
	world_reset(&w);
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "backup-token"), 0);
	world_done(&w);
}

TEST(card_not_seen)
{
	struct world w;

	world_init(&w);
	w.tokens[0].present = false;
	w.tokens[0].last_seen = NOW - 45 * DAY;
	world_run(&w, NULL);
	expect_only(&w, "card-not-seen", 1);
	ASSERT_STREQ(w.f[0].message, "YubiKey #12345678, which holds keys of Alice "
	                             "<alice@example.org>, was last seen 45 days ago (2026-10-19)");
	/* Quiet: seen 10 days ago, or present now. */
	w.tokens[0].last_seen = NOW - 10 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	w.tokens[0].last_seen = NOW - 45 * DAY;
	w.tokens[0].present = true;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(counter_went_down)
{
	struct world w;

	world_init(&w);
	w.tokens[0].counter_went_down = true;
	world_run(&w, NULL);
	expect_only(&w, "counter-went-down", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_WARNING);
	w.tokens[0].counter_went_down = false;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(scdaemon_ccid_conflict)
{
	struct world w;

	world_init(&w);
	w.scd_ccid_on = true;
	w.gnupghome = "/home/alice/.gnupg";
	strcpy(w.tokens[0].gpg_error, "scdaemon: No such device");
	world_run(&w, NULL);
	expect_only(&w, "scdaemon-ccid-conflict", 1);
	ASSERT_EQ(w.f[0].level, LEVEL_WARNING);
	ASSERT_STREQ(w.f[0].token, "yubikey-12345678");
	ASSERT_STREQ(w.f[0].message,
	             "gpg cannot reach YubiKey #12345678, which keyctl reads through pcscd "
	             "(scdaemon: No such device): GnuPG's scdaemon uses its own CCID driver and "
	             "does not fall back to pcscd");
	ASSERT_STREQ(w.f[0].hint,
	             "Add the line \"disable-ccid\" to /home/alice/.gnupg/scdaemon.conf, "
	             "then run: gpgconf --kill scdaemon");
	w.gnupghome = NULL;
	world_run(&w, NULL);
	ASSERT_STREQ(w.f[0].hint, "Add the line \"disable-ccid\" to scdaemon.conf in your GnuPG "
	                          "home, then run: gpgconf --kill scdaemon");
	/* disable-ccid written since: the driver is off, whatever the last answer was. */
	w.scd_ccid_on = false;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	/* Unplugged: no claim about a card that is not there. */
	w.scd_ccid_on = true;
	w.tokens[0].present = false;
	w.tokens[0].last_seen = NOW;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	/* scdaemon reached it. */
	w.tokens[0].present = true;
	w.tokens[0].gpg_error[0] = 0;
	world_run(&w, NULL);
	ASSERT_EQ(w.n, 0);
	world_done(&w);
}

TEST(expired_key_one_finding)
{
	struct world w;

	/* An expired primary is one finding, not one per subkey. */
	world_init(&w);
	w.subs[0].expires = NOW - 10 * DAY;
	for (int i = 1; i < 4; i++)
		w.subs[i].expires = NOW - 10 * DAY;
	memset(w.tokens[0].openpgp.slots, 0, sizeof(w.tokens[0].openpgp.slots));
	world_run(&w, NULL);
	expect_only(&w, "subkey-expired-no-replacement", 1);
	ASSERT_STREQ(w.f[0].subkey, FPR_PRI);
	/* Nothing ever replaces a primary key: the message does not say so. */
	ASSERT_STREQ(w.f[0].message, "Primary key 0xB82E9F4BA59A4309 of Alice <alice@example.org> "
	                             "expired 10 days ago (2026-11-23): none of its subkeys can be "
	                             "used until it is renewed");
	/* A primary that can sign is not replaced by a signing subkey that outlives it. */
	w.subs[0].capabilities |= CAP_SIGN;
	w.subs[1].expires = NOW + 100 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "subkey-expired-no-replacement"), 1);
	ASSERT_STREQ(get(&w, "subkey-expired-no-replacement")->subkey, FPR_PRI);
	world_done(&w);
}

/* The keyserver's copy: the key as it is here. */
static struct upstream_result *publish(struct world *w, bool relied_on)
{
	struct upstream_result *u = &w->up[w->n_up++];

	memset(u, 0, sizeof(*u));
	memcpy(w->pub_subs, w->subs, sizeof(w->subs));
	strcpy(u->fingerprint, w->key.fingerprint);
	u->relied_on = relied_on;
	u->published = w->key;
	u->published.subkeys = w->pub_subs;
	return u;
}

TEST(key_revoked_upstream)
{
	struct world w;
	struct upstream_result *u;
	const struct finding *f;

	world_init(&w);
	u = publish(&w, false);
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 0);

	u->published.revoked = true;
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 1);
	f = get(&w, "key-revoked-upstream");
	ASSERT_EQ(f->level, LEVEL_CRITICAL);
	ASSERT_STREQ(f->key, FPR_PRI);
	ASSERT_STREQ(f->hint, "gpg --refresh-keys " FPR_PRI);
	ASSERT_TRUE(strstr(f->message, "shows the key revoked; your copy does not") != NULL);

	/* A subkey revoked upstream; then a failed fetch, which raises nothing. */
	u->published.revoked = false;
	w.pub_subs[2].revoked = true;
	world_run(&w, NULL);
	ASSERT_TRUE(strstr(get(&w, "key-revoked-upstream")->message, "subkey 0x416BF1B32F5D4F5B"));
	u->r = -EHOSTUNREACH;
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 0);

	/* A relied-on key this keyring does not hold. */
	world_reset(&w);
	u = publish(&w, true);
	strcpy(u->fingerprint, "1111111111111111111111111111111111111111");
	u->published.revoked = true;
	world_run(&w, NULL);
	f = get(&w, "key-revoked-upstream");
	ASSERT_STREQ(f->key, "1111111111111111111111111111111111111111");
	ASSERT_STREQ(f->hint, "gpg --recv-keys 1111111111111111111111111111111111111111");
	ASSERT_TRUE(strstr(f->message, "(relied on)") != NULL);
	world_done(&w);
}

/* The Web Key Directory's copy counts like the keyserver's: alone, or both named at once. */
TEST(wkd_copies)
{
	struct world w;
	struct upstream_result *u;
	const struct finding *f;
	struct subkey wkd_subs[WORLD_SUBS];

	world_init(&w);
	u = publish(&w, true);
	strcpy(u->mail, "alice@example.org");
	memcpy(wkd_subs, w.subs, sizeof(wkd_subs));
	u->wkd_asked = true;
	u->wkd = w.key;
	u->wkd.subkeys = wkd_subs;
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 0);
	u->wkd.revoked = true;
	world_run(&w, NULL);
	f = get(&w, "key-revoked-upstream");
	ASSERT_TRUE(strncmp(f->message, "The Web Key Directory's copy of ", 32) == 0);
	ASSERT_TRUE(strstr(f->message, "shows the key revoked") != NULL);
	ASSERT_STREQ(f->hint, "gpg --locate-external-keys alice@example.org");
	u->published.revoked = true;
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 1);
	f = get(&w, "key-revoked-upstream");
	ASSERT_TRUE(strncmp(f->message, "The keyserver's and the Web Key Directory's copies of ",
	                    54) == 0);
	ASSERT_TRUE(strstr(f->message, "show the key revoked") != NULL);
	ASSERT_STREQ(f->hint, "gpg --refresh-keys " FPR_PRI);
	/* The keyserver out of reach: the WKD's copy alone still tells. */
	u->r = -EHOSTUNREACH;
	world_run(&w, NULL);
	ASSERT_TRUE(strncmp(get(&w, "key-revoked-upstream")->message, "The Web Key Directory's",
	                    23) == 0);
	u->wkd_r = -ENOENT;
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 0);

	/* An own key: the WKD's copy lacks a subkey the keyserver's has. */
	world_reset(&w);
	u = publish(&w, false);
	strcpy(u->mail, "alice@example.org");
	u->wkd_asked = true;
	u->wkd = w.key;
	u->wkd.subkeys = wkd_subs;
	u->wkd.n_subkeys = 3;
	world_run(&w, NULL);
	expect_only(&w, "key-stale-upstream", 1);
	f = get(&w, "key-stale-upstream");
	ASSERT_TRUE(strncmp(f->message, "The Web Key Directory's copy of ", 32) == 0);
	ASSERT_TRUE(strstr(f->message, " is behind: ") != NULL);
	ASSERT_STREQ(f->hint, "update your Web Key Directory with gpg --export-options "
	                      "export-minimal --export " FPR_PRI);
	u->published.n_subkeys = 3;
	world_run(&w, NULL);
	f = get(&w, "key-stale-upstream");
	ASSERT_TRUE(strstr(f->message, "copies of ") && strstr(f->message, " are behind: "));
	ASSERT_TRUE(strncmp(f->hint, "gpg --send-keys " FPR_PRI "; update your Web Key Directory",
	                    strlen("gpg --send-keys " FPR_PRI "; update your Web")) == 0);
	/* The keyserver behind, the WKD up to date: no WKD advice; the WKD not seen: the old one.
	 */
	u->wkd.n_subkeys = 4;
	world_run(&w, NULL);
	ASSERT_STREQ(get(&w, "key-stale-upstream")->hint, "gpg --send-keys " FPR_PRI);
	u->wkd_r = -ETIMEDOUT;
	world_run(&w, NULL);
	ASSERT_TRUE(strstr(get(&w, "key-stale-upstream")->hint, "(gpg-wks-client)") != NULL);
	u->wkd_r = -ENOENT;
	world_run(&w, NULL);
	ASSERT_STREQ(get(&w, "key-stale-upstream")->hint, "gpg --send-keys " FPR_PRI);
	world_done(&w);
}

/* Someone else's key listed because the user relies on it (owner trust): its expiry is its
 * owner's business, so no key rule speaks of it; a revocation published upstream still does. The
 * same key tracked by the configuration is watched like an own key. */
TEST(relied_only_key)
{
	struct world w;
	struct upstream_result *u;

	world_init(&w);
	w.n_tokens = 0; /* no card holds it */
	for (size_t i = 0; i < WORLD_SUBS; i++)
		w.subs[i].secret = SECRET_NONE;
	w.key.has_secret = false;
	w.key.relied_on = true;
	w.subs[1].expires = NOW + 2 * DAY;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "subkey-expiring"), 0);
	ASSERT_EQ(w.n, 0);
	u = publish(&w, true);
	u->published.revoked = true;
	world_run(&w, NULL);
	expect_only(&w, "key-revoked-upstream", 1);
	w.key.tracked = true;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "subkey-expiring"), 1);
	world_done(&w);
}

TEST(key_stale_upstream)
{
	struct world w;
	struct upstream_result *u;
	const struct finding *f;

	world_init(&w);
	u = publish(&w, false);
	u->published.n_subkeys = 3; /* the auth subkey never sent */
	world_run(&w, NULL);
	expect_only(&w, "key-stale-upstream", 1);
	f = get(&w, "key-stale-upstream");
	ASSERT_EQ(f->level, LEVEL_WARNING);
	ASSERT_TRUE(strstr(f->message, "lacks subkey 0x") != NULL);
	ASSERT_TRUE(strncmp(f->hint, "gpg --send-keys " FPR_PRI "; ",
	                    strlen("gpg --send-keys " FPR_PRI "; ")) == 0);
	ASSERT_TRUE(strstr(f->hint, "Web Key Directory") != NULL);

	/* No mail address: no WKD to update. */
	strcpy(w.key.uid, "Alice");
	world_run(&w, NULL);
	ASSERT_STREQ(get(&w, "key-stale-upstream")->hint, "gpg --send-keys " FPR_PRI);

	/* Only an owner can publish: a relied-on key, or one without a secret here, is quiet. */
	u->relied_on = true;
	world_run(&w, NULL);
	expect_only(&w, "key-stale-upstream", 0);
	u->relied_on = false;
	w.key.has_secret = false;
	world_run(&w, NULL);
	ASSERT_EQ(count(&w, "key-stale-upstream"), 0);
	world_done(&w);
}

int main(void)
{
	RUN(clean);
	RUN(match);
	RUN(subkey_expiring);
	RUN(subkey_expired_no_replacement);
	RUN(replaced_subkey);
	RUN(replacement_not_on_card);
	RUN(retired_key);
	RUN(subkey_no_expiry);
	RUN(subkey_expiry_too_far);
	RUN(primary_secret_on_disk);
	RUN(subkey_secret_on_disk);
	RUN(key_on_card_revoked_expired);
	RUN(revoked_default_key);
	RUN(default_key_unusable);
	RUN(default_key_expired);
	RUN(expiry_hint_whose_key);
	RUN(git_signing_key);
	RUN(git_committer_identity);
	RUN(default_key_lines);
	RUN(expiring_names_git);
	RUN(card_key_no_stub);
	RUN(pin_retries);
	RUN(touch_off_signing);
	RUN(card_slot_unknown_key);
	RUN(backup_token);
	RUN(card_not_seen);
	RUN(counter_went_down);
	RUN(scdaemon_ccid_conflict);
	RUN(expired_key_one_finding);
	RUN(key_revoked_upstream);
	RUN(wkd_copies);
	RUN(relied_only_key);
	RUN(key_stale_upstream);
	return 0;
}
