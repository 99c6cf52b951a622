/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Waiting for the daemon's socket: through directories that do not exist yet, ignoring what
 * appears beside the path, and following a directory that is removed and made again.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "path-wait.h"
#include "test.h"
#include "util.h"

static char base[] = "/tmp/keyctl-path-wait-XXXXXX";

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 1000) == 1;
}

static void make_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_TRUE(fd >= 0);
	ASSERT_TRUE(strlen(path) < sizeof(sa.sun_path));
	strcpy(sa.sun_path, path);
	ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);
}

static void path_of(char *buf, size_t size, const char *rel)
{
	ASSERT_TRUE((size_t)snprintf(buf, size, "%s/%s", base, rel) < size);
}

TEST(through_missing_directories)
{
	struct path_wait w;
	char runtime[256], dir[256], sock[256], beside[256];

	path_of(runtime, sizeof(runtime), "runtime");
	path_of(dir, sizeof(dir), "runtime/keyctl");
	path_of(sock, sizeof(sock), "runtime/keyctl/socket");
	path_of(beside, sizeof(beside), "other");
	path_wait_init(&w);
	ASSERT_OK(path_wait_arm(&w, sock));
	ASSERT_STREQ(w.dir, base);

	/* Something beside the way: read, not news. */
	ASSERT_OK(mkdir(beside, 0700));
	ASSERT_TRUE(readable(path_wait_fd(&w)));
	ASSERT_EQ(path_wait_process(&w), 0);
	ASSERT_STREQ(w.dir, base);

	/* The runtime directory, then the daemon's: the watch moves down, no socket yet. */
	ASSERT_OK(mkdir(runtime, 0700));
	ASSERT_TRUE(readable(path_wait_fd(&w)));
	ASSERT_EQ(path_wait_process(&w), 0);
	ASSERT_STREQ(w.dir, runtime);
	ASSERT_OK(mkdir(dir, 0700));
	ASSERT_TRUE(readable(path_wait_fd(&w)));
	ASSERT_EQ(path_wait_process(&w), 0);
	ASSERT_STREQ(w.dir, dir);

	make_socket(sock);
	ASSERT_TRUE(readable(path_wait_fd(&w)));
	ASSERT_EQ(path_wait_process(&w), 1);

	/* Nothing pending: nothing to do. */
	ASSERT_EQ(path_wait_process(&w), 0);

	/* The daemon's directory goes and comes back: the new one is watched. */
	ASSERT_OK(unlink(sock));
	ASSERT_OK(rmdir(dir));
	ASSERT_TRUE(readable(path_wait_fd(&w)));
	ASSERT_EQ(path_wait_process(&w), 0);
	ASSERT_STREQ(w.dir, runtime);
	ASSERT_OK(mkdir(dir, 0700));
	make_socket(sock);
	ASSERT_TRUE(readable(path_wait_fd(&w)));
	/* Either at once (the socket came before the new watch) or at the next event. */
	if (path_wait_process(&w) == 0) {
		ASSERT_TRUE(readable(path_wait_fd(&w)));
		ASSERT_EQ(path_wait_process(&w), 1);
	}
	ASSERT_STREQ(w.dir, dir);
	path_wait_done(&w);
	ASSERT_EQ(path_wait_fd(&w), -1);

	unlink(sock);
	rmdir(dir);
	rmdir(runtime);
	rmdir(beside);
}

TEST(relative_path_refused)
{
	struct path_wait w;

	path_wait_init(&w);
	ASSERT_ERR(path_wait_arm(&w, "keyctl/socket"), EINVAL);
	path_wait_done(&w);
}

int main(void)
{
	ASSERT_TRUE(mkdtemp(base) != NULL);
	RUN(through_missing_directories);
	RUN(relative_path_refused);
	rmdir(base);
	return 0;
}
