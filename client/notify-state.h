/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keyctl-notify has announced, so that restarts and logins repeat nothing: one record per
 * (subject, threshold) in $XDG_STATE_HOME/keyctl/notified. A subject is a subkey fingerprint
 * (threshold = days, 0 once expired) or "finding/<rule>/<subject>" (threshold = the level).
 *
 * The file, line-based text:
 *
 *     # keyctl-notify state 1
 *     <id> <threshold> <expires-epoch> <snooze-until-epoch>
 *
 * one space between fields, '\n' after every line, decimal numbers without sign or leading
 * zeros; an empty file is an empty state. Parsing is strict and bounded (NOTIFY_STATE_*_MAX).
 *
 * Does not: log, read the clock, or know keys beyond what the caller passes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define NOTIFY_STATE_MAGIC "# keyctl-notify state 1"
#define NOTIFY_STATE_RECORDS_MAX 4096
#define NOTIFY_STATE_LINE_MAX 256 /* with its '\n' */
#define NOTIFY_STATE_ID_MAX 128 /* with its NUL */
#define NOTIFY_STATE_THRESHOLD_MAX 36500u
#define NOTIFY_STATE_FILE_MAX (NOTIFY_STATE_RECORDS_MAX * NOTIFY_STATE_LINE_MAX + 64)

struct notify_record {
	char id[NOTIFY_STATE_ID_MAX];
	unsigned threshold;
	int64_t expires; /* the expiry it was announced for; 0 for findings */
	int64_t snooze_until; /* 0: not snoozed */
};

struct notify_state {
	size_t n;
	struct notify_record records[NOTIFY_STATE_RECORDS_MAX];
};

int notify_state_new(struct notify_state **ret);
struct notify_state *notify_state_free(struct notify_state *s);
static inline void notify_state_freep(struct notify_state **s)
{
	if (*s)
		notify_state_free(*s);
}

/* True for an id the file can hold: 1..127 of [0-9A-Za-z._:/@+-]. */
bool notify_state_id_valid(const char *id);

/* Parses n bytes. -EBADMSG on anything malformed, -EMSGSIZE over a limit; *ret untouched then. */
int notify_state_parse(const uint8_t *p, size_t n, struct notify_state **ret);
/* The text of the file. Returns its length, ret is a NUL-terminated malloc()ed string. */
int notify_state_format(const struct notify_state *s, char **ret);

/* Reads path. A missing file is an empty state (returns 0). -EBADMSG/-EMSGSIZE/-EFBIG for a
 * corrupt or oversized file, -errno when unreadable: the caller reports and starts empty. */
int notify_state_load(const char *path, struct notify_state **ret);
/* Writes path atomically: a temporary file beside it, fsync, rename, fsync of the directory.
 * Creates the directory (0700) when missing. */
int notify_state_save(const struct notify_state *s, const char *path);
/* $XDG_STATE_HOME/keyctl/notified, else ~/.local/state/keyctl/notified. -ENXIO without HOME. */
int notify_state_default_path(char *buf, size_t size);

struct notify_record *notify_state_find(struct notify_state *s, const char *id, unsigned threshold);
/* Adds or updates (id, threshold). -EINVAL for an id the file cannot hold, -EMSGSIZE when full. */
int notify_state_put(struct notify_state *s, const char *id, unsigned threshold, int64_t expires,
                     int64_t snooze_until);
/* Drops every record of id; returns how many. */
size_t notify_state_clear(struct notify_state *s, const char *id);

/*
 * The announcement rule for one subkey. threshold: the crossed threshold in days (0: expired),
 * or < 0 when none. A subkey at LEVEL_OK, or whose expiry differs from the one its records were
 * made for (renewed), loses its records first (*ret_changed set when any went). Returns 1 when
 * (fpr, threshold) is to be announced now, 0 when not.
 */
int notify_state_check_subkey(struct notify_state *s, const char *fpr, int64_t expires,
                              enum level level, int threshold, bool *ret_changed);

/* Drops the records whose snooze ended by now, so that what they announced is news again if
 * it still holds when next checked. Returns how many went. */
size_t notify_state_end_snoozes(struct notify_state *s, int64_t now);

/* The earliest snooze end after now; 0 when none. */
int64_t notify_state_next_snooze(const struct notify_state *s, int64_t now);
