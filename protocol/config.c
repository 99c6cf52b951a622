/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl.conf parsing on top of inih. inih splits lines into section/key/value; this file knows
 * which keys exist, checks each value strictly (whole-string numbers in range, no truncation) and
 * reports the first bad one with its line, or with CONFIG_LENIENT every bad one as a warning.
 * inih is fed through ini_parse_stream with our own line reader, which is how the line number of a
 * key is known and how overlong lines and NUL bytes are refused instead of silently cut.
 * On top of inih: comments at the end of a line, a key set twice (a warning naming both lines)
 * and a key before any [section] (a warning that says so).
 * Does not: read keyctl.conf for its reader's purposes (keyctld's main.c and keyctl-notify do).
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "fileio.h"
#include "util.h"

/* inih needs room for "\r\n\0" beyond the longest line. */
#define LINE_MAX_CHARS 196
/* More than the keys there are: each key set once is remembered with its line. */
#define SEEN_MAX 48

struct seen_key {
	char key[sizeof(((struct config_warning *)NULL)->key)];
	unsigned line; /* the last line that set it */
};

struct parse_ctx {
	const char *p;
	size_t n, pos;
	unsigned line;
	struct config *c;
	const char *filename;
	char *err;
	size_t errsize;
	bool lenient;
	bool failed;
	bool indented; /* the line being parsed starts with a blank */
	bool unknown; /* parse_key() did not know the key */
	bool adds; /* parse_key() took a key whose lines add up (a fingerprint list) */
	char key[sizeof(((struct config_warning *)NULL)->key)]; /* the one being parsed */
	char prev_key[sizeof(((struct config_warning *)NULL)->key)]; /* the handler's last call */
	size_t n_seen;
	struct seen_key seen[SEEN_MAX];
};

static _printf_(3, 4) void add_warning(struct parse_ctx *x, const char *key, const char *fmt, ...)
{
	struct config_warning *w;
	va_list ap;

	if (x->c->n_warnings >= CONFIG_WARNINGS_MAX)
		return;
	w = &x->c->warnings[x->c->n_warnings++];
	strcpy_trunc(w->key, sizeof(w->key), key);
	va_start(ap, fmt);
	vsnprintf(w->text, sizeof(w->text), fmt, ap);
	va_end(ap);
}

/* Refuses the value being parsed: the whole file, or (lenient) only that value. */
static _printf_(2, 3) void fail(struct parse_ctx *x, const char *fmt, ...)
{
	char msg[CONFIG_ERROR_MAX];
	va_list ap;

	if (x->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (x->lenient) {
		add_warning(x, x->key, "%s:%u: %s, ignoring", x->filename, x->line, msg);
		return;
	}
	x->failed = true;
	snprintf(x->err, x->errsize, "%s:%u: %s", x->filename, x->line, msg);
}

static bool is_blank(uint8_t ch)
{
	return ch == ' ' || ch == '\t';
}

static char *reader(char *str, int num, void *stream)
{
	struct parse_ctx *x = stream;
	size_t len = 0;

	if (x->pos >= x->n || x->failed)
		return NULL;
	x->line++;
	x->indented = is_blank((uint8_t)x->p[x->pos]);
	while (x->pos < x->n) {
		char ch = x->p[x->pos++];

		if (len + 1 >= (size_t)num || len >= LINE_MAX_CHARS) {
			x->key[0] = 0;
			fail(x, "line longer than %d characters", LINE_MAX_CHARS);
			if (!x->lenient)
				return NULL;
			/* Skipped whole: its tail read as a line of its own could be a key. */
			while (ch != '\n' && x->pos < x->n)
				ch = x->p[x->pos++];
			strcpy(str, "\n");
			return str;
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

	if (*v < '0' || *v > '9') /* strtoul() would take a sign and leading blanks */
		return -EINVAL;
	errno = 0;
	u = strtoul(v, &end, 10);
	if (errno != 0 || *end || u < min || u > max)
		return -EINVAL;
	*ret = (unsigned)u;
	return 0;
}

static int parse_days(const uint8_t *p, size_t n, unsigned *ret)
{
	unsigned v = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(p[i] - '0');
		if (v > CONFIG_THRESHOLD_DAYS_MAX)
			return -EINVAL;
	}
	if (v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

bool config_threshold_may_follow(const unsigned *v, size_t k, int64_t d)
{
	if (d < 1 || d > CONFIG_THRESHOLD_DAYS_MAX || k >= CONFIG_THRESHOLDS_MAX)
		return false;
	return k == 0 || d < (int64_t)v[k - 1];
}

int config_parse_thresholds(const uint8_t *p, size_t n, unsigned ret[CONFIG_THRESHOLDS_MAX],
                            unsigned *ret_n, char *err, size_t errsize)
{
	unsigned v[CONFIG_THRESHOLDS_MAX], k = 0;
	size_t i = 0;

	while (i < n && (p[i] == ',' || is_blank(p[i])))
		i++;
	if (i == n) {
		snprintf(err, errsize, "at least one number of days is needed");
		return -EINVAL;
	}
	for (i = 0; i <= n;) {
		size_t end = i, a = i, b;
		unsigned d;

		while (end < n && p[end] != ',')
			end++;
		while (a < end && is_blank(p[a]))
			a++;
		for (b = end; b > a && is_blank(p[b - 1]); b--)
			;
		if (k >= CONFIG_THRESHOLDS_MAX) {
			snprintf(err, errsize, "more than %d values", CONFIG_THRESHOLDS_MAX);
			return -E2BIG;
		}
		if (parse_days(p + a, b - a, &d) < 0) {
			snprintf(err, errsize, "'%.*s' is not a number of days from 1 to %u",
			         (int)(b - a), (const char *)p + a, CONFIG_THRESHOLD_DAYS_MAX);
			return -EINVAL;
		}
		if (k > 0 && d >= v[k - 1]) {
			snprintf(err, errsize, "must be strictly descending (%u after %u)", d,
			         v[k - 1]);
			return -EINVAL;
		}
		v[k++] = d;
		i = end + 1;
	}
	memcpy(ret, v, k * sizeof(v[0]));
	*ret_n = k;
	return 0;
}

static int parse_thresholds(struct parse_ctx *x, const char *v)
{
	char why[CONFIG_ERROR_MAX];

	if (config_parse_thresholds((const uint8_t *)v, strlen(v), x->c->thresholds,
	                            &x->c->n_thresholds, why, sizeof(why)) < 0) {
		fail(x, "[expiry] thresholds: %s", why);
		return 0;
	}
	return 1;
}

/* One fingerprint as people copy it: 40 or 64 hex digits, in any case, optionally after "0x",
 * optionally in groups with blanks between them as gpg --fingerprint prints it ("0123 4567 ...
 * 0123  4567"). Upper case into ret. */
static bool fpr_from_text(const char *s, size_t n, char ret[FPR_HEX_MAX])
{
	size_t k = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	for (size_t i = 0; i < n; i++) {
		if (is_blank((uint8_t)s[i]))
			continue;
		if (!isxdigit((unsigned char)s[i]) || k >= FPR_HEX_MAX - 1)
			return false;
		ret[k++] = (char)toupper((unsigned char)s[i]);
	}
	if (k != 40 && k != 64)
		return false;
	ret[k] = 0;
	return true;
}

static int add_fpr(struct parse_ctx *x, const char *what, const char *fpr,
                   char (*list)[FPR_HEX_MAX], unsigned *n)
{
	if (*n >= CONFIG_TRACK_MAX) {
		fail(x, "%s: more than %d fingerprints", what, CONFIG_TRACK_MAX);
		return -E2BIG;
	}
	strcpy_trunc(list[(*n)++], FPR_HEX_MAX, fpr);
	return 0;
}

/* One comma-separated item: a fingerprint (maybe grouped), or, as before grouping was read,
 * whole fingerprints separated by blanks. The refusal quotes what was written. */
static int parse_fpr_item(struct parse_ctx *x, const char *what, const char *s, size_t n,
                          char (*list)[FPR_HEX_MAX], unsigned *count)
{
	char fpr[FPR_HEX_MAX];
	size_t i = 0;

	if (fpr_from_text(s, n, fpr))
		return add_fpr(x, what, fpr, list, count);
	while (i < n && !is_blank((uint8_t)s[i]))
		i++;
	if (i == n || !fpr_from_text(s, i, fpr)) {
		fail(x, "%s: '%.*s' is not a 40 or 64 digit hex fingerprint", what, (int)n, s);
		return -EINVAL;
	}
	if (add_fpr(x, what, fpr, list, count) < 0)
		return -E2BIG;
	while (i < n) {
		size_t a = i, b;

		while (a < n && is_blank((uint8_t)s[a]))
			a++;
		for (b = a; b < n && !is_blank((uint8_t)s[b]);)
			b++;
		if (a == n)
			break;
		if (!fpr_from_text(s + a, b - a, fpr)) {
			fail(x, "%s: '%.*s' is not a 40 or 64 digit hex fingerprint", what,
			     (int)(b - a), s + a);
			return -EINVAL;
		}
		if (add_fpr(x, what, fpr, list, count) < 0)
			return -E2BIG;
		i = b;
	}
	return 0;
}

/* A list of fingerprints separated by commas, added to what earlier lines of the same key named
 * (32 fingerprints do not fit on one line); a bad line is refused whole. */
static int parse_fprs(struct parse_ctx *x, const char *what, const char *v,
                      char (*list)[FPR_HEX_MAX], unsigned *n)
{
	unsigned before = *n;

	x->adds = true;
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ","), a = 0, b = len;

		while (a < b && is_blank((uint8_t)p[a]))
			a++;
		while (b > a && is_blank((uint8_t)p[b - 1]))
			b--;
		if (b > a && parse_fpr_item(x, what, p + a, b - a, list, n) < 0) {
			*n = before; /* lenient: the line is ignored whole */
			return 0;
		}
		p += len + (p[len] == ',');
	}
	return 1;
}

#define INTERVAL_MIN_SEC 60u
#define INTERVAL_MAX_SEC (366u * 86400u)

/* "90s", "30m", "12h", "1d", "2w": from a minute to a year (366 days). */
static int parse_interval(const char *v, unsigned *ret)
{
	static const struct {
		char unit;
		unsigned sec;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 } };
	char *end = NULL;
	unsigned long n;

	if (!isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || !end || end[0] == 0 || end[1] != 0)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(units); i++)
		if (units[i].unit == end[0]) {
			/* Bounded before the product: 4611686018427387905m times 60 wraps to
			 * 60 s. */
			if (n > INTERVAL_MAX_SEC / units[i].sec ||
			    n * units[i].sec < INTERVAL_MIN_SEC)
				return -EINVAL;
			*ret = (unsigned)(n * units[i].sec);
			return 0;
		}
	return -EINVAL;
}

/* An [upstream] switch: yes or no. */
static int parse_yes_no(struct parse_ctx *x, const char *section, const char *name,
                        const char *value, bool *ret)
{
	if (!streq(value, "yes") && !streq(value, "no")) {
		fail(x, "[%s] %s: '%s' is not yes or no", section, name, value);
		return 0;
	}
	*ret = streq(value, "yes");
	return 1;
}

static int parse_upstream_key(struct parse_ctx *x, const char *name, const char *value)
{
	struct config *c = x->c;

	if (streq(name, "check")) {
		if (!streq(value, "on") && !streq(value, "off")) {
			fail(x, "[upstream] check: '%s' is not on or off", value);
			return 0;
		}
		c->upstream_check = streq(value, "on");
		return 1;
	}
	if (streq(name, "interval")) {
		if (parse_interval(value, &c->upstream_interval_sec) < 0) {
			fail(x,
			     "[upstream] interval: '%s' is not a duration from 1m to 366d (90m, "
			     "12h, "
			     "1d, 2w)",
			     value);
			return 0;
		}
		return 1;
	}
	if (streq(name, "relied-on"))
		return parse_fprs(x, "[upstream] relied-on", value, c->relied_on, &c->n_relied_on);
	if (streq(name, "relied-on-trusted"))
		return parse_yes_no(x, "upstream", name, value, &c->upstream_relied_trusted);
	if (streq(name, "wkd"))
		return parse_yes_no(x, "upstream", name, value, &c->upstream_wkd);
	x->unknown = true;
	add_warning(x, x->key, "%s:%u: unknown key [upstream] %s, ignoring", x->filename, x->line,
	            name);
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

/* "any-known", a token's id as keyctl-status shows it ("yubikey-12345678"), or "" (off). An id
 * is printable ASCII without blanks: a typo with a space in it is refused, not never matched. */
static int parse_lock_on_removal(struct parse_ctx *x, const char *value)
{
	for (const char *q = value; *q; q++)
		if ((uint8_t)*q <= ' ' || (uint8_t)*q >= 0x7f) {
			fail(x,
			     "[session] lock-on-removal: '%s' is neither any-known nor a token id",
			     value);
			return 0;
		}
	if (strcpy_bounded(x->c->lock_on_removal, sizeof(x->c->lock_on_removal), value) < 0) {
		fail(x, "[session] lock-on-removal: longer than %d characters", TOKEN_ID_MAX - 1);
		return 0;
	}
	return 1;
}

/* 1 when the key was taken, 0 when refused (fail() has said why). */
static int parse_key(struct parse_ctx *x, const char *section, const char *name, const char *value)
{
	struct config *c = x->c;

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
		int l = config_log_level_from_string(value);

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
		return parse_fprs(x, "[keyring] track", value, c->track, &c->n_track);
	if (streq(section, "keyring") && streq(name, "retired"))
		return parse_fprs(x, "[keyring] retired", value, c->retired, &c->n_retired);
	if (streq(section, "upstream"))
		return parse_upstream_key(x, name, value);
	if (streq(section, "expiry") && streq(name, "thresholds"))
		return parse_thresholds(x, value);
	if (streq(section, "piv") && streq(name, "raise-self-signed"))
		return parse_yes_no(x, section, name, value, &c->piv_raise_self_signed);
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

	if (streq(section, "session") && streq(name, "lock-on-removal"))
		return parse_lock_on_removal(x, value);

	x->unknown = true;
	if (!*section)
		add_warning(x, x->key, "%s:%u: key '%s' before any [section], ignoring",
		            x->filename, x->line, name);
	else
		add_warning(x, x->key, "%s:%u: unknown key [%s] %s, ignoring", x->filename, x->line,
		            section, name);
	return 1;
}

/* A '#' or ';' that starts the value or follows a blank starts a comment; one inside a word
 * (https://x/#a) is part of the value. inih as Debian builds it strips only " ;" comments, and
 * is built elsewhere with other choices, so both are stripped here whatever it did. */
static void strip_comment(char *v)
{
	size_t n;

	for (char *q = v; *q; q++)
		if ((*q == '#' || *q == ';') && (q == v || is_blank((uint8_t)q[-1]))) {
			*q = 0;
			break;
		}
	for (n = strlen(v); n > 0 && is_blank((uint8_t)v[n - 1]); n--)
		v[n - 1] = 0;
}

static struct seen_key *find_seen(struct parse_ctx *x, const char *key)
{
	for (size_t i = 0; i < x->n_seen; i++)
		if (streq(x->seen[i].key, key))
			return &x->seen[i];
	return NULL;
}

/* A key set a second time: the last value wins as it always did, but the user hears of it. */
static void note_seen(struct parse_ctx *x, const char *section, const char *name)
{
	struct seen_key *s = find_seen(x, x->key);

	if (s) {
		add_warning(x, x->key,
		            "%s:%u: [%s] %s set again (first on line %u); line %u is used",
		            x->filename, x->line, section, name, s->line, x->line);
		s->line = x->line;
		return;
	}
	if (x->n_seen >= SEEN_MAX)
		return;
	s = &x->seen[x->n_seen++];
	strcpy_trunc(s->key, sizeof(s->key), x->key);
	s->line = x->line;
}

/* The keys whose lines add up, so that an indented line may continue one. */
static bool is_list_key(const char *section, const char *name)
{
	return (streq(section, "keyring") && (streq(name, "track") || streq(name, "retired"))) ||
	       (streq(section, "upstream") && streq(name, "relied-on"));
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *x = user;
	char v[LINE_MAX_CHARS + 1];
	bool continued;
	int r;

	if (x->failed)
		return 0;
	snprintf(x->key, sizeof(x->key), "%s/%s", section, name);
	/* inih hands an indented line after a key to the same key again (a continuation). */
	continued = x->indented && streq(x->key, x->prev_key);
	strcpy_trunc(x->prev_key, sizeof(x->prev_key), x->key);
	strcpy_trunc(v, sizeof(v), value);
	strip_comment(v);
	x->unknown = x->adds = false;
	if (continued && !is_list_key(section, name)) {
		/* Taken, it would replace the value above: "warning-days = 7" then an indented
		 * "critical-days = 2" made warning-days "critical-days = 2". */
		fail(x,
		     "[%s] %s: '%s' is indented, which continues the line before; remove the "
		     "blanks before it",
		     section, name, v);
		r = 0;
	} else
		r = parse_key(x, section, name, v);
	if (r > 0 && !x->unknown && !x->adds && !continued)
		note_seen(x, section, name);
	/* Lenient: a refusal is a warning already; 0 would make inih report a syntax error. */
	return x->lenient ? 1 : r;
}

int config_log_level_from_string(const char *s)
{
	static const char *const names[] = {
		[LOG_ERR] = "err",   [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
		[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
	};

	if (s && streq(s, "error"))
		return LOG_ERR;
	for (size_t i = 0; s && i < ELEMENTSOF(names); i++)
		if (names[i] && streq(names[i], s))
			return (int)i;
	return -EINVAL;
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
	c->upstream_check = true;
	c->upstream_relied_trusted = true;
	c->upstream_wkd = true;
	c->upstream_interval_sec = 86400;
}

/* Where a level key was last set: ", line N" or ", the default", for check_levels(). */
static unsigned level_line(struct parse_ctx *x, const char *key, char *buf, size_t size)
{
	struct seen_key *s = find_seen(x, key);

	if (s)
		snprintf(buf, size, "line %u", s->line);
	else
		snprintf(buf, size, "the default");
	return s ? s->line : 0;
}

/* critical-days above warning-days: refused, or (lenient) both back to their defaults. The
 * message names the line of the one set last, and where the other one came from. */
static int check_levels(struct parse_ctx *x)
{
	struct config *c = x->c, defaults;
	char wsrc[32], csrc[32], msg[CONFIG_ERROR_MAX];
	unsigned wl, cl;

	if (c->critical_days <= c->warning_days)
		return 0;
	wl = level_line(x, "expiry/warning-days", wsrc, sizeof(wsrc));
	cl = level_line(x, "expiry/critical-days", csrc, sizeof(csrc));
	snprintf(msg, sizeof(msg),
	         "%s:%u: [expiry] critical-days (%u, %s) is above warning-days (%u, %s)",
	         x->filename, cl > wl ? cl : wl, c->critical_days, csrc, c->warning_days, wsrc);
	if (!x->lenient) {
		snprintf(x->err, x->errsize, "%s", msg);
		return -EINVAL;
	}
	add_warning(x, "expiry/critical-days", "%s, ignoring both", msg);
	config_init(&defaults);
	c->warning_days = defaults.warning_days;
	c->critical_days = defaults.critical_days;
	return 0;
}

int config_parse(const uint8_t *p, size_t n, const char *filename, unsigned flags, struct config *c,
                 char *err, size_t errsize)
{
	struct parse_ctx x = {
		.p = (const char *)p,
		.n = n,
		.c = c,
		.filename = filename,
		.err = err,
		.errsize = errsize,
		.lenient = flags & CONFIG_LENIENT,
	};
	unsigned line = 1;
	int r;

	if (n > CONFIG_FILE_MAX) {
		snprintf(err, errsize, "%s: larger than %u bytes", filename, CONFIG_FILE_MAX);
		return -EMSGSIZE;
	}
	if (memchr(p, 0, n)) {
		for (const uint8_t *q = p; *q; q++)
			line += *q == '\n';
		snprintf(err, errsize, "%s:%u: NUL byte in configuration", filename, line);
		return -EBADMSG;
	}

	r = ini_parse_stream(reader, &x, handler, &x);
	if (x.failed)
		return strstr(err, "longer than") ? -EBADMSG : -EINVAL;
	if (r != 0 && x.lenient)
		add_warning(&x, "",
		            "%s:%d: syntax error (expected [section] or key = value), ignoring",
		            filename, r);
	else if (r != 0) {
		snprintf(err, errsize, "%s:%d: syntax error (expected [section] or key = value)",
		         filename, r);
		return -EINVAL;
	}
	return check_levels(&x);
}

int config_load(const char *path, unsigned flags, struct config *ret, char *err, size_t errsize)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	size_t n;
	int r;

	config_init(ret);
	r = file_read_bounded(path, CONFIG_FILE_MAX, &buf, &n);
	if (r == -ENOENT && (flags & CONFIG_MISSING_OK))
		return 0;
	if (r == -EINVAL)
		snprintf(err, errsize, "%s: not a regular file", path);
	else if (r == -EFBIG)
		snprintf(err, errsize, "%s: larger than %u bytes", path, CONFIG_FILE_MAX);
	else if (r < 0)
		snprintf(err, errsize, "%s: %s", path, strerror(-r));
	if (r < 0)
		return r;
	return config_parse(buf, n, path, flags & CONFIG_LENIENT, ret, err, errsize);
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
