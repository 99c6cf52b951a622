/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See roca.h. The bitmasks are the authors' (crocs-muni/roca roca/detect.py, RocaFingerprinter
 * .prints, commit df6071d), bit r set when r is a power of 65537 mod p; tests/unit/test-roca.c
 * derives them again from that definition. Everything else is arithmetic on residues below 167:
 * one pass over the modulus per prime, a walk through the powers of 65537 mod p for the
 * exponent, and a gcd per pair of primes.
 */
#include <errno.h>

#include "roca.h"

/* 2^256: the authors' minimal_modulus_bits. */
#define MIN_BYTES 33

static const struct {
	uint8_t p;
	uint64_t mask[3];
} primes[] = {
	/* 65537 is 1 mod 2: N must be odd. */
	{ 2, { 0x0000000000000002u, 0x0000000000000000u, 0x0000000000000000u } },
	/* clang-format off */
	{   3, { 0x0000000000000006u, 0x0000000000000000u, 0x0000000000000000u } },
	{   5, { 0x000000000000001eu, 0x0000000000000000u, 0x0000000000000000u } },
	{   7, { 0x000000000000007eu, 0x0000000000000000u, 0x0000000000000000u } },
	{  11, { 0x0000000000000402u, 0x0000000000000000u, 0x0000000000000000u } },
	{  13, { 0x000000000000161au, 0x0000000000000000u, 0x0000000000000000u } },
	{  17, { 0x000000000001a316u, 0x0000000000000000u, 0x0000000000000000u } },
	{  19, { 0x0000000000030af2u, 0x0000000000000000u, 0x0000000000000000u } },
	{  23, { 0x00000000007ffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  29, { 0x000000001ffffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  31, { 0x000000007ffffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  37, { 0x0000000004000402u, 0x0000000000000000u, 0x0000000000000000u } },
	{  41, { 0x000001fffffffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  43, { 0x000007fffffffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  47, { 0x00007ffffffffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  53, { 0x0012dd703303aed2u, 0x0000000000000000u, 0x0000000000000000u } },
	{  59, { 0x07fffffffffffffeu, 0x0000000000000000u, 0x0000000000000000u } },
	{  61, { 0x1434026619900b0au, 0x0000000000000000u, 0x0000000000000000u } },
	{  67, { 0xfffffffffffffffeu, 0x0000000000000007u, 0x0000000000000000u } },
	{  71, { 0x164729716b1d977eu, 0x0000000000000001u, 0x0000000000000000u } },
	{  73, { 0x811a48004962078au, 0x0000000000000147u, 0x0000000000000000u } },
	{  79, { 0x4010404000640502u, 0x000000000000000bu, 0x0000000000000000u } },
	{  83, { 0xfffffffffffffffeu, 0x000000000007ffffu, 0x0000000000000000u } },
	{  89, { 0xfffffffffffffffeu, 0x0000000001ffffffu, 0x0000000000000000u } },
	{  97, { 0x6000001800000002u, 0x0000000100000000u, 0x0000000000000000u } },
	{ 101, { 0xfffffffffffffffeu, 0x0000001fffffffffu, 0x0000000000000000u } },
	{ 103, { 0xbd964257768fe396u, 0x00000016380e9115u, 0x0000000000000000u } },
	{ 107, { 0x633397be6a897e1au, 0x0000027816ea9821u, 0x0000000000000000u } },
	{ 109, { 0xb003685cbe7192bau, 0x00001752639f4e85u, 0x0000000000000000u } },
	{ 113, { 0xfffffffffffffffeu, 0x0001ffffffffffffu, 0x0000000000000000u } },
	{ 127, { 0xa04c81430a190536u, 0x6ca09850c2813205u, 0x0000000000000000u } },
	{ 131, { 0xfffffffffffffffeu, 0xffffffffffffffffu, 0x0000000000000007u } },
	{ 137, { 0xfffffffffffffffeu, 0xffffffffffffffffu, 0x00000000000001ffu } },
	{ 139, { 0xfffffffffffffffeu, 0xffffffffffffffffu, 0x00000000000007ffu } },
	{ 149, { 0xfffffffffffffffeu, 0xffffffffffffffffu, 0x00000000001fffffu } },
	{ 151, { 0x1a2412003d18030au, 0xbc00482458dac35bu, 0x000000000050c018u } },
	{ 157, { 0x071bd5baca0b7e1au, 0xd76af63826461899u, 0x00000000161fb414u } },
	{ 163, { 0xfffffffffffffffeu, 0xffffffffffffffffu, 0x00000007ffffffffu } },
	{ 167, { 0xfffffffffffffffeu, 0xffffffffffffffffu, 0x0000007fffffffffu } },
	/* clang-format on */
};

#define N_PRIMES (sizeof(primes) / sizeof(primes[0]))
_Static_assert(N_PRIMES == ROCA_PRIMES, "the primes up to 167");

static unsigned residue(const uint8_t *p, size_t n, unsigned m)
{
	unsigned r = 0;

	for (size_t i = 0; i < n; i++)
		r = (r * 256u + p[i]) % m;
	return r;
}

static bool in_mask(unsigned i, unsigned r)
{
	return (primes[i].mask[r / 64] >> (r % 64)) & 1u;
}

unsigned roca_prime(size_t i)
{
	return i < N_PRIMES ? primes[i].p : 0;
}

bool roca_mask_has(size_t i, unsigned r)
{
	return i < N_PRIMES && r < primes[i].p && in_mask((unsigned)i, r);
}

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* The modulus without its leading zeros, checked against the bounds: 1 to test, 0 too short. */
static int trim(const uint8_t **p, size_t *n)
{
	while (*n > 0 && **p == 0) {
		(*p)++;
		(*n)--;
	}
	if (*n == 0)
		return -EBADMSG;
	if (*n > ROCA_MODULUS_MAX)
		return -EMSGSIZE;
	return *n >= MIN_BYTES;
}

int roca_modulus_masks(const uint8_t *p, size_t n)
{
	int r = trim(&p, &n);

	if (r <= 0)
		return r;
	for (unsigned i = 0; i < N_PRIMES; i++)
		if (!in_mask(i, residue(p, n, primes[i].p)))
			return 0;
	return 1;
}

/* The exponent c with 65537^c = r (mod primes[i].p) in [0, order), and that order. False when r
 * is no power of 65537 there. */
static bool exponent(unsigned i, unsigned r, unsigned *ret_c, unsigned *ret_order)
{
	unsigned m = primes[i].p, g = 65537u % m, x = 1 % m, c = 0, found = 0;
	bool ok = false;

	do {
		if (x == r && !ok) {
			found = c;
			ok = true;
		}
		x = (x * g) % m;
		c++;
	} while (x != 1 % m);
	*ret_c = found;
	*ret_order = c;
	return ok;
}

int roca_modulus_weak(const uint8_t *p, size_t n)
{
	unsigned c[N_PRIMES], order[N_PRIMES];
	int r = trim(&p, &n);

	if (r <= 0)
		return r;
	for (unsigned i = 0; i < N_PRIMES; i++) {
		unsigned res = residue(p, n, primes[i].p);

		if (!in_mask(i, res) || !exponent(i, res, &c[i], &order[i]))
			return 0;
	}
	/* One exponent for all: c = c_i (mod order_i) for every i is solvable exactly when every
	 * pair agrees modulo the gcd of their orders. */
	for (unsigned i = 0; i < N_PRIMES; i++)
		for (unsigned j = 0; j < i; j++) {
			unsigned g = gcd(order[i], order[j]);

			if (c[i] % g != c[j] % g)
				return 0;
		}
	return 1;
}
