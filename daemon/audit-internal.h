/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What audit.c (key rules, the rule table, the run) and audit-token.c (token and daemon rules)
 * share: the run's context, the rule row, and the helpers that word a finding. Private to them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "renew-hint.h"

struct ctx {
	const struct token *tokens;
	size_t n_tokens;
	const struct key *keys;
	size_t n_keys;
	const struct config *cfg;
	const struct audit_daemon *daemon;
	int64_t now;
	struct audit_signing git; /* what git's user.signingkey resolves to */
	struct finding *f;
	size_t n, allocated;
	int error;
};

struct rule;
typedef void (*subkey_rule_fn)(struct ctx *x, const struct rule *r, const struct key *k,
                               const struct subkey *s);
typedef void (*key_rule_fn)(struct ctx *x, const struct rule *r, const struct key *k);
typedef void (*token_rule_fn)(struct ctx *x, const struct rule *r, const struct token *t);
typedef void (*global_rule_fn)(struct ctx *x, const struct rule *r);

struct rule {
	const char *id;
	subkey_rule_fn subkey;
	key_rule_fn key;
	global_rule_fn keys_done; /* after every key, before the tokens */
	token_rule_fn token;
	global_rule_fn daemon; /* last: the daemon's own troubles */
};

/* A finding's words, through snprintf (a cut text is still a text). */
_printf_(3, 4) void audit_textf(char *buf, size_t size, const char *fmt, ...);
/* GnuPG's long key id: the last 16 digits of a fingerprint. */
const char *audit_key_id(const char *fpr);
const char *audit_uid_or_fpr(const struct key *k);
/* "Signing subkey", "Encryption subkey", ... */
const char *audit_subkey_role(const struct subkey *s);
const char *audit_slot_name(enum key_slot s);
/* "YubiKey 5 NFC #12345678" and the like, into buf. */
const char *audit_token_label(const struct token *t, char *buf, size_t size);
/* Appends a finding with its identity (rule, key, subkey, token); NULL when out of memory (the
 * run then fails). */
struct finding *audit_add(struct ctx *x, const char *rule, enum level level, const struct key *k,
                          const struct subkey *s, const struct token *t);
/* The keyring's subkey with fingerprint fpr, and its key. */
const struct subkey *audit_find_subkey(const struct ctx *x, const char *fpr,
                                       const struct key **ret_key);
bool audit_key_expired(const struct key *k);

/* audit-token.c: the rules about a token, and about the daemon itself. */
void rule_counter_went_down(struct ctx *x, const struct rule *r, const struct token *t);
void rule_scdaemon_ccid_conflict(struct ctx *x, const struct rule *r, const struct token *t);
void rule_pin_retries_low(struct ctx *x, const struct rule *r, const struct token *t);
void rule_admin_pin_retries_low(struct ctx *x, const struct rule *r, const struct token *t);
void rule_touch_off_signing(struct ctx *x, const struct rule *r, const struct token *t);
void rule_card_slot_unknown_key(struct ctx *x, const struct rule *r, const struct token *t);
void rule_revoked_key_on_card(struct ctx *x, const struct rule *r, const struct token *t);
void rule_expired_key_on_card(struct ctx *x, const struct rule *r, const struct token *t);
void rule_card_key_no_stub(struct ctx *x, const struct rule *r, const struct token *t);
void rule_backup_token(struct ctx *x, const struct rule *r, const struct token *t);
void rule_token_advisory(struct ctx *x, const struct rule *r, const struct token *t);
void rule_pcsc_refused(struct ctx *x, const struct rule *r);
/* audit-piv.c: a token's PIV certificates and CHUID. */
void rule_piv_cert_expiring(struct ctx *x, const struct rule *r, const struct token *t);
void rule_piv_cert_expired(struct ctx *x, const struct rule *r, const struct token *t);
void rule_piv_chuid_expiring(struct ctx *x, const struct rule *r, const struct token *t);
void rule_daemon_starting(struct ctx *x, const struct rule *r);

/* audit-upstream.c: what the keyserver's copies say (CheckUpstream and the schedule). */
void rule_key_revoked_upstream(struct ctx *x, const struct rule *r);
void rule_key_stale_upstream(struct ctx *x, const struct rule *r);
