/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Acknowledged findings: acks.json parsed strictly (valid, truncated, overlong, nested, bad ids
 * and levels) and written back the same; a finding's id; and the rule of audit-ack.c: an ack
 * lowers its finding to ok while the level stays, is forgotten when the level rises or (once the
 * keyring was listed) the finding is gone; the store's bound and its file across a reload; and
 * an ack of a subkey's expiry finding lowering the subkey and its key too, until the level rises.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ack-store.h"
#include "audit-ack.h"
#include "config.h"
#include "expiry.h"
#include "test.h"

#define SUB "21BD8ECA41B723BECBB716DEB0E089328C59B556"
#define KEY "16F63CE7FF3F136C8D6814E93ADC28022E56254F"

static int parse(const char *text, struct ack *ret)
{
	return ack_parse((const uint8_t *)text, strlen(text), ret, ACKS_MAX);
}

TEST(parse_valid)
{
	static struct ack a[ACKS_MAX];

	ASSERT_EQ(parse("{\"version\":1,\"acks\":[]}", a), 0);
	ASSERT_EQ(parse("{\"version\":1,\"acks\":[{\"id\":\"subkey-expiring:" SUB
	                "\",\"level\":\"warning\"},{\"id\":\"pin-retries-low@yubikey-1\","
	                "\"level\":\"critical\"}]}",
	                a),
	          2);
	ASSERT_STREQ(a[0].id, "subkey-expiring:" SUB);
	ASSERT_EQ(a[0].level, LEVEL_WARNING);
	ASSERT_STREQ(a[1].id, "pin-retries-low@yubikey-1");
	ASSERT_EQ(a[1].level, LEVEL_CRITICAL);
}

TEST(parse_refused)
{
	static struct ack a[ACKS_MAX];
	const char *two;
	char big[600];

	ASSERT_ERR(parse("", a), EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":\"x\",\"level\":\"warn", a), EBADMSG);
	ASSERT_ERR(parse("{\"version\":2,\"acks\":[]}", a), EBADMSG);
	ASSERT_ERR(parse("{\"version\":1}", a), EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":{}}", a), EBADMSG);
	/* nested where a string belongs, an extra field, a bad level, ok, a bad id, twice */
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":[\"x\"],\"level\":\"warning\"}]}", a),
	           EBADMSG);
	ASSERT_ERR(
	        parse("{\"version\":1,\"acks\":[{\"id\":\"x\",\"level\":\"warning\",\"y\":1}]}", a),
	        EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":\"x\",\"level\":\"bad\"}]}", a),
	           EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":\"x\",\"level\":\"ok\"}]}", a), EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":\"a b\",\"level\":\"warning\"}]}", a),
	           EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":\"\",\"level\":\"warning\"}]}", a),
	           EBADMSG);
	ASSERT_ERR(parse("{\"version\":1,\"acks\":[{\"id\":\"x\",\"level\":\"warning\"},"
	                 "{\"id\":\"x\",\"level\":\"notice\"}]}",
	                 a),
	           EBADMSG);
	/* an id of FINDING_ID_MAX bytes: one too long */
	snprintf(big, sizeof(big),
	         "{\"version\":1,\"acks\":[{\"id\":\"%0*d\",\"level\":\"notice\"}]}",
	         FINDING_ID_MAX, 0);
	ASSERT_ERR(parse(big, a), EMSGSIZE);
	ASSERT_ERR(ack_parse((const uint8_t *)"{}", ACK_FILE_MAX + 1, a, ACKS_MAX), EMSGSIZE);
	two = "{\"version\":1,\"acks\":[{\"id\":\"x\",\"level\":\"notice\"},"
	      "{\"id\":\"y\",\"level\":\"notice\"}]}";
	ASSERT_ERR(ack_parse((const uint8_t *)two, strlen(two), a, 1), EMSGSIZE);
}

TEST(format_round_trip)
{
	static struct ack in[2], out[ACKS_MAX];
	_cleanup_(freep) char *text = NULL;

	strcpy_trunc(in[0].id, sizeof(in[0].id), "daemon-starting");
	in[0].level = LEVEL_WARNING;
	strcpy_trunc(in[1].id, sizeof(in[1].id), "card-not-seen:" KEY "@yubikey-12345678");
	in[1].level = LEVEL_NOTICE;
	ASSERT_OK(ack_format(in, 2, &text));
	ASSERT_EQ(parse(text, out), 2);
	ASSERT_TRUE(memcmp(in, out, sizeof(in)) == 0);
}

static struct finding finding(const char *rule, enum level l, const char *key, const char *sub,
                              const char *token)
{
	struct finding f = { .level = l };

	strcpy_trunc(f.rule, sizeof(f.rule), rule);
	strcpy_trunc(f.key, sizeof(f.key), key);
	strcpy_trunc(f.subkey, sizeof(f.subkey), sub);
	strcpy_trunc(f.token, sizeof(f.token), token);
	return f;
}

TEST(ids)
{
	char id[FINDING_ID_MAX];
	struct finding f = finding("subkey-expiring", LEVEL_WARNING, KEY, SUB, "yubikey-1");

	finding_id(&f, id, sizeof(id));
	ASSERT_STREQ(id, "subkey-expiring:" SUB);
	f = finding("card-not-seen", LEVEL_NOTICE, KEY, "", "yubikey-1");
	finding_id(&f, id, sizeof(id));
	ASSERT_STREQ(id, "card-not-seen:" KEY "@yubikey-1");
	f = finding("pin-retries-low", LEVEL_WARNING, "", "", "yubikey-1");
	finding_id(&f, id, sizeof(id));
	ASSERT_STREQ(id, "pin-retries-low@yubikey-1");
	f = finding("daemon-starting", LEVEL_WARNING, "", "", "");
	finding_id(&f, id, sizeof(id));
	ASSERT_STREQ(id, "daemon-starting");
	ASSERT_TRUE(ack_id_valid(id));
	ASSERT_FALSE(ack_id_valid(""));
	ASSERT_FALSE(ack_id_valid("a/b"));
}

static struct ack ack(const char *id, enum level l)
{
	struct ack a = { .level = l };

	strcpy_trunc(a.id, sizeof(a.id), id);
	return a;
}

TEST(apply)
{
	struct ack acks[3] = {
		ack("subkey-expiring:" SUB, LEVEL_WARNING),
		ack("pin-retries-low@yubikey-1", LEVEL_WARNING),
		ack("daemon-starting", LEVEL_WARNING),
	};
	struct finding f[2] = {
		finding("subkey-expiring", LEVEL_WARNING, KEY, SUB, ""),
		finding("pin-retries-low", LEVEL_WARNING, "", "", "yubikey-1"),
	};
	size_t n = 3;

	/* Not settled: the missing daemon-starting is kept; both findings acknowledged. */
	ASSERT_EQ(audit_ack_apply(acks, &n, f, 2, false), 0u);
	ASSERT_EQ(n, 3u);
	ASSERT_TRUE(f[0].acked && f[1].acked);
	ASSERT_EQ(f[0].level, LEVEL_OK);
	ASSERT_EQ(f[1].level, LEVEL_OK);

	/* Settled: the gone one is forgotten; a lower level keeps its ack; a higher one drops it.
	 */
	f[0] = finding("subkey-expiring", LEVEL_NOTICE, KEY, SUB, "yubikey-1");
	f[1] = finding("pin-retries-low", LEVEL_CRITICAL, "", "", "yubikey-1");
	ASSERT_EQ(audit_ack_apply(acks, &n, f, 2, true), 2u);
	ASSERT_EQ(n, 1u);
	ASSERT_STREQ(acks[0].id, "subkey-expiring:" SUB);
	ASSERT_TRUE(f[0].acked);
	ASSERT_EQ(f[0].level, LEVEL_OK);
	ASSERT_FALSE(f[1].acked);
	ASSERT_EQ(f[1].level, LEVEL_CRITICAL);
}

TEST(store)
{
	char dir[] = "/tmp/test-ack-XXXXXX", err[PATH_MAX + 64], path[PATH_MAX + 16];
	struct ack_store *s = NULL;
	char id[32];

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	ASSERT_OK(ack_store_new(dir, err, sizeof(err), &s));
	ASSERT_STREQ(err, "");
	ASSERT_EQ(s->n, 0u);
	for (int i = 0; i < ACKS_MAX; i++) {
		snprintf(id, sizeof(id), "rule-%d", i);
		ASSERT_OK(ack_store_add(s, id, LEVEL_WARNING));
	}
	ASSERT_ERR(ack_store_add(s, "one-more", LEVEL_WARNING), ENOSPC);
	ASSERT_OK(ack_store_add(s, "rule-3", LEVEL_CRITICAL));
	ASSERT_OK(ack_store_remove(s, "rule-0"));
	ASSERT_ERR(ack_store_remove(s, "rule-0"), ENOENT);
	ASSERT_OK(ack_store_save(s));
	ASSERT_FALSE(s->dirty);
	s = ack_store_free(s);

	ASSERT_OK(ack_store_new(dir, err, sizeof(err), &s));
	ASSERT_STREQ(err, "");
	ASSERT_EQ(s->n, (size_t)ACKS_MAX - 1);
	ASSERT_TRUE(ack_store_find(s, "rule-0") == NULL);
	ASSERT_EQ(ack_store_find(s, "rule-3")->level, LEVEL_CRITICAL);
	s = ack_store_free(s);

	/* A damaged file: said, and no ack. */
	snprintf(path, sizeof(path), "%s/acks.json", dir);
	FILE *fp = fopen(path, "w");
	ASSERT_TRUE(fp != NULL);
	fputs("{\"version\":1,\"acks\":[", fp);
	fclose(fp);
	ASSERT_OK(ack_store_new(dir, err, sizeof(err), &s));
	ASSERT_TRUE(strstr(err, "not a keyctl acks file") != NULL);
	ASSERT_EQ(s->n, 0u);
	s = ack_store_free(s);
	ASSERT_OK(unlink(path));
	ASSERT_OK(rmdir(dir));
}

#define DAY SECONDS_PER_DAY
#define NOW INT64_C(1796256000) /* 2026-12-03 00:00:00 UTC */

/* A key whose primary never expires, with one signing subkey (SUB) expiring at expires. */
static void signing_key(struct key *k, struct subkey subs[2], int64_t expires)
{
	memset(k, 0, sizeof(*k));
	memset(subs, 0, 2 * sizeof(*subs));
	strcpy(k->fingerprint, KEY);
	strcpy(subs[0].fingerprint, KEY);
	subs[0].is_primary = true;
	subs[0].capabilities = CAP_CERTIFY;
	subs[0].created = NOW - 1000 * DAY;
	strcpy(subs[1].fingerprint, SUB);
	subs[1].capabilities = CAP_SIGN;
	subs[1].created = NOW - 300 * DAY;
	subs[1].expires = expires;
	subs[1].expired = expires <= NOW;
	k->subkeys = subs;
	k->n_subkeys = 2;
	k->has_secret = true;
}

/* The daemon's order (main.c derive()): levels, acks on subkeys, the audit with its acks. */
static struct finding *derive(struct key *k, const struct config *cfg, int64_t now, size_t *n)
{
	struct finding *f = NULL;

	expiry_apply(k, 1, cfg, now);
	audit_ack_subkeys(k, 1, ack_store_current());
	ASSERT_OK(audit_run(NULL, 0, k, 1, cfg, NULL, now, &f, n));
	return f;
}

static const struct finding *find_rule(const struct finding *f, size_t n, const char *rule)
{
	for (size_t i = 0; i < n; i++)
		if (streq(f[i].rule, rule))
			return &f[i];
	return NULL;
}

TEST(subkey_level)
{
	struct ack_store store = { .path = "" };
	struct subkey subs[2];
	struct config cfg;
	struct key k;
	struct finding *f;
	const struct finding *e;
	size_t n;

	config_init(&cfg);
	ack_store_set_current(&store);

	/* 10 days left: warning, the key too. Acked: the subkey, the key and the finding are ok. */
	signing_key(&k, subs, NOW + 10 * DAY);
	f = derive(&k, &cfg, NOW, &n);
	e = find_rule(f, n, "subkey-expiring");
	ASSERT_TRUE(e != NULL && e->level == LEVEL_WARNING && !e->acked);
	ASSERT_EQ(k.level, LEVEL_WARNING);
	ASSERT_FALSE(subs[1].acked);
	free(f);
	ASSERT_OK(ack_store_add(&store, "subkey-expiring:" SUB, LEVEL_WARNING));
	f = derive(&k, &cfg, NOW, &n);
	e = find_rule(f, n, "subkey-expiring");
	ASSERT_TRUE(e != NULL && e->acked && e->level == LEVEL_OK);
	ASSERT_TRUE(subs[1].acked);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(subs[1].acked_level, LEVEL_WARNING);
	ASSERT_EQ(k.level, LEVEL_OK);
	ASSERT_EQ(store.n, 1u);
	free(f);

	/* 2 days left: critical, above the ack: the subkey counts again and the ack is gone. */
	f = derive(&k, &cfg, NOW + 8 * DAY, &n);
	e = find_rule(f, n, "subkey-expiring");
	ASSERT_TRUE(e != NULL && !e->acked && e->level == LEVEL_CRITICAL);
	ASSERT_FALSE(subs[1].acked);
	ASSERT_EQ(subs[1].level, LEVEL_CRITICAL);
	ASSERT_EQ(k.level, LEVEL_CRITICAL);
	ASSERT_EQ(store.n, 0u);
	free(f);

	/* Expired with nothing replacing it: its finding is critical, the subkey expired; an ack
	 * of that finding lowers both. An ack of the other rule does not. */
	signing_key(&k, subs, NOW - DAY);
	ASSERT_OK(ack_store_add(&store, "subkey-expiring:" SUB, LEVEL_CRITICAL));
	f = derive(&k, &cfg, NOW, &n);
	e = find_rule(f, n, "subkey-expired-no-replacement");
	ASSERT_TRUE(e != NULL && !e->acked && e->level == LEVEL_CRITICAL);
	ASSERT_EQ(k.level, LEVEL_EXPIRED);
	free(f);
	ASSERT_OK(ack_store_add(&store, "subkey-expired-no-replacement:" SUB, LEVEL_CRITICAL));
	f = derive(&k, &cfg, NOW, &n);
	e = find_rule(f, n, "subkey-expired-no-replacement");
	ASSERT_TRUE(e != NULL && e->acked && e->level == LEVEL_OK);
	ASSERT_TRUE(subs[1].acked);
	ASSERT_EQ(subs[1].level, LEVEL_OK);
	ASSERT_EQ(k.level, LEVEL_OK);
	free(f);

	/* No store (a unit without state): nothing acknowledged. */
	ack_store_set_current(NULL);
	f = derive(&k, &cfg, NOW, &n);
	ASSERT_FALSE(subs[1].acked);
	ASSERT_EQ(k.level, LEVEL_EXPIRED);
	free(f);
}

int main(void)
{
	RUN(parse_valid);
	RUN(parse_refused);
	RUN(format_round_trip);
	RUN(ids);
	RUN(apply);
	RUN(store);
	RUN(subkey_level);
	return 0;
}
