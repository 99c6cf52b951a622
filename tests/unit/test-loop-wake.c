/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The thread-to-loop handoff: a post from a thread runs the callback on the loop, posts close
 * together run it once, a post after the owner detached goes nowhere, and the last reference,
 * wherever it is dropped, frees the wake (ASan's leak check fails the test otherwise).
 */
#include <pthread.h>
#include <systemd/sd-event.h>

#include "loop-wake.h"
#include "test.h"

#define WAIT_USEC (10 * 1000000ULL)

struct counter {
	unsigned calls;
	struct loop_wake *detach_in_callback; /* the owner lets go from its own callback */
};

static int on_wake(void *userdata)
{
	struct counter *c = userdata;

	c->calls++;
	if (c->detach_in_callback)
		c->detach_in_callback = loop_wake_detach(c->detach_in_callback);
	return 0;
}

static void *post_thread(void *p)
{
	ASSERT_OK(loop_wake_post(p));
	return NULL;
}

static void *unref_thread(void *p)
{
	ASSERT_OK(loop_wake_post(p));
	loop_wake_unref(p);
	return NULL;
}

static struct loop_wake *wake_new(sd_event **ret_e, struct counter *c)
{
	struct loop_wake *w = NULL;

	ASSERT_OK(sd_event_new(ret_e));
	ASSERT_OK(loop_wake_new(*ret_e, "test-wake", on_wake, c, &w));
	return w;
}

/* Runs the loop until the callback ran once, or for WAIT_USEC. */
static void run_until_called(sd_event *e, struct counter *c)
{
	for (int i = 0; i < 100 && c->calls == 0; i++)
		ASSERT_TRUE(sd_event_run(e, WAIT_USEC / 100) >= 0);
}

TEST(post_from_a_thread_wakes_the_loop)
{
	struct counter c = { 0 };
	struct loop_wake *w = NULL;
	sd_event *e = NULL;
	pthread_t t;

	w = wake_new(&e, &c);
	ASSERT_EQ(pthread_create(&t, NULL, post_thread, w), 0);
	run_until_called(e, &c);
	ASSERT_EQ(c.calls, 1u);
	ASSERT_EQ(pthread_join(t, NULL), 0);

	/* Two posts before the loop looks: one call, then nothing left to do. */
	ASSERT_OK(loop_wake_post(w));
	ASSERT_OK(loop_wake_post(w));
	ASSERT_TRUE(sd_event_run(e, WAIT_USEC) > 0);
	ASSERT_EQ(c.calls, 2u);
	ASSERT_EQ(sd_event_run(e, 0), 0);
	ASSERT_EQ(c.calls, 2u);

	ASSERT_TRUE(loop_wake_detach(w) == NULL);
	sd_event_unref(e);
}

TEST(post_after_detach_is_harmless)
{
	struct counter c = { 0 };
	struct loop_wake *w = NULL, *held;
	sd_event *e = NULL;

	w = wake_new(&e, &c);
	held = loop_wake_ref(w);
	ASSERT_OK(loop_wake_post(held));
	/* The owner goes before the loop ran: its callback never runs, its post stays unread. */
	ASSERT_TRUE(loop_wake_detach(w) == NULL);
	ASSERT_OK(loop_wake_post(held));
	ASSERT_EQ(sd_event_run(e, 0), 0);
	ASSERT_EQ(c.calls, 0u);
	ASSERT_TRUE(loop_wake_unref(held) == NULL);
	sd_event_unref(e);
}

TEST(last_reference_on_another_thread)
{
	struct counter c = { 0 };
	struct loop_wake *w = NULL;
	sd_event *e = NULL;
	pthread_t t;

	/* An orphaned job: it holds a reference, the owner detaches, the job posts and lets go. */
	w = wake_new(&e, &c);
	loop_wake_ref(w);
	ASSERT_TRUE(loop_wake_detach(w) == NULL);
	ASSERT_EQ(pthread_create(&t, NULL, unref_thread, w), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	ASSERT_EQ(sd_event_run(e, 0), 0);
	ASSERT_EQ(c.calls, 0u);
	sd_event_unref(e);
}

TEST(detach_from_its_own_callback)
{
	struct counter c = { 0 };
	struct loop_wake *w = NULL;
	sd_event *e = NULL;

	w = wake_new(&e, &c);
	c.detach_in_callback = w;
	ASSERT_OK(loop_wake_post(w));
	ASSERT_TRUE(sd_event_run(e, WAIT_USEC) > 0);
	ASSERT_EQ(c.calls, 1u);
	ASSERT_TRUE(c.detach_in_callback == NULL);
	ASSERT_EQ(sd_event_run(e, 0), 0);
	sd_event_unref(e);
}

int main(void)
{
	RUN(post_from_a_thread_wakes_the_loop);
	RUN(post_after_detach_is_harmless);
	RUN(last_reference_on_another_thread);
	RUN(detach_from_its_own_callback);
	return 0;
}
