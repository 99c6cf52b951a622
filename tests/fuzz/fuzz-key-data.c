/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpg --with-key-data's colon output as keyring-roca.c reads it, and each RSA modulus in it through
 * the ROCA test (roca.c): any bytes, in any chunking, never crash nor read past what was fed;
 * each verdict names a 40 or 64 digit upper-case fingerprint that occurs in the input, at most
 * one per pub or sub record, and the verdicts are the same whether the input came in one piece
 * or in chunks of the size its first byte says. The fed bytes are also tested as a modulus
 * themselves: the exact test never flags what the masks do not. */
#include <ctype.h>
#include <string.h>

#include "fuzz-in-input.h"
#include "keyring-roca.h"
#include "roca.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SEEN_MAX 64

struct seen {
	size_t n, total;
	struct roca_verdict v[SEEN_MAX];
};

static void on_verdict(void *userdata, const char *fpr, bool weak)
{
	struct seen *s = userdata;
	size_t len = strlen(fpr);

	if (len != 40 && len != 64)
		__builtin_trap();
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)fpr[i]) || islower((unsigned char)fpr[i]))
			__builtin_trap();
	s->total++;
	if (s->n < SEEN_MAX) {
		strcpy(s->v[s->n].fpr, fpr);
		s->v[s->n++].weak = weak;
	}
}

/* The number of lines that open a pub or sub record: at most one verdict each. */
static size_t records(const uint8_t *data, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i + 4 <= size; i++)
		if ((i == 0 || data[i - 1] == '\n') &&
		    (memcmp(data + i, "pub:", 4) == 0 || memcmp(data + i, "sub:", 4) == 0))
			n++;
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct key_data_scan whole, chunked;
	static struct seen a, b;
	size_t chunk = size > 0 ? (size_t)data[0] % 64 + 1 : 1;
	int weak = roca_modulus_weak(data, size), masks = roca_modulus_masks(data, size);

	if (weak != masks && !(weak == 0 && masks == 1))
		__builtin_trap();
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	key_data_scan_init(&whole, on_verdict, &a);
	key_data_scan_init(&chunked, on_verdict, &b);
	key_data_scan_feed(&whole, data, size);
	key_data_scan_finish(&whole);
	for (size_t i = 0; i < size; i += chunk)
		key_data_scan_feed(&chunked, data + i, size - i < chunk ? size - i : chunk);
	key_data_scan_finish(&chunked);
	if (a.total > records(data, size))
		__builtin_trap();
	for (size_t i = 0; i < a.n; i++)
		if (!in_input(data, size, a.v[i].fpr))
			__builtin_trap();
	if (a.total != b.total || a.n != b.n || memcmp(a.v, b.v, sizeof(a.v)) != 0)
		__builtin_trap();
	return 0;
}
