/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * BER-TLV as smartcards speak it (ISO 7816-4, 5.2; OpenPGP card 3.4, 4.4.1): a cursor that
 * hands out one item at a time, and finders that look for a tag on one level or in the whole
 * tree. Every length is compared with what is left of the buffer before anything is read.
 *
 * Does not: allocate, interpret values, or accept what ISO 7816-4 does not define (tags longer
 * than 3 bytes, indefinite lengths, length fields longer than 0x82 xx xx).
 */
#include <errno.h>

#include "card-tlv.h"

/* Tag bytes beyond the first: bit 8 set means another byte follows (ISO 7816-4, 5.2.2.1). */
#define TLV_TAG_BYTES_MAX 3

void tlv_init(struct tlv_cursor *c, const uint8_t *p, size_t n)
{
	c->p = n > 0 ? p : NULL;
	c->left = n;
}

bool tlv_tag_is_constructed(uint32_t tag)
{
	uint32_t first = tag;

	/* The first byte of a multi-byte tag has its low five bits all set. */
	while (first > 0xff)
		first >>= 8;
	return first & 0x20;
}

int tlv_next(struct tlv_cursor *c, uint32_t *ret_tag, const uint8_t **ret_val, size_t *ret_len)
{
	const uint8_t *p = c->p;
	size_t left = c->left, i = 0, len;
	uint32_t tag;
	uint8_t b;

	/* '00' and 'FF' are not valid first tag bytes; ISO 7816-4 allows them as padding before,
	 * between and after data objects. */
	while (left > 0 && (p[0] == 0x00 || p[0] == 0xff)) {
		p++;
		left--;
	}
	if (left == 0) {
		c->p = p;
		c->left = 0;
		return 0;
	}

	b = p[i++];
	tag = b;
	if ((b & 0x1f) == 0x1f)
		do {
			if (i >= TLV_TAG_BYTES_MAX || i >= left)
				return -EBADMSG;
			b = p[i++];
			tag = tag << 8 | b;
		} while (b & 0x80);

	if (i >= left)
		return -EBADMSG;
	b = p[i++];
	if (b < 0x80)
		len = b;
	else if (b == 0x81) {
		if (left - i < 1)
			return -EBADMSG;
		len = p[i];
		i += 1;
	} else if (b == 0x82) {
		if (left - i < 2)
			return -EBADMSG;
		len = (size_t)p[i] << 8 | p[i + 1];
		i += 2;
	} else
		return -EBADMSG; /* 0x80 indefinite, 0x83 and longer: not on a card */

	if (len > left - i)
		return -EBADMSG;

	*ret_tag = tag;
	*ret_val = p + i;
	*ret_len = len;
	c->p = p + i + len;
	c->left = left - i - len;
	return 1;
}

int tlv_find(const uint8_t *p, size_t n, uint32_t tag, const uint8_t **ret_val, size_t *ret_len)
{
	const uint8_t *found = NULL, *val;
	size_t found_len = 0, len;
	struct tlv_cursor c;
	uint32_t t;
	int r;

	tlv_init(&c, p, n);
	while ((r = tlv_next(&c, &t, &val, &len)) > 0)
		if (t == tag && !found) {
			found = val;
			found_len = len;
		}
	if (r < 0)
		return r;
	if (!found)
		return 0;
	*ret_val = found;
	*ret_len = found_len;
	return 1;
}

static int find_recursive(const uint8_t *p, size_t n, uint32_t tag, unsigned depth,
                          const uint8_t **found, size_t *found_len)
{
	struct tlv_cursor c;
	const uint8_t *val;
	size_t len;
	uint32_t t;
	int r;

	if (depth >= TLV_DEPTH_MAX)
		return -EBADMSG;

	tlv_init(&c, p, n);
	while ((r = tlv_next(&c, &t, &val, &len)) > 0) {
		if (t == tag && !*found) {
			*found = val;
			*found_len = len;
		}
		if (tlv_tag_is_constructed(t)) {
			r = find_recursive(val, len, tag, depth + 1, found, found_len);
			if (r < 0)
				return r;
		}
	}
	return r;
}

int tlv_find_recursive(const uint8_t *p, size_t n, uint32_t tag, const uint8_t **ret_val,
                       size_t *ret_len)
{
	const uint8_t *found = NULL;
	size_t found_len = 0;
	int r;

	r = find_recursive(p, n, tag, 0, &found, &found_len);
	if (r < 0)
		return r;
	if (!found)
		return 0;
	*ret_val = found;
	*ret_len = found_len;
	return 1;
}
