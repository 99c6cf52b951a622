/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Suspend and resume from logind (org.freedesktop.login1.Manager.PrepareForSleep) on the system
 * bus, through sd-bus attached to the daemon's sd-event loop. The match is added asynchronously,
 * so that a slow or wedged bus never holds up the start; sd-bus answers the local Disconnected
 * signal itself, without a call to the bus.
 *
 * No inhibitor lock: logind lets a program delay sleep ("delay" mode) until it is ready, but
 * keyctld has nothing to finish. A card read takes milliseconds; one that the sleep cuts anyway
 * is dropped by the PC/SC watcher and the card read again on resume. A lock would cost every
 * suspend a round trip to keyctld, polkit's say (inhibit-delay-sleep, refused outside an active
 * session) and an entry in systemd-inhibit --list, for nothing the user sees.
 *
 * Does not: read tokens, log above debug (main.c says what sleep and resume do), or reconnect.
 */
#include <errno.h>
#include <stdlib.h>

#include <systemd/sd-bus.h>

#include "log.h"
#include "watch-sleep.h"

#define LOGIND_SERVICE "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"

struct sleep_watch {
	sd_bus *bus;
	sleep_watch_fn fn;
	void *userdata;
	bool asleep;
};

static void set_asleep(struct sleep_watch *w, bool asleep)
{
	if (w->asleep == asleep)
		return;
	w->asleep = asleep;
	w->fn(asleep, w->userdata);
}

static int on_prepare_for_sleep(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct sleep_watch *w = userdata;
	int asleep, r;

	r = sd_bus_message_read(m, "b", &asleep);
	if (r < 0) {
		log_debug_errno(r, "logind: malformed PrepareForSleep, ignoring: %m");
		return 0;
	}
	set_asleep(w, asleep);
	return 0;
}

static int on_match_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	const sd_bus_error *e = sd_bus_message_get_error(m);

	if (e)
		log_debug("System bus: cannot ask for logind's PrepareForSleep (%s), suspend and "
		          "resume not followed",
		          e->message ? e->message : e->name);
	else
		log_debug("System bus: following suspend and resume (logind's PrepareForSleep)");
	return 0;
}

/* The bus is closed now (sd-bus drops its event sources): a sleep would never end. */
static int on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct sleep_watch *w = userdata;

	log_debug("System bus: disconnected, suspend and resume no longer followed");
	set_asleep(w, false);
	return 0;
}

int sleep_watch_new(sd_event *e, sleep_watch_fn fn, void *userdata, struct sleep_watch **ret)
{
	_cleanup_(sleep_watch_freep) struct sleep_watch *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->fn = fn;
	w->userdata = userdata;
	r = sd_bus_open_system(&w->bus);
	if (r < 0)
		return r;
	/* Said, not assumed: a lost system bus must never end the daemon's loop. */
	r = sd_bus_set_exit_on_disconnect(w->bus, false);
	if (r < 0)
		return r;
	r = sd_bus_match_signal(w->bus, NULL, "org.freedesktop.DBus.Local", NULL,
	                        "org.freedesktop.DBus.Local", "Disconnected", on_disconnected, w);
	if (r < 0)
		return r;
	r = sd_bus_match_signal_async(w->bus, NULL, LOGIND_SERVICE, LOGIND_PATH, LOGIND_MANAGER,
	                              "PrepareForSleep", on_prepare_for_sleep, on_match_added, w);
	if (r < 0)
		return r;
	r = sd_bus_attach_event(w->bus, e, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(w);
	return 0;
}

struct sleep_watch *sleep_watch_free(struct sleep_watch *w)
{
	if (!w)
		return NULL;
	/* Closed first: nothing is left to send (the matches go with the connection). */
	w->bus = sd_bus_close_unref(w->bus);
	free(w);
	return NULL;
}
