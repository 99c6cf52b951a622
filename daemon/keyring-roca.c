/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See keyring-roca.h. gpg's colon records (doc/DETAILS in GnuPG): pub and sub carry the algorithm
 * in field 4 (1, 2, 3: RSA), fpr the fingerprint in field 10, and pkd (--with-key-data) one
 * number of the public key each: field 2 its index (0: the RSA modulus n, 1: the exponent e),
 * field 4 its value in hex.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "keyring-gpg-run.h"
#include "keyring-roca.h"
#include "util.h"

#define FIELDS 10

void key_data_scan_init(struct key_data_scan *s, roca_verdict_fn fn, void *userdata)
{
	memset(s, 0, sizeof(*s));
	colon_lines_init(&s->lines, s->line, sizeof(s->line));
	s->fn = fn;
	s->userdata = userdata;
	s->verdict = -1;
}

static unsigned hex_digit(uint8_t c)
{
	return c <= '9' ? (unsigned)(c - '0') : (unsigned)(tolower(c) - 'a' + 10);
}

/* The modulus in f (hex, an odd count of digits too) tested: roca_modulus_weak()'s result, or
 * -EBADMSG for what is not hex, -EMSGSIZE over ROCA_MODULUS_MAX bytes. */
static int test_modulus(struct colon_field f)
{
	uint8_t n[ROCA_MODULUS_MAX];
	size_t len = (f.n + 1) / 2, odd = f.n % 2;

	if (!colon_field_hex(f, 0))
		return -EBADMSG;
	if (len > sizeof(n))
		return -EMSGSIZE;
	n[0] = 0; /* the high nibble of an odd count */
	for (size_t i = 0; i < f.n; i++) {
		size_t d = i + odd; /* the digit's place, counted from a leading 0 */

		if (d % 2 == 0)
			n[d / 2] = (uint8_t)(hex_digit(f.p[i]) << 4);
		else
			n[d / 2] |= (uint8_t)hex_digit(f.p[i]);
	}
	return roca_modulus_weak(n, len);
}

/* Tells fn once the (sub)key being read has both its fingerprint and a verdict. */
static void tell(struct key_data_scan *s)
{
	if (s->rsa && !s->told && *s->fpr && s->verdict >= 0) {
		s->told = true;
		s->fn(s->userdata, s->fpr, s->verdict > 0);
	}
}

static void line(void *userdata, const uint8_t *p, size_t n)
{
	struct key_data_scan *s = userdata;
	struct colon_field f[FIELDS];

	colon_split(p, n, f, FIELDS);
	if (colon_field_is(f[0], "pub") || colon_field_is(f[0], "sub")) {
		s->rsa = colon_field_is(f[3], "1") || colon_field_is(f[3], "2") ||
		         colon_field_is(f[3], "3");
		s->want_fpr = true;
		s->told = false;
		s->fpr[0] = 0;
		s->verdict = -1;
	} else if (colon_field_is(f[0], "fpr")) {
		if (s->want_fpr && (colon_field_hex(f[9], 40) || colon_field_hex(f[9], 64))) {
			for (size_t i = 0; i < f[9].n; i++)
				s->fpr[i] = (char)toupper(f[9].p[i]);
			s->fpr[f[9].n] = 0;
		}
		s->want_fpr = false;
		tell(s);
	} else if (colon_field_is(f[0], "pkd")) {
		int r;

		if (!s->rsa || s->verdict >= 0 || !colon_field_is(f[1], "0"))
			return;
		r = test_modulus(f[3]);
		/* A modulus that is no number is no verdict; the key stays untested. */
		if (r >= 0)
			s->verdict = r;
		tell(s);
	} else if (colon_field_is(f[0], "sec") || colon_field_is(f[0], "ssb")) {
		/* Not asked for (--list-keys); such a record ends the key before it all the same.
		 */
		s->rsa = false;
	}
}

void key_data_scan_feed(struct key_data_scan *s, const uint8_t *p, size_t n)
{
	colon_lines_feed(&s->lines, p, n, line, s);
}

void key_data_scan_finish(struct key_data_scan *s)
{
	colon_lines_finish(&s->lines, line, s);
}

struct mark {
	struct subkey **pending; /* the RSA subkeys known did not answer for, by fingerprint */
	bool *told; /* per pending subkey: its verdict came */
	size_t n_pending;
	struct keyring_roca *next;
};

static bool is_rsa(const struct subkey *s)
{
	return strncmp(s->algorithm, "rsa", 3) == 0;
}

static int by_fpr(const void *a, const void *b)
{
	const struct subkey *const *x = a, *const *y = b;

	return strcasecmp((*x)->fingerprint, (*y)->fingerprint);
}

static int verdict_order(const void *a, const void *b)
{
	const struct roca_verdict *x = a, *y = b;

	return strcasecmp(x->fpr, y->fpr);
}

static void remember(struct keyring_roca *k, const char *fpr, bool weak)
{
	if (!k || k->n >= KEYRING_ROCA_KNOWN_MAX)
		return;
	strcpy_trunc(k->known[k->n].fpr, FPR_HEX_MAX, fpr);
	k->known[k->n++].weak = weak;
}

static void on_verdict(void *userdata, const char *fpr, bool weak)
{
	struct mark *m = userdata;
	struct subkey key = {}, *want = &key, **hit;

	strcpy_trunc(key.fingerprint, sizeof(key.fingerprint), fpr);
	hit = bsearch(&want, m->pending, m->n_pending, sizeof(*m->pending), by_fpr);
	if (!hit || m->told[hit - m->pending])
		return;
	m->told[hit - m->pending] = true;
	(*hit)->roca_weak = weak;
	remember(m->next, fpr, weak);
}

static ssize_t scan_write(void *handle, const void *buf, size_t size)
{
	key_data_scan_feed(handle, buf, size);
	return (ssize_t)size;
}

/* gpg --with-key-data over names (n at most KEYS_MAX), its output read into m. */
static int key_data_run(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                        const char **names, size_t n, struct mark *m)
{
	static const char *const args[] = { "--with-key-data", "--list-keys", "--" };
	_cleanup_(freep) struct key_data_scan *s = malloc(sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	key_data_scan_init(s, on_verdict, m);
	r = keyring_gpg_colons(home, gpg_path, cancel, args, ELEMENTSOF(args), names, n, scan_write,
	                       s);
	key_data_scan_finish(s);
	return r;
}

/* From known (sorted) what it holds; the rest into m->pending, their keys' primaries into
 * names. */
static void mark_known(const struct keyring_roca *known, struct key *keys, size_t n_keys,
                       struct mark *m, const char **names, size_t *n_names)
{
	for (size_t i = 0; i < n_keys; i++) {
		bool named = false;

		for (size_t j = 0; j < keys[i].n_subkeys; j++) {
			struct subkey *s = &keys[i].subkeys[j];
			struct roca_verdict want = {};
			const struct roca_verdict *v = NULL;

			s->roca_weak = false;
			if (!is_rsa(s))
				continue;
			strcpy_trunc(want.fpr, sizeof(want.fpr), s->fingerprint);
			if (known)
				v = bsearch(&want, known->known, known->n, sizeof(*known->known),
				            verdict_order);
			if (v) {
				s->roca_weak = v->weak;
				remember(m->next, v->fpr, v->weak);
				continue;
			}
			m->pending[m->n_pending++] = s;
			if (!named)
				names[(*n_names)++] = keys[i].fingerprint;
			named = true;
		}
	}
}

int keyring_roca_mark(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                      struct keyring_roca *known, struct key *keys, size_t n_keys)
{
	_cleanup_(freep) struct keyring_roca *next = calloc(1, sizeof(*next));
	_cleanup_(freep) const char **names = calloc(n_keys + 1, sizeof(*names));
	_cleanup_(freep) struct subkey **pending = NULL;
	_cleanup_(freep) bool *told = NULL;
	struct mark m = { .next = next };
	size_t n_subkeys = 0, n_names = 0;
	int r = 0;

	for (size_t i = 0; i < n_keys; i++)
		n_subkeys += keys[i].n_subkeys;
	pending = calloc(n_subkeys + 1, sizeof(*pending));
	told = calloc(n_subkeys + 1, sizeof(*told));
	if (!next || !names || !pending || !told)
		return -ENOMEM;
	m.pending = pending;
	m.told = told;
	mark_known(known, keys, n_keys, &m, names, &n_names);
	if (m.n_pending > 0) {
		qsort(m.pending, m.n_pending, sizeof(*m.pending), by_fpr);
		r = key_data_run(home, gpg_path, cancel, names, n_names, &m);
	}
	if (known) {
		/* Sorted for the next listing's look-ups. */
		qsort(next->known, next->n, sizeof(*next->known), verdict_order);
		memcpy(known, next, sizeof(*known));
	}
	return r;
}
