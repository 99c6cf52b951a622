/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inotify on the directories of git's global config files, filtered by file name and debounced
 * (an editor's save is several events). See watch-git.h.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "git-config.h"
#include "util.h"
#include "watch-git.h"

#define GIT_WATCH_DEBOUNCE_USEC (200u * 1000u)
/* Each config path, and the target of each that is a symlink. */
#define GIT_WATCHES_MAX (2 * GIT_CONFIG_PATHS_MAX)

struct git_watch {
	sd_event *event;
	git_watch_fn fn;
	void *userdata;
	sd_event_source *inotify[GIT_WATCHES_MAX];
	char name[GIT_WATCHES_MAX][NAME_MAX + 1];
	size_t n;
	sd_event_source *debounce;
};

static int on_debounce(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct git_watch *w = userdata;

	w->fn(w, w->userdata);
	return 0;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	struct git_watch *w = userdata;
	uint64_t now;
	size_t i;

	for (i = 0; i < w->n && w->inotify[i] != s; i++)
		;
	if (i == w->n || (ev->len > 0 && !streq(ev->name, w->name[i])))
		return 0;
	if (sd_event_now(w->event, CLOCK_MONOTONIC, &now) < 0)
		return 0;
	if (!w->debounce)
		return sd_event_add_time(w->event, &w->debounce, CLOCK_MONOTONIC,
		                         now + GIT_WATCH_DEBOUNCE_USEC, 10000, on_debounce, w);
	(void)sd_event_source_set_time(w->debounce, now + GIT_WATCH_DEBOUNCE_USEC);
	return sd_event_source_set_enabled(w->debounce, SD_EVENT_ONESHOT);
}

/* Watches path's directory for path's name; a missing directory is skipped. */
static void watch_path(struct git_watch *w, const char *path)
{
	const uint32_t mask =
	        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CREATE | IN_ONLYDIR;
	char dir[PATH_MAX], base[PATH_MAX];

	if (isempty(path) || w->n >= GIT_WATCHES_MAX ||
	    strcpy_bounded(dir, sizeof(dir), path) < 0 ||
	    strcpy_bounded(base, sizeof(base), path) < 0 ||
	    strcpy_bounded(w->name[w->n], sizeof(w->name[w->n]), basename(base)) < 0)
		return;
	if (sd_event_add_inotify(w->event, &w->inotify[w->n], dirname(dir), mask, on_inotify, w) <
	    0)
		return;
	(void)sd_event_source_set_description(w->inotify[w->n], "git-config");
	w->n++;
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
	for (size_t i = 0; i < w->n; i++)
		sd_event_source_disable_unref(w->inotify[i]);
	sd_event_source_disable_unref(w->debounce);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}
