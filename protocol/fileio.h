/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small files of our own that live in the user's home (configuration, remembered tokens, the
 * notifier's records): read whole with a hard size limit, and written atomically so that a crash
 * or a full disk leaves the old file, never half a new one.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

/* The longest path a sockaddr_un takes: 107 bytes on Linux, 108 with the NUL. Longer ones are
 * refused by name, never cut (a cut path is another socket). */
#define UNIX_SOCKET_PATH_MAX (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* Reads a regular file (sysfs attributes included) of at most max bytes into a malloc'd buffer
 * (one spare byte, NUL).
 * Returns 0, -errno from open/read, -EINVAL when not a regular file, -EFBIG over max (also when
 * it grows past max while being read). */
int file_read_bounded(const char *path, size_t max, uint8_t **ret, size_t *ret_n);

/* The nearest existing directory above path: its parent, or the parent's parent, up to "/".
 * What to watch with inotify for path to appear. Returns 0, -EINVAL for a relative path,
 * -ENAMETOOLONG when path does not fit in size. */
int path_nearest_dir(const char *path, char *dir, size_t size);
/* Whether name (an inotify event's) is the step of path just below dir, an ancestor of path
 * as path_nearest_dir() gave it: the one creation on the way to path. */
bool path_is_next_step(const char *path, const char *dir, const char *name);

/* mkdir -p with mode for every directory it creates. */
int mkdir_parents(const char *dir, mode_t mode);

/* Writes n bytes to path through a temp file in the same directory (created with its parents,
 * 0700), fsync, rename, then fsync of the directory. The file is 0600. The temp file is
 * path.tmp.<thread id>, created with O_EXCL: a leftover there is removed, never written through. */
int file_write_atomic(const char *path, const void *p, size_t n);

/* Whether a Unix stream socket at path has a listener (connect succeeds, or its backlog is
 * full). Never blocks: for the waits on pcscd's and gpg-agent's sockets and the stale-socket
 * check of our own. */
bool unix_socket_answers(const char *path);
