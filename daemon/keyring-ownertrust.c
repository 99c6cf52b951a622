/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See keyring-ownertrust.h. gpg runs through gpgme's spawn protocol, its output into a callback
 * that stops taking bytes at OWNERTRUST_OUTPUT_MAX: a trustdb is the user's, but a damaged or
 * hostile one must cost a bounded read and a parse error, not memory.
 */
#include <ctype.h>
#include <errno.h>
#include <gpgme.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpgme-cleanup.h"
#include "gpgme-init.h"
#include "keyring-list.h"
#include "keyring-ownertrust.h"
#include "util.h"

/* One "HEX:DIGITS:" line (without its '\n') into fpr; its level into *level. */
static int parse_line(const uint8_t *p, size_t n, char fpr[static FPR_HEX_MAX], unsigned *level)
{
	size_t h = 0, i;
	unsigned v = 0;

	while (h < n && isxdigit(p[h]))
		h++;
	if ((h != 40 && h != 64) || h >= n || p[h] != ':')
		return -EBADMSG;
	for (i = 0; i < h; i++)
		fpr[i] = (char)toupper(p[i]);
	fpr[h] = 0;
	for (i = h + 1; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
		v = v * 10 + (p[i] - '0');
		if (v > 0xffff)
			return -EBADMSG;
	}
	if (i == h + 1 || i >= n || p[i] != ':' || i + 1 != n)
		return -EBADMSG;
	*level = v & 0x0f; /* the rest are flags (disabled, ...) */
	return 0;
}

int ownertrust_parse(const uint8_t *p, size_t n, unsigned min_level, struct ownertrust **ret,
                     size_t *ret_n)
{
	_cleanup_(freep) struct ownertrust *out = NULL;
	size_t n_out = 0, allocated = 0, lines = 0;

	for (size_t pos = 0; pos < n;) {
		const uint8_t *nl = memchr(p + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (p + pos)) : n - pos;
		char fpr[FPR_HEX_MAX];
		unsigned level;
		int r;

		if (++lines > OWNERTRUST_KEYS_MAX + 16)
			return -E2BIG;
		if (len > 0 && p[pos + len - 1] == '\r')
			return -EBADMSG;
		if (len == 0 || p[pos] == '#') {
			if (memchr(p + pos, 0, len))
				return -EBADMSG;
			pos += len + 1;
			continue;
		}
		r = parse_line(p + pos, len, fpr, &level);
		if (r < 0)
			return r;
		pos += len + 1;
		if (level < min_level)
			continue;
		if (n_out >= OWNERTRUST_KEYS_MAX)
			return -E2BIG;
		if (n_out == allocated) {
			size_t m = allocated ? allocated * 2 : 16;
			struct ownertrust *bigger = reallocarray(out, m, sizeof(*out));

			if (!bigger)
				return -ENOMEM;
			out = bigger;
			allocated = m;
		}
		memcpy(out[n_out].fpr, fpr, sizeof(fpr));
		out[n_out++].level = level;
	}
	*ret = n_out ? TAKE_PTR(out) : NULL;
	*ret_n = n_out;
	return 0;
}

struct sink {
	uint8_t *buf;
	size_t n;
	bool overflow;
};

static ssize_t sink_write(void *handle, const void *buf, size_t size)
{
	struct sink *s = handle;

	if (size > OWNERTRUST_OUTPUT_MAX - s->n) {
		s->overflow = true;
		errno = EFBIG;
		return -1;
	}
	memcpy(s->buf + s->n, buf, size);
	s->n += size;
	return (ssize_t)size;
}

int ownertrust_read(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                    unsigned min_level, struct ownertrust **ret, size_t *ret_n)
{
	_cleanup_(ctx_releasep) gpgme_ctx_t ctx = NULL;
	_cleanup_(data_releasep) gpgme_data_t out = NULL;
	_cleanup_(freep) uint8_t *buf = NULL;
	struct gpgme_data_cbs cbs = { .write = sink_write };
	struct sink sink = {};
	char path[PATH_MAX];
	const char *argv[5];
	gpgme_error_t e;
	struct stat st;

	*ret = NULL;
	*ret_n = 0;
	if (!home)
		return 0; /* the full listing finds the keys */
	if (snprintf(path, sizeof(path), "%s/trustdb.gpg", home) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!gpg_path)
		return -ENOENT;
	gpgme_init_once();
	buf = malloc(OWNERTRUST_OUTPUT_MAX);
	if (!buf)
		return -ENOMEM;
	sink.buf = buf;
	if (gpgme_new(&ctx) || gpgme_set_protocol(ctx, GPGME_PROTOCOL_SPAWN) ||
	    gpgme_data_new_from_cbs(&out, &cbs, &sink))
		return -ENOMEM;
	argv[0] = "gpg";
	argv[1] = "--homedir";
	argv[2] = home;
	argv[3] = "--export-ownertrust";
	argv[4] = NULL;
	keyring_cancel_set(cancel, ctx);
	e = gpgme_op_spawn(ctx, gpg_path, argv, NULL, out, NULL, 0);
	keyring_cancel_set(cancel, NULL);
	if (sink.overflow)
		return -EFBIG;
	if (gpgme_err_code(e) == GPG_ERR_CANCELED)
		return -ECANCELED;
	if (e)
		return -EIO;
	return ownertrust_parse(buf, sink.n, min_level, ret, ret_n);
}
