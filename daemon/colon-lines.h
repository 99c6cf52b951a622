/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpg's --with-colons output read as it comes: whole lines gathered across chunks that may split
 * them anywhere, a line longer than the buffer skipped (and counted) rather than cut, and each
 * line split into its fields. keyring-certified.c and keyring-roca.c read their gpg runs through
 * it. Pure: no I/O, no allocation.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct colon_field {
	const uint8_t *p;
	size_t n;
};

/* Splits the line p (n bytes, no newline) at ':' into at most max fields; the rest stay empty. */
void colon_split(const uint8_t *p, size_t n, struct colon_field *f, size_t max);
bool colon_field_is(struct colon_field f, const char *s);
/* Whether f holds exactly len hex digits (len 0: any number of them, at least one). */
bool colon_field_hex(struct colon_field f, size_t len);

typedef void (*colon_line_fn)(void *userdata, const uint8_t *p, size_t n);

struct colon_lines {
	uint8_t *buf; /* the caller's, size bytes: the longest line read */
	size_t size, n;
	bool overlong;
	size_t skipped;
};

void colon_lines_init(struct colon_lines *c, uint8_t *buf, size_t size);
/* Hands fn each whole line of the next n bytes, without its newline. */
void colon_lines_feed(struct colon_lines *c, const uint8_t *p, size_t n, colon_line_fn fn,
                      void *userdata);
/* The last line when it had no newline, after the last chunk. */
void colon_lines_finish(struct colon_lines *c, colon_line_fn fn, void *userdata);
