/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The status <-> JSON: GetStatus's parameters (the daemon's info, its tokens, keys and findings)
 * and the one-array replies of GetTokens, GetKeys and GetFindings, with the two types that only
 * the status brings: DaemonInfo and Finding. An array's items are encoded and decoded by their
 * own type's file; here they are counted against TOKENS_MAX, KEYS_MAX and FINDINGS_MAX.
 *
 * Does not: encode or decode a token or a key (codec-token.c, codec-key.c), or Watch's events
 * (codec-event.c), which reuse the arrays for their "state".
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec-internal.h"
#include "config.h"
#include "util.h"

/* ---- Finding, DaemonInfo ---- */

int codec_finding_to_json(const struct finding *f, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	char id[FINDING_ID_MAX];

	finding_id(f, id, sizeof(id));
	if (!o || put_str(o, "id", id) < 0 || put_str(o, "rule", f->rule) < 0 ||
	    put_str(o, "level", level_to_string(f->level)) < 0 ||
	    put_str(o, "message", f->message) < 0 || put_str(o, "key", f->key) < 0 ||
	    put_str(o, "subkey", f->subkey) < 0 || put_str(o, "token", f->token) < 0 ||
	    put_str(o, "hint", f->hint) < 0 || (f->acked && put_bool(o, "acked", true) < 0))
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static const struct varlink_field finding_table[] = {
	F_STR(struct finding, rule, M),
	F_CB("level", struct finding, level, M, codec_dispatch_level),
	F_STR(struct finding, message, M),
	F_STR(struct finding, key, M),
	F_STR(struct finding, subkey, M),
	F_STR(struct finding, token, M),
	F_STR(struct finding, hint, M),
	/* "id" is derived from the fields above (finding_id()): not read. */
	{ "acked", VARLINK_BOOL, N, offsetof(struct finding, acked), 0, NULL },
	{},
};

int codec_finding_from_json(json_object *o, struct finding *ret)
{
	return codec_decode(o, finding_table, ret, sizeof(*ret), NULL, NULL);
}

static int put_thresholds(json_object *o, const struct daemon_info *d)
{
	json_object *a = json_object_new_array_ext((int)d->n_thresholds);

	if (put(o, "thresholds", a) < 0)
		return -ENOMEM;
	for (unsigned i = 0; i < d->n_thresholds && i < THRESHOLDS_MAX; i++)
		if (json_object_array_add(a, json_object_new_int64(d->thresholds[i])) < 0)
			return -ENOMEM;
	return 0;
}

int codec_daemon_info_to_json(const struct daemon_info *d, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_str(o, "version", d->version) < 0 || put_time(o, "started", d->started) < 0 ||
	    put_time(o, "now", d->now) < 0 ||
	    put_bool(o, "pcsc_available", d->pcsc_available) < 0 ||
	    put_str(o, "pcsc_error", d->pcsc_error) < 0 ||
	    put_str(o, "gnupghome", d->gnupghome) < 0 ||
	    put_bool(o, "keyring_stale", d->keyring_stale) < 0 ||
	    put_str(o, "keyring_error", d->keyring_error) < 0 ||
	    put_time(o, "keyring_refreshed", d->keyring_refreshed) < 0 ||
	    put_time(o, "next_deadline", d->next_deadline) < 0 || put_thresholds(o, d) < 0 ||
	    put_int(o, "warning_days", d->warning_days) < 0 ||
	    put_int(o, "critical_days", d->critical_days) < 0 ||
	    put_str(o, "renewal_url", d->renewal_url) < 0 ||
	    put_time(o, "upstream_checked", d->upstream_checked) < 0 ||
	    put_str(o, "upstream_error", d->upstream_error) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

/* Held to keyctl.conf's rule for thresholds (config_threshold_may_follow). */
static int dispatch_thresholds(json_object *v, void *field, void *userdata)
{
	struct daemon_info *d =
	        (struct daemon_info *)((uint8_t *)field - offsetof(struct daemon_info, thresholds));
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > THRESHOLDS_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		int64_t x;
		int r = varlink_json_int64(json_object_array_get_idx(v, i), &x);

		if (r < 0)
			return r;
		if (!config_threshold_may_follow(d->thresholds, i, x))
			return -EBADMSG;
		d->thresholds[i] = (unsigned)x;
	}
	d->n_thresholds = (unsigned)n;
	return 0;
}

static const struct varlink_field daemon_info_table[] = {
	F_STR(struct daemon_info, version, M),
	F_TIME(struct daemon_info, started),
	F_TIME(struct daemon_info, now),
	F_BOOL(struct daemon_info, pcsc_available),
	F_STR(struct daemon_info, pcsc_error, N),
	F_STR(struct daemon_info, gnupghome, M),
	F_BOOL(struct daemon_info, keyring_stale),
	F_STR(struct daemon_info, keyring_error, M),
	F_TIME(struct daemon_info, keyring_refreshed),
	F_TIME(struct daemon_info, next_deadline),
	F_CB("thresholds", struct daemon_info, thresholds, N, dispatch_thresholds),
	F_TYPE(struct daemon_info, warning_days, VARLINK_UINT32, N),
	F_TYPE(struct daemon_info, critical_days, VARLINK_UINT32, N),
	F_STR(struct daemon_info, renewal_url, N),
	F_TIME(struct daemon_info, upstream_checked),
	F_STR(struct daemon_info, upstream_error, N),
	{},
};

int codec_daemon_info_from_json(json_object *o, struct daemon_info *ret)
{
	return codec_decode(o, daemon_info_table, ret, sizeof(*ret), NULL, NULL);
}

/* ---- arrays and the status ---- */

static int put_array(json_object *o, const char *k, const void *items, size_t n, size_t size,
                     int (*enc)(const void *, json_object **))
{
	json_object *a = json_object_new_array_ext((int)MIN(n, (size_t)KEYS_MAX));

	if (put(o, k, a) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		json_object *e;

		if (enc((const uint8_t *)items + i * size, &e) < 0)
			return -ENOMEM;
		if (json_object_array_add(a, e) < 0) {
			json_object_put(e);
			return -ENOMEM;
		}
	}
	return 0;
}

static int enc_token(const void *p, json_object **ret)
{
	return codec_token_to_json(p, ret);
}
static int enc_key(const void *p, json_object **ret)
{
	return codec_key_to_json(p, ret);
}
static int enc_finding(const void *p, json_object **ret)
{
	return codec_finding_to_json(p, ret);
}

int codec_put_status(json_object *o, const struct daemon_info *d, const struct token *tokens,
                     size_t n_tokens, const struct key *keys, size_t n_keys,
                     const struct finding *findings, size_t n_findings)
{
	json_object *di;

	if (codec_daemon_info_to_json(d, &di) < 0 || put(o, "daemon", di) < 0 ||
	    put_array(o, "tokens", tokens, n_tokens, sizeof(*tokens), enc_token) < 0 ||
	    put_array(o, "keys", keys, n_keys, sizeof(*keys), enc_key) < 0 ||
	    put_array(o, "findings", findings, n_findings, sizeof(*findings), enc_finding) < 0)
		return -ENOMEM;
	return 0;
}

int codec_status_to_json(const struct daemon_info *d, const struct token *tokens, size_t n_tokens,
                         const struct key *keys, size_t n_keys, const struct finding *findings,
                         size_t n_findings, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || codec_put_status(o, d, tokens, n_tokens, keys, n_keys, findings, n_findings) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

int codec_tokens_to_json(const struct token *tokens, size_t n, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_array(o, "tokens", tokens, n, sizeof(*tokens), enc_token) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

int codec_keys_to_json(const struct key *keys, size_t n, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_array(o, "keys", keys, n, sizeof(*keys), enc_key) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

int codec_findings_to_json(const struct finding *f, size_t n, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_array(o, "findings", f, n, sizeof(*f), enc_finding) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

void keyctl_status_done(struct keyctl_status *s)
{
	for (size_t i = 0; i < s->n_keys; i++)
		key_done(&s->keys[i]);
	free(s->keys);
	free(s->tokens);
	free(s->findings);
	memset(s, 0, sizeof(*s));
}

/* Checks an array of at most max items and allocates n zeroed items of size. */
static int array_begin(json_object *v, size_t max, size_t size, void **ret, size_t *ret_n)
{
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > max)
		return -EMSGSIZE;
	*ret_n = n;
	*ret = NULL;
	if (n == 0)
		return 0;
	*ret = calloc(n, size);
	return *ret ? 0 : -ENOMEM;
}

static int dispatch_tokens(json_object *v, void *field, void *userdata)
{
	struct keyctl_status *s = field;
	void *a;
	size_t n;
	int r;

	if (s->tokens)
		return -EBADMSG;
	r = array_begin(v, TOKENS_MAX, sizeof(struct token), &a, &n);
	if (r < 0)
		return r;
	s->tokens = a;
	s->n_tokens = n;
	for (size_t i = 0; i < n; i++) {
		r = codec_token_from_json(json_object_array_get_idx(v, i), &s->tokens[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int dispatch_keys(json_object *v, void *field, void *userdata)
{
	struct keyctl_status *s = field;
	void *a;
	size_t n;
	int r;

	if (s->keys)
		return -EBADMSG;
	r = array_begin(v, KEYS_MAX, sizeof(struct key), &a, &n);
	if (r < 0)
		return r;
	s->keys = a;
	/* n_keys counts decoded keys only, so that done() frees exactly what was allocated. */
	for (size_t i = 0; i < n; i++) {
		r = codec_key_from_json(json_object_array_get_idx(v, i), &s->keys[i]);
		if (r < 0)
			return r;
		s->n_keys = i + 1;
	}
	return 0;
}

static int dispatch_findings(json_object *v, void *field, void *userdata)
{
	struct keyctl_status *s = field;
	void *a;
	size_t n;
	int r;

	if (s->findings)
		return -EBADMSG;
	r = array_begin(v, FINDINGS_MAX, sizeof(struct finding), &a, &n);
	if (r < 0)
		return r;
	s->findings = a;
	s->n_findings = n;
	for (size_t i = 0; i < n; i++) {
		r = codec_finding_from_json(json_object_array_get_idx(v, i), &s->findings[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int dispatch_daemon(json_object *v, void *field, void *userdata)
{
	return codec_daemon_info_from_json(v, field);
}

static const struct varlink_field status_table[] = {
	{ "daemon", VARLINK_CUSTOM, N, offsetof(struct keyctl_status, daemon), 0, dispatch_daemon },
	{ "tokens", VARLINK_CUSTOM, N, 0, 0, dispatch_tokens },
	{ "keys", VARLINK_CUSTOM, N, 0, 0, dispatch_keys },
	{ "findings", VARLINK_CUSTOM, N, 0, 0, dispatch_findings },
	{},
};

int codec_status_arrays_from_json(json_object *o, struct keyctl_status *s)
{
	/* Without "daemon": an event decodes its own, to know whether it was there (has_daemon). */
	return varlink_dispatch(o, status_table + 1, VARLINK_DISPATCH_ALLOW_UNKNOWN, s, NULL, NULL);
}

static void status_done_cb(void *p)
{
	keyctl_status_done(p);
}

int codec_status_from_json(json_object *params, struct keyctl_status *ret)
{
	return codec_decode(params, status_table, ret, sizeof(*ret), NULL, status_done_cb);
}
