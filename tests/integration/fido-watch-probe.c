/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs watch_fido on an sd-event loop and prints one line per change on stdout:
 * "pending <usb_syspath> <serial|-> <since_realtime_usec>" and "done <usb_syspath> <serial|->
 * <since_realtime_usec>", after "ready" once the start-up enumeration is done. On SIGUSR1 it prints
 * "iterations N": how many times the loop woke (each sd_event_run() that dispatched something),
 * the SIGUSR1 itself included, so that a test can tell an idle watcher from one that ticks.
 * For test-fido-watch.py, which drives umockdev hidraw nodes around it. Exits on SIGTERM or
 * SIGINT, or when stdin closes (so it never outlives its driver).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "log.h"
#include "watch-fido.h"

static unsigned long long iterations;

static void on_change(const char *usb_syspath, const char *serial, bool pending,
                      uint64_t since_realtime_usec, void *userdata)
{
	printf("%s %s %s %llu\n", pending ? "pending" : "done", usb_syspath, *serial ? serial : "-",
	       (unsigned long long)since_realtime_usec);
	fflush(stdout);
}

static int on_usr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	printf("iterations %llu\n", iterations);
	fflush(stdout);
	return 0;
}

static int on_stdin(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	char buf[64];

	if (read(fd, buf, sizeof(buf)) <= 0)
		return sd_event_exit(sd_event_source_get_event(s), 0);
	return 0;
}

int main(void)
{
	_cleanup_(watch_fido_freep) struct watch_fido *w = NULL;
	sd_event *e = NULL;
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	log_set_max_level(LOG_DEBUG); /* stderr, shown when the test fails */

	r = sd_event_new(&e);
	if (r < 0 || sd_event_add_signal(e, NULL, SIGTERM, NULL, NULL) < 0 ||
	    sd_event_add_signal(e, NULL, SIGINT, NULL, NULL) < 0 ||
	    sd_event_add_signal(e, NULL, SIGUSR1, on_usr1, NULL) < 0 ||
	    sd_event_add_io(e, NULL, STDIN_FILENO, EPOLLIN, on_stdin, NULL) < 0) {
		fprintf(stderr, "probe: setup failed\n");
		return 1;
	}
	r = watch_fido_new(e, on_change, NULL, &w);
	if (r < 0) {
		fprintf(stderr, "probe: watch_fido_new: %s\n", strerror(-r));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	/* sd_event_loop(), counted: one iteration per wake-up that dispatched a source. */
	while (sd_event_get_state(e) != SD_EVENT_FINISHED) {
		r = sd_event_run(e, UINT64_MAX);
		if (r < 0)
			break;
		if (r > 0)
			iterations++;
	}
	w = watch_fido_free(w);
	sd_event_unref(e);
	return r < 0 ? 1 : 0;
}
