/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tests only, preloaded before libfaketime by test-faults.py's clock jump. libfaketime 0.9.10
 * turns every absolute timerfd deadline from fake into real time, on CLOCK_MONOTONIC timers too
 * (FAKETIME_DONT_FAKE_MONOTONIC notwithstanding): after a fake jump of days, sd-event's monotonic
 * timerfd gets a negative deadline, timerfd_settime fails with EINVAL and the loop ends. A
 * daemon arms such timers all the time (every connection's idle timer), so the jump test needs
 * them to reach the kernel untouched. Realtime timers still go through libfaketime.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov);

/* The timer's clock from /proc/self/fdinfo ("clockid: 1"); -1 when unknown. No malloc: this
 * runs inside the allocator's clock reads under ASan. */
static int fd_clock(int fd)
{
	char path[64], buf[512];
	const char *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -1;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "clockid:");
	return p ? atoi(p + strlen("clockid:")) : -1;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *nv, struct itimerspec *ov)
{
	static int (*next)(int, int, const struct itimerspec *, struct itimerspec *);
	int c = fd_clock(fd);

	if (c >= 0 && c != CLOCK_REALTIME && c != CLOCK_REALTIME_ALARM)
		return (int)syscall(SYS_timerfd_settime, fd, flags, nv, ov);
	if (!next)
		next = (int (*)(int, int, const struct itimerspec *, struct itimerspec *))dlsym(
		        RTLD_NEXT, "timerfd_settime");
	return next ? next(fd, flags, nv, ov)
	            : (int)syscall(SYS_timerfd_settime, fd, flags, nv, ov);
}
