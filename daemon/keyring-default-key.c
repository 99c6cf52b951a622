/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpg.conf's default-key lines, every one of them: gpg keeps them all and signs with the last one
 * that names a key with a secret part it may use (gpg(1), --default-key; getkey.c,
 * parse_def_secret_key()), so which one counts is decided against the keys (audit-match.c).
 *
 * Does not: decide which value gpg uses, or read other options.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gpg-conf.h"
#include "keyring-list.h"
#include "util.h"

int keyring_parse_default_key(const uint8_t *p, size_t n, char *buf, size_t size)
{
	const char *v;
	size_t vl, len = 0;
	int r;

	if (size == 0)
		return -EMSGSIZE;
	buf[0] = 0;
	while ((r = gpg_conf_next(&p, &n, "default-key", &v, &vl)) > 0) {
		if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"')
			v++, vl -= 2;
		if (vl == 0)
			continue;
		/* The value, a '\n' before it when it is not the first, and the NUL. */
		if (vl + (len > 0) >= size - len) {
			buf[0] = 0;
			return -EMSGSIZE;
		}
		if (len > 0)
			buf[len++] = '\n';
		memcpy(buf + len, v, vl);
		len += vl;
		buf[len] = 0;
	}
	if (r < 0) {
		buf[0] = 0;
		return r;
	}
	return len > 0;
}

int keyring_default_key(const char *gnupghome, char *buf, size_t size)
{
	_cleanup_(freep) uint8_t *data = NULL;
	size_t n = 0;
	int r;

	if (size > 0)
		buf[0] = 0;
	r = gpg_conf_file_read(gnupghome, "gpg.conf", &data, &n);
	if (r <= 0)
		return r;
	return keyring_parse_default_key(data, n, buf, size);
}
