/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PIV rules (audit-piv.c) through audit_run(): piv-cert-expiring at each threshold's level
 * for a CA-issued certificate, information (level ok) for a self-signed one unless [piv]
 * raise-self-signed = yes, and for a retired slot; piv-cert-expired; piv-chuid-expiring; nothing
 * for a slot with an error, a PIV not read, or far dates; each slot its own identity; and the
 * next deadline the expiry timer is armed for.
 */
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"
#include "config.h"
#include "expiry-math.h"
#include "test.h"

#define DAY SECONDS_PER_DAY
#define NOW INT64_C(1796256000) /* 2026-12-03 00:00:00 UTC */
#define CA "CN=Example Issuing CA,O=Example Corp"

static void set_token(struct token *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->id, "yubikey-12345678");
	t->kind = TOKEN_KIND_YUBIKEY;
	strcpy(t->serial, "12345678");
	t->present = true;
	t->piv.state = PIV_READ_OK;
}

static struct piv_cert *add_cert(struct token *t, const char *slot, const char *subject,
                                 const char *issuer, int64_t not_after)
{
	struct piv_cert *c = &t->piv.certs[t->piv.n_certs++];

	memset(c, 0, sizeof(*c));
	strcpy(c->slot, slot);
	strcpy(c->subject, subject);
	strcpy(c->issuer, issuer ? issuer : subject);
	c->self_signed = !issuer;
	c->not_before = NOW - 300 * DAY;
	c->not_after = not_after;
	strcpy(c->key_algorithm, "nistp256");
	return c;
}

/* The findings of rules starting "piv-", printed for the log; *ret to be freed. */
static size_t run_cfg(const struct token *t, const struct config *cfg, int64_t now,
                      struct finding **ret)
{
	struct audit_daemon dmn = { .keys_listed = true };
	struct finding *f = NULL;
	size_t n = 0, kept = 0;

	ASSERT_OK(audit_run(t, 1, NULL, 0, cfg, &dmn, now, &f, &n));
	for (size_t i = 0; i < n; i++) {
		fprintf(stderr, "    [%s] %s %s: %s | %s\n", level_to_string(f[i].level), f[i].rule,
		        f[i].key, f[i].message, f[i].hint);
		if (strncmp(f[i].rule, "piv-", 4) == 0)
			f[kept++] = f[i];
	}
	*ret = f;
	return kept;
}

static size_t run(const struct token *t, int64_t now, struct finding **ret)
{
	struct config cfg;

	config_init(&cfg);
	return run_cfg(t, &cfg, now, ret);
}

/* The level of the one finding of rule for t at now; -1 when none. */
static int level_at(const struct token *t, const char *rule, int64_t now)
{
	struct finding *f;
	size_t n = run(t, now, &f);
	int level = -1;

	for (size_t i = 0; i < n; i++)
		if (streq(f[i].rule, rule)) {
			ASSERT_EQ(level, -1);
			level = (int)f[i].level;
		}
	free(f);
	return level;
}

TEST(ca_issued_thresholds)
{
	struct token t;
	int64_t exp = NOW + 100 * DAY;

	set_token(&t);
	add_cert(&t, "9a", "CN=alice,O=Example Corp", CA, exp);
	/* Defaults: thresholds 30, 14, 7, 3, 1; warning at 14, critical at 3. */
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp - 31 * DAY), -1);
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp - 30 * DAY - 1), -1);
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp - 30 * DAY), LEVEL_NOTICE);
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp - 14 * DAY), LEVEL_WARNING);
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp - 3 * DAY), LEVEL_CRITICAL);
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp - 1), LEVEL_CRITICAL);
	ASSERT_EQ(level_at(&t, "piv-cert-expired", exp - 1), -1);
	ASSERT_EQ(level_at(&t, "piv-cert-expiring", exp), -1);
	ASSERT_EQ(level_at(&t, "piv-cert-expired", exp), LEVEL_CRITICAL);
	ASSERT_EQ(level_at(&t, "piv-cert-expired", exp + 400 * DAY), LEVEL_CRITICAL);
}

TEST(words)
{
	struct token t;
	struct finding *f;
	char id[FINDING_ID_MAX];

	set_token(&t);
	add_cert(&t, "9a", "CN=alice,O=Example Corp", CA, NOW + 6 * DAY);
	add_cert(&t, "9c", "CN=SSH key", NULL, NOW - 2 * DAY);
	ASSERT_EQ(run(&t, NOW, &f), 2);
	ASSERT_STREQ(f[0].rule, "piv-cert-expiring");
	ASSERT_EQ(f[0].level, LEVEL_WARNING);
	ASSERT_STREQ(f[0].key, "9a");
	ASSERT_STREQ(f[0].token, "yubikey-12345678");
	ASSERT_STREQ(f[0].message,
	             "The PIV Authentication certificate (slot 9A) of YubiKey #12345678, "
	             "\"CN=alice,O=Example Corp\" issued by \"" CA "\", expires in 6 days "
	             "(2026-12-09)");
	ASSERT_STREQ(f[0].hint, "Ask its issuer for a new certificate, then: ykman piv "
	                        "certificates import 9a CERT.pem");
	finding_id(&f[0], id, sizeof(id));
	ASSERT_STREQ(id, "piv-cert-expiring:9a@yubikey-12345678");
	/* Self-signed and expired: information, and why. */
	ASSERT_STREQ(f[1].rule, "piv-cert-expired");
	ASSERT_EQ(f[1].level, LEVEL_OK);
	ASSERT_STREQ(f[1].message,
	             "The Digital Signature certificate (slot 9C) of YubiKey #12345678, "
	             "\"CN=SSH key\" self-signed, expired 2 days ago (2026-12-01): ssh and age "
	             "agents ignore a self-signed certificate's dates");
	ASSERT_STREQ(f[1].hint, "To renew it: ykman piv keys export 9c pub.pem && ykman piv "
	                        "certificates generate -s \"CN=SSH key\" 9c pub.pem");
	free(f);
}

TEST(self_signed_setting)
{
	struct token t;
	struct config cfg;
	struct finding *f;

	set_token(&t);
	add_cert(&t, "9c", "CN=SSH key", NULL, NOW + 6 * DAY);
	add_cert(&t, "9e", "CN=card auth", NULL, NOW - DAY);
	config_init(&cfg);
	ASSERT_EQ(run_cfg(&t, &cfg, NOW, &f), 2);
	ASSERT_EQ(f[0].level, LEVEL_OK);
	ASSERT_EQ(f[1].level, LEVEL_OK);
	free(f);
	/* [piv] raise-self-signed = yes, through the parser as a user writes it. */
	{
		static const char conf[] = "[piv]\nraise-self-signed = yes\n";
		char err[CONFIG_ERROR_MAX] = "";

		ASSERT_OK(config_parse((const uint8_t *)conf, sizeof(conf) - 1, "keyctl.conf", 0,
		                       &cfg, err, sizeof(err)));
		ASSERT_TRUE(cfg.piv_raise_self_signed);
	}
	ASSERT_EQ(run_cfg(&t, &cfg, NOW, &f), 2);
	ASSERT_STREQ(f[0].rule, "piv-cert-expiring");
	ASSERT_EQ(f[0].level, LEVEL_WARNING);
	ASSERT_STREQ(f[1].rule, "piv-cert-expired");
	ASSERT_EQ(f[1].level, LEVEL_CRITICAL);
	ASSERT_TRUE(strstr(f[1].message, "ignore") == NULL); /* no excuse once raised */
	free(f);
	{
		static const char bad[] = "[piv]\nraise-self-signed = maybe\n";
		char err[CONFIG_ERROR_MAX] = "";

		config_init(&cfg);
		ASSERT_TRUE(config_parse((const uint8_t *)bad, sizeof(bad) - 1, "keyctl.conf", 0,
		                         &cfg, err, sizeof(err)) < 0);
		ASSERT_TRUE(strstr(err, "[piv] raise-self-signed: 'maybe' is not yes or no") !=
		            NULL);
	}
}

TEST(retired_slot_is_information)
{
	struct token t;
	struct finding *f;

	set_token(&t);
	add_cert(&t, "82", "CN=alice (old),O=Example Corp", CA, NOW - 10 * DAY);
	ASSERT_EQ(run(&t, NOW, &f), 1);
	ASSERT_STREQ(f[0].rule, "piv-cert-expired");
	ASSERT_EQ(f[0].level, LEVEL_OK);
	ASSERT_TRUE(strncmp(f[0].message, "The Retired Key Management certificate (slot 82) of",
	                    51) == 0);
	ASSERT_TRUE(strstr(f[0].message, "to decrypt old messages") != NULL);
	ASSERT_STREQ(f[0].hint, "");
	free(f);
}

TEST(quiet)
{
	struct token t;
	struct piv_cert *c;
	struct finding *f;

	/* Far dates, a slot that could not be read, a certificate without a date. */
	set_token(&t);
	add_cert(&t, "9a", "CN=alice", CA, NOW + 365 * DAY);
	c = add_cert(&t, "9d", "", CA, NOW - DAY);
	strcpy(c->error, "not a certificate: ASN1 parser: Error in DER parsing");
	add_cert(&t, "9e", "CN=x", CA, 0);
	t.piv.chuid_expiry = NOW + 3 * 365 * DAY;
	ASSERT_EQ(run(&t, NOW, &f), 0);
	free(f);
	/* Not read (in use, or no PIV): certificates kept from before are not judged. */
	set_token(&t);
	add_cert(&t, "9a", "CN=alice", CA, NOW - DAY);
	t.piv.chuid_expiry = NOW - DAY;
	t.piv.state = PIV_READ_IN_USE;
	ASSERT_EQ(run(&t, NOW, &f), 0);
	free(f);
	t.piv.state = PIV_READ_NONE;
	ASSERT_EQ(run(&t, NOW, &f), 0);
	free(f);
	/* An application error with some certificates read: those are judged. */
	t.piv.state = PIV_READ_ERROR;
	ASSERT_EQ(run(&t, NOW, &f), 2);
	free(f);
}

TEST(chuid)
{
	struct token t;
	struct finding *f;
	int64_t exp = INT64_C(1893456000); /* 2030-01-01, ykman's */

	set_token(&t);
	t.piv.chuid_expiry = exp;
	ASSERT_EQ(level_at(&t, "piv-chuid-expiring", exp - 31 * DAY), -1);
	ASSERT_EQ(level_at(&t, "piv-chuid-expiring", exp - 30 * DAY), LEVEL_NOTICE);
	ASSERT_EQ(level_at(&t, "piv-chuid-expiring", exp - 2 * DAY), LEVEL_WARNING);
	ASSERT_EQ(level_at(&t, "piv-chuid-expiring", exp + DAY), LEVEL_WARNING);
	ASSERT_EQ(run(&t, exp - 5 * DAY, &f), 1);
	ASSERT_STREQ(f[0].key, "chuid");
	ASSERT_STREQ(f[0].message, "The PIV card identifier (CHUID) of YubiKey #12345678 expires "
	                           "in 5 days (2030-01-01)");
	ASSERT_TRUE(strncmp(f[0].hint, "ykman piv objects generate chuid", 32) == 0);
	free(f);
}

TEST(two_slots_two_identities)
{
	struct token t;
	struct finding *f;
	char a[FINDING_ID_MAX], b[FINDING_ID_MAX];

	set_token(&t);
	add_cert(&t, "9a", "CN=a", CA, NOW + 5 * DAY);
	add_cert(&t, "9d", "CN=d", CA, NOW + 5 * DAY);
	ASSERT_EQ(run(&t, NOW, &f), 2);
	finding_id(&f[0], a, sizeof(a));
	finding_id(&f[1], b, sizeof(b));
	ASSERT_STREQ(a, "piv-cert-expiring:9a@yubikey-12345678");
	ASSERT_STREQ(b, "piv-cert-expiring:9d@yubikey-12345678");
	free(f);
}

TEST(next_change)
{
	struct token t[2];
	struct config cfg;

	config_init(&cfg);
	set_token(&t[0]);
	set_token(&t[1]);
	/* Nothing: the subkeys' deadline stands. */
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW, 0), 0);
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW, NOW + 9), NOW + 9);
	/* A certificate 100 days out: wake when 30 are left, unless a subkey's comes first. */
	add_cert(&t[1], "9a", "CN=a", CA, NOW + 100 * DAY);
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW, 0), NOW + 70 * DAY);
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW, NOW + DAY), NOW + DAY);
	/* Past the last threshold: its expiry moment. */
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW + 99 * DAY + 5, 0), NOW + 100 * DAY);
	/* A CHUID's threshold, sooner; a slot with an error counts for nothing. */
	t[0].piv.chuid_expiry = NOW + 20 * DAY;
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW, 0), NOW + 6 * DAY);
	add_cert(&t[0], "9c", "CN=c", NULL, NOW + 2 * DAY);
	strcpy(t[0].piv.certs[0].error, "bad");
	ASSERT_EQ(audit_piv_next_change(t, 2, &cfg, NOW, 0), NOW + 6 * DAY);
}

int main(void)
{
	RUN(ca_issued_thresholds);
	RUN(words);
	RUN(self_signed_setting);
	RUN(retired_slot_is_information);
	RUN(quiet);
	RUN(chuid);
	RUN(two_slots_two_identities);
	RUN(next_change);
	return 0;
}
