/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpgme's initialisation (gpgme_check_version) must run once in the process before threads make
 * contexts (gpgme manual, 2.8 Multi-Threading), whichever of its two users comes first: the
 * keyring listing and the scdaemon session run on different threads and may start together.
 * gpgme.h makes gpgme_check_version() a macro around gpgme_check_version_internal(), which is
 * wrapped here (-Wl,--wrap) to count the calls; it sleeps inside to hold a racing second caller
 * in the window where it would also get in.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "watch-keyring.h"
#include "card-scd.h"
#include "test.h"

const char *__real_gpgme_check_version_internal(const char *req_version, size_t offset);
const char *__wrap_gpgme_check_version_internal(const char *req_version, size_t offset);

static atomic_uint n_init;

const char *__wrap_gpgme_check_version_internal(const char *req_version, size_t offset)
{
	struct timespec ts = { .tv_nsec = 50 * 1000 * 1000 };

	atomic_fetch_add(&n_init, 1);
	nanosleep(&ts, NULL);
	return __real_gpgme_check_version_internal(req_version, offset);
}

static pthread_barrier_t start;

static void *run_scd(void *arg)
{
	pthread_barrier_wait(&start);
	(void)scd_agent_running("/nonexistent-home");
	return NULL;
}

static void *run_keyring(void *arg)
{
	struct key *keys = NULL;
	size_t n = 0;
	char err[256];

	pthread_barrier_wait(&start);
	/* A missing home fails fast; what counts is that gpgme was set up first. */
	if (keyring_list_with("/nonexistent-home", NULL, NULL, 0, &keys, &n, err, sizeof(err)) >= 0)
		keyring_keys_free(keys, n);
	return NULL;
}

TEST(one_initialisation_for_both_users)
{
	pthread_t a, b;

	ASSERT_EQ(pthread_barrier_init(&start, NULL, 2), 0);
	ASSERT_EQ(pthread_create(&a, NULL, run_scd, NULL), 0);
	ASSERT_EQ(pthread_create(&b, NULL, run_keyring, NULL), 0);
	ASSERT_EQ(pthread_join(a, NULL), 0);
	ASSERT_EQ(pthread_join(b, NULL), 0);
	pthread_barrier_destroy(&start);
	ASSERT_EQ(atomic_load(&n_init), 1);
}

int main(void)
{
	RUN(one_initialisation_for_both_users);
	return 0;
}
