/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's wiring of the upstream checks (watch-upstream.c, watch-upstream-schedule.c):
 * which keys are asked for, what a finished check changes in DaemonInfo and the findings, and
 * io.keyctl.CheckUpstream.
 *
 * Does not: fetch or compare (upstream-*.c), or decide findings (audit-upstream.c).
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "main-internal.h"

/* [upstream] check and interval, at start and on reload. */
int daemon_upstream_apply(struct daemon *d)
{
	if (!d->upstream_schedule)
		return 0;
	return upstream_schedule_set(
	        d->upstream_schedule,
	        d->cfg.upstream_check ? (uint64_t)d->cfg.upstream_interval_sec * 1000000u : 0);
}

static void set_upstream_state(struct daemon_info *i, void *arg)
{
	const struct upstream_watch *w = arg;

	i->upstream_checked = upstream_watch_checked(w);
	strcpy_trunc(i->upstream_error, sizeof(i->upstream_error), upstream_watch_error(w));
}

/* A check ended: the findings follow its results, then the callers waiting hear of it. A
 * keyserver out of reach is news, not an alarm: it is logged at info and kept in DaemonInfo. */
static void on_upstream_done(struct upstream_watch *w, bool full, void *userdata)
{
	struct daemon *d = userdata;
	unsigned nf = upstream_watch_not_found(w);
	const struct upstream_result *res;
	size_t n = upstream_watch_results(w, &res);

	for (size_t i = 0; i < n; i++) {
		if (!isempty(res[i].error))
			log_info("Upstream copy of %s: %s", res[i].fingerprint, res[i].error);
		if (res[i].wkd_asked && !isempty(res[i].wkd_error))
			log_info("Web Key Directory copy of %s: %s", res[i].fingerprint,
			         res[i].wkd_error);
	}
	if (!isempty(upstream_watch_error(w)))
		log_info("Upstream check incomplete: %s", upstream_watch_error(w));
	if (nf > 0)
		log_info("Upstream check: %u key%s not on the keyserver", nf, nf == 1 ? "" : "s");
	daemon_info_update(d, set_upstream_state, w);
	(void)model_update(d->model);
	if (d->server && full)
		server_upstream_done(d->server);
}

/* The owned keys (a secret part here) as listed, then [upstream] relied-on, then the listed keys
 * of others with full or ultimate owner trust or certified by the user: one query each. */
static size_t upstream_keys_pick(const struct daemon *d, const struct key *keys, size_t n_keys,
                                 char (*fprs)[FPR_HEX_MAX], bool *relied_on)
{
	size_t n = 0;

	for (size_t i = 0; i < n_keys && n < UPSTREAM_KEYS_MAX; i++)
		if (keys[i].has_secret) {
			relied_on[n] = false;
			strcpy_trunc(fprs[n++], FPR_HEX_MAX, keys[i].fingerprint);
		}
	for (unsigned i = 0; i < d->cfg.n_relied_on && n < UPSTREAM_KEYS_MAX; i++) {
		relied_on[n] = true;
		strcpy_trunc(fprs[n++], FPR_HEX_MAX, d->cfg.relied_on[i]);
	}
	/* Then the keys trusted fully or ultimately, or certified ([upstream] relied-on-trusted).
	 */
	for (size_t i = 0; i < n_keys && n < UPSTREAM_KEYS_MAX; i++) {
		bool named = false;

		if (!keys[i].relied_on || keys[i].has_secret)
			continue;
		for (unsigned j = 0; j < d->cfg.n_relied_on && !named; j++)
			named = strcasecmp(d->cfg.relied_on[j], keys[i].fingerprint) == 0;
		if (named)
			continue;
		relied_on[n] = true;
		strcpy_trunc(fprs[n++], FPR_HEX_MAX, keys[i].fingerprint);
	}
	return n;
}

/* The address whose Web Key Directory is asked for fpr: its listed primary user id's, when
 * [upstream] wkd is on; "" for a key not in the keyring. */
static void wkd_mail(const struct daemon *d, const struct key *keys, size_t n_keys, const char *fpr,
                     char *mail)
{
	mail[0] = 0;
	for (size_t i = 0; d->cfg.upstream_wkd && i < n_keys; i++)
		if (strcasecmp(keys[i].fingerprint, fpr) == 0) {
			(void)upstream_uid_mail(keys[i].uid, mail, UPSTREAM_MAIL_MAX);
			return;
		}
}

static size_t upstream_keys(void *userdata, char (*fprs)[FPR_HEX_MAX], bool *relied_on,
                            char (*mails)[UPSTREAM_MAIL_MAX])
{
	struct daemon *d = userdata;
	const struct key *keys;
	size_t n_keys = model_keys(d->model, &keys);
	size_t n = upstream_keys_pick(d, keys, n_keys, fprs, relied_on);

	for (size_t i = 0; i < n; i++)
		wkd_mail(d, keys, n_keys, fprs[i], mails[i]);
	return n;
}

int daemon_upstream_request(void *userdata, char *reason, size_t reason_size)
{
	struct daemon *d = userdata;
	char fprs[UPSTREAM_KEYS_MAX][FPR_HEX_MAX], mails[UPSTREAM_KEYS_MAX][UPSTREAM_MAIL_MAX];
	bool relied_on[UPSTREAM_KEYS_MAX];
	size_t n;
	int r;

	if (!d->cfg.upstream_check || !d->upstream) {
		snprintf(reason, reason_size, "upstream checks are off ([upstream] check = off)");
		return -EOPNOTSUPP;
	}
	n = upstream_keys(d, fprs, relied_on, mails);
	r = upstream_watch_check(d->upstream, (const char(*)[FPR_HEX_MAX])fprs, relied_on,
	                         (const char(*)[UPSTREAM_MAIL_MAX])mails, n, true);
	if (r < 0)
		snprintf(reason, reason_size, "cannot start the check: %s", strerror(-r));
	return r;
}

/* KEYCTL_UPSTREAM_TIMEOUT (seconds, tests only): the bound of a check, in usec; 0 (the default
 * bound) when unset or not a number of seconds whose usec fit. */
static uint64_t bound_from_env(void)
{
	const char *e = getenv("KEYCTL_UPSTREAM_TIMEOUT");
	unsigned long long sec;
	char *end;

	if (isempty(e))
		return 0;
	errno = 0;
	sec = strtoull(e, &end, 10);
	/* Bounded before the product: a wrapped bound would be a few seconds. */
	if (errno || *end || !isdigit((unsigned char)*e) || sec > UINT64_MAX / 1000000u) {
		log_warning("KEYCTL_UPSTREAM_TIMEOUT=%s is not a number of seconds, ignoring", e);
		return 0;
	}
	return sec * 1000000u;
}

/* Under systemd (INVOCATION_ID) dirmngr comes from dirmngr.socket, never from inside our
 * sandbox. */
void daemon_upstream_start(struct daemon *d, const char *home)
{
	uint64_t bound = bound_from_env();
	int r;

	r = upstream_watch_new(d->event, home, bound, isempty(getenv("INVOCATION_ID")),
	                       on_upstream_done, d, &d->upstream);
	if (r >= 0)
		r = upstream_schedule_new(d->event, d->upstream, upstream_keys, d,
		                          &d->upstream_schedule);
	if (r >= 0)
		r = daemon_upstream_apply(d);
	if (r < 0)
		log_warning_errno(r, "Failed to set up upstream checks, ignoring: %m");
}
