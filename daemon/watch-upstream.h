/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Upstream checks: the published copies of a list of keys, fetched one query per key on a worker
 * thread (upstream-fetch.c), the whole run bounded; the results handed back on the sd-event loop
 * and kept, key by key, until the next run says otherwise.
 *
 * Does not: compare (upstream-compare.c, audit.c), decide which keys to ask about (main.c), or
 * schedule runs of its own: a run starts when asked (CheckUpstream, watch-upstream-schedule.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "upstream-compare.h"

#define UPSTREAM_TIMEOUT_USEC (30ull * 1000000ull)

struct upstream_watch;

/* A run ended (done, or its bound passed): results and the last error are updated. full: it was
 * a run over every key (upstream_watch_check() with full), which callers may be waiting for. */
typedef void (*upstream_done_fn)(struct upstream_watch *w, bool full, void *userdata);

/* home NULL: GnuPG's default; timeout_usec 0: UPSTREAM_TIMEOUT_USEC for a whole run; launch:
 * whether dirmngr may be started (upstream_fetch()). -ENAMETOOLONG for a home of PATH_MAX or
 * more, never a shorter one. */
int upstream_watch_new(sd_event *e, const char *home, uint64_t timeout_usec, bool launch,
                       upstream_done_fn fn, void *userdata, struct upstream_watch **ret);
/* Walks away from a running check (its thread ends on its own). */
struct upstream_watch *upstream_watch_free(struct upstream_watch *w);

/*
 * Starts a run over the n fingerprints (relied_on[i]: only a revocation counts; mails[i]: the
 * address whose Web Key Directory is asked too, "" none; mails may be NULL), at most
 * UPSTREAM_KEYS_MAX. full: every key, the results replace the last full run's (CheckUpstream);
 * while a full run is on, another joins it (returns 0) and a one-key run is refused (-EBUSY). A
 * full run asked for during a one-key run ends that one first. Returns 0 or -errno.
 */
int upstream_watch_check(struct upstream_watch *w, const char (*fprs)[FPR_HEX_MAX],
                         const bool *relied_on, const char (*mails)[UPSTREAM_MAIL_MAX], size_t n,
                         bool full);
bool upstream_watch_running(const struct upstream_watch *w);

/* Each key's last result (a failed fetch keeps the copy fetched before it). */
size_t upstream_watch_results(const struct upstream_watch *w, const struct upstream_result **ret);
/* What the last run could not do ("" when it did all), and when it ended (0: never). */
const char *upstream_watch_error(const struct upstream_watch *w);
int64_t upstream_watch_checked(const struct upstream_watch *w);
/* Keys the last run found unpublished. */
unsigned upstream_watch_not_found(const struct upstream_watch *w);
