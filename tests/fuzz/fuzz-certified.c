/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpg's colon output as keyring-certified.c reads it: any bytes, in any chunking, never crash nor
 * read past what was fed; the keys found are at most CERTIFIED_MAX, distinct, each a 40 or 64
 * digit upper case fingerprint that occurs in the input, never the own key, and the same whether
 * the input came in one piece or in chunks of the size its first byte says. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "keyring-certified.h"
#include "fuzz-in-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char own[][FPR_HEX_MAX] = { "9EAE7EF6C415D55B51F87437088D20DB57E417A2",
	                                 "66685D0A7804530DEBBD3C7743108B614CF9256C66685D0A78045"
	                                 "30DEBBD3C77" };

static void check(const struct certified_scan *s, const uint8_t *data, size_t size)
{
	if (s->n_found > CERTIFIED_MAX)
		__builtin_trap();
	for (size_t i = 0; i < s->n_found; i++) {
		size_t len = strlen(s->found[i].fpr);

		if ((len != 40 && len != 64) || !in_input(data, size, s->found[i].fpr) ||
		    s->found[i].when <= 0)
			__builtin_trap();
		for (size_t j = 0; j < len; j++)
			if (!isxdigit((unsigned char)s->found[i].fpr[j]) ||
			    islower((unsigned char)s->found[i].fpr[j]))
				__builtin_trap();
		for (size_t j = 0; j < 2; j++)
			if (strcmp(s->found[i].fpr, own[j]) == 0)
				__builtin_trap();
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->found[i].fpr, s->found[j].fpr) == 0)
				__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct certified_scan whole, chunked;
	size_t chunk = size > 0 ? (size_t)data[0] % 64 + 1 : 1;

	for (int verified = 0; verified < 2; verified++) {
		certified_scan_init(&whole, own, 2, 1796537700, verified);
		certified_scan_init(&chunked, own, 2, 1796537700, verified);
		(void)certified_scan_feed(&whole, data, size);
		certified_scan_finish(&whole);
		for (size_t i = 0; i < size; i += chunk)
			(void)certified_scan_feed(&chunked, data + i,
			                          size - i < chunk ? size - i : chunk);
		certified_scan_finish(&chunked);
		check(&whole, data, size);
		if (whole.n_found != chunked.n_found ||
		    memcmp(whole.found, chunked.found, sizeof(whole.found)) != 0)
			__builtin_trap();
	}
	return 0;
}
