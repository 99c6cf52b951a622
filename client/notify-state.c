/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's memory of what it announced (format in notify-state.h). The parser takes the
 * file's bytes and rejects rather than repairs: a corrupt file is reported by the caller and
 * replaced by an empty state, which at worst repeats a notification. Saving is atomic, so a crash
 * or a full disk leaves either the old file or the new one, never half of one.
 *
 * Does not: log, read the clock, decide texts.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fileio.h"
#include "notify-state.h"

int notify_state_new(struct notify_state **ret)
{
	struct notify_state *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

struct notify_state *notify_state_free(struct notify_state *s)
{
	free(s);
	return NULL;
}

static bool id_char(char c)
{
	if (c == 0)
		return false;
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       strchr("._:/@+-", c);
}

bool notify_state_id_valid(const char *id)
{
	size_t n = strnlen(id, NOTIFY_STATE_ID_MAX);

	if (n == 0 || n >= NOTIFY_STATE_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!id_char(id[i]))
			return false;
	return true;
}

/* One decimal field of [p, p+n): no sign, no leading zero, at most max. */
static int parse_number(const char *p, size_t n, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (n == 0 || n > 19 || (n > 1 && p[0] == '0'))
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EBADMSG;
		v = v * 10 + (uint64_t)(p[i] - '0'); /* 19 digits fit in 64 bits */
	}
	if (v > max)
		return -EBADMSG;
	*ret = v;
	return 0;
}

/* Splits line [p, p+n) (no '\n') into its four fields. */
static int parse_line(const char *p, size_t n, struct notify_record *ret)
{
	const char *field[4];
	size_t len[4], k = 0, start = 0;
	uint64_t v;
	int r;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && p[i] != ' ')
			continue;
		if (k == 4)
			return -EBADMSG; /* a fifth field */
		field[k] = p + start;
		len[k] = i - start;
		if (len[k] == 0)
			return -EBADMSG; /* two spaces, leading or trailing space */
		k++;
		start = i + 1;
	}
	if (k != 4)
		return -EBADMSG;

	if (len[0] >= NOTIFY_STATE_ID_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < len[0]; i++) /* every byte: a NUL would hide what follows it */
		if (!id_char(field[0][i]))
			return -EBADMSG;
	memcpy(ret->id, field[0], len[0]);
	ret->id[len[0]] = 0;
	r = parse_number(field[1], len[1], NOTIFY_STATE_THRESHOLD_MAX, &v);
	if (r < 0)
		return r;
	ret->threshold = (unsigned)v;
	r = parse_number(field[2], len[2], INT64_MAX, &v);
	if (r < 0)
		return r;
	ret->expires = (int64_t)v;
	r = parse_number(field[3], len[3], INT64_MAX, &v);
	if (r < 0)
		return r;
	ret->snooze_until = (int64_t)v;
	return 0;
}

int notify_state_parse(const uint8_t *p, size_t n, struct notify_state **ret)
{
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;
	const size_t magic = strlen(NOTIFY_STATE_MAGIC);
	size_t off = 0;
	bool first = true;
	int r;

	if (n > NOTIFY_STATE_FILE_MAX)
		return -EMSGSIZE;
	r = notify_state_new(&s);
	if (r < 0)
		return r;

	while (off < n) {
		const uint8_t *line = p + off, *nl;
		size_t left = n - off, len;

		nl = memchr(line, '\n', MIN(left, (size_t)NOTIFY_STATE_LINE_MAX));
		if (!nl)
			return left >= NOTIFY_STATE_LINE_MAX ? -EMSGSIZE
			                                     : -EBADMSG; /* or cut off */
		len = (size_t)(nl - line);
		off += len + 1;

		if (first) {
			if (len != magic || memcmp(line, NOTIFY_STATE_MAGIC, magic) != 0)
				return -EBADMSG;
			first = false;
			continue;
		}
		if (s->n >= NOTIFY_STATE_RECORDS_MAX)
			return -EMSGSIZE;
		r = parse_line((const char *)line, len, &s->records[s->n]);
		if (r < 0)
			return r;
		s->n++;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

int notify_state_format(const struct notify_state *s, char **ret)
{
	size_t size = strlen(NOTIFY_STATE_MAGIC) + 2 + s->n * NOTIFY_STATE_LINE_MAX, off;
	_cleanup_(freep) char *buf = malloc(size);
	int k;

	if (!buf)
		return -ENOMEM;
	k = snprintf(buf, size, "%s\n", NOTIFY_STATE_MAGIC);
	off = (size_t)k;
	for (size_t i = 0; i < s->n; i++) {
		const struct notify_record *r = &s->records[i];

		k = snprintf(buf + off, size - off, "%s %u %" PRId64 " %" PRId64 "\n", r->id,
		             r->threshold, r->expires, r->snooze_until);
		if (k < 0 || (size_t)k >= size - off)
			return -EMSGSIZE; /* cannot happen for records put() accepted */
		off += (size_t)k;
	}
	*ret = TAKE_PTR(buf);
	return (int)off;
}

int notify_state_load(const char *path, struct notify_state **ret)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	size_t n;
	int r;

	r = file_read_bounded(path, NOTIFY_STATE_FILE_MAX, &buf, &n);
	if (r == -ENOENT)
		return notify_state_new(ret);
	if (r == -EINVAL)
		return -EBADMSG; /* not a regular file: not ours */
	if (r < 0)
		return r;
	return notify_state_parse(buf, n, ret);
}

int notify_state_save(const struct notify_state *s, const char *path)
{
	_cleanup_(freep) char *text = NULL;
	int len = notify_state_format(s, &text);

	if (len < 0)
		return len;
	return file_write_atomic(path, text, (size_t)len);
}

int notify_state_default_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	int k;

	/* The XDG Base Directory spec: a relative value is invalid and must be ignored. */
	if (!isempty(xdg) && xdg[0] == '/')
		k = snprintf(buf, size, "%s/keyctl/notified", xdg);
	else if (!isempty(home))
		k = snprintf(buf, size, "%s/.local/state/keyctl/notified", home);
	else
		return -ENXIO;
	if (k < 0 || (size_t)k >= size)
		return -ENAMETOOLONG;
	return 0;
}

struct notify_record *notify_state_find(struct notify_state *s, const char *id, unsigned threshold)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->records[i].threshold == threshold && streq(s->records[i].id, id))
			return &s->records[i];
	return NULL;
}

int notify_state_put(struct notify_state *s, const char *id, unsigned threshold, int64_t expires,
                     int64_t snooze_until)
{
	struct notify_record *r;

	if (!notify_state_id_valid(id) || threshold > NOTIFY_STATE_THRESHOLD_MAX || expires < 0 ||
	    snooze_until < 0)
		return -EINVAL;
	r = notify_state_find(s, id, threshold);
	if (!r) {
		if (s->n >= NOTIFY_STATE_RECORDS_MAX)
			return -EMSGSIZE;
		r = &s->records[s->n++];
		memset(r, 0, sizeof(*r));
		strcpy_trunc(r->id, sizeof(r->id), id); /* fits: checked above */
		r->threshold = threshold;
	}
	r->expires = expires;
	r->snooze_until = snooze_until;
	return 0;
}

/* Removes the records drop() picks, keeping the others in order. Returns how many went. */
static size_t drop_records(struct notify_state *s,
                           bool (*drop)(const struct notify_record *r, const void *arg),
                           const void *arg)
{
	size_t kept = 0, n = s->n;

	for (size_t i = 0; i < n; i++) {
		if (drop(&s->records[i], arg))
			continue;
		if (kept != i)
			s->records[kept] = s->records[i];
		kept++;
	}
	s->n = kept;
	return n - kept;
}

static bool has_id(const struct notify_record *r, const void *id)
{
	return streq(r->id, id);
}

size_t notify_state_clear(struct notify_state *s, const char *id)
{
	return drop_records(s, has_id, id);
}

static bool snooze_ended(const struct notify_record *r, const void *now)
{
	return r->snooze_until != 0 && r->snooze_until <= *(const int64_t *)now;
}

size_t notify_state_end_snoozes(struct notify_state *s, int64_t now)
{
	return drop_records(s, snooze_ended, &now);
}

int notify_state_check_subkey(struct notify_state *s, const char *fpr, int64_t expires,
                              enum level level, int threshold, bool *ret_changed)
{
	bool renewed = level == LEVEL_OK || expires == 0;
	bool changed = false;

	for (size_t i = 0; !renewed && i < s->n; i++)
		if (streq(s->records[i].id, fpr) && s->records[i].expires != expires)
			renewed = true;
	if (renewed)
		changed = notify_state_clear(s, fpr) > 0;
	if (ret_changed)
		*ret_changed = changed;
	if (level == LEVEL_OK || expires == 0 || threshold < 0)
		return 0;
	return notify_state_find(s, fpr, (unsigned)threshold) ? 0 : 1;
}

int64_t notify_state_next_snooze(const struct notify_state *s, int64_t now)
{
	int64_t best = 0;

	for (size_t i = 0; i < s->n; i++) {
		int64_t t = s->records[i].snooze_until;

		if (t > now && (best == 0 || t < best))
			best = t;
	}
	return best;
}
