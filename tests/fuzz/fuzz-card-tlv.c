/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * BER-TLV reader: walks any bytes as a TLV tree (descending into constructed items up to
 * TLV_DEPTH_MAX) and searches them; every value must lie inside its parent, every answer must be
 * 1, 0 or -EBADMSG, and the finders must agree with the walk.
 */
#include <errno.h>

#include "card-tlv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Returns 0 for a well-formed tree, -EBADMSG otherwise, like tlv_find_recursive(). */
static int walk(const uint8_t *p, size_t n, unsigned depth)
{
	struct tlv_cursor c;
	const uint8_t *v;
	uint32_t tag;
	size_t len;
	int r;

	if (depth >= TLV_DEPTH_MAX)
		return -EBADMSG;
	tlv_init(&c, p, n);
	while ((r = tlv_next(&c, &tag, &v, &len)) > 0) {
		if (v < p || len > n || (size_t)(v - p) > n - len)
			__builtin_trap(); /* a value outside its parent */
		if (tag == 0 || tag > 0xffffff)
			__builtin_trap();
		if (c.left > n)
			__builtin_trap();
		if (tlv_tag_is_constructed(tag)) {
			r = walk(v, len, depth + 1);
			if (r < 0)
				return r;
		}
	}
	if (r != 0 && r != -EBADMSG)
		__builtin_trap();
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t tags[] = { 0x6e, 0x73, 0xc5, 0x5f50, 0x7f49, 0x93, 0x4f };
	int w, r;

	w = walk(data, size, 0);
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		const uint8_t *v;
		size_t len;

		r = tlv_find_recursive(data, size, tags[i], &v, &len);
		if (r < -EBADMSG || r > 1 || (r < 0) != (w < 0))
			__builtin_trap(); /* the finder and the walk disagree on well-formedness */
		if (r > 0 && (v < data || (size_t)(v - data) > size - len))
			__builtin_trap();
		r = tlv_find(data, size, tags[i], &v, &len);
		if (r < -EBADMSG || r > 1 || (r < 0 && w == 0))
			__builtin_trap(); /* a tree that walks cannot have a malformed top level */
		if (r > 0 && (v < data || (size_t)(v - data) > size - len))
			__builtin_trap();
	}
	return 0;
}
