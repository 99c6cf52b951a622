/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * User ids as shown: the UTF-8 check a user id passes before it reaches a terminal or a popup,
 * and the cut of a long one (see keyring-uid.h).
 * Does not: choose which user id of a key is shown, or read GnuPG.
 */
#include <string.h>

#include "keyring-uid.h"

bool keyring_uid_acceptable(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		unsigned c = *p, len, cp;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			len = 1, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			len = 2, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			len = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned i = 1; i <= len; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		/* Overlong, surrogate, beyond Unicode, C1 controls. */
		if ((len == 2 && cp < 0x800) || (len == 3 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp < 0xa0))
			return false;
		p += len + 1;
	}
	return true;
}

void keyring_uid_show(const char *s, char buf[UID_MAX])
{
	size_t n = strnlen(s, UID_MAX);

	if (n < UID_MAX) {
		memcpy(buf, s, n + 1);
		return;
	}
	/* Back to the start of a character: a continuation byte is 10xxxxxx. */
	for (n = KEYRING_UID_CUT; n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80; n--)
		;
	memcpy(buf, s, n);
	memcpy(buf + n, "\xe2\x80\xa6", 4); /* U+2026 and the NUL */
}
