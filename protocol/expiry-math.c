/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Expiry day arithmetic shared by keyctld and its clients (see expiry-math.h). Everything is
 * exact to the second and inclusive at the boundary, so that the moment the daemon wakes up for
 * (expires - T*86400) is also the moment these functions say threshold T holds.
 *
 * Does not: read the clock, know keys, allocate.
 */
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "expiry-math.h"

int64_t expiry_days_left(int64_t expires, int64_t now)
{
	int64_t left = expires - now;

	if (left <= 0)
		return -((-left) / SECONDS_PER_DAY);
	return (left + SECONDS_PER_DAY - 1) / SECONDS_PER_DAY;
}

/* True when `days` before expires has been reached: expires - now <= days*86400. */
static bool within(int64_t expires, int64_t now, unsigned days)
{
	return expires - now <= (int64_t)days * SECONDS_PER_DAY;
}

enum level expiry_level(const struct expiry_policy *p, int64_t expires, bool expired_flag,
                        int64_t now)
{
	if (expired_flag)
		return LEVEL_EXPIRED;
	if (expires == 0)
		return LEVEL_OK;
	if (expires <= now)
		return LEVEL_EXPIRED;
	if (within(expires, now, p->critical_days))
		return LEVEL_CRITICAL;
	if (within(expires, now, p->warning_days))
		return LEVEL_WARNING;
	if (p->n_thresholds > 0 && within(expires, now, p->thresholds[0]))
		return LEVEL_NOTICE;
	return LEVEL_OK;
}

int expiry_threshold_crossed(const struct expiry_policy *p, int64_t expires, int64_t now)
{
	int found = -ENOENT;

	if (expires == 0 || expires <= now)
		return -ENOENT;
	/* Descending list: the last one reached is the smallest. */
	for (size_t i = 0; i < p->n_thresholds; i++)
		if (within(expires, now, p->thresholds[i]))
			found = (int)p->thresholds[i];
	return found;
}

static void consider(int64_t *best, int64_t t, int64_t now)
{
	if (t > now && (*best == 0 || t < *best))
		*best = t;
}

int64_t expiry_next_change(const struct expiry_policy *p, int64_t expires, int64_t now)
{
	int64_t best = 0;

	if (expires == 0 || expires <= now)
		return 0;
	consider(&best, expires, now);
	consider(&best, expires - (int64_t)p->warning_days * SECONDS_PER_DAY, now);
	consider(&best, expires - (int64_t)p->critical_days * SECONDS_PER_DAY, now);
	for (size_t i = 0; i < p->n_thresholds; i++)
		consider(&best, expires - (int64_t)p->thresholds[i] * SECONDS_PER_DAY, now);
	return best;
}

const char *expiry_format_relative(char *buf, size_t size, int64_t expires, int64_t now)
{
	int64_t d;

	if (expires == 0) {
		snprintf(buf, size, "never");
		return buf;
	}
	if (expires > now) {
		d = expiry_days_left(expires, now);
		snprintf(buf, size, "in %" PRId64 " day%s", d, d == 1 ? "" : "s");
		return buf;
	}
	d = (now - expires) / SECONDS_PER_DAY;
	if (d == 0)
		snprintf(buf, size, "expired today");
	else
		snprintf(buf, size, "expired %" PRId64 " day%s ago", d, d == 1 ? "" : "s");
	return buf;
}

const char *expiry_format_date(char *buf, size_t size, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t == 0 || !gmtime_r(&tt, &tm)) {
		snprintf(buf, size, t == 0 ? "never" : "?");
		return buf;
	}
	if (strftime(buf, size, "%Y-%m-%d", &tm) == 0 && size > 0)
		buf[0] = 0;
	return buf;
}
