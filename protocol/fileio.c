/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded reads and atomic writes of small files. Does not: lock (each file has one writer, the
 * process that owns it) or write through anything found at the temp file's name.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "fileio.h"
#include "util.h"

int file_read_bounded(const char *path, size_t max, uint8_t **ret, size_t *ret_n)
{
	/* O_NONBLOCK: opening a FIFO would otherwise wait for a writer, for ever. It changes
	 * nothing for the regular files we go on to read. */
	_cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	_cleanup_(freep) uint8_t *buf = NULL;
	struct stat st;
	size_t n = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	/* No judgement by st_size: sysfs reports a bound, not a length, and a file may grow
	 * after fstat(). Reading one byte more than allowed tells. */
	buf = malloc(max + 2);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + n, max + 1 - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > max)
			return -EFBIG;
	}
	buf[n] = 0;
	*ret = TAKE_PTR(buf);
	*ret_n = n;
	return 0;
}

int path_nearest_dir(const char *path, char *dir, size_t size)
{
	struct stat st;

	if (path[0] != '/')
		return -EINVAL;
	if (strcpy_bounded(dir, size, path) < 0)
		return -ENAMETOOLONG;
	for (;;) {
		char *slash = strrchr(dir, '/');

		if (slash == dir) {
			dir[1] = 0;
			return 0;
		}
		*slash = 0;
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
	}
}

bool path_is_next_step(const char *path, const char *dir, const char *name)
{
	const char *step = path + (streq(dir, "/") ? 1 : strlen(dir) + 1);
	size_t n = strcspn(step, "/");

	return strlen(name) == n && strncmp(name, step, n) == 0;
}

int mkdir_parents(const char *dir, mode_t mode)
{
	char buf[PATH_MAX];

	if (strcpy_bounded(buf, sizeof(buf), dir) < 0)
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(fd, p, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The temp file, made new (O_EXCL): nothing found at its name is written through, be it a hard
 * link to another file, a symlink or a FIFO that would block the open. The name holds the
 * writing thread's id, which no live thread shares; a file found there is the leftover of a
 * thread that had the id before and died between open and rename, and its name goes, once
 * (unlink removes a name only: a link's other name and a symlink's target stay as they were). */
static int temp_open(const char *tmp)
{
	for (int i = 0;; i++) {
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd >= 0)
			return fd;
		if (errno != EEXIST || i > 0)
			return -errno;
		if (unlink(tmp) < 0 && errno != ENOENT)
			return -errno;
	}
}

int file_write_atomic(const char *path, const void *p, size_t n)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	_cleanup_(closep) int dfd = -1;
	int fd, r;

	if (strcpy_bounded(dir, sizeof(dir), path) < 0)
		return -ENAMETOOLONG;
	dirname(dir);
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)gettid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	r = mkdir_parents(dir, 0700);
	if (r < 0)
		return r;

	fd = temp_open(tmp);
	if (fd < 0)
		return fd;
	r = write_all(fd, p, n);
	if (r >= 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r >= 0)
		r = -errno;
	if (r >= 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0) {
		unlink(tmp);
		return r;
	}
	/* The rename is durable only once the directory is. */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fsync(dfd) < 0)
		return -errno;
	return 0;
}

bool unix_socket_answers(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_(closep) int fd = -1;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return true;
	/* A listener whose backlog is full is there all the same. */
	return errno == EAGAIN || errno == EINPROGRESS;
}
