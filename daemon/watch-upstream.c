/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One upstream run at a time (see watch-upstream.h). The thread fetches key after key and files
 * each result under the job's lock; the loop polls the job (a short timer, only while a run is
 * on) rather than being woken through an fd, because a thread that outlives its bound must find
 * nothing of the loop's left to touch. At the bound the loop takes the results filed so far,
 * marks the run abandoned and lets go: the thread stops after the key it is on and frees what it
 * holds.
 *
 * Does not: fetch (upstream-fetch.c), compare, or log.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "upstream-fetch.h"
#include "watch-upstream.h"
#include "worker-job.h"

#define POLL_USEC (100ull * 1000ull)

struct run {
	struct worker_job base; /* first: worker_job frees the whole struct */
	char home[PATH_MAX];
	bool launch;
	bool full; /* CheckUpstream's run over every key, not the schedule's one key */
	size_t n, n_done; /* n_done and res[] below it: guarded by base.lock */
	bool abandoned; /* guarded by base.lock: the loop left; file nothing more */
	struct upstream_result res[UPSTREAM_KEYS_MAX];
};

struct upstream_watch {
	sd_event *event;
	char home[PATH_MAX]; /* never cut: a shorter home would start a second dirmngr */
	uint64_t timeout_usec;
	bool launch;
	upstream_done_fn fn;
	void *userdata;
	struct run *run; /* the one running, or NULL */
	uint64_t deadline; /* CLOCK_MONOTONIC usec */
	sd_event_source *poll;
	size_t n;
	struct upstream_result res[UPSTREAM_KEYS_MAX];
	char error[ERROR_TEXT_MAX];
	int64_t checked;
	unsigned not_found;
};

static int run_job(struct worker_job *base)
{
	struct run *j = (struct run *)base;

	for (size_t i = 0; i < j->n; i++) {
		struct upstream_result u = j->res[i]; /* fingerprint, relied_on, mail: the loop's */
		bool stop;

		pthread_mutex_lock(&j->base.lock);
		stop = j->abandoned;
		pthread_mutex_unlock(&j->base.lock);
		if (stop)
			break;
		u.r = upstream_fetch(*j->home ? j->home : NULL, u.fingerprint, j->launch,
		                     &u.published, u.error, sizeof(u.error));
		if (u.r == 0)
			u.error[0] = 0;
		if (!isempty(u.mail)) {
			u.wkd_asked = true;
			u.wkd_r = upstream_fetch_wkd(*j->home ? j->home : NULL, u.mail,
			                             u.fingerprint, j->launch, &u.wkd, u.wkd_error,
			                             sizeof(u.wkd_error));
			if (u.wkd_r == 0)
				u.wkd_error[0] = 0;
		}
		u.checked = (int64_t)time(NULL);
		pthread_mutex_lock(&j->base.lock);
		stop = j->abandoned;
		if (!stop) {
			j->res[i] = u;
			j->n_done = i + 1;
		}
		pthread_mutex_unlock(&j->base.lock);
		if (stop) {
			upstream_result_done(&u);
			break;
		}
	}
	return 0;
}

static struct upstream_result *result_find(struct upstream_watch *w, const char *fpr)
{
	for (size_t i = 0; i < w->n; i++)
		if (strcasecmp(w->res[i].fingerprint, fpr) == 0)
			return &w->res[i];
	return NULL;
}

/* The WKD's side of the merged entry u: this run's (fresh), unless it could not reach the WKD and
 * the entry from before has a copy, which then stays, with this run's error. u is fresh or before
 * itself (their other fields chosen by the keyserver's side); the copy kept is moved into u. */
static void wkd_settle(struct upstream_result *u, struct upstream_result *fresh,
                       struct upstream_result *before)
{
	bool keep = before->wkd_asked && before->wkd_r == 0 && fresh->wkd_asked &&
	            fresh->wkd_r != 0 && fresh->wkd_r != -ENOENT;
	struct upstream_result *src = keep ? before : fresh;
	char error[ERROR_TEXT_MAX];

	strcpy_trunc(error, sizeof(error), fresh->wkd_error);
	if (src != u) {
		key_done(&u->wkd);
		u->wkd = src->wkd;
		memset(&src->wkd, 0, sizeof(src->wkd));
		u->wkd_asked = src->wkd_asked;
		u->wkd_r = src->wkd_r;
	}
	strcpy_trunc(u->wkd_error, sizeof(u->wkd_error), error);
}

/* Files one run's results: a key asked about replaces its entry, except that a failed fetch
 * keeps the copy fetched before (a revocation seen once stays seen while offline), for the
 * keyserver and the WKD each. After a full run, keys not asked about any more go; after the
 * schedule's one-key run, the others stay. */
static void results_merge(struct upstream_watch *w, struct upstream_result *got, size_t n_got,
                          const struct run *j)
{
	struct upstream_result next[UPSTREAM_KEYS_MAX];
	size_t n = 0;

	memset(next, 0, sizeof(next));
	for (size_t i = 0; i < j->n; i++) {
		struct upstream_result *old = result_find(w, j->res[i].fingerprint);
		struct upstream_result *u = &next[n++];

		if (i < n_got && (got[i].r == 0 || got[i].r == -ENOENT || !old || old->r != 0)) {
			*u = got[i];
			memset(&got[i], 0, sizeof(got[i]));
			if (old) {
				wkd_settle(u, u, old);
				upstream_result_done(old);
				memset(old, 0, sizeof(*old));
			}
		} else if (old) {
			*u = *old;
			memset(old, 0, sizeof(*old));
			if (i < n_got) {
				strcpy_trunc(u->error, sizeof(u->error), got[i].error);
				wkd_settle(u, &got[i], u);
			}
		} else {
			strcpy_trunc(u->fingerprint, sizeof(u->fingerprint), j->res[i].fingerprint);
			u->relied_on = j->res[i].relied_on;
			u->r = -ETIMEDOUT;
			strcpy_trunc(u->error, sizeof(u->error), "not reached within the bound");
		}
		u->relied_on = j->res[i].relied_on;
	}
	for (size_t i = 0; !j->full && i < w->n && n < UPSTREAM_KEYS_MAX; i++)
		if (!isempty(w->res[i].fingerprint)) {
			next[n++] = w->res[i];
			memset(&w->res[i], 0, sizeof(w->res[i]));
		}
	for (size_t i = 0; i < w->n; i++)
		upstream_result_done(&w->res[i]);
	for (size_t i = 0; i < n_got; i++)
		upstream_result_done(&got[i]);
	memcpy(w->res, next, sizeof(next));
	w->n = n;
}

static void summarise(struct upstream_watch *w, const struct upstream_result *got, size_t n_got,
                      size_t n_asked)
{
	w->error[0] = 0;
	w->not_found = 0;
	w->checked = (int64_t)time(NULL);
	for (size_t i = 0; i < n_got; i++) {
		if (got[i].r == -ENOENT)
			w->not_found++;
		else if (got[i].r < 0 && !w->error[0])
			snprintf(w->error, sizeof(w->error), "%.16s: %.128s", got[i].fingerprint,
			         got[i].error);
	}
	if (!w->error[0] && n_got < n_asked)
		snprintf(w->error, sizeof(w->error), "%zu of %zu keys not checked within %llu s",
		         n_asked - n_got, n_asked,
		         (unsigned long long)(w->timeout_usec / 1000000u));
}

static void run_finish(struct upstream_watch *w)
{
	struct run *j = w->run;
	bool full = j->full;
	struct upstream_result *got = calloc(UPSTREAM_KEYS_MAX, sizeof(*got));
	size_t n_got;

	pthread_mutex_lock(&j->base.lock);
	n_got = j->n_done;
	if (got)
		memcpy(got, j->res, n_got * sizeof(*got));
	else
		n_got = 0;
	/* The published keys copied are ours now: the thread must not free them, nor file more.
	 * The fingerprints stay: results_merge() reads them. */
	for (size_t i = 0; i < j->n_done; i++) {
		memset(&j->res[i].published, 0, sizeof(j->res[i].published));
		memset(&j->res[i].wkd, 0, sizeof(j->res[i].wkd));
	}
	j->n_done = 0;
	j->abandoned = true;
	pthread_mutex_unlock(&j->base.lock);
	summarise(w, got, n_got, j->n);
	if (got)
		results_merge(w, got, n_got, j);
	free(got);
	w->run = NULL;
	worker_job_unref(&j->base);
	sd_event_source_set_enabled(w->poll, SD_EVENT_OFF);
	w->fn(w, full, w->userdata);
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct upstream_watch *w = userdata;

	if (!w->run)
		return 0;
	if (worker_job_finished(&w->run->base) || worker_job_now_usec() >= w->deadline) {
		run_finish(w);
		return 0;
	}
	(void)sd_event_source_set_time_relative(s, POLL_USEC);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int upstream_watch_check(struct upstream_watch *w, const char (*fprs)[FPR_HEX_MAX],
                         const bool *relied_on, const char (*mails)[UPSTREAM_MAIL_MAX], size_t n,
                         bool full)
{
	struct run *j;
	int r;

	if (w->run && (w->run->full || !full))
		return w->run->full ? 0 : -EBUSY;
	/* The schedule's one key gives way to a caller who waits: what it has is filed. */
	if (w->run)
		run_finish(w);
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	memcpy(j->home, w->home, sizeof(j->home)); /* the same size, NUL-terminated */
	j->launch = w->launch;
	j->full = full;
	j->n = MIN(n, (size_t)UPSTREAM_KEYS_MAX);
	for (size_t i = 0; i < j->n; i++) {
		strcpy_trunc(j->res[i].fingerprint, FPR_HEX_MAX, fprs[i]);
		j->res[i].relied_on = relied_on[i];
		if (mails)
			strcpy_trunc(j->res[i].mail, UPSTREAM_MAIL_MAX, mails[i]);
	}
	r = worker_job_start(&j->base, run_job);
	if (r < 0)
		return r;
	w->run = j;
	w->deadline = worker_job_now_usec() + w->timeout_usec;
	if (!w->poll)
		r = sd_event_add_time_relative(w->event, &w->poll, CLOCK_MONOTONIC, POLL_USEC, 0,
		                               on_poll, w);
	else
		r = sd_event_source_set_time_relative(w->poll, POLL_USEC);
	if (r >= 0)
		r = sd_event_source_set_enabled(w->poll, SD_EVENT_ONESHOT);
	if (r < 0)
		run_finish(w);
	return r < 0 ? r : 0;
}

int upstream_watch_new(sd_event *e, const char *home, uint64_t timeout_usec, bool launch,
                       upstream_done_fn fn, void *userdata, struct upstream_watch **ret)
{
	struct upstream_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	if (strcpy_bounded(w->home, sizeof(w->home), home ? home : "") < 0) {
		free(w);
		return -ENAMETOOLONG;
	}
	w->event = sd_event_ref(e);
	w->timeout_usec = timeout_usec ? timeout_usec : UPSTREAM_TIMEOUT_USEC;
	w->launch = launch;
	w->fn = fn;
	w->userdata = userdata;
	*ret = w;
	return 0;
}

struct upstream_watch *upstream_watch_free(struct upstream_watch *w)
{
	if (!w)
		return NULL;
	if (w->run) {
		pthread_mutex_lock(&w->run->base.lock);
		w->run->abandoned = true;
		for (size_t i = 0; i < w->run->n_done; i++)
			upstream_result_done(&w->run->res[i]);
		w->run->n_done = 0;
		pthread_mutex_unlock(&w->run->base.lock);
		worker_job_unref(&w->run->base);
	}
	for (size_t i = 0; i < w->n; i++)
		upstream_result_done(&w->res[i]);
	sd_event_source_disable_unref(w->poll);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}

bool upstream_watch_running(const struct upstream_watch *w)
{
	return w->run != NULL;
}

size_t upstream_watch_results(const struct upstream_watch *w, const struct upstream_result **ret)
{
	*ret = w->res;
	return w->n;
}

const char *upstream_watch_error(const struct upstream_watch *w)
{
	return w->error;
}

int64_t upstream_watch_checked(const struct upstream_watch *w)
{
	return w->checked;
}

unsigned upstream_watch_not_found(const struct upstream_watch *w)
{
	return w->not_found;
}
