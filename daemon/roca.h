/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The ROCA test (CVE-2017-15361; Nemec, Sys, Svenda, Klinec, Matyas, "The Return of Coppersmith's
 * Attack", ACM CCS 2017): RSA moduli made by Infineon's RSALib (YubiKey 4 before firmware 4.3.5,
 * many smart cards and TPMs) are products of primes of the form k * M + (65537^a mod M), M the
 * product of the first 39, 71, 126 or 225 primes by key length, each holding the primes up to
 * 167 tested here. Such a modulus N is 65537^c modulo those primes for some c, and its secret key
 * can be computed from it (97 CPU-days for 1024 bits, 140 CPU-years for 2048, in parallel:
 * detect.py's length_to_time_years).
 *
 * The test is the one of the authors' tool (https://github.com/crocs-muni/roca, roca/detect.py):
 * N mod p in the subgroup that 65537 generates mod p, for each prime p up to 167 (the published
 * bitmasks, RocaFingerprinter.prints), and, as its DlogFprint does, one exponent c for all of them
 * at once: the exponents c_p found mod ord_p(65537) agree pairwise modulo gcd(ord_p, ord_q),
 * which is when the congruences have a common solution (the Chinese remainder theorem for moduli
 * not coprime). The masks alone flag moduli made to pass them without the structure; the
 * authors' tests hold ten such.
 *
 * Pure: no I/O, no allocation. Does not: read key files (keyring-roca.c), factor anything.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16384 bits: GnuPG makes at most 4096, and RSALib at most 4096 too. */
#define ROCA_MODULUS_MAX 2048

/*
 * 1 when the modulus (big-endian bytes; leading zero bytes allowed) has the ROCA structure, 0
 * when it has not or is below 2^256 (the authors' lower bound: a short number passes by chance),
 * -EBADMSG when it is zero, -EMSGSIZE over ROCA_MODULUS_MAX bytes after its leading zeros.
 */
int roca_modulus_weak(const uint8_t *p, size_t n);

/* The published bitmask test alone (RocaFingerprinter.has_fingerprint_moduli), without the common
 * exponent: for tests, which show what the exact test adds. Same returns. */
int roca_modulus_masks(const uint8_t *p, size_t n);

/* The primes tested (2 to 167) and their published masks, for the test that derives them again:
 * the i-th prime (i < ROCA_PRIMES), and whether r (< that prime) is a power of 65537 mod it. */
#define ROCA_PRIMES 39
unsigned roca_prime(size_t i);
bool roca_mask_has(size_t i, unsigned r);
