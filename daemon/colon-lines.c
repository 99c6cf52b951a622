/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See colon-lines.h. */
#include <ctype.h>
#include <string.h>

#include "colon-lines.h"

void colon_split(const uint8_t *p, size_t n, struct colon_field *f, size_t max)
{
	size_t k = 0, start = 0;

	memset(f, 0, max * sizeof(*f));
	for (size_t i = 0; i <= n && k < max; i++)
		if (i == n || p[i] == ':') {
			f[k++] = (struct colon_field){ p + start, i - start };
			start = i + 1;
		}
}

bool colon_field_is(struct colon_field f, const char *s)
{
	return f.n == strlen(s) && memcmp(f.p, s, f.n) == 0;
}

bool colon_field_hex(struct colon_field f, size_t len)
{
	if (len ? f.n != len : f.n == 0)
		return false;
	for (size_t i = 0; i < f.n; i++)
		if (!isxdigit(f.p[i]))
			return false;
	return true;
}

void colon_lines_init(struct colon_lines *c, uint8_t *buf, size_t size)
{
	*c = (struct colon_lines){ .buf = buf, .size = size };
}

void colon_lines_feed(struct colon_lines *c, const uint8_t *p, size_t n, colon_line_fn fn,
                      void *userdata)
{
	while (n > 0) {
		const uint8_t *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;

		if (!c->overlong && len <= c->size - c->n) {
			memcpy(c->buf + c->n, p, len);
			c->n += len;
		} else
			c->overlong = true;
		if (nl) {
			if (c->overlong)
				c->skipped++;
			else
				fn(userdata, c->buf, c->n);
			c->n = 0;
			c->overlong = false;
			len++;
		}
		p += len;
		n -= len;
	}
}

void colon_lines_finish(struct colon_lines *c, colon_line_fn fn, void *userdata)
{
	if (c->n > 0 && !c->overlong)
		fn(userdata, c->buf, c->n);
	c->n = 0;
	c->overlong = false;
}
