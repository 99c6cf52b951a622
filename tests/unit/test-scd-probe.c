/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scd_agent_running(), which the PC/SC thread asks on every state change of a card in shared
 * use: it finds the agent's socket through gpgconf, and a gpgconf that never comes back must not
 * keep that thread. gpgconf_run() is wrapped (-Wl,--wrap) to name a socket, or to hang until
 * the test lets it go.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "card-scd.h"
#include "gpgconf-run.h"
#include "test.h"
#include "util.h"

int __real_gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size);
int __wrap_gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool hang, released;
static atomic_uint returned;
static char sock_path[108];

int __wrap_gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size)
{
	bool hung;

	pthread_mutex_lock(&lock);
	hung = hang;
	while (hang && !released)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	atomic_fetch_add(&returned, 1);
	if (strcmp(a1, "--list-dirs") != 0 || strcmp(a2, "agent-socket") != 0 || hung)
		return -EIO;
	return strcpy_bounded(out, size, sock_path) < 0 ? -ENAMETOOLONG : 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

TEST(socket_named_and_listening)
{
	char dir[] = "/tmp/test-scd-probe-XXXXXX";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/S.gpg-agent", dir);
	ASSERT_FALSE(scd_agent_running(dir)); /* nothing there yet */

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_TRUE(fd >= 0);
	strcpy(sa.sun_path, sock_path);
	ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ASSERT_EQ(listen(fd, 4), 0);
	ASSERT_TRUE(scd_agent_running(dir));

	close(fd);
	unlink(sock_path);
	ASSERT_FALSE(scd_agent_running(dir)); /* the agent went away */
	rmdir(dir);
}

TEST(gpgconf_that_hangs_costs_the_bound)
{
	unsigned before = atomic_load(&returned);
	double t0, took;

	pthread_mutex_lock(&lock);
	hang = true;
	pthread_mutex_unlock(&lock);
	t0 = now_s();
	ASSERT_FALSE(scd_agent_running("/nonexistent-home"));
	took = now_s() - t0;
	if (took < SCD_PROBE_TIMEOUT_MS / 1000.0 - 0.2 || took > SCD_PROBE_TIMEOUT_MS / 1000.0 + 5)
		TEST_FAIL("a hung gpgconf cost %.1f s, the bound is %d ms", took,
		          SCD_PROBE_TIMEOUT_MS);
	ASSERT_EQ(atomic_load(&returned), before); /* it was still hanging when we went on */

	/* Let it go; the job ends and frees itself (LeakSanitizer checks at exit). */
	pthread_mutex_lock(&lock);
	released = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < 500 && atomic_load(&returned) == before; i++)
		usleep(10 * 1000);
	ASSERT_EQ(atomic_load(&returned), before + 1);
	usleep(100 * 1000); /* the job thread's last unref, after the call returned */
	pthread_mutex_lock(&lock);
	hang = false;
	pthread_mutex_unlock(&lock);
}

int main(void)
{
	RUN(socket_named_and_listening);
	RUN(gpgconf_that_hangs_costs_the_bound);
	return 0;
}
