/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A key's published copy against the local one: a revocation only the keyserver has (of the key,
 * of a subkey we hold, of a key we do not hold at all), and a published copy behind its owner's
 * (a subkey missing, an earlier expiry, a revocation not sent); and the quiet cases beside each.
 * Also a key with SUBKEYS_MAX subkeys on both sides, the most a comparison ever walks.
 */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "upstream-compare.h"

#define FPR_PRI "C26E5BD792EB8F4EC1606B68B82E9F4BA59A4309"
#define FPR_SIG "9190F2BBC6D1062907230F84123FE942CEC8B16E"
#define FPR_ENC "21F8DD6CF3528146A3B138DC416BF1B32F5D4F5B"

struct pair {
	struct subkey ls[3], ps[3];
	struct key local, pub;
};

static void set(struct subkey *s, const char *fpr, bool primary, int64_t expires)
{
	memset(s, 0, sizeof(*s));
	strcpy_trunc(s->fingerprint, sizeof(s->fingerprint), fpr);
	s->is_primary = primary;
	s->expires = expires;
}

/* The same key on both sides, three subkeys, expiring at 1000. */
static void pair_init(struct pair *p)
{
	const char *fprs[] = { FPR_PRI, FPR_SIG, FPR_ENC };

	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < 3; i++) {
		set(&p->ls[i], fprs[i], i == 0, 1000);
		set(&p->ps[i], fprs[i], i == 0, 1000);
	}
	strcpy_trunc(p->local.fingerprint, FPR_HEX_MAX, FPR_PRI);
	strcpy_trunc(p->pub.fingerprint, FPR_HEX_MAX, FPR_PRI);
	p->local.subkeys = p->ls;
	p->pub.subkeys = p->ps;
	p->local.n_subkeys = p->pub.n_subkeys = 3;
}

TEST(same_is_quiet)
{
	struct pair p;
	char buf[160];

	pair_init(&p);
	ASSERT_FALSE(upstream_revoked_news(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_FALSE(upstream_stale(&p.local, &p.pub, buf, sizeof(buf)));
}

TEST(revoked_upstream)
{
	struct pair p;
	char buf[160];

	pair_init(&p);
	p.pub.revoked = true;
	ASSERT_TRUE(upstream_revoked_news(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "the key");
	p.local.revoked = true; /* already known here */
	ASSERT_FALSE(upstream_revoked_news(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_TRUE(upstream_revoked_news(NULL, &p.pub, buf, sizeof(buf)));

	pair_init(&p);
	p.ps[2].revoked = true;
	ASSERT_TRUE(upstream_revoked_news(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "subkey 0x416BF1B32F5D4F5B");
	p.ls[2].revoked = true;
	ASSERT_FALSE(upstream_revoked_news(&p.local, &p.pub, NULL, 0));
	/* A revoked subkey we never had cannot be used here by mistake. */
	p.local.n_subkeys = 2;
	ASSERT_FALSE(upstream_revoked_news(&p.local, &p.pub, NULL, 0));
}

TEST(stale)
{
	struct pair p;
	char buf[160];

	pair_init(&p);
	p.pub.n_subkeys = 2; /* the encryption subkey was never sent */
	ASSERT_TRUE(upstream_stale(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "the published copy lacks subkey 0x416BF1B32F5D4F5B");

	pair_init(&p);
	p.ls[1].expires = 2000; /* extended here, not sent */
	ASSERT_TRUE(upstream_stale(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf,
	             "the published copy of subkey 0x123FE942CEC8B16E expires sooner than yours");
	p.ls[1].expires = 0; /* never, here */
	ASSERT_TRUE(upstream_stale(&p.local, &p.pub, NULL, 0));
	p.ls[1].expires = 500; /* published later than local: not behind */
	ASSERT_FALSE(upstream_stale(&p.local, &p.pub, NULL, 0));

	pair_init(&p);
	p.ls[0].expires = 2000;
	ASSERT_TRUE(upstream_stale(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "the published copy expires sooner than yours");

	pair_init(&p);
	p.local.revoked = true;
	ASSERT_TRUE(upstream_stale(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "the published copy lacks the key's revocation");

	pair_init(&p);
	p.ls[2].revoked = true;
	ASSERT_TRUE(upstream_stale(&p.local, &p.pub, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "the published copy lacks the revocation of subkey 0x416BF1B32F5D4F5B");

	/* More on the keyserver than here (someone else's subkey upload): not behind. */
	pair_init(&p);
	p.local.n_subkeys = 2;
	ASSERT_FALSE(upstream_stale(&p.local, &p.pub, NULL, 0));
}

TEST(many_subkeys)
{
	struct subkey *ls = calloc(SUBKEYS_MAX, sizeof(*ls)),
	              *ps = calloc(SUBKEYS_MAX, sizeof(*ps));
	struct key local = { .subkeys = ls, .n_subkeys = SUBKEYS_MAX };
	struct key pub = { .subkeys = ps, .n_subkeys = SUBKEYS_MAX };

	ASSERT_TRUE(ls && ps);
	for (size_t i = 0; i < SUBKEYS_MAX; i++) {
		char fpr[FPR_HEX_MAX];

		snprintf(fpr, sizeof(fpr), "%040zX", i);
		set(&ls[i], fpr, i == 0, 1000);
		/* The keyserver's list in the other order. */
		snprintf(fpr, sizeof(fpr), "%040zX", SUBKEYS_MAX - 1 - i);
		set(&ps[i], fpr, i == SUBKEYS_MAX - 1, 1000);
	}
	ASSERT_FALSE(upstream_stale(&local, &pub, NULL, 0));
	ASSERT_FALSE(upstream_revoked_news(&local, &pub, NULL, 0));
	ps[0].revoked = true;
	ASSERT_TRUE(upstream_revoked_news(&local, &pub, NULL, 0));
	free(ls);
	free(ps);
}

/* Which address a key's WKD is asked for: the primary user id's, when it is one. */
TEST(uid_mail)
{
	char m[UPSTREAM_MAIL_MAX];
	static const char *const none[] = {
		"Alice",
		"Alice <alice>",
		"Alice <@example.org>",
		"Alice <alice@>",
		"Alice <alice@localhost>",
		"Alice <alice@example.org",
		"<a b@example.org>",
		"a@b@example.org",
		"Alice <alice@.org>",
		"Alice <alice@example.>",
		"Al <\xc3\xa9@example.org>",
		"",
		"a%b@example.org",
	};

	ASSERT_TRUE(upstream_uid_mail("Alice Owner <alice@example.org>", m, sizeof(m)));
	ASSERT_STREQ(m, "alice@example.org");
	ASSERT_TRUE(upstream_uid_mail("bob@example.net", m, sizeof(m)));
	ASSERT_STREQ(m, "bob@example.net");
	/* The last <...>: a name may hold a '<' of its own. */
	ASSERT_TRUE(upstream_uid_mail("C <x> D <carol@mail.example.com>", m, sizeof(m)));
	ASSERT_STREQ(m, "carol@mail.example.com");
	for (size_t i = 0; i < ELEMENTSOF(none); i++) {
		ASSERT_FALSE(upstream_uid_mail(none[i], m, sizeof(m)));
		ASSERT_STREQ(m, "");
	}
	/* Too long for the buffer: none, never cut. */
	ASSERT_FALSE(upstream_uid_mail("alice@example.org", m, 10));
	ASSERT_STREQ(m, "");
}

int main(void)
{
	RUN(same_is_quiet);
	RUN(revoked_upstream);
	RUN(stale);
	RUN(many_subkeys);
	RUN(uid_mail);
	return 0;
}
