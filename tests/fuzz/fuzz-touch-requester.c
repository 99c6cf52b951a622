/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * /proc/<pid>/stat as touch-requester.c reads it (comm is whatever a program named itself):
 * 0 with a NUL-terminated printable comm, or -EBADMSG; never a crash or a read past the input.
 * The input is copied to an exact-size heap buffer so that ASan sees an over-read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "touch-requester.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct proc_stat_view st;
	int r;

	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	memset(&st, 'x', sizeof(st));
	r = touch_requester_parse_stat(copy, size, &st);
	if (r == 0) {
		size_t n = strnlen(st.comm, sizeof(st.comm));

		if (n >= sizeof(st.comm))
			__builtin_trap();
		for (size_t i = 0; i < n; i++)
			if (st.comm[i] < 0x20 || st.comm[i] >= 0x7f)
				__builtin_trap();
	} else if (r != -EBADMSG)
		__builtin_trap();
	free(copy);
	return 0;
}
