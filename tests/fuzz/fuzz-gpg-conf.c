/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GnuPG's option files: gpg_conf_has_option() gives 1, 0 or -EBADMSG and nothing else; gpg.conf's
 * default-key parser: any bytes give 1 with NUL-terminated values, one a line, that fit, 0 with
 * an empty buffer, or -EBADMSG/-EMSGSIZE, never a crash or a read past the input. The input is
 * copied to an exact-size heap buffer so that ASan sees an over-read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpg-conf.h"
#include "keyring-list.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t sizes[] = { KEYRING_DEFAULT_KEY_MAX, 17, 1 };
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char buf[KEYRING_DEFAULT_KEY_MAX];
		size_t bs = sizes[i];
		int r;

		memset(buf, 'x', sizeof(buf));
		r = keyring_parse_default_key(copy, size, buf, bs);
		if (r == 1) {
			size_t l = strnlen(buf, bs);
			/* Non-empty values, one a line: terminated, no empty line. */
			if (l == 0 || l >= bs || buf[0] == '\n' || buf[l - 1] == '\n' ||
			    memmem(buf, l, "\n\n", 2))
				__builtin_trap();
		} else if (r == 0) {
			if (buf[0] != 0)
				__builtin_trap();
		} else if (r != -EBADMSG && r != -EMSGSIZE) {
			__builtin_trap();
		}
		if (bs < sizeof(buf) && buf[bs] != 'x')
			__builtin_trap(); /* wrote past size */
	}
	{
		int r = gpg_conf_has_option(copy, size, "use-keyboxd");
		if (r != 0 && r != 1 && r != -EBADMSG)
			__builtin_trap();
	}
	free(copy);
	return 0;
}
