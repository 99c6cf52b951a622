/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * git's config syntax: git_config_get() gives 1 with a NUL-terminated value that fits, 0 with an
 * empty buffer, or -EBADMSG/-EMSGSIZE, never a crash, a read past the input or a write past the
 * buffer. The input is copied to an exact-size heap buffer so that ASan sees an over-read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "git-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { GIT_SIGNING_KEY_MAX, 9, 1 };
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char buf[GIT_SIGNING_KEY_MAX + 1];
		size_t bs = sizes[i];
		int r;

		memset(buf, 'x', sizeof(buf));
		r = git_config_get(copy, size, "user", "signingkey", buf, bs);
		if (r == 1) {
			if (strnlen(buf, bs) >= bs)
				__builtin_trap(); /* a value is terminated within the buffer */
		} else if (r == 0 || r == -EBADMSG || r == -EMSGSIZE) {
			if (buf[0] != 0)
				__builtin_trap();
		} else {
			__builtin_trap();
		}
		if (buf[bs] != 'x')
			__builtin_trap(); /* wrote past size */
	}
	{
		/* The committer identity's booleans and names go through the same parser. */
		char v[GIT_SIGNING_KEY_MAX];
		static const char *const names[][2] = { { "commit", "gpgsign" },
			                                { "user", "email" },
			                                { "committer", "name" } };

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			int r = git_config_get(copy, size, names[i][0], names[i][1], v, sizeof(v));
			if (r != 1 && r != 0 && r != -EBADMSG && r != -EMSGSIZE && r != -ENOMEM)
				__builtin_trap();
			if (r == 1 && strnlen(v, sizeof(v)) >= sizeof(v))
				__builtin_trap();
		}
	}
	free(copy);
	return 0;
}
