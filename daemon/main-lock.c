/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock on removal's wiring ([session] lock-on-removal): the udev watcher's usb_device hook and
 * logind's sleep and resume go to the decision (session-lock.c), one timer on CLOCK_MONOTONIC
 * wakes at the next held removal's end, and a removal that falls due goes to the bus calls
 * (session-lock-bus.c). Says at info level, once per lock, that a lock was asked and why, and
 * how it went.
 *
 * A token is known (any-known) when it holds a key of the user's keyring, as the audit matched
 * it: a colleague's token plugged in for a minute is not a reason to lock the screen.
 * Does not: watch anything itself, or lock while the setting is off (the default).
 */
#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "main-internal.h"
#include "session-lock-bus.h"
#include "session-lock.h"

#define MESSAGE_ID_SESSION_LOCK "6a0e2b1f8c8d4f3b9d7e51c2a4b8f0d3"
#define FIELD_MAX 320

struct daemon_lock {
	struct session_lock decider;
	struct lock_bus *bus;
	sd_event_source *timer;
	char token[TOKEN_ID_MAX]; /* whose removal the lock under way is for */
};

static uint64_t now_usec(struct daemon *d)
{
	uint64_t now = 0;

	(void)sd_event_now(d->event, CLOCK_MONOTONIC, &now);
	return now;
}

static bool holds_own_key(struct daemon *d, const char *token_id)
{
	const struct key *keys;
	size_t n = model_keys(d->model, &keys);

	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++)
			if (streq(keys[i].subkeys[j].token_id, token_id))
				return true;
	return false;
}

static void on_locked(enum lock_outcome how, const char *detail, void *userdata)
{
	struct daemon *d = userdata;
	char f[2][FIELD_MAX];
	const char *fields[3] = { f[0], f[1], NULL };
	static const char *const names[LOCK_OUTCOME_MAX] = {
		[LOCK_OUTCOME_LOGIND] = "logind",
		[LOCK_OUTCOME_SCREENSAVER] = "screensaver",
		[LOCK_OUTCOME_FAILED] = "failed",
	};

	snprintf(f[0], FIELD_MAX, "KEYCTL_TOKEN=%s", d->lock->token);
	snprintf(f[1], FIELD_MAX, "KEYCTL_LOCK=%s", names[how]);
	if (how == LOCK_OUTCOME_LOGIND)
		log_struct(LOG_INFO, MESSAGE_ID_SESSION_LOCK, fields,
		           "Session locked through logind (%s), LockedHint confirmed", detail);
	else if (how == LOCK_OUTCOME_SCREENSAVER)
		log_struct(LOG_INFO, MESSAGE_ID_SESSION_LOCK, fields,
		           "Session locked through the screen saver (%s)", detail);
	else
		log_struct(LOG_WARNING, MESSAGE_ID_SESSION_LOCK, fields,
		           "Could not lock the session: %s", detail);
}

static void lock_now(struct daemon *d, const struct lock_device *dev)
{
	char f[2][FIELD_MAX];
	const char *fields[3] = { f[0], f[1], NULL };
	int r;

	snprintf(f[0], FIELD_MAX, "KEYCTL_TOKEN=%s", dev->token_id);
	snprintf(f[1], FIELD_MAX, "KEYCTL_LOCK=asked");
	log_struct(LOG_INFO, MESSAGE_ID_SESSION_LOCK, fields,
	           "Locking the session: token %s was removed and not back within %.1f s "
	           "([session] lock-on-removal = %s)",
	           dev->token_id, (double)SESSION_LOCK_GRACE_USEC / 1e6, d->cfg.lock_on_removal);
	strcpy_trunc(d->lock->token, sizeof(d->lock->token), dev->token_id);
	r = lock_bus_lock(d->lock->bus);
	if (r == -EBUSY)
		log_debug("Lock: one is under way already");
	else if (r < 0)
		log_warning_errno(r, "Could not lock the session: %m");
}

static void arm(struct daemon *d);

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	struct lock_device dev;

	while (session_lock_due(&d->lock->decider, now_usec(d), &dev) > 0)
		lock_now(d, &dev);
	arm(d);
	return 0;
}

static void arm(struct daemon *d)
{
	uint64_t next = session_lock_next(&d->lock->decider);
	int r;

	if (next == UINT64_MAX) {
		if (d->lock->timer)
			(void)sd_event_source_set_enabled(d->lock->timer, SD_EVENT_OFF);
		return;
	}
	if (!d->lock->timer)
		r = sd_event_add_time(d->event, &d->lock->timer, CLOCK_MONOTONIC, next, 0, on_timer,
		                      d);
	else {
		r = sd_event_source_set_time(d->lock->timer, next);
		if (r >= 0)
			r = sd_event_source_set_enabled(d->lock->timer, SD_EVENT_ONESHOT);
	}
	if (r < 0)
		log_warning_errno(r, "Lock on removal: cannot set its timer, ignoring: %m");
}

void daemon_lock_usb_device(const char *syspath, bool present, void *userdata)
{
	struct daemon *d = userdata;
	const struct token *t;
	struct lock_device dev = {};
	enum lock_removal what;
	bool wanted;

	if (!d->lock || isempty(d->cfg.lock_on_removal))
		return;
	strcpy_trunc(dev.syspath, sizeof(dev.syspath), syspath);
	(void)model_token_id_by_sighting(d->model, SIGHTING_USB, syspath, dev.token_id,
	                                 sizeof(dev.token_id));
	t = model_token_get(d->model, dev.token_id);
	if (t)
		dev.usb_vendor = t->usb_vendor;
	if (present) {
		if (session_lock_arrived(&d->lock->decider, &dev) > 0)
			log_debug("Lock: token %s is back at %s in time, no lock", dev.token_id,
			          syspath);
		arm(d);
		return;
	}
	wanted = session_lock_wanted(d->cfg.lock_on_removal, dev.token_id,
	                             holds_own_key(d, dev.token_id));
	what = session_lock_removed(&d->lock->decider, &dev, wanted, now_usec(d));
	log_debug("Lock: token %s removed from %s: %s", dev.token_id, syspath,
	          lock_removal_to_string(what));
	arm(d);
}

void daemon_lock_sleep(struct daemon *d, bool asleep)
{
	if (!d->lock)
		return;
	session_lock_sleep(&d->lock->decider, asleep, now_usec(d));
	arm(d);
}

void daemon_lock_apply(struct daemon *d)
{
	/* Made whatever the setting: sleep and resume are followed from the start, so that one
	 * turned on by a Reload knows whether the system has just resumed. */
	if (!d->lock) {
		_cleanup_(freep) struct daemon_lock *l = calloc(1, sizeof(*l));
		int r = l ? lock_bus_new(d->event, on_locked, d, &l->bus) : -ENOMEM;

		if (r < 0) {
			log_warning_errno(r, "Lock on removal unavailable: %m");
			return;
		}
		session_lock_init(&l->decider);
		d->lock = TAKE_PTR(l);
	}
	if (isempty(d->cfg.lock_on_removal)) {
		session_lock_clear(&d->lock->decider);
		arm(d);
	} else
		log_debug("Lock on removal: %s", d->cfg.lock_on_removal);
}

void daemon_lock_stop(struct daemon *d)
{
	if (!d->lock)
		return;
	d->lock->timer = sd_event_source_disable_unref(d->lock->timer);
	d->lock->bus = lock_bus_free(d->lock->bus);
	free(d->lock);
	d->lock = NULL;
}
