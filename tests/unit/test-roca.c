/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ROCA test (roca.c) against the authors' vectors (tests/data/roca/vectors.txt: every modulus
 * of crocs-muni/roca's tests, the vulnerable ones flagged, the safe ones not, and the ten moduli
 * made to pass the masks alone), the published masks derived again from their definition, and
 * the bounds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "roca.h"
#include "test.h"

static FILE *open_src(const char *rel)
{
	const char *srcdir = getenv("KEYCTL_SRCDIR");
	char path[4096];
	FILE *f;

	if (!srcdir)
		TEST_FAIL("KEYCTL_SRCDIR is not set");
	snprintf(path, sizeof(path), "%s/%s", srcdir, rel);
	f = fopen(path, "re");
	if (!f)
		TEST_FAIL("cannot open %s", path);
	return f;
}

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
	FILE *f = open_src("tests/data/roca/vectors.txt");
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

int main(void)
{
	RUN(authors_vectors);
	RUN(masks_from_definition);
	RUN(bounds);
	return 0;
}
