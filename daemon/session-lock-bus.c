/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock on removal's bus calls (session-lock-bus.h). One lock is a chain of asynchronous calls:
 *
 *  1. the session: GetSession($XDG_SESSION_ID) when the environment names one; else
 *     GetSessionByPID(our pid), which answers for a program started inside a session; else
 *     the user's Display session (GetUser(uid), property Display), the one logind shows on a seat,
 *     which is where a daemon of the user's service manager (in no session itself) finds it;
 *  2. Session.Lock, after a match on the session's PropertiesChanged; then LockedHint read once
 *     (a session locked already) and followed until SESSION_LOCK_CONFIRM_USEC;
 *  3. when any of that fails: org.freedesktop.ScreenSaver.Lock on the session bus (GNOME's and
 *     KDE's screen savers answer it at /org/freedesktop/ScreenSaver).
 *
 * The buses are opened for a lock and kept until the next one or the end: a connection is never
 * closed from inside its own callback.
 * Does not: decide, log above debug, or retry.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "log.h"
#include "session-lock-bus.h"
#include "util.h"

#define LOGIND_SERVICE "org.freedesktop.login1"
#define LOGIND_PATH "/org/freedesktop/login1"
#define LOGIND_MANAGER "org.freedesktop.login1.Manager"
#define LOGIND_SESSION "org.freedesktop.login1.Session"
#define LOGIND_USER "org.freedesktop.login1.User"
#define SCREENSAVER "org.freedesktop.ScreenSaver"
#define SCREENSAVER_PATH "/org/freedesktop/ScreenSaver"
#define PATH_LEN_MAX 256

enum find_step {
	FIND_BY_ENV,
	FIND_BY_PID,
	FIND_BY_USER,
	FIND_MAX,
};

struct lock_bus {
	sd_event *event;
	lock_bus_done_fn fn;
	void *userdata;
	sd_bus *system, *user;
	sd_event_source *confirm_timer;
	bool busy;
	enum find_step step;
	char session[PATH_LEN_MAX];
	char why[LOCK_DETAIL_MAX]; /* why logind could not, for the answer */
};

/* The answer's words, cut at the buffer's end: they go into one journal line. */
_printf_(3, 4) static void say(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static void finish(struct lock_bus *b, enum lock_outcome how, const char *detail)
{
	if (!b->busy)
		return;
	b->busy = false;
	b->confirm_timer = sd_event_source_disable_unref(b->confirm_timer);
	b->fn(how, detail, b->userdata);
}

static const char *error_text(sd_bus_message *m, int r)
{
	const sd_bus_error *e = m ? sd_bus_message_get_error(m) : NULL;

	if (e)
		return e->message ? e->message : e->name;
	return strerror(r < 0 ? -r : EIO);
}

static int on_screensaver(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	char detail[LOCK_DETAIL_MAX];

	if (sd_bus_message_is_method_error(m, NULL)) {
		say(detail, sizeof(detail), "%s; the screen saver: %s", b->why,
		    error_text(m, -EIO));
		finish(b, LOCK_OUTCOME_FAILED, detail);
	} else
		finish(b, LOCK_OUTCOME_SCREENSAVER, b->why);
	return 0;
}

/* logind could not: why says so, and the answer will say it too. */
static void fall_back(struct lock_bus *b, const char *why)
{
	char detail[LOCK_DETAIL_MAX];
	int r;

	strcpy_trunc(b->why, sizeof(b->why), why);
	b->confirm_timer = sd_event_source_disable_unref(b->confirm_timer);
	log_debug("Lock: %s; asking the screen saver", why);
	b->user = sd_bus_close_unref(b->user);
	r = sd_bus_open_user(&b->user);
	if (r >= 0)
		r = sd_bus_attach_event(b->user, b->event, SD_EVENT_PRIORITY_NORMAL);
	if (r >= 0)
		r = sd_bus_call_method_async(b->user, NULL, SCREENSAVER, SCREENSAVER_PATH,
		                             SCREENSAVER, "Lock", on_screensaver, b, "");
	if (r < 0) {
		say(detail, sizeof(detail), "%s; no session bus for the screen saver: %s", why,
		    strerror(-r));
		finish(b, LOCK_OUTCOME_FAILED, detail);
	}
}

static void confirmed(struct lock_bus *b)
{
	char detail[LOCK_DETAIL_MAX];

	say(detail, sizeof(detail), "session %s", b->session);
	finish(b, LOCK_OUTCOME_LOGIND, detail);
}

/* PropertiesChanged(s interface, a{sv} changed, as invalidated) of the session. */
static int on_properties(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	const char *name;
	int r, hint;

	if (!b->busy)
		return 0;
	r = sd_bus_message_skip(m, "s");
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		r = sd_bus_message_read(m, "s", &name);
		if (r >= 0 && streq(name, "LockedHint")) {
			r = sd_bus_message_read(m, "v", "b", &hint);
			if (r >= 0 && hint) {
				confirmed(b);
				return 0;
			}
		} else if (r >= 0)
			r = sd_bus_message_skip(m, "v");
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	if (r < 0)
		log_debug_errno(r, "Lock: malformed PropertiesChanged, ignoring: %m");
	return 0;
}

static int on_locked_hint(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	int hint = 0;

	if (!b->busy || sd_bus_message_is_method_error(m, NULL))
		return 0; /* PropertiesChanged or the timer will tell */
	if (sd_bus_message_read(m, "v", "b", &hint) >= 0 && hint)
		confirmed(b);
	return 0;
}

static int on_confirm_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct lock_bus *b = userdata;

	fall_back(b, "logind's Lock was not confirmed: no screen locker set LockedHint");
	return 0;
}

static int on_lock(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	char why[LOCK_DETAIL_MAX];
	int r;

	if (!b->busy)
		return 0;
	if (sd_bus_message_is_method_error(m, NULL)) {
		say(why, sizeof(why), "logind refused to lock session %s: %s", b->session,
		    error_text(m, -EIO));
		fall_back(b, why);
		return 0;
	}
	r = sd_event_add_time_relative(b->event, &b->confirm_timer, CLOCK_MONOTONIC,
	                               SESSION_LOCK_CONFIRM_USEC, 0, on_confirm_timeout, b);
	if (r >= 0)
		r = sd_bus_call_method_async(b->system, NULL, LOGIND_SERVICE, b->session,
		                             "org.freedesktop.DBus.Properties", "Get",
		                             on_locked_hint, b, "ss", LOGIND_SESSION, "LockedHint");
	if (r < 0) {
		say(why, sizeof(why), "cannot follow LockedHint: %s", strerror(-r));
		fall_back(b, why);
	}
	return 0;
}

static void lock_session(struct lock_bus *b, const char *path)
{
	char why[LOCK_DETAIL_MAX];
	int r;

	strcpy_trunc(b->session, sizeof(b->session), path);
	log_debug("Lock: asking logind to lock session %s", path);
	/* Before the call: the bus orders our AddMatch ahead of the Lock, so no change is missed.
	 */
	r = sd_bus_match_signal_async(b->system, NULL, LOGIND_SERVICE, path,
	                              "org.freedesktop.DBus.Properties", "PropertiesChanged",
	                              on_properties, NULL, b);
	if (r >= 0)
		r = sd_bus_call_method_async(b->system, NULL, LOGIND_SERVICE, path, LOGIND_SESSION,
		                             "Lock", on_lock, b, "");
	if (r < 0) {
		say(why, sizeof(why), "cannot ask logind: %s", strerror(-r));
		fall_back(b, why);
	}
}

static void find_session(struct lock_bus *b);

static int on_session_path(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	const char *path = NULL;

	if (!b->busy)
		return 0;
	if (sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "o", &path) < 0) {
		log_debug("Lock: no session by step %d: %s", (int)b->step, error_text(m, -EIO));
		b->step++;
		find_session(b);
		return 0;
	}
	lock_session(b, path);
	return 0;
}

/* The user's Display property: (so), "/" when the user has no graphical session. */
static int on_display(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	const char *id = NULL, *path = NULL;

	if (!b->busy)
		return 0;
	if (sd_bus_message_is_method_error(m, NULL) ||
	    sd_bus_message_read(m, "v", "(so)", &id, &path) < 0 || !path || streq(path, "/")) {
		fall_back(b, "logind knows no session of this user to lock");
		return 0;
	}
	lock_session(b, path);
	return 0;
}

static int on_user(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct lock_bus *b = userdata;
	const char *path = NULL;
	int r;

	if (!b->busy)
		return 0;
	if (sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "o", &path) < 0) {
		log_debug("Lock: logind's GetUser: %s", error_text(m, -EIO));
		fall_back(b, "logind knows no session of this user to lock");
		return 0;
	}
	r = sd_bus_call_method_async(b->system, NULL, LOGIND_SERVICE, path,
	                             "org.freedesktop.DBus.Properties", "Get", on_display, b, "ss",
	                             LOGIND_USER, "Display");
	if (r < 0)
		fall_back(b, "cannot ask logind for the user's session");
	return 0;
}

static void find_session(struct lock_bus *b)
{
	const char *env = getenv("XDG_SESSION_ID");
	int r = 0;

	if (b->step == FIND_BY_ENV && isempty(env))
		b->step++;
	switch (b->step) {
	case FIND_BY_ENV:
		r = sd_bus_call_method_async(b->system, NULL, LOGIND_SERVICE, LOGIND_PATH,
		                             LOGIND_MANAGER, "GetSession", on_session_path, b, "s",
		                             env);
		break;
	case FIND_BY_PID:
		r = sd_bus_call_method_async(b->system, NULL, LOGIND_SERVICE, LOGIND_PATH,
		                             LOGIND_MANAGER, "GetSessionByPID", on_session_path, b,
		                             "u", (uint32_t)getpid());
		break;
	case FIND_BY_USER:
		r = sd_bus_call_method_async(b->system, NULL, LOGIND_SERVICE, LOGIND_PATH,
		                             LOGIND_MANAGER, "GetUser", on_user, b, "u",
		                             (uint32_t)getuid());
		break;
	default:
		fall_back(b, "logind knows no session of this user to lock");
		return;
	}
	if (r < 0)
		fall_back(b, "cannot ask logind for the session");
}

int lock_bus_new(sd_event *e, lock_bus_done_fn fn, void *userdata, struct lock_bus **ret)
{
	struct lock_bus *b = calloc(1, sizeof(*b));

	if (!b)
		return -ENOMEM;
	b->event = sd_event_ref(e);
	b->fn = fn;
	b->userdata = userdata;
	*ret = b;
	return 0;
}

int lock_bus_lock(struct lock_bus *b)
{
	int r;

	if (b->busy)
		return -EBUSY;
	/* Last lock's connections: from the loop, never inside their own callbacks. */
	b->system = sd_bus_close_unref(b->system);
	b->user = sd_bus_close_unref(b->user);
	b->why[0] = b->session[0] = 0;
	b->busy = true;
	b->step = FIND_BY_ENV;
	r = sd_bus_open_system(&b->system);
	if (r >= 0)
		r = sd_bus_set_exit_on_disconnect(b->system, false);
	if (r >= 0)
		r = sd_bus_attach_event(b->system, b->event, SD_EVENT_PRIORITY_NORMAL);
	if (r < 0) {
		char why[LOCK_DETAIL_MAX];

		b->system = sd_bus_close_unref(b->system);
		say(why, sizeof(why), "no system bus: %s", strerror(-r));
		fall_back(b, why);
		return 0;
	}
	find_session(b);
	return 0;
}

struct lock_bus *lock_bus_free(struct lock_bus *b)
{
	if (!b)
		return NULL;
	sd_event_source_disable_unref(b->confirm_timer);
	sd_bus_close_unref(b->system);
	sd_bus_close_unref(b->user);
	sd_event_unref(b->event);
	free(b);
	return NULL;
}
