/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The advisories' version parser: advisory_version_parse() gives 0, -EBADMSG or -EMSGSIZE, never
 * a crash or a read past the input; a version it accepts has one spelling, so printing it back
 * gives the input byte for byte. The input is copied to an exact-size heap buffer so that ASan
 * sees an over-read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "advisory-table.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct advisory_version v = { 1, 2, 3 }, w;
	uint8_t *copy = malloc(size ? size : 1);
	char back[32];
	int r, k;

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	r = advisory_version_parse(copy, size, &v);
	if (r == 0) {
		k = snprintf(back, sizeof(back), "%u.%u.%u", v.major, v.minor, v.patch);
		if (k < 0 || (size_t)k != size || memcmp(back, copy, size) != 0)
			__builtin_trap(); /* accepted, but not in its one spelling */
		if (advisory_version_parse_string(back, &w) != 0 ||
		    advisory_version_cmp(&v, &w) != 0)
			__builtin_trap();
	} else if (r == -EBADMSG || r == -EMSGSIZE) {
		if (v.major != 1 || v.minor != 2 || v.patch != 3)
			__builtin_trap(); /* wrote its result on failure */
	} else {
		__builtin_trap();
	}
	free(copy);
	return 0;
}
