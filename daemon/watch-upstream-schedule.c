/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One timer (CLOCK_BOOTTIME: a day asleep counts as a day). Each tick asks watch-upstream.c for
 * one key, the one whose last result is oldest (or missing), and arms the next tick at a random
 * point between half and one and a half times interval / keys, so that every key comes round
 * about once per interval. The tick after a run reads how that key's fetch went: a keyserver or
 * dirmngr out of reach means offline, and the pause doubles instead.
 *
 * Does not: fetch, keep results, or log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include "watch-upstream-schedule.h"

struct upstream_schedule {
	sd_event *event;
	sd_event_source *timer;
	struct upstream_watch *w;
	upstream_list_fn list;
	void *userdata;
	uint64_t interval_usec;
	uint64_t backoff_usec; /* 0: online as far as we know */
	char last[FPR_HEX_MAX]; /* the key the last tick asked for */
};

static const struct upstream_result *result_of(const struct upstream_watch *w, const char *fpr)
{
	const struct upstream_result *res;
	size_t n = upstream_watch_results(w, &res);

	for (size_t i = 0; i < n; i++)
		if (strcasecmp(res[i].fingerprint, fpr) == 0)
			return &res[i];
	return NULL;
}

bool upstream_result_offline(const struct upstream_result *u)
{
	if (!u || isempty(u->error))
		return false;
	return u->r == -EHOSTDOWN || u->r == -EHOSTUNREACH || u->r == -ETIMEDOUT ||
	       (u->r == 0 && !isempty(u->error)); /* a kept copy: this fetch failed */
}

uint64_t upstream_schedule_pause(uint64_t *backoff_usec, bool offline, uint64_t interval_usec,
                                 size_t n_keys)
{
	if (offline)
		*backoff_usec = *backoff_usec ? MIN(2 * *backoff_usec, interval_usec)
		                              : MIN(UPSTREAM_BACKOFF_FIRST_USEC, interval_usec);
	else
		*backoff_usec = 0;
	return *backoff_usec ? *backoff_usec : interval_usec / MAX(n_keys, (size_t)1);
}

/* Uniform in [base/2, 3*base/2), at least UPSTREAM_TICK_MIN_USEC. */
static uint64_t jitter(uint64_t base)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)random();
	base = base / 2 + (base ? r % base : 0);
	return MAX(base, UPSTREAM_TICK_MIN_USEC);
}

static int arm(struct upstream_schedule *s, uint64_t usec)
{
	int r = sd_event_source_set_time_relative(s->timer, usec);

	return r < 0 ? r : sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT);
}

/* The key checked longest ago; -1 when there is none. */
static ssize_t pick(const struct upstream_schedule *s, char (*fprs)[FPR_HEX_MAX], size_t n)
{
	ssize_t best = -1;
	int64_t oldest = INT64_MAX;

	for (size_t i = 0; i < n; i++) {
		const struct upstream_result *u = result_of(s->w, fprs[i]);
		int64_t t = u ? u->checked : 0;

		if (t < oldest) {
			oldest = t;
			best = (ssize_t)i;
		}
	}
	return best;
}

static int on_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct upstream_schedule *s = userdata;
	char fprs[UPSTREAM_KEYS_MAX][FPR_HEX_MAX], mails[UPSTREAM_KEYS_MAX][UPSTREAM_MAIL_MAX];
	bool relied_on[UPSTREAM_KEYS_MAX];
	size_t n;
	ssize_t i;

	uint64_t pause;

	if (upstream_watch_running(s->w))
		return arm(s, UPSTREAM_TICK_MIN_USEC);
	n = s->list(s->userdata, fprs, relied_on, mails);
	pause = upstream_schedule_pause(
	        &s->backoff_usec,
	        upstream_result_offline(isempty(s->last) ? NULL : result_of(s->w, s->last)),
	        s->interval_usec, n);
	i = pick(s, fprs, n);
	s->last[0] = 0;
	if (i >= 0 &&
	    upstream_watch_check(s->w, (const char(*)[FPR_HEX_MAX]) & fprs[i], &relied_on[i],
	                         (const char(*)[UPSTREAM_MAIL_MAX]) & mails[i], 1, false) >= 0)
		strcpy_trunc(s->last, sizeof(s->last), fprs[i]);
	return arm(s, jitter(pause));
}

int upstream_schedule_set(struct upstream_schedule *s, uint64_t interval_usec)
{
	char fprs[UPSTREAM_KEYS_MAX][FPR_HEX_MAX], mails[UPSTREAM_KEYS_MAX][UPSTREAM_MAIL_MAX];
	bool relied_on[UPSTREAM_KEYS_MAX];
	size_t n;

	s->interval_usec = interval_usec;
	s->backoff_usec = 0;
	if (interval_usec == 0)
		return sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
	/* No burst at each start or reload either: the first key waits its turn like the rest. */
	n = s->list(s->userdata, fprs, relied_on, mails);
	return arm(s, jitter(interval_usec / MAX(n, (size_t)1)));
}

int upstream_schedule_new(sd_event *e, struct upstream_watch *w, upstream_list_fn list,
                          void *userdata, struct upstream_schedule **ret)
{
	struct upstream_schedule *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->event = sd_event_ref(e);
	s->w = w;
	s->list = list;
	s->userdata = userdata;
	r = sd_event_add_time_relative(e, &s->timer, CLOCK_BOOTTIME, UPSTREAM_TICK_MIN_USEC, 0,
	                               on_tick, s);
	if (r >= 0)
		r = sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
	if (r < 0) {
		upstream_schedule_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct upstream_schedule *upstream_schedule_free(struct upstream_schedule *s)
{
	if (!s)
		return NULL;
	sd_event_source_disable_unref(s->timer);
	sd_event_unref(s->event);
	free(s);
	return NULL;
}
