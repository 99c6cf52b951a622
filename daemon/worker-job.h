/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One blocking piece of work (a card read over PC/SC, an assuan session with scdaemon) on a
 * detached thread, waited for with a bound. The waiter may give up and leave the job to end on
 * its own; the waiter and the thread each hold a reference, and whoever lets go last frees it.
 *
 * Deadlines are CLOCK_MONOTONIC: a wall-clock step (NTP at boot, a resume, settimeofday) must
 * neither stretch nor cut a wait.
 *
 * Does not: cancel the thread (the calls it makes cannot be interrupted safely), or queue jobs.
 */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct worker_job {
	pthread_mutex_t lock; /* guards done, r and whatever the embedding job says it guards */
	pthread_cond_t cond;
	unsigned refs;
	bool done;
	int r; /* what run returned, once done */
	int (*run)(struct worker_job *j);
};

uint64_t worker_job_now_usec(void);

/*
 * Starts run(j) on a detached thread. j is the first member of a struct that was allocated
 * with malloc and zeroed; from here on it is freed by worker_job_unref(), never directly.
 * run is called without the lock; it returns 0 or a negative errno. Returns 0, or a negative
 * errno with j freed.
 */
int worker_job_start(struct worker_job *j, int (*run)(struct worker_job *j));

/* With j->lock held: waits until the job is done or CLOCK_MONOTONIC reaches deadline_usec,
 * whichever is first. Returns whether it is done. */
bool worker_job_wait_locked(struct worker_job *j, uint64_t deadline_usec);

bool worker_job_finished(struct worker_job *j);

void worker_job_unref(struct worker_job *j);
