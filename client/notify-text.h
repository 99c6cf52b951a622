/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keyctl-notify says: the summary, body and urgency of each notification, composed from the
 * types.h structs a Watch reply decoded into. Pure: every function takes `now` and writes into
 * the caller's struct; no clock, no D-Bus, no markup escaping (notify.c escapes for servers with
 * "body-markup").
 *
 * Does not: decide whether something is announced (notify-state.c) or show it (notify.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* The urgency byte of the Desktop Notifications spec 1.2 ("urgency" hint), as libnotify's
 * NotifyUrgency numbers it. */
enum notify_text_urgency {
	NOTIFY_TEXT_URGENCY_LOW = 0,
	NOTIFY_TEXT_URGENCY_NORMAL = 1,
	NOTIFY_TEXT_URGENCY_CRITICAL = 2,
};

#define NOTIFY_SUMMARY_MAX 256
#define NOTIFY_BODY_MAX 4096
#define NOTIFY_TOKEN_NAME_MAX 128

struct notify_text {
	char summary[NOTIFY_SUMMARY_MAX];
	char body[NOTIFY_BODY_MAX];
	enum notify_text_urgency urgency;
};

/* notice and warning: normal; critical and expired: critical; ok: low. */
enum notify_text_urgency notify_text_urgency_for(enum level l);

/* GnuPG's long key id: the last 16 hex digits of a fingerprint, "8C1A2B3C4D5E6F70". */
const char *notify_text_short_fpr(const char *fpr);

/* The fingerprint grouped as `gpg --fingerprint` prints it: ten groups of four, two spaces in the
 * middle ("ABCD 1234 ... 5678  9ABC ..."); a fingerprint of another length is copied as is. */
void notify_text_group_fpr(char *buf, size_t size, const char *fpr);

/* "sign", "encrypt", "auth", "certify", joined with "/" for several ("sign/auth"); "" for none. */
void notify_text_usage(char *buf, size_t size, unsigned caps);

/*
 * A subkey that crossed an expiry threshold. token: the token holding it (NULL when unknown);
 * renewal_url: "" or NULL for none; details: append fingerprint, algorithm and dates (for servers
 * without actions, where "Details" cannot be a button).
 */
void notify_text_expiry(const struct key *k, const struct subkey *s, const struct token *token,
                        const char *renewal_url, bool details, int64_t now,
                        struct notify_text *ret);

/* A token was plugged in that holds subkeys at notice or worse (token_id == t->id). Returns 0 and
 * the text, or -ENOENT when it holds none. */
int notify_text_token_inserted(const struct token *t, const struct key *keys, size_t n_keys,
                               const char *renewal_url, int64_t now, struct notify_text *ret);

/* An audit finding. key and token: what it names, when known (NULL otherwise). */
void notify_text_finding(const struct finding *f, const struct key *key, const struct token *token,
                         struct notify_text *ret);

/* A token waiting for a touch: "YubiKey 5 NFC #12345678 waits for a touch", body "signing key;
 * likely git" (touch_pending_describe()), urgency normal. Returns 0, or -ENOENT when t does
 * not wait. */
int notify_text_touch(const struct token *t, struct notify_text *ret);
