/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock on removal ([session] lock-on-removal in keyctl.conf), the decision alone: which USB
 * device removals ask for the session to be locked, and when. A removal of a wanted token's USB
 * device (the device, never one of its interfaces: the udev watcher hands over usb_device
 * events only) is held for SESSION_LOCK_GRACE_USEC; it is forgotten when the device comes back
 * meanwhile (a replug, or a re-enumeration after a mode change: `ykman config mode` brings the
 * same serial back at the same port with other interfaces and product id), when the system goes
 * to sleep, and it is not held at all while the system sleeps or within
 * SESSION_LOCK_RESUME_GRACE_USEC after it resumed (USB devices drop off and come back around a
 * suspend without the user touching them).
 *
 * Pure: the caller passes CLOCK_MONOTONIC microseconds and runs the timer (main-lock.c).
 * Does not: talk to the bus (session-lock-bus.c does), keep the setting, or log.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* How long a token's device may stay away before the session is locked. */
#define SESSION_LOCK_GRACE_USEC (UINT64_C(1500) * 1000)
/* After a resume, removals are the kernel's re-enumeration, not the user. */
#define SESSION_LOCK_RESUME_GRACE_USEC (UINT64_C(5) * 1000 * 1000)
#define SESSION_LOCK_PENDING_MAX 8
#define SESSION_LOCK_SYSPATH_MAX 512

/* A token's USB device as the udev watcher saw it. */
struct lock_device {
	char token_id[TOKEN_ID_MAX]; /* the model's id of its token; "" when none */
	char syspath[SESSION_LOCK_SYSPATH_MAX]; /* the usb_device's, port-based */
	uint16_t usb_vendor;
};

/* What session_lock_removed() did with a removal. */
enum lock_removal {
	LOCK_REMOVAL_HELD, /* the lock is due after the grace, unless it comes back */
	LOCK_REMOVAL_NOT_WANTED, /* the setting does not name this token */
	LOCK_REMOVAL_ASLEEP, /* between PrepareForSleep true and false */
	LOCK_REMOVAL_RESUMING, /* within the grace after a resume */
	LOCK_REMOVAL_FULL, /* SESSION_LOCK_PENDING_MAX removals held already */
	LOCK_REMOVAL_MAX,
};

struct session_lock {
	struct {
		struct lock_device dev;
		uint64_t due;
	} pending[SESSION_LOCK_PENDING_MAX];
	size_t n_pending;
	bool asleep;
	bool resumed; /* resumed_at is set */
	uint64_t resumed_at;
};

void session_lock_init(struct session_lock *s);
const char *lock_removal_to_string(enum lock_removal r);

/* Whether the setting asks for a lock when this token goes: setting "" is off,
 * CONFIG_LOCK_ANY_KNOWN takes a known token (one holding a key of the user's keyring: the
 * caller tells), anything else is one token's id. */
bool session_lock_wanted(const char *setting, const char *token_id, bool known);

/* The device of a token went away at now; wanted is session_lock_wanted()'s answer. */
enum lock_removal session_lock_removed(struct session_lock *s, const struct lock_device *dev,
                                       bool wanted, uint64_t now);
/* A device arrived (or was identified): forgets every held removal it is the return of, the
 * same token id or the same port with the same vendor. Returns how many were forgotten. */
size_t session_lock_arrived(struct session_lock *s, const struct lock_device *dev);
/* PrepareForSleep: asleep forgets every held removal; the resume starts the grace. */
void session_lock_sleep(struct session_lock *s, bool asleep, uint64_t now);
/* When the next held removal falls due; UINT64_MAX when none is held. */
uint64_t session_lock_next(const struct session_lock *s);
/* Takes out one removal due at now into *ret and returns 1 (lock now); 0 when none is due. */
int session_lock_due(struct session_lock *s, uint64_t now, struct lock_device *ret);
/* The setting went off: forgets every held removal. */
void session_lock_clear(struct session_lock *s);
