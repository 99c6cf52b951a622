/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See keyring-owned.h. The file is line-based text, first line "keyctl-owned-keys 1", then
 * "home PATH", "grip HEX" (sorted) and "key FPR" lines. It is our own file, but it is read back
 * from disk, so it is parsed as untrusted bytes: anything unexpected makes it no cache at all.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "keyring-owned.h"
#include "util.h"

#define MAGIC "keyctl-owned-keys 1"

static bool hex_upper(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'F')))
			return false;
	return true;
}

static int grip_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int keyring_grips_read(const char *home, struct keyring_owned *o)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	o->n_grips = 0;
	if (snprintf(path, sizeof(path), "%s/private-keys-v1.d", home) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char *g;

		if (strlen(de->d_name) != KEYGRIP_HEX + 4 ||
		    !streq(de->d_name + KEYGRIP_HEX, ".key"))
			continue;
		if (o->n_grips >= KEYRING_GRIPS_MAX) {
			r = -E2BIG;
			break;
		}
		g = o->grips[o->n_grips];
		for (size_t i = 0; i < KEYGRIP_HEX; i++)
			g[i] = (char)(de->d_name[i] >= 'a' && de->d_name[i] <= 'f'
			                      ? de->d_name[i] - 32
			                      : de->d_name[i]);
		g[KEYGRIP_HEX] = 0;
		if (hex_upper(g, KEYGRIP_HEX))
			o->n_grips++;
	}
	closedir(d);
	if (r < 0)
		return r;
	qsort(o->grips, o->n_grips, sizeof(o->grips[0]), grip_cmp);
	return 0;
}

bool keyring_grips_equal(const struct keyring_owned *a, const struct keyring_owned *b)
{
	if (a->n_grips != b->n_grips)
		return false;
	for (size_t i = 0; i < a->n_grips; i++)
		if (!streq(a->grips[i], b->grips[i]))
			return false;
	return true;
}

/* One line's value after "word ", into buf; the line ends at '\n' (required). */
static int take_line(const uint8_t *p, size_t n, size_t *pos, const char *word, char *buf,
                     size_t size)
{
	size_t w = strlen(word), i = *pos, end;

	if (n - i < w + 1 || memcmp(p + i, word, w) != 0 || p[i + w] != ' ')
		return -ENOMSG;
	i += w + 1;
	for (end = i; end < n && p[end] != '\n'; end++)
		if (p[end] == 0)
			return -EBADMSG;
	if (end == n || end - i == 0 || end - i >= size)
		return -EBADMSG;
	memcpy(buf, p + i, end - i);
	buf[end - i] = 0;
	*pos = end + 1;
	return 0;
}

/* A run of "word HEX" lines into the rows of out (at most max, each len hex digits). */
static int take_hex_lines(const uint8_t *p, size_t n, size_t *pos, const char *word, size_t len,
                          char *out, size_t stride, size_t max, size_t *ret_n)
{
	char buf[FPR_HEX_MAX];
	size_t k = 0;
	int r;

	while ((r = take_line(p, n, pos, word, buf, sizeof(buf))) == 0) {
		if (k >= max)
			return -E2BIG;
		if (strlen(buf) != len || !hex_upper(buf, len))
			return -EBADMSG;
		memcpy(out + k * stride, buf, len + 1);
		k++;
	}
	if (r != -ENOMSG)
		return r;
	*ret_n = k;
	return 0;
}

int keyring_owned_parse(const uint8_t *p, size_t n, struct keyring_owned *ret)
{
	size_t pos = sizeof(MAGIC);
	int r;

	ret->valid = false;
	if (n < sizeof(MAGIC) || memcmp(p, MAGIC "\n", sizeof(MAGIC)) != 0)
		return -EBADMSG;
	r = take_line(p, n, &pos, "home", ret->home, sizeof(ret->home));
	if (r < 0)
		return -EBADMSG;
	r = take_hex_lines(p, n, &pos, "grip", KEYGRIP_HEX, ret->grips[0], sizeof(ret->grips[0]),
	                   KEYRING_GRIPS_MAX, &ret->n_grips);
	if (r < 0)
		return r;
	for (size_t i = 1; i < ret->n_grips; i++)
		if (strcmp(ret->grips[i - 1], ret->grips[i]) >= 0)
			return -EBADMSG;
	r = take_hex_lines(p, n, &pos, "key", 40, ret->fprs[0], sizeof(ret->fprs[0]),
	                   KEYRING_OWNED_MAX, &ret->n_fprs);
	if (r == -EBADMSG) /* v5 keys: 64 digits */
		return r;
	if (r < 0)
		return r;
	if (pos != n)
		return -EBADMSG;
	ret->valid = true;
	return 0;
}

int keyring_owned_format(const struct keyring_owned *o, char **ret, size_t *ret_n)
{
	_cleanup_(freep) char *buf = NULL;
	size_t size = 0;
	FILE *f;

	if (!o->valid || strchr(o->home, '\n') || isempty(o->home))
		return -EINVAL;
	f = open_memstream(&buf, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "%s\nhome %s\n", MAGIC, o->home);
	for (size_t i = 0; i < o->n_grips; i++)
		fprintf(f, "grip %s\n", o->grips[i]);
	for (size_t i = 0; i < o->n_fprs; i++)
		fprintf(f, "key %s\n", o->fprs[i]);
	if (fclose(f) != 0)
		return -ENOMEM;
	*ret = TAKE_PTR(buf);
	*ret_n = size;
	return 0;
}

int keyring_owned_load(const char *path, struct keyring_owned *ret)
{
	_cleanup_(freep) uint8_t *p = NULL;
	size_t n = 0;
	int r;

	ret->valid = false;
	r = file_read_bounded(path, KEYRING_OWNED_FILE_MAX, &p, &n);
	if (r < 0)
		return r;
	return keyring_owned_parse(p, n, ret);
}

int keyring_owned_save(const char *path, const struct keyring_owned *o)
{
	_cleanup_(freep) char *text = NULL;
	size_t n;
	int r;

	r = keyring_owned_format(o, &text, &n);
	if (r < 0)
		return r;
	return file_write_atomic(path, text, n);
}
