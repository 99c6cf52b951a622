/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* gpg --export-ownertrust output (keyring-ownertrust.c): any bytes give 0 or a negative errno,
 * never a crash; what parses names at most OWNERTRUST_KEYS_MAX keys, each a 40 or 64 digit upper
 * case fingerprint that occurs in the input (in either case) with a level of four bits, and a
 * higher minimum level never gives more keys nor any below it. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "keyring-ownertrust.h"
#include "fuzz-in-input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ownertrust *all = NULL, *ultimate = NULL;
	size_t n_all = 0, n_ult = 0;
	int r, r2;

	r = ownertrust_parse(data, size, 0, &all, &n_all);
	r2 = ownertrust_parse(data, size, OWNERTRUST_ULTIMATE, &ultimate, &n_ult);
	if ((r < 0) != (r2 < 0) && r2 != -E2BIG && r != -E2BIG)
		__builtin_trap();
	if (r == 0) {
		if (n_all > OWNERTRUST_KEYS_MAX || (n_all == 0) != (all == NULL))
			__builtin_trap();
		for (size_t i = 0; i < n_all; i++) {
			size_t len = strlen(all[i].fpr);

			if (len != 40 && len != 64)
				__builtin_trap();
			for (size_t j = 0; j < len; j++)
				if (!isxdigit((unsigned char)all[i].fpr[j]) ||
				    islower((unsigned char)all[i].fpr[j]))
					__builtin_trap();
			if (!in_input(data, size, all[i].fpr) || all[i].level > 15)
				__builtin_trap();
		}
		if (r2 == 0 && n_ult > n_all)
			__builtin_trap();
		for (size_t i = 0; r2 == 0 && i < n_ult; i++)
			if (ultimate[i].level < OWNERTRUST_ULTIMATE)
				__builtin_trap();
	}
	free(all);
	free(ultimate);
	return 0;
}
