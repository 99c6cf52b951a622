/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status's human output: the TOKENS, KEYS and FINDINGS a person reads at a glance.
 * Pure: structs and a clock value in, text out, so that tests compare exact strings.
 * Does not: decide exit codes (status.c), talk to the daemon, or look at the terminal.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "codec.h"
#include "types.h"

/* Writes the whole report. color adds ANSI SGR sequences (the caller decided: tty, NO_COLOR,
 * --color). Dates are UTC, as gpg prints them (expiry-math.h). Returns 0, or -EIO when out failed.
 */
int table_render(FILE *out, const struct daemon_info *d, const struct token *tokens,
                 size_t n_tokens, const struct key *keys, size_t n_keys,
                 const struct finding *findings, size_t n_findings, int64_t now, bool color);

/* One line for a Watch event, "12:03:04 token added: YubiKey 5 NFC #12345678, present", the
 * time being now in local time. Returns 0, or -EIO. */
int table_render_event(FILE *out, const struct keyctl_event *e, int64_t now, bool color);

/* "just now", "5 minutes ago", "1 hour ago", "3 days ago". */
void table_format_ago(char *buf, size_t size, int64_t then, int64_t now);

/* The last 16 hex digits of a fingerprint, the "long key id" GnuPG prints; all of a shorter one. */
const char *table_short_fpr(const char *fpr);

/* "[SC]", "[E]", "[A]"; "[-]" for none. */
void table_format_usage(char *buf, size_t size, unsigned capabilities);

/* "waiting for touch (signing key; likely git)": a token's wait, as its line in the table says it
 * (table-touch.c). */
void table_touch_words(const struct touch_pending *tp, char *buf, size_t size);
/* "touch pending: YubiKey 5 NFC #12345678, waiting for touch (signing key; likely git)", "touch
 * done: YubiKey 5 NFC #12345678, touched": a touch event's words, after --watch's time stamp. */
void table_touch_event_words(const struct keyctl_event *e, char *buf, size_t size);

/* The ANSI SGR sequence for a level ("" for none), shared with the event lines. */
const char *table_level_color(enum level l);
