/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* keyctl-notify's state file: any bytes give a state or -EBADMSG/-EMSGSIZE, never a crash; what
 * parses formats back to the same bytes (the format has one spelling per state). */
#include <stdio.h>

#include "notify-state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;
	_cleanup_(freep) char *text = NULL;
	int r, len;

	r = notify_state_parse(data, size, &s);
	if (r < 0) {
		if (r != -EBADMSG && r != -EMSGSIZE)
			__builtin_trap();
		return 0;
	}
	len = notify_state_format(s, &text);
	if (len < 0)
		__builtin_trap();
	/* An empty input is the one state with two spellings ("" and the bare header). */
	if (size > 0 && ((size_t)len != size || memcmp(text, data, size) != 0))
		__builtin_trap();
	return 0;
}
