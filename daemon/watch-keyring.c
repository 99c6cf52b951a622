/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * struct keyring_watch: inotify on GNUPGHOME and private-keys-v1.d (pubring.kbx, pubring.gpg,
 * gpg.conf, common.conf, scdaemon.conf for the scdaemon-ccid-conflict rule, and key files;
 * trustdb.gpg is left out, keyring-list.c says why) and, in a keyboxd home (common.conf says
 * use-keyboxd, GnuPG >= 2.4.1's default for new homes), on public-keys.d: keyboxd keeps
 * pubring.db open and writes it, its -wal and -journal in place, so there IN_MODIFY counts, not
 * only IN_CLOSE_WRITE (-shm changes on reads and is left out). A 200 ms debounce, the listing on
 * a worker thread that reports through a loop wake (loop-wake.c), a 60 s watchdog that cancels the
 * gpgme operation (gpgme_cancel_async is safe from another thread), and exponential retry. Retries
 * are bounded (KEYRING_RETRY_ATTEMPTS, about 13 minutes): a keyring that stays broken must not wake
 * us every few minutes for ever. What mends it is seen anyway: a rewritten pubring.kbx or key
 * file through the watches, a GNUPGHOME created later through a wait on its nearest existing
 * parent (path-wait.c), anything else through Reload (SIGHUP).
 *
 * Does not: list keys (keyring-list.c), write to the keyring, talk to gpg-agent, or log.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "gpg-conf.h"
#include "loop-wake.h"
#include "path-wait.h"
#include "watch-keyring.h"

struct job {
	struct keyring_cancel cancel;
	char home[PATH_MAX];
	bool has_home;
	char gpg_path[PATH_MAX];
	char track[KEYRING_TRACK_MAX][FPR_HEX_MAX]; /* a copy: an orphaned job outlives the watch */
	size_t n_track;
	struct loop_wake *wake; /* a reference of its own: an orphaned job outlives the watch */
	/* In: what the watch knew (load: read the file first). Out: what this listing learnt. */
	struct keyring_owned owned;
	bool full, load_owned;
	char owned_path[PATH_MAX];
	struct keyring_result res;
	bool timed_out;
	bool finished, orphaned; /* under cancel.lock */
	uint64_t seq; /* the watch's count of listings started, this one included */
};

struct keyring_watch {
	sd_event *event;
	char home[PATH_MAX];
	bool has_home;
	char gpg_path[PATH_MAX];
	char (*track)[FPR_HEX_MAX];
	size_t n_track;
	keyring_watch_fn fn;
	void *userdata;

	sd_event_source *inotify_home, *inotify_keys;
	/* public-keys.d, while common.conf says use-keyboxd. */
	sd_event_source *inotify_kbxd;
	bool keyboxd;
	/* While GNUPGHOME does not exist: a wait for it to appear (path-wait.c). */
	struct path_wait parent_wait;
	sd_event_source *parent_source;
	sd_event_source *debounce, *retry, *watchdog;
	struct loop_wake *done;
	struct job *job;
	pthread_t thread;
	bool pending;
	/* Listings started, and the last whose outcome fn was given (keyring_watch_listed()). */
	uint64_t started, reported;
	uint64_t backoff;
	unsigned retries; /* since the last success, or the last refresh something asked for */
	uint64_t timeout;
	struct keyring_owned owned;
	bool owned_known; /* owned holds a listing's outcome (else: the file, if any, at first) */
	bool relied_wanted; /* [upstream] relied-on-trusted: given to each job's owned */
	bool full_next;
	char owned_path[PATH_MAX]; /* "" when no file keeps owned across restarts */
	/* The certification scan: at most one per interval, and only when the keyring changed. */
	bool scan_next, scanned;
	uint64_t listed_at; /* CLOCK_MONOTONIC usec of the first listing; 0: none yet */
	uint64_t scanned_at; /* CLOCK_MONOTONIC usec */
	int64_t scanned_stamp;
	uint64_t scan_interval;
	sd_event_source *scan_timer;
};

static void job_free(struct job *j)
{
	if (!j)
		return;
	keyring_keys_free(j->res.keys, j->res.n_keys);
	loop_wake_unref(j->wake);
	pthread_mutex_destroy(&j->cancel.lock);
	free(j);
}

static void *job_run(void *arg)
{
	struct job *j = arg;
	const char *track[KEYRING_TRACK_MAX];
	bool orphaned;

	for (size_t i = 0; i < j->n_track; i++)
		track[i] = j->track[i];
	if (j->load_owned && !isempty(j->owned_path))
		(void)keyring_owned_load(j->owned_path, &j->owned);
	j->res.error = keyring_list_owned(
	        j->has_home ? j->home : NULL, isempty(j->gpg_path) ? NULL : j->gpg_path, track,
	        j->n_track, &j->cancel, &j->owned, j->full, &j->res.way, &j->res.keys,
	        &j->res.n_keys, j->res.reason, sizeof(j->res.reason));
	/* Kept on this thread: the loop never waits for the disk. A stale file is removed, so a
	 * restart cannot take the short way on what a full listing no longer holds. */
	if (j->res.error >= 0 && j->res.way != KEYRING_WAY_OWNED && !isempty(j->owned_path)) {
		if (!j->owned.valid || keyring_owned_save(j->owned_path, &j->owned) < 0)
			(void)unlink(j->owned_path);
	}
	if (j->res.error >= 0 && j->has_home) {
		int r = keyring_default_key(j->home, j->res.default_key,
		                            sizeof(j->res.default_key));
		/* An unreadable gpg.conf costs only the default-key rule. */
		if (r < 0)
			j->res.default_key[0] = 0;
	}
	/* Likewise git's config (watch-git.c asks for this listing when it changes). */
	if (j->res.error >= 0)
		(void)git_signing_key(j->res.git_signing_key, sizeof(j->res.git_signing_key));
	pthread_mutex_lock(&j->cancel.lock);
	j->finished = true;
	orphaned = j->orphaned;
	pthread_mutex_unlock(&j->cancel.lock);
	if (orphaned) {
		/* The watch is gone; nobody waits for this result. */
		job_free(j);
		return NULL;
	}
	(void)loop_wake_post(j->wake);
	return NULL;
}

static int arm_timer(struct keyring_watch *w, sd_event_source **s, uint64_t usec,
                     sd_event_time_handler_t fn, const char *desc)
{
	uint64_t now;
	int r;

	r = sd_event_now(w->event, CLOCK_MONOTONIC, &now);
	if (r < 0)
		return r;
	if (!*s) {
		r = sd_event_add_time(w->event, s, CLOCK_MONOTONIC, now + usec, 10000, fn, w);
		if (r >= 0)
			(void)sd_event_source_set_description(*s, desc);
		return r;
	}
	r = sd_event_source_set_time(*s, now + usec);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
}

static void disarm(sd_event_source *s)
{
	if (s)
		(void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata);

static int on_debounce(sd_event_source *s, uint64_t usec, void *userdata)
{
	return keyring_watch_refresh(userdata);
}

static int refresh(struct keyring_watch *w);

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	return refresh(userdata);
}

/*
 * gpgme_cancel_async() only takes effect when gpg's pipes next have data (gpgme's select has no
 * timeout), and gpgme double-forks gpg, so we cannot kill it either. So a listing that takes too
 * long is reported as failed now (the view goes stale) and its thread is left to finish: its
 * late result, good or bad, is delivered as usual. No other listing starts meanwhile, so a hung
 * gpg costs one thread, not one per retry.
 */
static int on_watchdog(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct keyring_watch *w = userdata;
	struct keyring_result res = { .error = -ETIMEDOUT };

	if (!w->job)
		return 0;
	w->job->timed_out = true;
	w->reported = w->job->seq;
	keyring_cancel(&w->job->cancel);
	snprintf(res.reason, sizeof(res.reason),
	         "gpg did not answer within %.1f s (keyring locked?)", (double)w->timeout / 1e6);
	w->fn(w, &res, w->userdata);
	return 0;
}

static int on_parent(sd_event_source *s, int fd, uint32_t revents, void *userdata);

/* Waits for the missing home to appear. Failures are survived: the next refresh tries again. */
static void parent_wait_ensure(struct keyring_watch *w)
{
	if (path_wait_arm(&w->parent_wait, w->home) < 0)
		return;
	if (w->parent_source)
		return;
	if (sd_event_add_io(w->event, &w->parent_source, path_wait_fd(&w->parent_wait), EPOLLIN,
	                    on_parent, w) < 0) {
		path_wait_done(&w->parent_wait);
		return;
	}
	(void)sd_event_source_set_description(w->parent_source, "keyring-parent");
}

static void parent_wait_stop(struct keyring_watch *w)
{
	w->parent_source = sd_event_source_disable_unref(w->parent_source);
	path_wait_done(&w->parent_wait);
}

/* (Re)adds the inotify watches that are missing; the home or its key directory may appear
 * later. Failures are survived: the next refresh tries again. Returns true when the home's
 * watch was added just now while a parent was watched: the home appeared. */
static bool watches_ensure(struct keyring_watch *w)
{
	const uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |
	                      IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
	bool appeared = false;
	char path[PATH_MAX + 32];
	int r;

	if (!w->has_home)
		return false;
	if (!w->inotify_home &&
	    sd_event_add_inotify(w->event, &w->inotify_home, w->home, mask, on_inotify, w) < 0) {
		parent_wait_ensure(w);
		/* It may have appeared while the wait was being set up. */
		(void)sd_event_add_inotify(w->event, &w->inotify_home, w->home, mask, on_inotify,
		                           w);
	}
	if (w->inotify_home) {
		appeared = w->parent_source != NULL;
		parent_wait_stop(w);
	}
	if (!w->inotify_keys &&
	    snprintf(path, sizeof(path), "%s/private-keys-v1.d", w->home) < (int)sizeof(path))
		(void)sd_event_add_inotify(w->event, &w->inotify_keys, path, mask, on_inotify, w);
	/* An unreadable common.conf keeps the last answer: the next change reads it again. */
	r = gpg_conf_file_has_option(w->home, "common.conf", "use-keyboxd");
	if (r >= 0)
		w->keyboxd = r > 0;
	if (!w->keyboxd)
		w->inotify_kbxd = sd_event_source_disable_unref(w->inotify_kbxd);
	else if (!w->inotify_kbxd &&
	         snprintf(path, sizeof(path), "%s/public-keys.d", w->home) < (int)sizeof(path))
		(void)sd_event_add_inotify(w->event, &w->inotify_kbxd, path, mask | IN_MODIFY,
		                           on_inotify, w);
	return appeared;
}

static bool relevant(const struct keyring_watch *w, sd_event_source *s,
                     const struct inotify_event *ev)
{
	static const char *const names[] = {
		"pubring.kbx", "pubring.gpg",   "gpg.conf",      "private-keys-v1.d",
		"common.conf", "public-keys.d", "scdaemon.conf",
	};
	static const char *const kbxd_names[] = {
		"pubring.db",
		"pubring.db-wal",
		"pubring.db-journal",
	};

	if (s == w->inotify_keys)
		return ev->len == 0 || strstr(ev->name, ".key") != NULL;
	if (s == w->inotify_kbxd) {
		if (ev->len == 0)
			return true;
		for (size_t i = 0; i < ELEMENTSOF(kbxd_names); i++)
			if (streq(ev->name, kbxd_names[i]))
				return true;
		return false;
	}
	if (ev->len == 0)
		return true; /* the directory itself went away */
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (streq(ev->name, names[i]))
			return true;
	return false;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	struct keyring_watch *w = userdata;

	if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
		/* The watched directory is gone or was renamed away (a restored backup moved in
		 * its place): watches_ensure() watches the path again once it exists. The key
		 * directory's watch sits inside the old home, so it goes with it. */
		if (s == w->inotify_home) {
			w->inotify_home = sd_event_source_disable_unref(w->inotify_home);
			w->inotify_keys = sd_event_source_disable_unref(w->inotify_keys);
			w->inotify_kbxd = sd_event_source_disable_unref(w->inotify_kbxd);
		} else if (s == w->inotify_keys)
			w->inotify_keys = sd_event_source_disable_unref(w->inotify_keys);
		else if (s == w->inotify_kbxd)
			w->inotify_kbxd = sd_event_source_disable_unref(w->inotify_kbxd);
		return arm_timer(w, &w->debounce, KEYRING_DEBOUNCE_USEC, on_debounce,
		                 "keyring-debounce");
	}
	if (!relevant(w, s, ev))
		return 0;
	return arm_timer(w, &w->debounce, KEYRING_DEBOUNCE_USEC, on_debounce, "keyring-debounce");
}

static int on_parent(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct keyring_watch *w = userdata;
	int r = path_wait_process(&w->parent_wait);

	if (r < 0) {
		/* The wait broke: the next refresh (a Reload) sets it up again. */
		parent_wait_stop(w);
		return 0;
	}
	/* Listing only once the home is there: gpg on a missing home is a wasted run. */
	if (r > 0 && watches_ensure(w))
		return arm_timer(w, &w->debounce, KEYRING_DEBOUNCE_USEC, on_debounce,
		                 "keyring-debounce");
	return 0;
}

/* What any change of the public keys moves: the keybox's or keyboxd's files. */
static int64_t keyring_stamp(const char *home)
{
	static const char *const names[] = { "pubring.kbx", "pubring.gpg",
		                             "public-keys.d/pubring.db",
		                             "public-keys.d/pubring.db-wal" };
	int64_t stamp = 0;

	for (size_t i = 0; i < ELEMENTSOF(names); i++) {
		char path[PATH_MAX];
		struct stat st;

		if (snprintf(path, sizeof(path), "%s/%s", home, names[i]) < (int)sizeof(path) &&
		    stat(path, &st) == 0)
			stamp += (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec +
			         (int64_t)st.st_size;
	}
	return stamp;
}

static int on_scan_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* After a listing: a scan is due when the relied-on keys are wanted, own keys are known, and
 * the keyring changed since the last scan (or there was none); it runs with the next listing,
 * at the end of the interval when the last scan was too recent, and the first one a while after
 * the first listing (KEYRING_CERTIFIED_FIRST_USEC): a session that just started is busy, and a
 * keyctld stopped at once must not leave a scan behind (gpg, which gpgme starts with SIGPIPE
 * ignored, reads on to the end after its reader is gone). */
static void scan_schedule(struct keyring_watch *w)
{
	uint64_t now, due;

	if (!w->relied_wanted || !w->has_home || w->owned.n_fprs == 0 || w->scan_next)
		return;
	if (w->scanned && keyring_stamp(w->home) == w->scanned_stamp)
		return;
	if (sd_event_now(w->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	if (!w->listed_at)
		w->listed_at = now;
	due = w->scanned ? w->scanned_at + w->scan_interval
	                 : w->listed_at + MIN(w->scan_interval, KEYRING_CERTIFIED_FIRST_USEC);
	if (now < due) {
		(void)arm_timer(w, &w->scan_timer, due - now, on_scan_timer, "keyring-certified");
		return;
	}
	w->scan_next = true;
	w->pending = true;
}

static int on_scan_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct keyring_watch *w = userdata;

	(void)s;
	(void)usec;
	scan_schedule(w);
	if (w->scan_next && !w->job)
		(void)refresh(w); /* not started (out of memory): the next listing tries again */
	return 0;
}

static int on_done(void *userdata)
{
	struct keyring_watch *w = userdata;
	struct job *j = w->job;

	if (!j)
		return 0;
	pthread_join(w->thread, NULL);
	w->job = NULL;
	disarm(w->watchdog);
	memcpy(&w->owned, &j->owned, sizeof(w->owned));
	w->owned_known = true;

	if (j->res.error < 0 && w->retries < KEYRING_RETRY_ATTEMPTS) {
		w->retries++;
		w->backoff = w->backoff ? MIN(w->backoff * 2, KEYRING_RETRY_MAX_USEC)
		                        : KEYRING_RETRY_MIN_USEC;
		/* Not armed (out of memory): the next change or Reload lists again. */
		(void)arm_timer(w, &w->retry, w->backoff, on_retry, "keyring-retry");
	} else if (j->res.error >= 0) {
		w->backoff = 0;
		w->retries = 0;
	}
	(void)watches_ensure(w);
	w->reported = j->seq;
	w->fn(w, &j->res, w->userdata);
	if (j->res.error >= 0)
		scan_schedule(w);
	job_free(j);
	if (w->pending) {
		w->pending = false;
		if (keyring_watch_refresh(w) < 0)
			w->pending = true; /* tried again when the next listing is asked for */
	}
	/* Never an error to sd-event: it would disable the wake source (loop-wake.c), and every
	 * later listing's result would be lost with the watch stuck on a finished job. */
	return 0;
}

int keyring_watch_refresh(struct keyring_watch *w)
{
	/* Asked for (a change in GNUPGHOME, a Reload): a failure earns a new series of retries. */
	w->retries = 0;
	w->backoff = 0;
	return refresh(w);
}

static int refresh(struct keyring_watch *w)
{
	_cleanup_(freep) struct job *j = NULL;
	int r;

	if (w->job) {
		w->pending = true;
		return 0;
	}
	disarm(w->retry);
	disarm(w->debounce);
	(void)watches_ensure(w);

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	memcpy(j->home, w->home, sizeof(j->home));
	j->has_home = w->has_home;
	memcpy(j->gpg_path, w->gpg_path, sizeof(j->gpg_path));
	if (w->n_track > 0)
		memcpy(j->track, w->track, w->n_track * sizeof(*w->track));
	j->n_track = w->n_track;
	memcpy(&j->owned, &w->owned, sizeof(j->owned));
	j->owned.relied_wanted = w->relied_wanted;
	j->load_owned = !w->owned_known;
	j->full = w->full_next;
	w->full_next = false;
	j->owned.scan_certified = w->scan_next && w->has_home;
	if (j->owned.scan_certified) {
		w->scan_next = false;
		w->scanned = true;
		w->scanned_stamp = keyring_stamp(w->home);
		(void)sd_event_now(w->event, CLOCK_MONOTONIC, &w->scanned_at);
	}
	memcpy(j->owned_path, w->owned_path, sizeof(j->owned_path));
	r = pthread_mutex_init(&j->cancel.lock, NULL);
	if (r != 0)
		return -r;
	j->wake = loop_wake_ref(w->done);
	j->seq = w->started + 1;
	r = pthread_create(&w->thread, NULL, job_run, j);
	if (r != 0) {
		loop_wake_unref(j->wake);
		pthread_mutex_destroy(&j->cancel.lock);
		return -r;
	}
	w->job = TAKE_PTR(j);
	w->started++;
	return arm_timer(w, &w->watchdog, w->timeout, on_watchdog, "keyring-watchdog");
}

int keyring_watch_new(sd_event *e, const char *gnupghome, const char *const *track, size_t n_track,
                      keyring_watch_fn fn, void *userdata, struct keyring_watch **ret)
{
	_cleanup_(keyring_watch_freep) struct keyring_watch *w = NULL;
	int r;

	if (n_track > KEYRING_TRACK_MAX)
		return -E2BIG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	path_wait_init(&w->parent_wait);
	w->timeout = KEYRING_LIST_TIMEOUT_USEC;
	w->scan_interval = KEYRING_CERTIFIED_INTERVAL_USEC;
	w->event = sd_event_ref(e);
	w->fn = fn;
	w->userdata = userdata;
	if (!isempty(gnupghome)) {
		r = strcpy_bounded(w->home, sizeof(w->home), gnupghome);
		if (r < 0)
			return r;
		w->has_home = true;
	}
	if (n_track > 0) {
		w->track = calloc(n_track, sizeof(*w->track));
		if (!w->track)
			return -ENOMEM;
		for (size_t i = 0; i < n_track; i++) {
			r = strcpy_bounded(w->track[i], FPR_HEX_MAX, track[i]);
			if (r < 0)
				return r;
		}
		w->n_track = n_track;
	}
	r = loop_wake_new(e, "keyring-done", on_done, w, &w->done);
	if (r < 0)
		return r;
	/* The first listing starts once the loop runs, after the caller's setters. */
	(void)watches_ensure(w);
	r = arm_timer(w, &w->debounce, 0, on_debounce, "keyring-debounce");
	if (r < 0)
		return r;
	*ret = TAKE_PTR(w);
	return 0;
}

int keyring_watch_set_track(struct keyring_watch *w, const char *const *track, size_t n_track)
{
	char(*t)[FPR_HEX_MAX] = NULL;
	int r;

	if (n_track > KEYRING_TRACK_MAX)
		return -E2BIG;
	if (n_track > 0) {
		t = calloc(n_track, sizeof(*t));
		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < n_track; i++) {
			r = strcpy_bounded(t[i], FPR_HEX_MAX, track[i]);
			if (r < 0) {
				free(t);
				return r;
			}
		}
	}
	/* A running listing has its own copy; the next one uses the new list. */
	free(w->track);
	w->track = t;
	w->n_track = n_track;
	return 0;
}

uint64_t keyring_watch_asked(const struct keyring_watch *w)
{
	/* A refresh asked while a listing runs is served by the next one. */
	return w->started + (w->pending ? 1 : 0);
}

bool keyring_watch_listed(const struct keyring_watch *w, uint64_t seq)
{
	return w->reported >= seq;
}

int keyring_watch_refresh_full(struct keyring_watch *w)
{
	w->full_next = true;
	return keyring_watch_refresh(w);
}

void keyring_watch_set_relied_trusted(struct keyring_watch *w, bool on)
{
	w->relied_wanted = on;
}

void keyring_watch_set_certified_interval(struct keyring_watch *w, uint64_t usec)
{
	w->scan_interval = usec;
}

int keyring_watch_set_owned_path(struct keyring_watch *w, const char *path)
{
	return strcpy_bounded(w->owned_path, sizeof(w->owned_path), path ? path : "");
}

int keyring_watch_set_gpg_path(struct keyring_watch *w, const char *gpg_path)
{
	return strcpy_bounded(w->gpg_path, sizeof(w->gpg_path), gpg_path ? gpg_path : "");
}

void keyring_watch_set_timeout(struct keyring_watch *w, uint64_t usec)
{
	w->timeout = usec;
}

struct keyring_watch *keyring_watch_free(struct keyring_watch *w)
{
	if (!w)
		return NULL;
	if (w->job) {
		struct job *j = w->job;
		bool finished;

		/* A finished thread is joined; a running one (gpg may hang) is left to free its job
		 * itself; it holds copies of everything it reads. */
		keyring_cancel(&j->cancel);
		pthread_mutex_lock(&j->cancel.lock);
		finished = j->finished;
		j->orphaned = !finished;
		pthread_mutex_unlock(&j->cancel.lock);
		if (finished) {
			pthread_join(w->thread, NULL);
			job_free(j);
		} else
			pthread_detach(w->thread);
	}
	sd_event_source_disable_unref(w->inotify_home);
	sd_event_source_disable_unref(w->inotify_keys);
	sd_event_source_disable_unref(w->inotify_kbxd);
	parent_wait_stop(w);
	sd_event_source_disable_unref(w->debounce);
	sd_event_source_disable_unref(w->retry);
	sd_event_source_disable_unref(w->watchdog);
	sd_event_source_disable_unref(w->scan_timer);
	loop_wake_detach(w->done);
	free(w->track);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}
