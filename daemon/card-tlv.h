/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A pure BER-TLV reader (ISO 7816-4, 5.2) for what smartcards answer: tags of up to 3 bytes,
 * lengths in the short form or as 0x81/0x82 plus 1 or 2 bytes, 00/FF padding between objects.
 *
 * Does not: allocate, copy, write TLV, accept indefinite lengths (0x80) or lengths of 0x83 and up.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Cards nest three levels deep (6E > 73 > C5); anything deeper than this is not a card. */
#define TLV_DEPTH_MAX 8

struct tlv_cursor {
	const uint8_t *p;
	size_t left;
};

void tlv_init(struct tlv_cursor *c, const uint8_t *p, size_t n);

/* Returns 1 and one item, 0 at the end, -EBADMSG on malformed input. Never reads past the end.
 * The tag is the big-endian value of its 1-3 bytes (0x5F50, 0x7F49). On error the cursor is
 * left where it was. */
int tlv_next(struct tlv_cursor *c, uint32_t *ret_tag, const uint8_t **ret_val, size_t *ret_len);

/* True for constructed tags (bit 6 of the first tag byte), whose value is itself BER-TLV. */
bool tlv_tag_is_constructed(uint32_t tag);

/* Looks for tag among the items of one level. The whole level must be well-formed. Returns 1 and
 * the first match, 0 when absent, -EBADMSG when malformed. */
int tlv_find(const uint8_t *p, size_t n, uint32_t tag, const uint8_t **ret_val, size_t *ret_len);

/* Like tlv_find(), but also descends into constructed items, depth first, at most TLV_DEPTH_MAX
 * levels. The whole tree must be well-formed (-EBADMSG otherwise, also when nested too deep). */
int tlv_find_recursive(const uint8_t *p, size_t n, uint32_t tag, const uint8_t **ret_val,
                       size_t *ret_len);
