/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The read methods' replies (GetStatus, GetTokens, GetKeys, GetFindings), serialised once and
 * sent again to every caller while the model's generation and the second of `now` are the same.
 * A busy monitor then costs a memcpy per call instead of building and printing ~40 KB of JSON.
 * `now` is in GetStatus's DaemonInfo, to the second: a new second writes the new time over the
 * old in the built reply (same width), so a monitor calling every second costs no rebuild.
 *
 * Does not: cache errors, events (server.c builds each event once for all watchers), or answers
 * to oneway calls (there are none to send).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "model.h"

enum server_reply {
	SERVER_REPLY_STATUS,
	SERVER_REPLY_TOKENS,
	SERVER_REPLY_KEYS,
	SERVER_REPLY_FINDINGS,
	SERVER_REPLY_MAX,
};

struct server_cache_entry {
	char *msg; /* the whole reply, NUL included; NULL when not built */
	size_t n;
	uint64_t generation;
	int64_t now;
};

struct server_cache {
	struct server_cache_entry e[SERVER_REPLY_MAX];
	uint64_t hits, patches, builds; /* for the tests and the benchmark */
};

/* The reply to kind for model m, built now if the cached one is stale. *ret points into the
 * cache and stays valid until the next call. Returns 0 or -errno. */
int server_cache_get(struct server_cache *c, const struct model *m, enum server_reply kind,
                     const char **ret, size_t *ret_n);

void server_cache_done(struct server_cache *c);
