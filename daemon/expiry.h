/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Expiry levels of keys and the daemon's wake-up for the next change. expiry_apply() is pure
 * (keys, thresholds and `now` in; levels and the next deadline out); the timer part is a thin
 * sd-event wrapper that fires at that deadline and when the wall clock is set.
 *
 * Does not: notify anyone, log, or read the keyring. The day arithmetic lives in
 * protocol/expiry-math.c so that clients compute "in N days" the same way.
 */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "expiry-math.h"
#include "types.h"

/* The policy view of a configuration (points into cfg). */
struct expiry_policy expiry_policy_from_config(const struct config *cfg);

/*
 * Sets every subkey's expiry_level (by the clock), replaced_by and level (what counts), every
 * key's retired and level, and returns the next moment (epoch seconds) at which any of them, or
 * any threshold crossing, changes; 0 when none. A subkey is replaced by the newest subkey of the
 * same key that is newer, does at least its uses (sign, encrypt, authenticate), is neither
 * revoked nor expired and expires later or never; a replaced or revoked subkey, and every
 * subkey of a key named in [keyring] retired, count as LEVEL_OK. Exception: a replaced subkey
 * whose stub names a card that its replacement is not on counts, at most as LEVEL_WARNING,
 * unless the replacement's token is present and the old one's is not (token_present). A
 * key's level is the worst over its uses (and its primary key) of the best counted subkey for
 * that use. A revoked or retired key is LEVEL_OK: revocation is reported on its own.
 */
int64_t expiry_apply(struct key *keys, size_t n_keys, const struct config *cfg, int64_t now);

/* A key's level from its subkeys' levels, as expiry_apply() sets it: again after an ack lowered a
 * subkey's (audit-ack.c). */
enum level expiry_key_level(const struct key *k);

/* Which threshold (days) the subkey has crossed, or -ENOENT; see expiry_threshold_crossed(). */
int expiry_subkey_threshold(const struct subkey *s, const struct config *cfg, int64_t now);

/*
 * The wake-up. The callback runs on the loop when the armed deadline is reached, and also when
 * the wall clock was set (a jump either way can move deadlines into the past or make levels stale),
 * in both cases with the current time; it should recompute and re-arm.
 */
struct expiry_timer;
typedef int (*expiry_timer_fn)(struct expiry_timer *t, int64_t now, void *userdata);

int expiry_timer_new(sd_event *e, expiry_timer_fn fn, void *userdata, struct expiry_timer **ret);
struct expiry_timer *expiry_timer_free(struct expiry_timer *t);
static inline void expiry_timer_freep(struct expiry_timer **t)
{
	if (*t)
		expiry_timer_free(*t);
}
/* Arms for `deadline` (epoch seconds); 0 disarms. */
int expiry_timer_arm(struct expiry_timer *t, int64_t deadline);
