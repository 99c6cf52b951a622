/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiting for keyctld's socket to appear, without polling: inotify on the socket's directory,
 * or on the nearest existing directory above it while that does not exist yet (a first login,
 * a runtime directory created later). keyctl-notify waits this way while the daemon is away.
 *
 * Does not: connect, or tell a live socket from a stale one (the caller connects and sees).
 */
#pragma once

#include <limits.h>

struct daemon_wait {
	int fd; /* inotify, one for the life of the wait; -1 when not armed */
	int wd; /* the one watch in it, -1 when none */
	char path[PATH_MAX]; /* the socket */
	char dir[PATH_MAX]; /* what is watched */
};

void daemon_wait_init(struct daemon_wait *w);

/* Watches for path (absolute) to appear. Returns 0, or -errno. */
int daemon_wait_arm(struct daemon_wait *w, const char *path);

/* The fd to poll for input while armed, else -1. */
int daemon_wait_fd(const struct daemon_wait *w);

/*
 * Reads the pending events. When one was on the way to the socket, moves the watch down to
 * the nearest existing directory and returns 1 if the socket exists now; returns 0 when there
 * is nothing to do yet, or -errno.
 */
int daemon_wait_process(struct daemon_wait *w);

void daemon_wait_done(struct daemon_wait *w);
