/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Saving tokens.json must not stall the event loop: a slow disk (fsync is wrapped with
 * -Wl,--wrap to take 1.5 s) may delay the file, never the loop iteration that asked for it.
 * Also: the write happens on another thread, and state_free() still lands the last change.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "state.h"
#include "test.h"

#define SLOW_FSYNC_NSEC (1500ull * 1000 * 1000)

int __real_fsync(int fd);
int __wrap_fsync(int fd);

static pthread_t main_thread;
static atomic_uint n_fsync, n_fsync_on_main;

int __wrap_fsync(int fd)
{
	struct timespec ts = { .tv_sec = SLOW_FSYNC_NSEC / 1000000000ull,
		               .tv_nsec = SLOW_FSYNC_NSEC % 1000000000ull };

	atomic_fetch_add(&n_fsync, 1);
	if (pthread_equal(pthread_self(), main_thread))
		atomic_fetch_add(&n_fsync_on_main, 1);
	nanosleep(&ts, NULL);
	return __real_fsync(fd);
}

static uint64_t now_msec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static struct token remembered(void)
{
	struct token t;

	memset(&t, 0, sizeof(t));
	strcpy_trunc(t.id, sizeof(t.id), "yubikey-12345678");
	t.kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(t.model, sizeof(t.model), "YubiKey 5 NFC");
	strcpy_trunc(t.serial, sizeof(t.serial), "12345678"); /* a serial: it is remembered */
	t.first_seen = 1700000000;
	t.last_seen = 1790000000;
	return t;
}

TEST(save_off_the_loop_thread)
{
	char dir[] = "/tmp/test-state-writer-XXXXXX", path[256], err[512];
	_cleanup_(model_freep) struct model *m = NULL;
	_cleanup_(freep) uint8_t *buf = NULL;
	struct token t = remembered(), out[2];
	sd_event *e = NULL;
	struct state *s = NULL;
	bool saved = false;
	size_t n = 0;

	main_thread = pthread_self();
	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tokens.json", dir);
	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(model_new(&m));
	ASSERT_OK(state_new(e, m, dir, err, sizeof(err), &s));
	ASSERT_STREQ(err, "");

	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &t, 1790000000));
	/* The save is a defer source: it runs in one of the next iterations, each of which must
	 * come back at once although the disk takes seconds. */
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = now_msec(), took;
		int r = sd_event_run(e, 0);

		took = now_msec() - t0;
		ASSERT_OK(r);
		saved = saved || r > 0;
		if (took >= 300)
			TEST_FAIL("loop iteration %d took %ju ms (a save on the loop thread?)", i,
			          (uintmax_t)took);
	}
	ASSERT_TRUE(saved);

	/* Shutdown waits for the writer, so the change is on disk afterwards. */
	s = state_free(s);
	ASSERT_TRUE(atomic_load(&n_fsync) > 0);
	ASSERT_EQ(atomic_load(&n_fsync_on_main), 0);
	ASSERT_OK(file_read_bounded(path, STATE_FILE_MAX, &buf, &n));
	ASSERT_EQ(state_parse(buf, n, out, ELEMENTSOF(out)), 1);
	ASSERT_STREQ(out[0].id, "yubikey-12345678");
	ASSERT_STREQ(out[0].serial, "12345678");
	ASSERT_EQ(out[0].last_seen, 1790000000);

	unlink(path);
	rmdir(dir);
	sd_event_unref(e);
}

/* A change made just before shutdown, with no loop iteration left to run its save: state_free()
 * hands it to the writer and waits. */
TEST(last_change_written_at_shutdown)
{
	char dir[] = "/tmp/test-state-writer-XXXXXX", path[256], err[512];
	_cleanup_(model_freep) struct model *m = NULL;
	_cleanup_(freep) uint8_t *buf = NULL;
	struct token t = remembered(), out[2];
	sd_event *e = NULL;
	struct state *s = NULL;
	size_t n = 0;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tokens.json", dir);
	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(model_new(&m));
	ASSERT_OK(state_new(e, m, dir, err, sizeof(err), &s));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &t, 1790000000));
	s = state_free(s);
	ASSERT_OK(file_read_bounded(path, STATE_FILE_MAX, &buf, &n));
	ASSERT_EQ(state_parse(buf, n, out, ELEMENTSOF(out)), 1);
	ASSERT_STREQ(out[0].id, "yubikey-12345678");

	unlink(path);
	rmdir(dir);
	sd_event_unref(e);
}

int main(void)
{
	RUN(save_off_the_loop_thread);
	RUN(last_change_written_at_shutdown);
	return 0;
}
