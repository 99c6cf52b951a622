/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiting for a path to appear, without polling: inotify on its directory, or on the nearest
 * existing directory above it while that does not exist yet (a first login, a runtime directory
 * created later). One fd, loop-agnostic: keyctl-notify waits for keyctld's socket with it under
 * GLib, keyctld for a missing GNUPGHOME and for pcscd's socket under sd-event.
 *
 * Does not: connect, or tell a live socket from a stale one (the caller looks and sees); watch
 * the path itself once it exists (a caller that wants its changes adds its own watch).
 */
#pragma once

#include <limits.h>

struct path_wait {
	int fd; /* inotify, one for the life of the wait; -1 when not armed */
	int wd; /* the one watch in it, -1 when none */
	char path[PATH_MAX]; /* what is waited for */
	char dir[PATH_MAX]; /* what is watched */
};

void path_wait_init(struct path_wait *w);

/* Watches for path (absolute) to appear; armed again, moves to the new path's nearest directory.
 * Returns 0, or -errno. */
int path_wait_arm(struct path_wait *w, const char *path);

/* The fd to poll for input while armed, else -1. */
int path_wait_fd(const struct path_wait *w);

/*
 * Reads the pending events. When one was on the way to the path (the path itself created or
 * moved in, a directory above it, the watched directory gone), moves the watch to the nearest
 * existing directory and returns 1 if the path exists now; returns 0 when there is nothing to do
 * yet, or -errno.
 */
int path_wait_process(struct path_wait *w);

void path_wait_done(struct path_wait *w);
