/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The day arithmetic of expiry that the daemon and its clients must agree on: how many days are
 * left, which threshold has been crossed, what level that means, and how it reads ("in 6 days",
 * "2026-12-09"). Pure: every function takes `now`; dates are UTC, as gpg prints them.
 *
 * Does not: know keys, tokens or configuration files (the daemon's expiry.c applies this to
 * them; keyctl-notify applies it to what it received).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define SECONDS_PER_DAY INT64_C(86400)
#define EXPIRY_TEXT_MAX 48

/* What turns a remaining time into a level. thresholds[] in days, strictly descending. */
struct expiry_policy {
	const unsigned *thresholds;
	size_t n_thresholds;
	unsigned warning_days; /* at or below: warning */
	unsigned critical_days; /* at or below: critical */
};

/* Whole days left, rounded up: 1 s left is "1 day", exactly 6*86400 s is "6 days". <= 0 once
 * expired. Callers must not pass expires == 0 (never). */
int64_t expiry_days_left(int64_t expires, int64_t now);

/* The level of something expiring at `expires` (0: never) that gpg may already flag expired.
 * Boundaries are inclusive and exact to the second: at expires - T*86400 threshold T holds. */
enum level expiry_level(const struct expiry_policy *p, int64_t expires, bool expired_flag,
                        int64_t now);

/* The smallest threshold (days) whose moment has passed and the thing has not yet expired, i.e.
 * the one a notifier announces at most once; -ENOENT when none (or never expires, or expired). */
int expiry_threshold_crossed(const struct expiry_policy *p, int64_t expires, int64_t now);

/* The next moment after now at which expiry_level() or expiry_threshold_crossed() changes for
 * this expiry; 0 when never again. */
int64_t expiry_next_change(const struct expiry_policy *p, int64_t expires, int64_t now);

/* "in 6 days", "in 1 day" (days round up, so never "in 0 days"), "expired 3 days ago" (whole
 * days, rounded down), "expired today" (less than a day ago), "never" for 0. Returns buf. */
const char *expiry_format_relative(char *buf, size_t size, int64_t expires, int64_t now);

/* "2026-12-09" (UTC, as gpg prints dates); "never" for 0. Returns buf. */
const char *expiry_format_date(char *buf, size_t size, int64_t t);
