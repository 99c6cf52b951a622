/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the log lines say on stderr: %m is the error the caller passed, never errno and never
 * "Success" when there is no error code (log_debug() and friends pass none), and %% stays a
 * percent sign around an expanded %m.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "test.h"

/* Runs the logging in fn with stderr sent to a temporary file; returns what it printed. */
static void capture(void (*fn)(void), char *out, size_t size)
{
	char path[] = "/tmp/test-log-XXXXXX";
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	ssize_t k;

	ASSERT_TRUE(fd >= 0 && saved >= 0);
	ASSERT_OK(unlink(path));
	fflush(stderr);
	ASSERT_TRUE(dup2(fd, STDERR_FILENO) >= 0);
	fn();
	fflush(stderr);
	ASSERT_TRUE(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	k = pread(fd, out, size - 1, 0);
	close(fd);
	ASSERT_TRUE(k >= 0);
	out[k] = 0;
}

static void log_without_error(void)
{
	errno = EACCES; /* must not leak into the line either */
	log_debug("x: %m");
}

static void log_with_error(void)
{
	(void)log_debug_errno(-ENOENT, "y: %m (100%%)");
}

TEST(percent_m_without_error_code)
{
	char out[512];

	capture(log_without_error, out, sizeof(out));
	fprintf(stderr, "    got: %s", out);
	ASSERT_TRUE(strstr(out, "x: "));
	ASSERT_FALSE(strstr(out, "Success"));
	ASSERT_FALSE(strstr(out, strerror(EACCES)));
	ASSERT_TRUE(strstr(out, "no error code"));
}

TEST(percent_m_with_error_code)
{
	char out[512];

	capture(log_with_error, out, sizeof(out));
	ASSERT_TRUE(strstr(out, "y: No such file or directory (100%)\n"));
}

int main(void)
{
	log_setup(LOG_TARGET_STDERR);
	log_set_max_level(LOG_DEBUG);
	RUN(percent_m_without_error_code);
	RUN(percent_m_with_error_code);
	return 0;
}
