/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "gpg-conf.h"
#include "util.h"

int gpg_conf_next(const uint8_t **p, size_t *n, const char *option, const char **ret_value,
                  size_t *ret_len)
{
	const size_t ol = strlen(option);

	if (*n > 0 && memchr(*p, 0, *n))
		return -EBADMSG;
	while (*n > 0) {
		const char *s = (const char *)*p;
		const char *eol = memchr(s, '\n', *n);
		size_t len = eol ? (size_t)(eol - s) : *n;
		size_t i = 0;

		*p += eol ? len + 1 : len;
		*n -= eol ? len + 1 : len;
		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (len - i >= ol && memcmp(s + i, option, ol) == 0 &&
		    (len - i == ol || s[i + ol] == ' ' || s[i + ol] == '\t' || s[i + ol] == '\r')) {
			const char *v = s + i + ol;
			size_t vl = len - i - ol;

			while (vl > 0 && (*v == ' ' || *v == '\t'))
				v++, vl--;
			while (vl > 0 &&
			       (v[vl - 1] == ' ' || v[vl - 1] == '\t' || v[vl - 1] == '\r'))
				vl--;
			*ret_value = v;
			*ret_len = vl;
			return 1;
		}
	}
	return 0;
}

int gpg_conf_has_option(const uint8_t *p, size_t n, const char *option)
{
	const char *v;
	size_t vl;

	return gpg_conf_next(&p, &n, option, &v, &vl);
}

int gpg_conf_file_read(const char *dir, const char *name, uint8_t **ret, size_t *ret_n)
{
	char path[PATH_MAX];
	int r;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* -EFBIG also when it grew while we read: the next change event reads it again. */
	r = file_read_bounded(path, GPG_CONF_MAX, ret, ret_n);
	if (r == -ENOENT) {
		*ret = NULL;
		*ret_n = 0;
		return 0;
	}
	return r < 0 ? r : 1;
}

int gpg_conf_file_has_option(const char *dir, const char *name, const char *option)
{
	_cleanup_(freep) uint8_t *data = NULL;
	size_t n = 0;
	int r;

	r = gpg_conf_file_read(dir, name, &data, &n);
	if (r <= 0)
		return r;
	return gpg_conf_has_option(data, n, option);
}
