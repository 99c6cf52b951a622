/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl.conf parsing on top of inih. inih splits lines into section/key/value; this file knows
 * which keys exist, checks each value strictly (whole-string numbers in range, no truncation) and
 * reports the first bad one with its line. inih is fed through ini_parse_stream with our own line
 * reader, which is how the line number of a key is known and how overlong lines and NUL bytes
 * are refused instead of silently cut.
 */
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "fileio.h"
#include "log.h"

/* inih needs room for "\r\n\0" beyond the longest line. */
#define LINE_MAX_CHARS 196

struct parse_ctx {
	const char *p;
	size_t n, pos;
	unsigned line;
	struct config *c;
	const char *filename;
	char *err;
	size_t errsize;
	bool failed;
};

static _printf_(2, 3) void fail(struct parse_ctx *x, const char *fmt, ...)
{
	char msg[CONFIG_ERROR_MAX];
	va_list ap;

	if (x->failed)
		return;
	x->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errsize, "%s:%u: %s", x->filename, x->line, msg);
}

static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *x = stream;
	size_t len = 0;

	if (x->pos >= x->n || x->failed)
		return NULL;
	x->line++;
	while (x->pos < x->n) {
		char ch = x->p[x->pos++];

		if (len + 1 >= (size_t)num || len >= LINE_MAX_CHARS) {
			fail(x, "line longer than %d characters", LINE_MAX_CHARS);
			return NULL;
		}
		str[len++] = ch;
		if (ch == '\n')
			break;
	}
	str[len] = 0;
	return str;
}

static int parse_uint(const char *v, unsigned min, unsigned max, unsigned *ret)
{
	char *end;
	unsigned long u;

	if (!*v || *v == '-' || *v == '+' || *v == ' ')
		return -EINVAL;
	errno = 0;
	u = strtoul(v, &end, 10);
	if (errno != 0 || *end || u < min || u > max)
		return -EINVAL;
	*ret = (unsigned)u;
	return 0;
}

static bool is_fingerprint(const char *s)
{
	size_t n = strlen(s);

	if (n != 40 && n != 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789ABCDEFabcdef", s[i]))
			return false;
	return true;
}

static int parse_thresholds(struct parse_ctx *x, const char *v)
{
	char buf[LINE_MAX_CHARS + 1], *save = NULL;
	unsigned n = 0;

	strcpy_trunc(buf, sizeof(buf), v);
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		unsigned d;

		if (n >= CONFIG_THRESHOLDS_MAX) {
			fail(x, "[expiry] thresholds: more than %d values", CONFIG_THRESHOLDS_MAX);
			return 0;
		}
		if (parse_uint(t, 1, 3650, &d) < 0) {
			fail(x, "[expiry] thresholds: '%s' is not a number of days from 1 to 3650",
			     t);
			return 0;
		}
		if (n > 0 && d >= x->c->thresholds[n - 1]) {
			fail(x, "[expiry] thresholds: must be strictly descending (%u after %u)", d,
			     x->c->thresholds[n - 1]);
			return 0;
		}
		x->c->thresholds[n++] = d;
	}
	if (n == 0) {
		fail(x, "[expiry] thresholds: at least one number of days is needed");
		return 0;
	}
	x->c->n_thresholds = n;
	return 1;
}

static int parse_track(struct parse_ctx *x, const char *v)
{
	char buf[LINE_MAX_CHARS + 1], *save = NULL;

	/* Adds to what earlier `track =` lines named: 32 fingerprints do not fit on one line. */
	strcpy_trunc(buf, sizeof(buf), v);
	for (char *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
		if (x->c->n_track >= CONFIG_TRACK_MAX) {
			fail(x, "[keyring] track: more than %d fingerprints", CONFIG_TRACK_MAX);
			return 0;
		}
		if (!is_fingerprint(t)) {
			fail(x, "[keyring] track: '%s' is not a 40 or 64 digit hex fingerprint", t);
			return 0;
		}
		for (char *q = t; *q; q++)
			if (*q >= 'a' && *q <= 'f')
				*q = (char)(*q - 'a' + 'A');
		strcpy_trunc(x->c->track[x->c->n_track++], FPR_HEX_MAX, t);
	}
	return 1;
}

struct uint_key {
	const char *section, *name;
	size_t offset;
	unsigned min, max;
};

static const struct uint_key uint_keys[] = {
	{ "daemon", "max-clients", offsetof(struct config, max_clients), 1, 4096 },
	{ "daemon", "max-watchers", offsetof(struct config, max_watchers), 1, 4096 },
	{ "daemon", "client-queue-kib", offsetof(struct config, client_queue_kib), 64, 65536 },
	{ "daemon", "client-idle-sec", offsetof(struct config, client_idle_sec), 1, 3600 },
	{ "expiry", "warning-days", offsetof(struct config, warning_days), 0, 3650 },
	{ "expiry", "critical-days", offsetof(struct config, critical_days), 0, 3650 },
	{ "expiry", "max-validity-days", offsetof(struct config, max_validity_days), 1, 36500 },
	{ "audit", "card-unseen-days", offsetof(struct config, card_unseen_days), 1, 3650 },
	{ "audit", "pin-retries-low", offsetof(struct config, pin_retries_low), 0, 15 },
};

static int path_value(struct parse_ctx *x, const char *section, const char *name, const char *v,
                      char *dst, size_t size)
{
	if (*v && *v != '/') {
		fail(x, "[%s] %s: '%s' is not an absolute path", section, name, v);
		return 0;
	}
	if (strcpy_bounded(dst, size, v) < 0) {
		fail(x, "[%s] %s: path too long", section, name);
		return 0;
	}
	return 1;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *x = user;
	struct config *c = x->c;

	if (x->failed)
		return 0;

	for (size_t i = 0; i < ELEMENTSOF(uint_keys); i++) {
		const struct uint_key *k = &uint_keys[i];

		if (!streq(section, k->section) || !streq(name, k->name))
			continue;
		if (parse_uint(value, k->min, k->max, (unsigned *)((char *)c + k->offset)) < 0) {
			fail(x, "[%s] %s: '%s' is not a whole number from %u to %u", section, name,
			     value, k->min, k->max);
			return 0;
		}
		return 1;
	}

	if (streq(section, "daemon") && streq(name, "socket"))
		return path_value(x, section, name, value, c->socket_path, sizeof(c->socket_path));
	if (streq(section, "daemon") && streq(name, "log-level")) {
		int l = log_level_from_string(value);

		if (l < 0) {
			fail(x,
			     "[daemon] log-level: '%s' is not one of err, warning, notice, info, "
			     "debug",
			     value);
			return 0;
		}
		c->log_level = l;
		return 1;
	}
	if (streq(section, "keyring") && streq(name, "gnupghome"))
		return path_value(x, section, name, value, c->gnupghome, sizeof(c->gnupghome));
	if (streq(section, "keyring") && streq(name, "track"))
		return parse_track(x, value);
	if (streq(section, "expiry") && streq(name, "thresholds"))
		return parse_thresholds(x, value);
	if (streq(section, "notify") && streq(name, "renewal-url")) {
		if (*value && strncmp(value, "https://", 8) != 0 &&
		    strncmp(value, "http://", 7) != 0) {
			fail(x, "[notify] renewal-url: '%s' is not an http(s) URL", value);
			return 0;
		}
		if (strcpy_bounded(c->renewal_url, sizeof(c->renewal_url), value) < 0) {
			fail(x, "[notify] renewal-url: longer than %d characters", URL_MAX - 1);
			return 0;
		}
		return 1;
	}

	if (c->n_warnings < CONFIG_WARNINGS_MAX)
		snprintf(c->warnings[c->n_warnings++], sizeof(c->warnings[0]),
		         "%s:%u: unknown key [%s] %s, ignoring", x->filename, x->line, section,
		         name);
	return 1;
}

void config_init(struct config *c)
{
	static const unsigned thresholds[] = { 30, 14, 7, 3, 1 };

	memset(c, 0, sizeof(*c));
	c->max_clients = 64;
	c->max_watchers = 32;
	c->client_queue_kib = 1024;
	c->client_idle_sec = 30;
	c->log_level = LOG_INFO;
	c->n_thresholds = ELEMENTSOF(thresholds);
	memcpy(c->thresholds, thresholds, sizeof(thresholds));
	c->warning_days = 14;
	c->critical_days = 3;
	c->max_validity_days = 730;
	c->card_unseen_days = 30;
	c->pin_retries_low = 2;
}

int config_parse(const uint8_t *p, size_t n, const char *filename, struct config *c, char *err,
                 size_t errsize)
{
	struct parse_ctx x = {
		.p = (const char *)p,
		.n = n,
		.c = c,
		.filename = filename,
		.err = err,
		.errsize = errsize,
	};
	int r;

	if (n > CONFIG_FILE_MAX) {
		snprintf(err, errsize, "%s: larger than %u bytes", filename, CONFIG_FILE_MAX);
		return -EMSGSIZE;
	}
	if (memchr(p, 0, n)) {
		x.line = 1;
		for (const uint8_t *q = p; *q; q++)
			x.line += *q == '\n';
		fail(&x, "NUL byte in configuration");
		return -EBADMSG;
	}

	r = ini_parse_stream(reader, &x, handler, &x);
	if (x.failed)
		return strstr(err, "longer than") ? -EBADMSG : -EINVAL;
	if (r != 0) {
		snprintf(err, errsize, "%s:%d: syntax error (expected [section] or key = value)",
		         filename, r);
		return -EINVAL;
	}
	if (c->critical_days > c->warning_days) {
		snprintf(err, errsize, "%s: [expiry] critical-days (%u) is above warning-days (%u)",
		         filename, c->critical_days, c->warning_days);
		return -EINVAL;
	}
	return 0;
}

int config_load(const char *path, bool missing_ok, struct config *ret, char *err, size_t errsize)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	size_t n;
	int r;

	config_init(ret);
	r = file_read_bounded(path, CONFIG_FILE_MAX, &buf, &n);
	if (r == -ENOENT && missing_ok)
		return 0;
	if (r == -EINVAL)
		snprintf(err, errsize, "%s: not a regular file", path);
	else if (r == -EFBIG)
		snprintf(err, errsize, "%s: larger than %u bytes", path, CONFIG_FILE_MAX);
	else if (r < 0)
		snprintf(err, errsize, "%s: %s", path, strerror(-r));
	if (r < 0)
		return r;
	return config_parse(buf, n, path, ret, err, errsize);
}

int config_default_path(char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int k;

	if (xdg && *xdg == '/')
		k = snprintf(buf, size, "%s/keyctl/keyctl.conf", xdg);
	else if (home && *home == '/')
		k = snprintf(buf, size, "%s/.config/keyctl/keyctl.conf", home);
	else
		return -ENOENT;
	return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}
