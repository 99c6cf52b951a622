/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Follows suspend and resume: logind's PrepareForSleep signal on the system bus (sd-bus, on the
 * daemon's sd-event loop), true just before the system sleeps, false once it has resumed. Whoever
 * created the watch is told each change, and pauses and resumes the card reads (main.c wires it
 * to the PC/SC watcher).
 *
 * Without a system bus (a container, an ssh login, no D-Bus installed) sleep_watch_new() fails
 * and the daemon runs as it would without it. A bus that goes away later (D-Bus restarted) counts
 * as a resume, so that reads never stay paused; it is not connected again.
 *
 * Does not: take an inhibitor lock (a read cut by sleep is dropped and read again on resume, so
 * there is nothing to finish before the system sleeps), read tokens, or wake when idle: it waits
 * on the bus's socket only.
 */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

struct sleep_watch;

/* On the loop thread: true when the system is about to sleep, false once it has resumed (or the
 * bus went away while it slept). Called on changes only. */
typedef void (*sleep_watch_fn)(bool asleep, void *userdata);

/* Connects to the system bus ($DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket) and
 * asks for PrepareForSleep without waiting for the answer. Returns 0, or -errno: no system bus
 * (-ENOENT, -ECONNREFUSED, -EACCES, ...) or no memory. */
int sleep_watch_new(sd_event *e, sleep_watch_fn fn, void *userdata, struct sleep_watch **ret);
/* Takes NULL; returns NULL. */
struct sleep_watch *sleep_watch_free(struct sleep_watch *w);
static inline void sleep_watch_freep(struct sleep_watch **w)
{
	if (*w)
		sleep_watch_free(*w);
}
