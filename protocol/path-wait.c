/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See path-wait.h. One inotify fd with one watch at a time, on the nearest existing directory
 * above the path; an event counts only when it names the next step of the path, so files
 * created beside it (in $XDG_RUNTIME_DIR, which is busy) cost a read and nothing else.
 */
#include <errno.h>
#include <stdalign.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path-wait.h"
#include "fileio.h"
#include "util.h"

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define LOOKS_MAX 8

void path_wait_init(struct path_wait *w)
{
	w->fd = w->wd = -1;
	w->path[0] = w->dir[0] = 0;
}

void path_wait_done(struct path_wait *w)
{
	if (w->fd >= 0)
		close(w->fd);
	path_wait_init(w);
}

int path_wait_fd(const struct path_wait *w)
{
	return w->fd;
}

/* Watches dir, replacing an older watch. */
static int watch_dir(struct path_wait *w, const char *dir)
{
	int wd;

	wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
	if (wd < 0)
		return -errno;
	/* The old watch's late events (and its IN_IGNORED) only cause one more look. */
	if (w->wd >= 0 && w->wd != wd)
		(void)inotify_rm_watch(w->fd, w->wd);
	w->wd = wd;
	strcpy_trunc(w->dir, sizeof(w->dir), dir);
	return 0;
}

/*
 * Watches the nearest existing directory above the path. A directory on the way may be created
 * between looking and watching, and its creation would then go unseen: look again after each new
 * watch (a few times; an event on the newest watch covers what changes after that).
 */
static int watch_nearest(struct path_wait *w)
{
	char dir[PATH_MAX];
	int r;

	if (w->fd < 0) {
		w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (w->fd < 0)
			return -errno;
	}
	for (int i = 0; i < LOOKS_MAX; i++) {
		r = path_nearest_dir(w->path, dir, sizeof(dir));
		if (r < 0)
			return r;
		if (w->wd >= 0 && streq(dir, w->dir))
			return 0;
		r = watch_dir(w, dir);
		if (r < 0)
			return r;
	}
	return 0;
}

int path_wait_arm(struct path_wait *w, const char *path)
{
	if (path[0] != '/')
		return -EINVAL;
	if (strcpy_bounded(w->path, sizeof(w->path), path) < 0)
		return -ENAMETOOLONG;
	return watch_nearest(w);
}

int path_wait_process(struct path_wait *w)
{
	alignas(struct inotify_event) char buf[4096];
	bool moved = false, lost = false;
	struct stat st;
	ssize_t k;
	int r;

	if (w->fd < 0)
		return 0;
	for (;;) {
		k = read(w->fd, buf, sizeof(buf));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			break;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= k;) {
			const struct inotify_event *ev = (const struct inotify_event *)(buf + off);

			if (ev->wd == w->wd &&
			    (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)))
				lost = moved = true;
			else if (ev->mask & IN_Q_OVERFLOW)
				moved = true;
			else if (ev->len > 0 && path_is_next_step(w->path, w->dir, ev->name))
				moved = true;
			off += (ssize_t)(sizeof(struct inotify_event) + ev->len);
		}
	}
	if (!moved)
		return 0;
	/* Directories on the way may have been created (or the watched one removed): follow,
	 * then look, since the path may have come before the new watch. */
	if (lost) {
		/* Removed or renamed away: a directory of that name later is another one. */
		(void)inotify_rm_watch(w->fd, w->wd);
		w->wd = -1;
	}
	r = watch_nearest(w);
	if (r < 0)
		return r;
	return stat(w->path, &st) == 0 ? 1 : 0;
}
