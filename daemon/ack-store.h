/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Acknowledged findings (keyctl-status --ack): the ids the user said "I know" to, each with the
 * level the finding had then, remembered across restarts in acks.json in the state directory.
 * The file lives in the user's home: it is parsed strictly and bounded (ACKS_MAX acks, ids
 * shorter than FINDING_ID_MAX), and a bad one costs the acks, never the daemon.
 *
 * Does not: decide which finding an ack covers (audit-ack.c), or talk to clients
 * (server-methods.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define ACK_FILE_MAX (128u * 1024u)

struct ack {
	char id[FINDING_ID_MAX]; /* finding_id() of the finding */
	enum level level; /* its level when it was acknowledged: a higher one shows it again */
};

/* True when id could be a finding's id: 1 to FINDING_ID_MAX - 1 bytes of letters, digits and
 * "-_.:@". */
bool ack_id_valid(const char *id);

/* Parses acks.json's bytes into ret (max entries). Pure. Returns the number of acks, -EBADMSG
 * for malformed input (a bad id or level, an id twice), -EMSGSIZE over the limits. */
int ack_parse(const uint8_t *p, size_t n, struct ack *ret, size_t max);

/* acks.json's text for acks, malloc'd. Returns 0 or -ENOMEM. */
int ack_format(const struct ack *acks, size_t n, char **ret);

struct ack_store {
	char path[PATH_MAX]; /* "" when the acks are not kept on disk */
	size_t n;
	bool dirty; /* changed since it was last saved */
	struct ack acks[ACKS_MAX];
};

/* The store for dir/acks.json, loaded. A missing file is no ack; a bad one is reported through
 * ret_error (a sentence; "" when fine) and ignored. Returns 0 or -errno. */
int ack_store_new(const char *dir, char *ret_error, size_t errsize, struct ack_store **ret);
struct ack_store *ack_store_free(struct ack_store *s);

/* The ack with id, or NULL. */
const struct ack *ack_store_find(const struct ack_store *s, const char *id);
/* Adds id at level (or sets the level of the one there). -ENOSPC when ACKS_MAX are kept. */
int ack_store_add(struct ack_store *s, const char *id, enum level level);
/* -ENOENT when id is not acknowledged. */
int ack_store_remove(struct ack_store *s, const char *id);
/* Writes acks.json atomically (protocol/fileio.h); clears dirty. */
int ack_store_save(struct ack_store *s);

/*
 * The daemon's one store: set by state.c, which loads it with the tokens, and read by the audit
 * (audit-ack.c) and the Ack and Unack methods. NULL when there is none (no state directory, or a
 * program that never set one, such as a unit test): nothing is then acknowledged.
 */
void ack_store_set_current(struct ack_store *s);
struct ack_store *ack_store_current(void);
