/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Decoding a reply's parameters as a client does: GetStatus and Watch. Any bytes give a decoded
 * struct or a refusal that leaves nothing allocated; a decoded status is re-encoded and must
 * decode again to the same counts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "varlink.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_object *o = NULL, *again = NULL;
	struct keyctl_status s, s2;
	struct keyctl_event e;
	char *text;

	if (size > VARLINK_MESSAGE_MAX)
		return 0;
	/* The framing guarantees no NUL inside a message. */
	if (memchr(data, 0, size))
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (varlink_message_parse(text, size, &o) < 0) {
		free(text);
		return 0;
	}
	if (codec_status_from_json(o, &s) >= 0) {
		if (codec_status_to_json(&s.daemon, s.tokens, s.n_tokens, s.keys, s.n_keys,
		                         s.findings, s.n_findings, &again) >= 0) {
			if (codec_status_from_json(again, &s2) < 0 || s2.n_tokens != s.n_tokens ||
			    s2.n_keys != s.n_keys || s2.n_findings != s.n_findings)
				__builtin_trap();
			for (size_t i = 0; i < s.n_tokens; i++)
				if (memcmp(&s.tokens[i], &s2.tokens[i], sizeof(struct token)) != 0)
					__builtin_trap();
			for (size_t i = 0; i < s.n_keys; i++)
				if (!key_equal(&s.keys[i], &s2.keys[i]))
					__builtin_trap();
			keyctl_status_done(&s2);
			json_object_put(again);
		}
		keyctl_status_done(&s);
	}
	if (codec_event_from_json(o, &e) >= 0)
		keyctl_event_done(&e);
	json_object_put(o);
	free(text);
	return 0;
}
