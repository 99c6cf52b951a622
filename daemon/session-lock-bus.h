/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock on removal, the acting part: asks logind to lock the session keyctld's user is in
 * (org.freedesktop.login1.Session.Lock, which needs no polkit for one's own session), confirms it
 * through the session's LockedHint, and falls back to org.freedesktop.ScreenSaver.Lock on the
 * session bus when logind cannot: no session found, Lock refused, or no screen locker set
 * LockedHint within SESSION_LOCK_CONFIRM_USEC (logind only emits the Lock signal; a locker must
 * listen to it). Every call is asynchronous, on the daemon's sd-event loop.
 *
 * Does not: decide when to lock (session-lock.c), log above debug (main-lock.c says what was
 * done and why), or unlock.
 */
#pragma once

#include <systemd/sd-event.h>

#define SESSION_LOCK_CONFIRM_USEC (UINT64_C(2) * 1000 * 1000)
#define LOCK_DETAIL_MAX 256

enum lock_outcome {
	LOCK_OUTCOME_LOGIND, /* Session.Lock, and LockedHint became true */
	LOCK_OUTCOME_SCREENSAVER, /* logind could not; org.freedesktop.ScreenSaver.Lock answered */
	LOCK_OUTCOME_FAILED, /* neither */
	LOCK_OUTCOME_MAX,
};

struct lock_bus;

/* On the loop: how the lock went; detail names the session, or why logind and the screen saver
 * could not ("" when nothing to add). */
typedef void (*lock_bus_done_fn)(enum lock_outcome how, const char *detail, void *userdata);

int lock_bus_new(sd_event *e, lock_bus_done_fn fn, void *userdata, struct lock_bus **ret);
/* Starts one lock; the answer comes through fn. -EBUSY while one is under way. */
int lock_bus_lock(struct lock_bus *b);
/* Takes NULL; returns NULL. A lock under way is dropped without an answer. */
struct lock_bus *lock_bus_free(struct lock_bus *b);
static inline void lock_bus_freep(struct lock_bus **b)
{
	if (*b)
		lock_bus_free(*b);
}
