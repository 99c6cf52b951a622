/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded waits on detached worker threads (see worker-job.h). watch-pcsc.c reads cards and
 * card-scd.c talks to scdaemon this way; both must be able to walk away from a card or an
 * agent that stopped answering without leaking the job or freeing it under the thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "worker-job.h"

uint64_t worker_job_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static void job_destroy(struct worker_job *j)
{
	pthread_cond_destroy(&j->cond);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

void worker_job_unref(struct worker_job *j)
{
	unsigned left;

	pthread_mutex_lock(&j->lock);
	left = --j->refs;
	pthread_mutex_unlock(&j->lock);
	if (left == 0)
		job_destroy(j);
}

static void *job_thread(void *p)
{
	struct worker_job *j = p;
	int r = j->run(j);

	pthread_mutex_lock(&j->lock);
	j->r = r;
	j->done = true;
	pthread_cond_broadcast(&j->cond);
	pthread_mutex_unlock(&j->lock);
	worker_job_unref(j);
	return NULL;
}

int worker_job_start(struct worker_job *j, int (*run)(struct worker_job *j))
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t tid;
	int r;

	r = pthread_mutex_init(&j->lock, NULL);
	if (r != 0) {
		free(j);
		return -r;
	}
	r = pthread_condattr_init(&ca);
	if (r == 0) {
		r = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		if (r == 0)
			r = pthread_cond_init(&j->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (r != 0) {
		pthread_mutex_destroy(&j->lock);
		free(j);
		return -r;
	}
	j->refs = 2;
	j->done = false;
	j->run = run;

	r = pthread_attr_init(&attr);
	if (r == 0) {
		(void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		r = pthread_create(&tid, &attr, job_thread, j);
		pthread_attr_destroy(&attr);
	}
	if (r != 0) {
		job_destroy(j);
		return -r;
	}
	return 0;
}

bool worker_job_wait_locked(struct worker_job *j, uint64_t deadline_usec)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_usec / 1000000ULL),
		.tv_nsec = (long)(deadline_usec % 1000000ULL) * 1000L,
	};

	while (!j->done)
		if (pthread_cond_timedwait(&j->cond, &j->lock, &ts) == ETIMEDOUT)
			break;
	return j->done;
}

bool worker_job_finished(struct worker_job *j)
{
	bool done;

	pthread_mutex_lock(&j->lock);
	done = j->done;
	pthread_mutex_unlock(&j->lock);
	return done;
}
