/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * types.h structs <-> JSON, field for field as io.keyctl.varlink declares them. Encoding is for
 * the daemon, decoding for the clients. Decoding is strict: every field's JSON type is checked,
 * strings must fit their fixed buffers (-EMSGSIZE, never cut), enums must be known names
 * (-EBADMSG), arrays are bounded by TOKENS_MAX, KEYS_MAX, SUBKEYS_MAX, FINDINGS_MAX (-EMSGSIZE).
 * Fields the decoder does not know are ignored, so an older client can read a newer daemon.
 * Times go out twice: "created": "2026-12-08T10:00:00Z" (RFC 3339, UTC) and "created_epoch": N;
 * both absent when the value is 0 ("never", "unset"). Decoding trusts only the _epoch field.
 *
 * Does not: frame, send or receive (varlink.c, client.c), or judge what it decodes.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Each *_to_json returns 0 and a new object in *ret, or -ENOMEM. Each *_from_json fills *ret
 * (zeroed first, so that a decoded struct memcmp()s equal to a zeroed original) and returns 0,
 * -EBADMSG or -EMSGSIZE; on failure *ret is zeroed again and owns nothing. */
int codec_card_slot_to_json(const struct card_slot *s, json_object **ret);
int codec_card_slot_from_json(json_object *o, struct card_slot *ret);
int codec_openpgp_card_to_json(const struct openpgp_card *c, json_object **ret);
int codec_openpgp_card_from_json(json_object *o, struct openpgp_card *ret);
/* TouchPending: from_json also refuses what touch_pending_check() refuses (-EBADMSG). */
int codec_touch_pending_to_json(const struct touch_pending *tp, json_object **ret);
int codec_touch_pending_from_json(json_object *o, struct touch_pending *ret);
int codec_piv_app_to_json(const struct piv_app *p, json_object **ret);
int codec_piv_app_from_json(json_object *o, struct piv_app *ret);
int codec_token_to_json(const struct token *t, json_object **ret);
int codec_token_from_json(json_object *o, struct token *ret);
int codec_subkey_to_json(const struct subkey *s, json_object **ret);
int codec_subkey_from_json(json_object *o, struct subkey *ret);
/* A key with its subkeys; from_json allocates ret->subkeys (free with key_done()). */
int codec_key_to_json(const struct key *k, json_object **ret);
int codec_key_from_json(json_object *o, struct key *ret);
int codec_finding_to_json(const struct finding *f, json_object **ret);
int codec_finding_from_json(json_object *o, struct finding *ret);
int codec_daemon_info_to_json(const struct daemon_info *d, json_object **ret);
int codec_daemon_info_from_json(json_object *o, struct daemon_info *ret);

/* GetStatus's reply parameters, decoded. Owns its arrays. */
struct keyctl_status {
	struct daemon_info daemon;
	size_t n_tokens;
	struct token *tokens;
	size_t n_keys;
	struct key *keys;
	size_t n_findings;
	struct finding *findings;
};
void keyctl_status_done(struct keyctl_status *s);

/* {"daemon": ..., "tokens": [...], "keys": [...], "findings": [...]}. Any of the arrays may be
 * skipped by passing has_* false (GetTokens, GetKeys, GetFindings reply with one of them). */
int codec_status_to_json(const struct daemon_info *d, const struct token *tokens, size_t n_tokens,
                         const struct key *keys, size_t n_keys, const struct finding *findings,
                         size_t n_findings, json_object **ret);
int codec_tokens_to_json(const struct token *tokens, size_t n, json_object **ret); /* {"tokens"} */
int codec_keys_to_json(const struct key *keys, size_t n, json_object **ret); /* {"keys"} */
int codec_findings_to_json(const struct finding *f, size_t n, json_object **ret); /* {"findings"} */

/* Decodes GetStatus's parameters; also the replies of GetTokens, GetKeys and GetFindings, whose
 * one array is filled and the others left empty ("daemon" is then optional). */
int codec_status_from_json(json_object *params, struct keyctl_status *ret);

/* Watch's events. "state" carries the whole status; the others the object they concern. */
enum event_type {
	EVENT_STATE,
	EVENT_TOKEN_ADDED,
	EVENT_TOKEN_CHANGED,
	EVENT_TOKEN_REMOVED,
	EVENT_KEY_ADDED,
	EVENT_KEY_CHANGED,
	EVENT_KEY_REMOVED,
	EVENT_LEVEL_CHANGED,
	EVENT_FINDING_RAISED,
	EVENT_FINDING_CLEARED,
	EVENT_DAEMON_CHANGED,
	EVENT_TOUCH_PENDING, /* token (with touch_pending) */
	EVENT_TOUCH_DONE, /* token (without), touch_end */
	EVENT_MAX,
};
const char *event_type_to_string(enum event_type t); /* "state", "token-added", ... */
int event_type_from_string(const char *s); /* enum value or -EINVAL */

/* One Watch reply's "event", decoded. Only the members its type names are set. */
struct keyctl_event {
	enum event_type type;
	struct keyctl_status status; /* STATE */
	struct token token; /* TOKEN_* */
	struct key key; /* KEY_*, LEVEL_CHANGED (owns its subkeys) */
	char subkey[FPR_HEX_MAX]; /* LEVEL_CHANGED: the subkey whose level moved */
	enum level level, old_level; /* LEVEL_CHANGED */
	struct finding finding; /* FINDING_* */
	struct daemon_info daemon; /* DAEMON_CHANGED, and always the daemon's info when sent */
	bool has_daemon;
	/* TOUCH_DONE: how the wait ended; false when the daemon did not say (then "touched"). */
	bool has_touch_end;
	enum touch_end touch_end;
};
void keyctl_event_done(struct keyctl_event *e);

/* Watch reply parameters: {"event": {"type": ..., ...}}. The encoder builds "state" from a
 * status and the others from their objects (unused pointers NULL). */
int codec_event_state_to_json(const struct daemon_info *d, const struct token *tokens,
                              size_t n_tokens, const struct key *keys, size_t n_keys,
                              const struct finding *findings, size_t n_findings, json_object **ret);
int codec_event_to_json(enum event_type type, const struct token *token, const struct key *key,
                        const char *subkey_fpr, enum level level, enum level old_level,
                        const struct finding *finding, const struct daemon_info *daemon,
                        json_object **ret);
int codec_event_from_json(json_object *params, struct keyctl_event *ret);
/* touch-pending (the token carries touch_pending) or touch-done (with "touch_end": how the wait
 * ended). */
int codec_event_touch_to_json(enum event_type type, const struct token *token, enum touch_end end,
                              json_object **ret);

/* A state file of ours: the JSON object {"version": version, field: [...]} of at most max bytes.
 * Pure. Returns 0 with the object (*ret_root, to put) and its array (*ret_array, borrowed from
 * it); -EMSGSIZE over max; -EBADMSG for a NUL, bad JSON, another version or no such array. */
int codec_state_file(const uint8_t *p, size_t n, size_t max, int64_t version, const char *field,
                     json_object **ret_root, json_object **ret_array);

/* "2026-12-08T10:00:00Z" for epoch seconds (UTC). buf needs at least CODEC_TIME_MAX bytes. */
#define CODEC_TIME_MAX 32
int codec_format_time(int64_t t, char *buf, size_t size);
