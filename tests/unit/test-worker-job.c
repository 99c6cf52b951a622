/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded waits on worker threads: a finished job hands over its result, a waiter that gives
 * up returns at its deadline (not before, not long after), and an abandoned job is freed by its
 * thread when it ends (ASan's leak check fails the test otherwise).
 */
#include <errno.h>
#include <unistd.h>

#include "test.h"
#include "worker-job.h"

struct gate_job {
	struct worker_job base;
	int *gate; /* the job ends when *gate becomes nonzero; owned by the test */
	pthread_mutex_t *gate_lock;
	int result;
};

static int gate_run(struct worker_job *base)
{
	struct gate_job *j = (struct gate_job *)base;

	for (;;) {
		int open;

		pthread_mutex_lock(j->gate_lock);
		open = *j->gate;
		pthread_mutex_unlock(j->gate_lock);
		if (open)
			return j->result;
		usleep(1000);
	}
}

static struct gate_job *gate_job_new(int *gate, pthread_mutex_t *lock, int result)
{
	struct gate_job *j = calloc(1, sizeof(*j));

	ASSERT_TRUE(j);
	j->gate = gate;
	j->gate_lock = lock;
	j->result = result;
	return j;
}

TEST(finished_job_hands_over_its_result)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int gate = 1;
	struct gate_job *j = gate_job_new(&gate, &lock, -EBADMSG);

	ASSERT_OK(worker_job_start(&j->base, gate_run));
	pthread_mutex_lock(&j->base.lock);
	ASSERT_TRUE(worker_job_wait_locked(&j->base, worker_job_now_usec() + 10 * 1000000ULL));
	ASSERT_ERR(j->base.r, EBADMSG);
	pthread_mutex_unlock(&j->base.lock);
	ASSERT_TRUE(worker_job_finished(&j->base));
	worker_job_unref(&j->base);
}

TEST(waiter_gives_up_at_its_deadline_and_the_job_frees_itself)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static int gate = 0;
	struct gate_job *j = gate_job_new(&gate, &lock, 0);
	uint64_t start, waited;

	ASSERT_OK(worker_job_start(&j->base, gate_run));
	start = worker_job_now_usec();
	pthread_mutex_lock(&j->base.lock);
	ASSERT_FALSE(worker_job_wait_locked(&j->base, start + 50000));
	pthread_mutex_unlock(&j->base.lock);
	waited = worker_job_now_usec() - start;
	ASSERT_TRUE(waited >= 50000);
	ASSERT_TRUE(waited < 5 * 1000000ULL);
	ASSERT_FALSE(worker_job_finished(&j->base));
	/* The waiter lets go first; the thread ends later and frees the job. */
	worker_job_unref(&j->base);
	pthread_mutex_lock(&lock);
	gate = 1;
	pthread_mutex_unlock(&lock);
}

TEST(a_deadline_in_the_past_does_not_wait)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	int gate = 0;
	struct gate_job *j = gate_job_new(&gate, &lock, 0);

	ASSERT_OK(worker_job_start(&j->base, gate_run));
	pthread_mutex_lock(&j->base.lock);
	ASSERT_FALSE(worker_job_wait_locked(&j->base, 0));
	pthread_mutex_unlock(&j->base.lock);
	pthread_mutex_lock(&lock);
	gate = 1;
	pthread_mutex_unlock(&lock);
	/* Gate and lock live on this stack: wait for the end before leaving. */
	pthread_mutex_lock(&j->base.lock);
	ASSERT_TRUE(worker_job_wait_locked(&j->base, worker_job_now_usec() + 10 * 1000000ULL));
	pthread_mutex_unlock(&j->base.lock);
	worker_job_unref(&j->base);
}

int main(void)
{
	RUN(finished_job_hands_over_its_result);
	RUN(waiter_gives_up_at_its_deadline_and_the_job_frees_itself);
	RUN(a_deadline_in_the_past_does_not_wait);
	/* The abandoned job's thread must end (and free) before exit for the leak check. */
	usleep(200 * 1000);
	return 0;
}
