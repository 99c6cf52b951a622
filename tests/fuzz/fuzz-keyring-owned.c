/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The owned-keys cache file: any bytes give 0 or a negative errno, never a crash; what parses
 * is within its bounds, formats back to exactly the same bytes (the parser takes nothing the
 * writer would not write), and an input that is refused leaves the cache invalid. */
#include <stdlib.h>
#include <string.h>

#include "keyring-owned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct keyring_owned *o = calloc(1, sizeof(*o));
	char *text = NULL;
	size_t n = 0;
	int r;

	if (!o)
		return 0;
	r = keyring_owned_parse(data, size, o);
	if (r < 0 && o->valid)
		__builtin_trap();
	if (r == 0) {
		if (!o->valid || o->n_grips > KEYRING_GRIPS_MAX || o->n_fprs > KEYRING_OWNED_MAX)
			__builtin_trap();
		if (keyring_owned_format(o, &text, &n) < 0 || n != size || memcmp(text, data, n))
			__builtin_trap();
	}
	free(text);
	free(o);
	return 0;
}
