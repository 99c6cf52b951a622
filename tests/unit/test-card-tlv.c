/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The BER-TLV reader: valid items with 1-3 byte tags and 1-3 byte lengths, zero lengths,
 * padding, nesting, and every way of being malformed (truncated tag, length or value, lengths a
 * card never sends, nesting too deep), each refused without reading past the buffer.
 */
#include <errno.h>

#include "test.h"
#include "card-tlv.h"
#include "util.h"

/* Copies into an exactly sized heap buffer, so that ASan catches any read past its end. */
static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	ASSERT_TRUE(q);
	memcpy(q, p, n);
	return q;
}

static int next_of(const uint8_t *p, size_t n, uint32_t *tag, size_t *len, size_t *offset)
{
	uint8_t *q = dup_exact(p, n);
	struct tlv_cursor c;
	const uint8_t *v = NULL;
	int r;

	tlv_init(&c, q, n);
	r = tlv_next(&c, tag, &v, len);
	if (r > 0)
		*offset = (size_t)(v - q);
	free(q);
	return r;
}

TEST(empty)
{
	struct tlv_cursor c;
	const uint8_t *v;
	uint32_t tag;
	size_t len;

	tlv_init(&c, NULL, 0);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 0);
	ASSERT_EQ(tlv_find(NULL, 0, 0x4f, &v, &len), 0);
	ASSERT_EQ(tlv_find_recursive(NULL, 0, 0x4f, &v, &len), 0);
}

TEST(simple_sequence)
{
	static const uint8_t d[] = { 0x93, 0x03, 0x00, 0x00, 0x2a, 0xc4, 0x00, 0x5b, 0x01, 'x' };
	struct tlv_cursor c;
	const uint8_t *v;
	uint32_t tag;
	size_t len;

	tlv_init(&c, d, sizeof(d));
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 1);
	ASSERT_EQ(tag, 0x93);
	ASSERT_EQ(len, 3);
	ASSERT_TRUE(v == d + 2);
	ASSERT_EQ(v[2], 0x2a);
	/* zero length */
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 1);
	ASSERT_EQ(tag, 0xc4);
	ASSERT_EQ(len, 0);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 1);
	ASSERT_EQ(tag, 0x5b);
	ASSERT_EQ(len, 1);
	ASSERT_EQ(v[0], 'x');
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 0);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 0);
}

TEST(multi_byte_tags)
{
	uint32_t tag;
	size_t len, off;

	/* 5F50: two-byte tag */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x5f, 0x50, 0x01, 'u' }, 4, &tag, &len, &off), 1);
	ASSERT_EQ(tag, 0x5f50);
	ASSERT_EQ(len, 1);
	ASSERT_EQ(off, 3);
	/* 7F49 constructed */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x7f, 0x49, 0x00 }, 3, &tag, &len, &off), 1);
	ASSERT_EQ(tag, 0x7f49);
	ASSERT_TRUE(tlv_tag_is_constructed(tag));
	/* three-byte tag: second byte has bit 8 set */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x5f, 0x9f, 0x01, 0x00 }, 4, &tag, &len, &off), 1);
	ASSERT_EQ(tag, 0x5f9f01);
	ASSERT_EQ(len, 0);
	ASSERT_FALSE(tlv_tag_is_constructed(tag));
	/* four-byte tag: refused */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x5f, 0x9f, 0x81, 0x01, 0x00 }, 5, &tag, &len, &off),
	          -EBADMSG);
	/* tag truncated after its first and second byte */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x5f }, 1, &tag, &len, &off), -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0x5f, 0x9f }, 2, &tag, &len, &off), -EBADMSG);
}

TEST(lengths)
{
	uint8_t buf[3 + 0x1234];
	uint32_t tag;
	size_t len, off;

	/* 0x81: one length byte, also for values under 0x80 */
	memset(buf, 0, sizeof(buf));
	buf[0] = 0xc5;
	buf[1] = 0x81;
	buf[2] = 0x3c;
	ASSERT_EQ(next_of(buf, 3 + 0x3c, &tag, &len, &off), 1);
	ASSERT_EQ(len, 0x3c);
	ASSERT_EQ(off, 3);
	buf[2] = 0xff;
	ASSERT_EQ(next_of(buf, 3 + 0xff, &tag, &len, &off), 1);
	ASSERT_EQ(len, 0xff);
	/* one byte short */
	ASSERT_EQ(next_of(buf, 3 + 0xfe, &tag, &len, &off), -EBADMSG);

	/* 0x82: two length bytes */
	buf[0] = 0x6e;
	buf[1] = 0x82;
	buf[2] = 0x01;
	buf[3] = 0x0d;
	ASSERT_EQ(next_of(buf, 4 + 0x10d, &tag, &len, &off), 1);
	ASSERT_EQ(len, 0x10d);
	ASSERT_EQ(off, 4);
	ASSERT_EQ(next_of(buf, 4 + 0x10c, &tag, &len, &off), -EBADMSG);

	/* truncated length fields */
	ASSERT_EQ(next_of((const uint8_t[]){ 0xc5 }, 1, &tag, &len, &off), -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0xc5, 0x81 }, 2, &tag, &len, &off), -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0xc5, 0x82, 0x00 }, 3, &tag, &len, &off), -EBADMSG);

	/* what cards never send: indefinite, 0x83 and longer, reserved 0xFF */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x6e, 0x80, 0x00, 0x00 }, 4, &tag, &len, &off),
	          -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0xc5, 0x83, 0x00, 0x00, 0x01, 0x00 }, 6, &tag, &len,
	                  &off),
	          -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0xc5, 0x84, 0, 0, 0, 1, 0 }, 7, &tag, &len, &off),
	          -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0xc5, 0xff, 0x00 }, 3, &tag, &len, &off), -EBADMSG);

	/* overlong: the length claims more than what is left, by one and by a lot */
	ASSERT_EQ(next_of((const uint8_t[]){ 0x93, 0x03, 0x00, 0x00 }, 4, &tag, &len, &off),
	          -EBADMSG);
	ASSERT_EQ(next_of((const uint8_t[]){ 0x93, 0x82, 0xff, 0xff, 0x00 }, 5, &tag, &len, &off),
	          -EBADMSG);
}

TEST(error_leaves_cursor)
{
	static const uint8_t d[] = { 0x93, 0x01, 0x07, 0xc5, 0x05, 0x00 };
	struct tlv_cursor c;
	const uint8_t *v;
	uint32_t tag;
	size_t len;

	tlv_init(&c, d, sizeof(d));
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 1);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), -EBADMSG);
	ASSERT_EQ(c.left, 3);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), -EBADMSG);
}

TEST(padding)
{
	static const uint8_t d[] = { 0x00, 0xff, 0x93, 0x01, 0x07, 0x00,
		                     0x00, 0xc4, 0x01, 0x03, 0xff, 0xff };
	struct tlv_cursor c;
	const uint8_t *v;
	uint32_t tag;
	size_t len;

	tlv_init(&c, d, sizeof(d));
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 1);
	ASSERT_EQ(tag, 0x93);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 1);
	ASSERT_EQ(tag, 0xc4);
	ASSERT_EQ(v[0], 0x03);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 0);
	/* only padding */
	tlv_init(&c, (const uint8_t[]){ 0x00, 0xff, 0x00 }, 3);
	ASSERT_EQ(tlv_next(&c, &tag, &v, &len), 0);
}

/* 6E { 4F, 73 { C4, C5 }, 5F52 } */
static const uint8_t nested[] = {
	0x6e, 0x15, /* */
	0x4f, 0x02, 0xd2, 0x76, /* */
	0x73, 0x08, /* */
	0xc4, 0x01, 0x03, /* */
	0xc5, 0x03, 0xaa, 0xbb, 0xcc, /* */
	0x5f, 0x52, 0x01, 0x00, /* */
	0xc5, 0x01, 0xee, /* a second C5 on the top level of 6E's value */
	0x93, 0x03, 0x00, 0x00, 0x2a, /* after 6E */
};

TEST(find_one_level)
{
	const uint8_t *v;
	size_t len;

	ASSERT_EQ(tlv_find(nested, sizeof(nested), 0x93, &v, &len), 1);
	ASSERT_EQ(len, 3);
	ASSERT_EQ(v[2], 0x2a);
	/* C5 is inside 6E: not on this level */
	ASSERT_EQ(tlv_find(nested, sizeof(nested), 0xc5, &v, &len), 0);
	ASSERT_EQ(tlv_find(nested, sizeof(nested), 0x6e, &v, &len), 1);
	ASSERT_EQ(len, 0x15);
	ASSERT_EQ(tlv_find(v, len, 0x5f52, &v, &len), 1);
	ASSERT_EQ(len, 1);
	/* a malformed item after the match still fails the search: reject, never truncate */
	ASSERT_EQ(tlv_find((const uint8_t[]){ 0x93, 0x00, 0xc5, 0x09 }, 4, 0x93, &v, &len),
	          -EBADMSG);
}

TEST(find_recursive)
{
	const uint8_t *v;
	size_t len;

	/* depth first, document order: the C5 in 73 comes before the one after it */
	ASSERT_EQ(tlv_find_recursive(nested, sizeof(nested), 0xc5, &v, &len), 1);
	ASSERT_EQ(len, 3);
	ASSERT_EQ(v[0], 0xaa);
	ASSERT_EQ(tlv_find_recursive(nested, sizeof(nested), 0xc4, &v, &len), 1);
	ASSERT_EQ(v[0], 0x03);
	ASSERT_EQ(tlv_find_recursive(nested, sizeof(nested), 0x93, &v, &len), 1);
	ASSERT_EQ(tlv_find_recursive(nested, sizeof(nested), 0xd6, &v, &len), 0);
	/* primitive values are not searched: 4F holds D2 76, which is not a TLV */
	ASSERT_EQ(tlv_find_recursive((const uint8_t[]){ 0x5b, 0x03, 0xc4, 0x01, 0x00 }, 5, 0xc4, &v,
	                             &len),
	          0);
}

TEST(find_recursive_truncated_inside)
{
	/* 73 is well-formed on the outside, but C5 inside claims 60 bytes of 3 */
	static const uint8_t d[] = { 0x6e, 0x09, 0x73, 0x07, 0xc4, 0x01,
		                     0x03, 0xc5, 0x3c, 0x00, 0x00 };
	uint8_t *q = dup_exact(d, sizeof(d));
	const uint8_t *v;
	size_t len;

	ASSERT_EQ(tlv_find_recursive(q, sizeof(d), 0xc4, &v, &len), -EBADMSG);
	ASSERT_EQ(tlv_find(q, sizeof(d), 0x6e, &v, &len), 1);
	/* truncating the outer buffer anywhere gives an error, never a read past it */
	for (size_t n = 1; n < sizeof(d); n++) {
		uint8_t *t = dup_exact(d, n);

		ASSERT_EQ(tlv_find_recursive(t, n, 0xc4, &v, &len), -EBADMSG);
		free(t);
	}
	free(q);
}

TEST(depth_limit)
{
	uint8_t buf[2 * 16 + 3];
	const uint8_t *v;
	size_t len;

	/* k nested 73s around one byte */
	for (size_t k = 1; k <= 16; k++) {
		size_t n = 2 * k + 3;

		for (size_t i = 0; i < k; i++) {
			buf[2 * i] = 0x73;
			buf[2 * i + 1] = (uint8_t)(n - 2 * i - 2);
		}
		buf[2 * k] = 0x5b;
		buf[2 * k + 1] = 0x01;
		buf[2 * k + 2] = 'x';
		if (k < TLV_DEPTH_MAX) {
			ASSERT_EQ(tlv_find_recursive(buf, n, 0x5b, &v, &len), 1);
			ASSERT_EQ(v[0], 'x');
		} else
			ASSERT_EQ(tlv_find_recursive(buf, n, 0x5b, &v, &len), -EBADMSG);
	}
}

TEST(garbage)
{
	/* Every byte string of length <= 3 over a set of interesting bytes: any answer is fine,
	 * as long as values stay inside the buffer (ASan checks the reads). */
	static const uint8_t alphabet[] = { 0x00, 0x01, 0x1f, 0x3f, 0x5f, 0x7f, 0x80,
		                            0x81, 0x82, 0x83, 0x9f, 0xff, 0x02 };
	const size_t k = ELEMENTSOF(alphabet);

	for (size_t a = 0; a < k; a++)
		for (size_t b = 0; b < k; b++)
			for (size_t c = 0; c < k; c++)
				for (size_t n = 1; n <= 3; n++) {
					uint8_t d[3] = { alphabet[a], alphabet[b], alphabet[c] };
					uint8_t *q = dup_exact(d, n);
					struct tlv_cursor cur;
					const uint8_t *v;
					uint32_t tag;
					size_t len;
					int r;

					tlv_init(&cur, q, n);
					while ((r = tlv_next(&cur, &tag, &v, &len)) > 0)
						ASSERT_TRUE(v >= q && len <= (size_t)(q + n - v));
					ASSERT_TRUE(r == 0 || r == -EBADMSG);
					r = tlv_find_recursive(q, n, 0x01, &v, &len);
					ASSERT_TRUE(r >= -EBADMSG && r <= 1);
					free(q);
				}
}

int main(void)
{
	RUN(empty);
	RUN(simple_sequence);
	RUN(multi_byte_tags);
	RUN(lengths);
	RUN(error_leaves_cursor);
	RUN(padding);
	RUN(find_one_level);
	RUN(find_recursive);
	RUN(find_recursive_truncated_inside);
	RUN(depth_limit);
	RUN(garbage);
	return 0;
}
