/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inotify on the directories of git's global config files, filtered by file name and debounced
 * (an editor's save is several events); a directory that does not exist yet (~/.config/git before
 * the first `git config` there) is waited for with path-wait.c, and watched once it appears. See
 * watch-git.h.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "git-config.h"
#include "path-wait.h"
#include "util.h"
#include "watch-git.h"

#define GIT_WATCH_DEBOUNCE_USEC (200u * 1000u)
/* Each config path, and the target of each that is a symlink. */
#define GIT_WATCHES_MAX (2 * GIT_CONFIG_PATHS_MAX)

/* One file: its directory watched, or waited for while it does not exist. */
struct git_slot {
	struct git_watch *w;
	char dir[PATH_MAX];
	char name[NAME_MAX + 1];
	sd_event_source *inotify;
	struct path_wait wait;
	sd_event_source *wait_io;
};

struct git_watch {
	sd_event *event;
	git_watch_fn fn;
	void *userdata;
	struct git_slot slots[GIT_WATCHES_MAX];
	size_t n;
	sd_event_source *debounce;
};

static int slot_arm(struct git_slot *s);

static int on_debounce(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct git_watch *w = userdata;

	w->fn(w, w->userdata);
	return 0;
}

/* Calls back GIT_WATCH_DEBOUNCE_USEC after the last change. */
static int changed(struct git_watch *w)
{
	uint64_t now;

	if (sd_event_now(w->event, CLOCK_MONOTONIC, &now) < 0)
		return 0;
	if (!w->debounce)
		return sd_event_add_time(w->event, &w->debounce, CLOCK_MONOTONIC,
		                         now + GIT_WATCH_DEBOUNCE_USEC, 10000, on_debounce, w);
	(void)sd_event_source_set_time(w->debounce, now + GIT_WATCH_DEBOUNCE_USEC);
	return sd_event_source_set_enabled(w->debounce, SD_EVENT_ONESHOT);
}

static int on_inotify(sd_event_source *src, const struct inotify_event *ev, void *userdata)
{
	struct git_slot *s = userdata;

	/* The directory itself went away: wait for it again, and read what is left. */
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
		s->inotify = sd_event_source_disable_unref(s->inotify);
		(void)slot_arm(s);
		return changed(s->w);
	}
	if (ev->len > 0 && !streq(ev->name, s->name))
		return 0;
	return changed(s->w);
}

static int on_wait(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct git_slot *s = userdata;
	int r;

	r = path_wait_process(&s->wait);
	if (r <= 0)
		return 0; /* not there yet; a failed wait is retried at the next event */
	s->wait_io = sd_event_source_disable_unref(s->wait_io);
	path_wait_done(&s->wait);
	(void)slot_arm(s);
	/* The file may have come with its directory, before the watch. */
	return changed(s->w);
}

/* Watches the slot's directory, or waits for it when it does not exist. */
static int slot_arm(struct git_slot *s)
{
	const uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE |
	                      IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
	struct stat st;
	int r;

	if (stat(s->dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		r = sd_event_add_inotify(s->w->event, &s->inotify, s->dir, mask, on_inotify, s);
		if (r >= 0) {
			(void)sd_event_source_set_description(s->inotify, "git-config");
			return 0;
		}
		if (r != -ENOENT)
			return r;
	}
	/* Gone between stat() and the watch, or not there at all. */
	r = path_wait_arm(&s->wait, s->dir);
	if (r < 0)
		return r;
	if (!s->wait_io) {
		r = sd_event_add_io(s->w->event, &s->wait_io, path_wait_fd(&s->wait), EPOLLIN,
		                    on_wait, s);
		if (r < 0)
			return r;
		(void)sd_event_source_set_description(s->wait_io, "git-config-wait");
	}
	/* It may have come between stat() and the wait. */
	return stat(s->dir, &st) == 0 ? changed(s->w) : 0;
}

/* Watches path's directory for path's name. */
static void watch_path(struct git_watch *w, const char *path)
{
	struct git_slot *s = &w->slots[w->n];
	char dir[PATH_MAX], base[PATH_MAX];

	if (isempty(path) || path[0] != '/' || w->n >= GIT_WATCHES_MAX ||
	    strcpy_bounded(dir, sizeof(dir), path) < 0 ||
	    strcpy_bounded(base, sizeof(base), path) < 0 ||
	    strcpy_bounded(s->name, sizeof(s->name), basename(base)) < 0 ||
	    strcpy_bounded(s->dir, sizeof(s->dir), dirname(dir)) < 0)
		return;
	s->w = w;
	path_wait_init(&s->wait);
	w->n++;
	(void)slot_arm(s);
}

int git_watch_new(sd_event *e, git_watch_fn fn, void *userdata, struct git_watch **ret)
{
	_cleanup_(git_watch_freep) struct git_watch *w = calloc(1, sizeof(*w));
	char paths[GIT_CONFIG_PATHS_MAX][PATH_MAX];
	int n;

	if (!w)
		return -ENOMEM;
	w->event = sd_event_ref(e);
	w->fn = fn;
	w->userdata = userdata;
	n = git_config_paths(paths);
	for (int i = 0; i < n; i++) {
		_cleanup_(freep) char *real = realpath(paths[i], NULL);

		watch_path(w, paths[i]);
		if (real && !streq(real, paths[i]))
			watch_path(w, real);
	}
	*ret = TAKE_PTR(w);
	return 0;
}

struct git_watch *git_watch_free(struct git_watch *w)
{
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->n; i++) {
		sd_event_source_disable_unref(w->slots[i].inotify);
		sd_event_source_disable_unref(w->slots[i].wait_io);
		path_wait_done(&w->slots[i].wait);
	}
	sd_event_source_disable_unref(w->debounce);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}
