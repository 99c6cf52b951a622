/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Varlink framing and call decoding, as the server meets a peer's bytes: the input is fed in
 * chunks whose sizes come from the first byte, every framed message is parsed and checked as a
 * call and as a reply. Any bytes give messages or refusals, never a crash, and a framed message
 * is never longer than the bound.
 */
#include <stdint.h>
#include <string.h>

#include "varlink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct varlink_buffer b;
	size_t chunk, off = 1;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] + 1;
	/* A small bound, so that the fuzzer reaches the limit with small inputs. */
	varlink_buffer_init(&b, 1024);
	while (off < size) {
		size_t n = chunk < size - off ? chunk : size - off;
		const char *m;
		size_t len;

		if (varlink_buffer_feed(&b, data + off, n) < 0)
			break;
		off += n;
		while (varlink_buffer_next(&b, &m, &len) > 0) {
			json_object *o = NULL;
			struct varlink_call c;
			struct varlink_reply r;
			const char *bad = NULL;

			if (len > 1024 || m[len] != 0 || memchr(m, 0, len))
				__builtin_trap();
			if (varlink_message_parse(m, len, &o) < 0)
				continue;
			if (varlink_call_parse(o, &c, &bad) >= 0) {
				if (!varlink_method_name_valid(c.method))
					__builtin_trap();
			} else if (!bad)
				__builtin_trap(); /* every refusal names its field */
			(void)varlink_reply_parse(o, &r);
			json_object_put(o);
		}
	}
	varlink_buffer_done(&b);
	return 0;
}
