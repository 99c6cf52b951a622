/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock on removal, the decision (session-lock.h): a short list of held removals, each with the
 * time it falls due, and the sleep state. Field notes on why each rule is there:
 *  - only the USB device counts: KeePassXC's key access made the kernel unbind and rebind an
 *    interface, which a udev listener on every event took for a removal
 *    (keepassxc/keepassxc#7207, #10077); the udev watcher filters to usb_device, and a held
 *    removal is forgotten when the device comes back;
 *  - a YubiKey's mode change (`ykman config mode`) re-enumerates it: the device goes and comes
 *    back at the same port with other interfaces and another product id, within a second;
 *  - around a suspend, USB devices drop off and return without anyone touching them.
 * Pure: no I/O, no clock, no logging.
 */
#include <string.h>

#include "config.h"
#include "session-lock.h"

void session_lock_init(struct session_lock *s)
{
	memset(s, 0, sizeof(*s));
}

const char *lock_removal_to_string(enum lock_removal r)
{
	static const char *const names[LOCK_REMOVAL_MAX] = {
		[LOCK_REMOVAL_HELD] = "held",
		[LOCK_REMOVAL_NOT_WANTED] = "not named by lock-on-removal",
		[LOCK_REMOVAL_ASLEEP] = "the system sleeps",
		[LOCK_REMOVAL_RESUMING] = "the system has just resumed",
		[LOCK_REMOVAL_FULL] = "too many removals held",
	};

	return r < LOCK_REMOVAL_MAX ? names[r] : "?";
}

bool session_lock_wanted(const char *setting, const char *token_id, bool known)
{
	if (isempty(setting) || isempty(token_id))
		return false;
	if (streq(setting, CONFIG_LOCK_ANY_KNOWN))
		return known;
	return streq(setting, token_id);
}

enum lock_removal session_lock_removed(struct session_lock *s, const struct lock_device *dev,
                                       bool wanted, uint64_t now)
{
	if (!wanted)
		return LOCK_REMOVAL_NOT_WANTED;
	if (s->asleep)
		return LOCK_REMOVAL_ASLEEP;
	if (s->resumed && now < s->resumed_at + SESSION_LOCK_RESUME_GRACE_USEC)
		return LOCK_REMOVAL_RESUMING;
	if (s->n_pending >= SESSION_LOCK_PENDING_MAX)
		return LOCK_REMOVAL_FULL;
	s->pending[s->n_pending].dev = *dev;
	s->pending[s->n_pending].due = now + SESSION_LOCK_GRACE_USEC;
	s->n_pending++;
	return LOCK_REMOVAL_HELD;
}

static bool is_return(const struct lock_device *gone, const struct lock_device *back)
{
	if (!isempty(gone->token_id) && streq(gone->token_id, back->token_id))
		return true;
	/* A re-enumeration: its serial may be read only later (the OTP interface, or the card). */
	return streq(gone->syspath, back->syspath) && gone->usb_vendor == back->usb_vendor;
}

static void drop(struct session_lock *s, size_t i)
{
	memmove(&s->pending[i], &s->pending[i + 1], (s->n_pending - i - 1) * sizeof(s->pending[0]));
	s->n_pending--;
}

size_t session_lock_arrived(struct session_lock *s, const struct lock_device *dev)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_pending;)
		if (is_return(&s->pending[i].dev, dev)) {
			drop(s, i);
			n++;
		} else
			i++;
	return n;
}

void session_lock_sleep(struct session_lock *s, bool asleep, uint64_t now)
{
	if (asleep)
		s->n_pending = 0;
	else if (s->asleep) {
		s->resumed = true;
		s->resumed_at = now;
	}
	s->asleep = asleep;
}

uint64_t session_lock_next(const struct session_lock *s)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < s->n_pending; i++)
		next = MIN(next, s->pending[i].due);
	return next;
}

int session_lock_due(struct session_lock *s, uint64_t now, struct lock_device *ret)
{
	for (size_t i = 0; i < s->n_pending; i++)
		if (s->pending[i].due <= now) {
			*ret = s->pending[i].dev;
			drop(s, i);
			return 1;
		}
	return 0;
}

void session_lock_clear(struct session_lock *s)
{
	s->n_pending = 0;
}
