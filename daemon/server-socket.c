/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's listening socket: one systemd passed (socket activation), or ours in
 * $XDG_RUNTIME_DIR/keyctl/ (a private directory we own, the socket created 0600 from the start),
 * replacing a stale socket file nobody answers on but never a live daemon's. A path longer than a
 * sockaddr_un takes, a missing XDG_RUNTIME_DIR and a live holder (its pid asked with SO_PEERCRED)
 * are refused by name, logged here where the path is known.
 *
 * Does not: accept or serve connections (server.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "server-internal.h"

int server_socket_take_passed(struct server *srv)
{
	int n = sd_listen_fds(1);

	if (n <= 0)
		return n;
	for (int fd = SD_LISTEN_FDS_START; fd < SD_LISTEN_FDS_START + n; fd++) {
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0) {
			log_warning("Passed fd %d is not a listening Unix stream socket, ignoring",
			            fd);
			continue;
		}
		if (srv->listen_fd >= 0) {
			log_warning("More than one socket passed, ignoring fd %d", fd);
			continue;
		}
		srv->listen_fd = fd;
	}
	if (srv->listen_fd < 0)
		return 0;
	if (fcntl(srv->listen_fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(srv->listen_fd, F_SETFL, fcntl(srv->listen_fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	return 1;
}

/* Who listens on path: 1 and its credentials (pid 0 when its backlog is full, so that no
 * connection was made to ask), 0 when nobody does (ECONNREFUSED: a stale socket file). */
static int socket_holder(const char *path, struct ucred *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_(closep) int fd = -1;
	socklen_t l = sizeof(*ret);

	*ret = (struct ucred){ .uid = (uid_t)-1 };
	if (strcpy_bounded(sa.sun_path, sizeof(sa.sun_path), path) < 0)
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return errno == EAGAIN || errno == EINPROGRESS ? 1 : 0;
	/* The listener's credentials, as they were at its listen() (unix(7)). */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ret, &l) < 0)
		*ret = (struct ucred){ .uid = (uid_t)-1 };
	return 1;
}

/* A socket file nobody answers on is stale and may go; one that answers is another daemon:
 * -EADDRINUSE when it is this user's (keyctld already running), -EBUSY when not. Logged here,
 * where the path and the holder are known. */
static int socket_unlink_stale(const char *path)
{
	struct ucred cred;
	struct stat st;
	int r;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		log_error("%s exists and is not a socket; remove it, or set [daemon] socket in "
		          "keyctl.conf to another path",
		          path);
		return -EEXIST;
	}
	r = socket_holder(path, &cred);
	if (r < 0)
		return r;
	if (r > 0 && (cred.uid == getuid() || cred.pid == 0)) {
		if (cred.pid > 0)
			log_error("keyctld is already running (pid %d) on %s", (int)cred.pid, path);
		else
			log_error("keyctld is already running on %s", path);
		return -EADDRINUSE;
	}
	if (r > 0) {
		log_error("%s is served by pid %d of uid %u, not by this user; set [daemon] socket "
		          "in keyctl.conf to another path",
		          path, (int)cred.pid, (unsigned)cred.uid);
		return -EBUSY;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* A sockaddr_un takes UNIX_SOCKET_PATH_MAX bytes and the NUL; a longer path is refused by its
 * name, here where the limit is known, never bound cut short (that would be another path). */
static int socket_path_check(const char *path, const char *from)
{
	size_t n = strlen(path);

	if (n <= UNIX_SOCKET_PATH_MAX)
		return 0;
	log_error("Socket path %s%s is %zu bytes, too long for a unix socket (at most %zu)%s", path,
	          from ? from : "", n, UNIX_SOCKET_PATH_MAX,
	          from ? "; set [daemon] socket in keyctl.conf to a shorter path" : "");
	return -ENAMETOOLONG;
}

int server_socket_listen_path(struct server *srv, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX }, tmp = { .sun_family = AF_UNIX };
	_cleanup_(closep) int fd = -1;
	mode_t old;
	int r;

	r = socket_path_check(path, NULL);
	if (r < 0)
		return r;
	if (strcpy_bounded(sa.sun_path, sizeof(sa.sun_path), path) < 0 ||
	    strcpy_bounded(srv->path, sizeof(srv->path), path) < 0)
		return -ENAMETOOLONG;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	r = socket_unlink_stale(path);
	if (r < 0)
		return r;
	/* Bound under a name of its own beside the path and renamed there once listening: a
	 * socket found bound but not yet listening refuses (ECONNREFUSED), which a client reads as
	 * "keyctld is not running" and a second keyctld as a stale file to replace. Where that
	 * name does not fit sun_path, bound in place. */
	if (snprintf(tmp.sun_path, sizeof(tmp.sun_path), "%s.%d", path, (int)getpid()) >=
	    (int)sizeof(tmp.sun_path))
		tmp = sa;
	if (!streq(tmp.sun_path, path))
		(void)unlink(tmp.sun_path); /* a leftover of a keyctld of this pid: ours now */
	/* Created 0600 from the start: no window in which another user could connect. */
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&tmp,
	         offsetof(struct sockaddr_un, sun_path) + strlen(tmp.sun_path) + 1) < 0
	            ? -errno
	            : 0;
	umask(old);
	if (r < 0)
		return r;
	if (listen(fd, SOMAXCONN) < 0 ||
	    (!streq(tmp.sun_path, path) && rename(tmp.sun_path, path) < 0)) {
		r = -errno;
		(void)unlink(tmp.sun_path);
		return r;
	}
	srv->own_socket = true;
	srv->listen_fd = TAKE_FD(fd);
	return 0;
}

int server_socket_default_path(char *buf, size_t size)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int n, r;

	if (isempty(rt) || rt[0] != '/') {
		log_error(
		        "XDG_RUNTIME_DIR is %s: keyctld cannot tell where to make its socket; set "
		        "it (a private directory of this user, such as /run/user/%u), or [daemon] "
		        "socket in keyctl.conf",
		        isempty(rt) ? "not set" : "not an absolute path", (unsigned)getuid());
		return -ENXIO;
	}
	/* Checked before the directory is made: nothing is left behind for a path refused. */
	n = snprintf(buf, size, "%s/keyctl/socket", rt);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	r = socket_path_check(buf, " (from $XDG_RUNTIME_DIR)");
	if (r < 0)
		return r;
	n = snprintf(buf, size, "%s/keyctl", rt);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* An existing directory must be ours and private: the socket's mode is not enough alone
	 * when someone else could swap the socket file under us. */
	if (lstat(buf, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return -EPERM;
	if ((st.st_mode & 0077) && chmod(buf, 0700) < 0)
		return -errno;
	n = snprintf(buf, size, "%s/keyctl/socket", rt);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}
