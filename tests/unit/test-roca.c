/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ROCA test (roca.c) against the authors' vectors (tests/data/roca/vectors.txt: every modulus
 * of crocs-muni/roca's tests, the vulnerable ones flagged, the safe ones not, and the ten moduli
 * made to pass the masks alone), the published masks derived again from their definition, the
 * bounds; gpg's --with-key-data lines as keyring-roca.c reads them (GnuPG 2.2's and 2.4's
 * listings of the authors' key04.pgp, both orders of fpr and pkd, odd and lower-case digits,
 * other algorithms);
 * and the key-roca-weak finding through audit_run() with the words a user reads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"
#include "config.h"
#include "keyring-roca.h"
#include "roca.h"
#include "test.h"

#define NOW INT64_C(1796256000) /* 2026-12-03 00:00:00 UTC */
/* The authors' key04.pgp: primary and subkeys, each ROCA-weak. */
#define K04 "E6303FAB28D47A4258DDDFAE85052D6915C34DC4"
#define K04_AUT "FC58C4551E775D4B85CFB9EC6F2887DBA4BBD140"
#define K04_ENC "42FC1322AE0C0E495687454269825656415676C0"
/* Their key01.pgp, a safe RSA 2048 key. */
#define K01 "8BF5D80D32113A68CA8BD9921934602D3A0A27FE"

static size_t unhex(const char *h, uint8_t *out, size_t max)
{
	size_t n = strlen(h) / 2;

	ASSERT_TRUE(n <= max && strlen(h) % 2 == 0);
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		ASSERT_EQ(sscanf(h + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
	return n;
}

TEST(authors_vectors)
{
	FILE *f = test_open_src("tests/data/roca/vectors.txt");
	static uint8_t n[ROCA_MODULUS_MAX];
	char *line = NULL, name[64], hex[2 * ROCA_MODULUS_MAX + 1];
	size_t size = 0, count = 0, weak = 0, fakes = 0;
	unsigned index, want_weak, want_masks;

	while (getline(&line, &size, f) > 0) {
		size_t len;

		if (line[0] == '#')
			continue;
		ASSERT_EQ(sscanf(line, "%63s %u %u %u %4096s", name, &index, &want_weak,
		                 &want_masks, hex),
		          5);
		len = unhex(hex, n, sizeof(n));
		if (roca_modulus_weak(n, len) != (int)want_weak ||
		    roca_modulus_masks(n, len) != (int)want_masks)
			TEST_FAIL("%s #%u (%zu bits): weak %d, masks %d; the authors say %u, %u",
			          name, index, len * 8, roca_modulus_weak(n, len),
			          roca_modulus_masks(n, len), want_weak, want_masks);
		count++;
		weak += want_weak;
		fakes += want_masks && !want_weak;
	}
	free(line);
	fclose(f);
	/* 40 moduli from 33 files (14 weak, in 12 files), and the ten fakes. */
	ASSERT_EQ(count, 50);
	ASSERT_EQ(weak, 14);
	ASSERT_EQ(fakes, 10);
}

/* Bit r of the mask of p is set exactly when r is a power of 65537 mod p. */
TEST(masks_from_definition)
{
	for (size_t i = 0; i < ROCA_PRIMES; i++) {
		unsigned p = roca_prime(i), x = 1 % p;
		bool power[167] = {};

		ASSERT_TRUE(p >= 2 && p <= 167);
		do {
			power[x] = true;
			x = (x * (65537u % p)) % p;
		} while (x != 1 % p);
		for (unsigned r = 0; r < p; r++)
			if (roca_mask_has(i, r) != power[r])
				TEST_FAIL("mask of %u, residue %u", p, r);
	}
	ASSERT_EQ(roca_prime(0), 2);
	ASSERT_EQ(roca_prime(ROCA_PRIMES - 1), 167);
	ASSERT_EQ(roca_prime(ROCA_PRIMES), 0);
}

TEST(bounds)
{
	static uint8_t n[ROCA_MODULUS_MAX + 8];
	/* The authors' mod01.txt, 512 bits, weak. */
	const char *mod01 = "944e13208a280c37efc31c3114485e590192adbb8e11c87cad60cdef0037ce99278330"
	                    "d3f471a2538fa667802ed2a3c44a8b7dea826e888d0aa341fd664f7fa7";
	size_t len;

	ASSERT_ERR(roca_modulus_weak(n, 0), EBADMSG);
	ASSERT_ERR(roca_modulus_weak(n, 40), EBADMSG); /* zero */
	ASSERT_ERR(roca_modulus_masks(n, 40), EBADMSG);
	len = unhex(mod01, n + 8, sizeof(n) - 8);
	ASSERT_EQ(roca_modulus_weak(n + 8, len), 1);
	/* Leading zero bytes change nothing, even past the bound. */
	ASSERT_EQ(roca_modulus_weak(n, len + 8), 1);
	memmove(n, n + 8, len);
	memset(n + len, 0, sizeof(n) - len);
	/* Below 2^256 nothing is flagged: its last 32 bytes, and 33 bytes that start with 0. */
	ASSERT_EQ(roca_modulus_weak(n + len - 32, 32), 0);
	ASSERT_EQ(roca_modulus_masks(n + len - 32, 32), 0);
	memset(n, 0xff, sizeof(n));
	ASSERT_EQ(roca_modulus_weak(n, ROCA_MODULUS_MAX), 0);
	ASSERT_ERR(roca_modulus_weak(n, ROCA_MODULUS_MAX + 1), EMSGSIZE);
	ASSERT_ERR(roca_modulus_masks(n, ROCA_MODULUS_MAX + 1), EMSGSIZE);
	/* An even number is no power of 65537 mod 2. */
	n[ROCA_MODULUS_MAX - 1] = 0xfe;
	ASSERT_EQ(roca_modulus_masks(n, ROCA_MODULUS_MAX), 0);
}

struct heard {
	size_t n;
	struct roca_verdict v[8];
};

static void on_verdict(void *userdata, const char *fpr, bool weak)
{
	struct heard *h = userdata;

	ASSERT_TRUE(h->n < 8);
	strcpy(h->v[h->n].fpr, fpr);
	h->v[h->n++].weak = weak;
}

static void scan_corpus(const char *name, struct heard *h, size_t chunk)
{
	char rel[256];
	static uint8_t buf[64 * 1024];
	static struct key_data_scan s;
	size_t n;
	FILE *f;

	snprintf(rel, sizeof(rel), "tests/fuzz/corpus/key-data/%s", name);
	f = test_open_src(rel);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	memset(h, 0, sizeof(*h));
	key_data_scan_init(&s, on_verdict, h);
	for (size_t i = 0; i < n; i += chunk)
		key_data_scan_feed(&s, buf + i, n - i < chunk ? n - i : chunk);
	key_data_scan_finish(&s);
}

static void expect(const struct heard *h, size_t i, const char *fpr, bool weak)
{
	ASSERT_TRUE(i < h->n);
	ASSERT_STREQ(h->v[i].fpr, fpr);
	ASSERT_EQ(h->v[i].weak, weak);
}

TEST(key_data_lines)
{
	static const char *const real[] = { "gpg-2.2-key04-weak", "gpg-2.4-key04-weak" };
	static const size_t chunks[] = { 64 * 1024, 7 };
	struct heard h;

	/* gpg 2.2.40's and 2.4.7's own lines for the authors' key04.pgp, whole and in 7-byte
	 * chunks. */
	for (size_t r = 0; r < ELEMENTSOF(real); r++)
		for (size_t c = 0; c < ELEMENTSOF(chunks); c++) {
			scan_corpus(real[r], &h, chunks[c]);
			ASSERT_EQ(h.n, 3);
			expect(&h, 0, K04, true);
			expect(&h, 1, K04_AUT, true);
			expect(&h, 2, K04_ENC, true);
		}
	scan_corpus("pkd-before-fpr", &h, 64 * 1024);
	ASSERT_EQ(h.n, 3);
	expect(&h, 2, K04_ENC, true);
	scan_corpus("crlf-no-final-newline", &h, 5);
	ASSERT_EQ(h.n, 3);
	scan_corpus("gpg-2.2-key01-safe", &h, 64 * 1024);
	ASSERT_EQ(h.n, 1);
	expect(&h, 0, K01, false);
	scan_corpus("odd-digits-lowercase", &h, 3);
	ASSERT_EQ(h.n, 1);
	expect(&h, 0, K01, false);
	/* A v5 fingerprint; the second pkd:0 of a key tells nothing more. */
	scan_corpus("v5-weak-512", &h, 64 * 1024);
	ASSERT_EQ(h.n, 1);
	ASSERT_EQ(strlen(h.v[0].fpr), 64);
	ASSERT_TRUE(h.v[0].weak);
	/* Ed25519 is not RSA; a sub without fpr, a modulus that is no hex, over 16384 bits, an
	 * overlong line: no verdict. */
	scan_corpus("ed25519-not-rsa", &h, 64 * 1024);
	ASSERT_EQ(h.n, 0);
	scan_corpus("overlong-modulus", &h, 64 * 1024);
	ASSERT_EQ(h.n, 0);
}

/* A key with a primary and one subkey of each: the listing's view. */
static void make_key(struct key *k, const char *fpr, const char *uid, bool secret)
{
	static const char *const subs[] = { K04, K04_AUT, K04_ENC };

	memset(k, 0, sizeof(*k));
	strcpy(k->fingerprint, fpr);
	strcpy(k->uid, uid);
	k->has_secret = secret;
	k->relied_on = !secret;
	k->n_subkeys = 3;
	k->subkeys = calloc(3, sizeof(*k->subkeys));
	ASSERT_TRUE(k->subkeys);
	for (size_t i = 0; i < 3; i++) {
		struct subkey *s = &k->subkeys[i];

		strcpy(s->fingerprint, i == 0 ? fpr : subs[i]);
		strcpy(s->algorithm, i == 0 ? "rsa4096" : "rsa2048");
		s->is_primary = i == 0;
		s->capabilities = i == 0 ? CAP_CERTIFY | CAP_SIGN : i == 1 ? CAP_AUTH : CAP_ENCRYPT;
		s->secret = secret ? SECRET_DISK : SECRET_NONE;
	}
}

/* The key-roca-weak findings of audit_run() over keys. */
static size_t run(const struct key *keys, size_t n_keys, struct finding **ret)
{
	struct config cfg;
	struct finding *f = NULL;
	size_t n = 0, kept = 0;

	config_init(&cfg);
	ASSERT_OK(audit_run(NULL, 0, keys, n_keys, &cfg, NULL, NOW, &f, &n));
	for (size_t i = 0; i < n; i++) {
		fprintf(stderr, "    [%s] %s: %s | %s\n", level_to_string(f[i].level), f[i].rule,
		        f[i].message, f[i].hint);
		if (streq(f[i].rule, "key-roca-weak"))
			f[kept++] = f[i];
	}
	*ret = f;
	return kept;
}

TEST(finding)
{
	struct key k[2];
	struct finding *f;
	char id[FINDING_ID_MAX];

	/* Another's key the user relies on: primary and encryption subkey weak. */
	make_key(&k[0], K04, "test@test.com <test@test.com>", false);
	k[0].subkeys[0].roca_weak = k[0].subkeys[2].roca_weak = true;
	ASSERT_EQ(run(k, 1, &f), 2);
	ASSERT_EQ(f[0].level, LEVEL_CRITICAL);
	ASSERT_STREQ(
	        f[0].message,
	        "Primary key 0x85052D6915C34DC4 of test@test.com <test@test.com> is ROCA-weak "
	        "(CVE-2017-15361, rsa4096 made by Infineon's flawed RSA generator): its secret "
	        "key can be computed from its public key");
	ASSERT_STREQ(f[0].key, K04);
	ASSERT_STREQ(f[0].subkey, K04);
	ASSERT_TRUE(strstr(f[0].hint, "Only its owner can replace it") != NULL);
	ASSERT_TRUE(strstr(f[0].hint, "gpg --edit-key " K04 " trust") != NULL);
	ASSERT_STREQ(f[1].subkey, K04_ENC);
	ASSERT_TRUE(strncmp(f[1].message, "Encryption subkey 0x69825656415676C0 of", 39) == 0);
	finding_id(&f[1], id, sizeof(id));
	ASSERT_STREQ(id, "key-roca-weak:" K04_ENC);
	free(f);

	/* The user's own key: the subkey's hint says how to replace it; the primary's, how to
	 * revoke the key. */
	make_key(&k[1], K01, "Own <own@example.org>", true);
	k[1].subkeys[0].roca_weak = k[1].subkeys[1].roca_weak = true;
	ASSERT_EQ(run(k, 2, &f), 4);
	ASSERT_STREQ(f[2].subkey, K01);
	ASSERT_TRUE(strstr(f[2].hint, "gpg --gen-revoke " K01) != NULL);
	ASSERT_STREQ(f[3].subkey, K04_AUT);
	ASSERT_TRUE(strstr(f[3].hint, "gpg --edit-key " K01 ", then \"key 1\", \"revkey\"") !=
	            NULL);
	free(f);

	/* A revoked subkey, a revoked key, a retired key: done with, no finding. An expired key
	 * still is one: whoever computes its primary can make it valid again. */
	k[0].subkeys[2].revoked = true;
	k[1].revoked = true;
	ASSERT_EQ(run(k, 2, &f), 1);
	ASSERT_STREQ(f[0].subkey, K04);
	free(f);
	k[0].retired = true;
	ASSERT_EQ(run(k, 2, &f), 0);
	free(f);
	k[0].retired = false;
	k[0].expired = true;
	k[0].subkeys[0].expiry_level = LEVEL_EXPIRED;
	ASSERT_EQ(run(k, 1, &f), 1);
	free(f);
	/* Nothing weak, nothing said. */
	k[0].subkeys[0].roca_weak = false;
	ASSERT_EQ(run(k, 1, &f), 0);
	free(f);
	key_done(&k[0]);
	key_done(&k[1]);
}

int main(void)
{
	RUN(authors_vectors);
	RUN(masks_from_definition);
	RUN(bounds);
	RUN(key_data_lines);
	RUN(finding);
	return 0;
}
