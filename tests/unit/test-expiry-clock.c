/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The expiry timer's clock-change timerfd (TFD_TIMER_CANCEL_ON_SET) must be armed for a moment
 * that never comes. Armed at INT32_MAX seconds it is in the past from January 2038: the timerfd
 * expires at once and the loop spins. timerfd_settime() is wrapped (-Wl,--wrap) to see the
 * value expiry.c passes; the call still reaches the kernel, so the test also sees that the
 * armed fd does not become readable.
 */
#include <poll.h>
#include <stdint.h>
#include <sys/timerfd.h>
#include <time.h>

#include "expiry.h"
#include "test.h"

int __real_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                           struct itimerspec *old_value);
int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                           struct itimerspec *old_value);

static unsigned n_cancel_on_set;
static int armed_fd = -1;
static time_t armed_sec;

int __wrap_timerfd_settime(int fd, int flags, const struct itimerspec *new_value,
                           struct itimerspec *old_value)
{
	if (flags & TFD_TIMER_CANCEL_ON_SET) {
		n_cancel_on_set++;
		armed_fd = fd;
		armed_sec = new_value->it_value.tv_sec;
	}
	return __real_timerfd_settime(fd, flags, new_value, old_value);
}

static int fired;

static int on_wake(struct expiry_timer *t, int64_t now, void *userdata)
{
	fired++;
	return 0;
}

TEST(clock_change_timer_never_expires)
{
	_cleanup_(expiry_timer_freep) struct expiry_timer *t = NULL;
	sd_event *e = NULL;
	struct pollfd p;

	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(expiry_timer_new(e, on_wake, NULL, &t));
	ASSERT_EQ(n_cancel_on_set, 1);
	ASSERT_TRUE(armed_sec > (time_t)INT32_MAX);
	ASSERT_EQ(armed_sec, TIME_T_MAX);

	/* The kernel took it and the timer is not due: nothing to read, nothing to dispatch. */
	p = (struct pollfd){ .fd = armed_fd, .events = POLLIN };
	ASSERT_EQ(poll(&p, 1, 0), 0);
	ASSERT_OK(sd_event_run(e, 0));
	ASSERT_OK(sd_event_run(e, 0));
	ASSERT_EQ(fired, 0);

	t = expiry_timer_free(t);
	sd_event_unref(e);
}

int main(void)
{
	RUN(clock_change_timer_never_expires);
	return 0;
}
