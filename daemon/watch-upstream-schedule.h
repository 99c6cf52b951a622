/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The background upstream check: each key about once per [upstream] interval, one key per
 * query, at random times (parcimonie's way: the keyserver sees no burst naming all of a user's
 * keys at once), the key checked longest ago first; after a failure to reach dirmngr or the
 * keyserver, the next try backs off (5 min, doubling, up to the interval).
 *
 * Does not: fetch or keep results (watch-upstream.c), or choose the keys (the list callback).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "watch-upstream.h"

#define UPSTREAM_TICK_MIN_USEC (10ull * 1000000ull) /* never two queries closer than this */
#define UPSTREAM_BACKOFF_FIRST_USEC (5ull * 60ull * 1000000ull)

/* The keys to check now (as for CheckUpstream), at most UPSTREAM_KEYS_MAX, with the address
 * whose WKD is asked for each ("" none); returns how many. */
typedef size_t (*upstream_list_fn)(void *userdata, char (*fprs)[FPR_HEX_MAX], bool *relied_on,
                                   char (*mails)[UPSTREAM_MAIL_MAX]);

struct upstream_schedule;

int upstream_schedule_new(sd_event *e, struct upstream_watch *w, upstream_list_fn list,
                          void *userdata, struct upstream_schedule **ret);
struct upstream_schedule *upstream_schedule_free(struct upstream_schedule *s);

/* Whether u (NULL: none) failed for want of a network: dirmngr or the keyserver out of reach or
 * too slow, or a fetch that failed where an older copy was kept. Not: unpublished, or a wrong or
 * garbled answer, which trying sooner would not mend. Pure. */
bool upstream_result_offline(const struct upstream_result *u);

/* The pause before the next tick, before jitter: interval / keys while online; once offline,
 * UPSTREAM_BACKOFF_FIRST_USEC, doubling at each offline tick, never beyond the interval.
 * *backoff_usec carries the state between ticks (0: online). Pure. */
uint64_t upstream_schedule_pause(uint64_t *backoff_usec, bool offline, uint64_t interval_usec,
                                 size_t n_keys);

/* interval_usec 0 stops the schedule; another value (re)arms it from now. Returns 0 or -errno. */
int upstream_schedule_set(struct upstream_schedule *s, uint64_t interval_usec);
