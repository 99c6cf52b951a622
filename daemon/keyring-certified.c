/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See keyring-certified.h. A user id is certified when an own key's newest certification of it
 * (class 0x10-0x13, exportable or local, not expired) is newer than that key's newest revocation
 * of one (class 0x30); a key is certified when one of its user ids is, at the newest such time.
 * Self-signatures are the key's own, not a certification.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "keyring-certified.h"
#include "keyring-gpg-run.h"
#include "util.h"

#define FIELDS 13

void certified_scan_init(struct certified_scan *s, const char (*own)[FPR_HEX_MAX], size_t n_own,
                         int64_t now, bool verified_only)
{
	memset(s, 0, sizeof(*s));
	colon_lines_init(&s->lines, s->line, sizeof(s->line));
	s->own = own;
	s->n_own = MIN(n_own, (size_t)CERTIFIED_OWN_MAX);
	s->now = now;
	s->verified_only = verified_only;
}

/* Seconds since the epoch; 0 for an empty field, -1 for anything else. */
static int64_t field_time(struct colon_field f)
{
	int64_t v = 0;

	if (f.n > 18)
		return -1;
	for (size_t i = 0; i < f.n; i++) {
		if (f.p[i] < '0' || f.p[i] > '9')
			return -1;
		v = v * 10 + (f.p[i] - '0');
	}
	return v;
}

/* The key id a fingerprint ends in (v4) or starts with (v5 and v6). */
static const char *fpr_keyid(const char *fpr)
{
	size_t n = strlen(fpr);

	return n == 40 ? fpr + 24 : fpr;
}

static bool issuer_own(const struct certified_scan *s, struct colon_field keyid,
                       struct colon_field fpr)
{
	bool by_fpr = colon_field_hex(fpr, 40) || colon_field_hex(fpr, 64);

	if (!by_fpr && !colon_field_hex(keyid, 16))
		return false;
	for (size_t i = 0; i < s->n_own; i++) {
		if (by_fpr ? strlen(s->own[i]) == fpr.n &&
		                     strncasecmp(s->own[i], (const char *)fpr.p, fpr.n) == 0
		           : strlen(s->own[i]) >= 16 && strncasecmp(fpr_keyid(s->own[i]),
		                                                    (const char *)keyid.p, 16) == 0)
			return true;
	}
	return false;
}

static void found_add(struct certified_scan *s, const char *fpr, int64_t when)
{
	size_t oldest = 0;

	for (size_t i = 0; i < s->n_found; i++) {
		if (strcmp(s->found[i].fpr, fpr) == 0) {
			s->found[i].when = MAX(s->found[i].when, when);
			return;
		}
		if (s->found[i].when < s->found[oldest].when)
			oldest = i;
	}
	if (s->n_found < CERTIFIED_MAX)
		oldest = s->n_found++;
	else if (s->found[oldest].when >= when)
		return;
	strcpy_trunc(s->found[oldest].fpr, FPR_HEX_MAX, fpr);
	s->found[oldest].when = when;
}

static void uid_close(struct certified_scan *s)
{
	if (s->in_uid && s->uid_sig > 0 && s->uid_sig > s->uid_rev)
		s->key_best = MAX(s->key_best, s->uid_sig);
	s->in_uid = false;
	s->uid_sig = s->uid_rev = 0;
}

static void key_close(struct certified_scan *s)
{
	uid_close(s);
	if (s->key_best > 0 && *s->key_fpr) {
		bool own = false;

		for (size_t i = 0; i < s->n_own && !own; i++)
			own = strcasecmp(s->own[i], s->key_fpr) == 0;
		if (!own)
			found_add(s, s->key_fpr, s->key_best);
	}
	s->key_fpr[0] = s->key_id[0] = 0;
	s->key_best = 0;
	s->want_fpr = false;
}

/* A sig or rev record inside a user id: f[1] validity, f[4] issuer key id, f[5] created,
 * f[6] expires, f[10] class, f[12] issuer fingerprint (0-based). */
static void uid_sig(struct certified_scan *s, const struct colon_field *f, bool rev)
{
	int64_t created = field_time(f[5]), expires = field_time(f[6]);

	if (!s->in_uid || created <= 0 || expires < 0 || f[10].n < 2)
		return;
	if (rev ? !(f[10].p[0] == '3' && f[10].p[1] == '0')
	        : !(f[10].p[0] == '1' && f[10].p[1] >= '0' && f[10].p[1] <= '3'))
		return;
	if (s->verified_only && !colon_field_is(f[1], "!"))
		return;
	if (colon_field_hex(f[4], 16) && *s->key_id &&
	    strncasecmp(s->key_id, (const char *)f[4].p, 16) == 0)
		return; /* a self-signature */
	if (!issuer_own(s, f[4], f[12]))
		return;
	if (rev)
		s->uid_rev = MAX(s->uid_rev, created);
	else if (expires == 0 || expires > s->now)
		s->uid_sig = MAX(s->uid_sig, created);
}

static void line(void *userdata, const uint8_t *p, size_t n)
{
	struct certified_scan *s = userdata;
	struct colon_field f[FIELDS];

	colon_split(p, n, f, FIELDS);
	if (colon_field_is(f[0], "pub") || colon_field_is(f[0], "sec")) {
		key_close(s);
		if (colon_field_hex(f[4], 16)) {
			memcpy(s->key_id, f[4].p, 16);
			s->key_id[16] = 0;
		}
		s->want_fpr = true;
	} else if (colon_field_is(f[0], "fpr")) {
		if (s->want_fpr && (colon_field_hex(f[9], 40) || colon_field_hex(f[9], 64))) {
			for (size_t i = 0; i < f[9].n; i++)
				s->key_fpr[i] = (char)toupper(f[9].p[i]);
			s->key_fpr[f[9].n] = 0;
		}
		s->want_fpr = false;
	} else if (colon_field_is(f[0], "uid") || colon_field_is(f[0], "uat")) {
		uid_close(s);
		s->in_uid = true;
	} else if (colon_field_is(f[0], "sub") || colon_field_is(f[0], "ssb")) {
		uid_close(s);
	} else if (colon_field_is(f[0], "sig") || colon_field_is(f[0], "rev")) {
		uid_sig(s, f, colon_field_is(f[0], "rev"));
	}
}

int certified_scan_feed(struct certified_scan *s, const uint8_t *p, size_t n)
{
	colon_lines_feed(&s->lines, p, n, line, s);
	return 0;
}

void certified_scan_finish(struct certified_scan *s)
{
	colon_lines_finish(&s->lines, line, s);
	key_close(s);
}

static ssize_t scan_write(void *handle, const void *buf, size_t size)
{
	(void)certified_scan_feed(handle, buf, size);
	return (ssize_t)size;
}

/* One gpg run with its colon output read into s: mode is --list-sigs (with --fast-list-mode,
 * over every key) or --check-sigs (over names). */
static int scan_run(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                    const char *mode, const struct certified *names, size_t n_names,
                    struct certified_scan *s)
{
	const char *args[] = { "--fast-list-mode", mode }, *fprs[CERTIFIED_MAX];
	int r;

	n_names = names ? MIN(n_names, (size_t)CERTIFIED_MAX) : 0;
	for (size_t i = 0; i < n_names; i++)
		fprs[i] = names[i].fpr;
	r = keyring_gpg_colons(home, gpg_path, cancel, names ? args + 1 : args, names ? 1 : 2, fprs,
	                       n_names, scan_write, s);
	certified_scan_finish(s);
	return r;
}

static int newest_first(const void *a, const void *b)
{
	const struct certified *x = a, *y = b;

	if (x->when != y->when)
		return x->when > y->when ? -1 : 1;
	return strcmp(x->fpr, y->fpr);
}

int certified_read(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                   const char (*own)[FPR_HEX_MAX], size_t n_own, int64_t now,
                   struct certified ret[static CERTIFIED_MAX], size_t *ret_n)
{
	_cleanup_(freep) struct certified_scan *s = calloc(1, sizeof(*s));
	struct certified candidates[CERTIFIED_MAX];
	size_t n_candidates;
	int r;

	*ret_n = 0;
	if (!s)
		return -ENOMEM;
	if (n_own == 0)
		return 0;
	if (!gpg_path)
		return -ENOENT;
	certified_scan_init(s, own, n_own, now, false);
	r = scan_run(home, gpg_path, cancel, "--list-sigs", NULL, 0, s);
	if (r < 0 || s->n_found == 0)
		return r;
	n_candidates = s->n_found;
	memcpy(candidates, s->found, n_candidates * sizeof(*candidates));
	certified_scan_init(s, own, n_own, now, true);
	r = scan_run(home, gpg_path, cancel, "--check-sigs", candidates, n_candidates, s);
	if (r < 0)
		return r;
	memcpy(ret, s->found, s->n_found * sizeof(*ret));
	*ret_n = s->n_found;
	qsort(ret, *ret_n, sizeof(*ret), newest_first);
	return 0;
}
