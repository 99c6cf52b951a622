/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A GnuPG key <-> JSON: the Key type of io.keyctl.varlink with its Subkeys, each carrying its
 * capabilities as an array of names and its level as computed by the daemon.
 *
 * Does not: encode or decode tokens (codec-token.c), or compute levels (daemon/expiry.c).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "codec-internal.h"
#include "util.h"

static const struct bit_name cap_names[] = {
	{ CAP_SIGN, "sign" },
	{ CAP_ENCRYPT, "encrypt" },
	{ CAP_AUTH, "authenticate" },
	{ CAP_CERTIFY, "certify" },
	{},
};

static int dispatch_caps(json_object *v, void *field, void *userdata)
{
	return codec_dispatch_bits(v, field, cap_names);
}

int codec_subkey_to_json(const struct subkey *s, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (put_str(o, "fingerprint", s->fingerprint) < 0 ||
	    put_str(o, "keygrip", s->keygrip) < 0 || put_str(o, "algorithm", s->algorithm) < 0 ||
	    put_bits(o, "capabilities", s->capabilities, cap_names) < 0 ||
	    put_bool(o, "is_primary", s->is_primary) < 0 ||
	    put_time(o, "created", s->created) < 0 || put_time(o, "expires", s->expires) < 0 ||
	    put_bool(o, "revoked", s->revoked) < 0 || put_bool(o, "expired", s->expired) < 0 ||
	    put_bool(o, "disabled", s->disabled) < 0 ||
	    put_str(o, "secret", secret_location_to_string(s->secret)) < 0 ||
	    put_str(o, "card_serial", s->card_serial) < 0 ||
	    put_str(o, "token_id", s->token_id) < 0 ||
	    put_str(o, "level", level_to_string(s->level)) < 0)
		return -ENOMEM;
	/* Only when true: one subkey in all has it. */
	if (s->git_signs && put_bool(o, "git_signs", true) < 0)
		return -ENOMEM;
	if (!isempty(s->replaced_by) && put_str(o, "replaced_by", s->replaced_by) < 0)
		return -ENOMEM;
	if (s->acked && put_bool(o, "acked", true) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static const struct varlink_field subkey_table[] = {
	F_STR(struct subkey, fingerprint, M),
	F_STR(struct subkey, keygrip, M),
	F_STR(struct subkey, algorithm, M),
	F_CB("capabilities", struct subkey, capabilities, M, dispatch_caps),
	F_BOOL(struct subkey, is_primary),
	F_TIME(struct subkey, created),
	F_TIME(struct subkey, expires),
	F_BOOL(struct subkey, revoked),
	F_BOOL(struct subkey, expired),
	F_BOOL(struct subkey, disabled),
	F_CB("secret", struct subkey, secret, M, codec_dispatch_secret),
	F_STR(struct subkey, card_serial, M),
	F_STR(struct subkey, token_id, M),
	F_CB("level", struct subkey, level, M, codec_dispatch_level),
	{ "git_signs", VARLINK_BOOL, 0, offsetof(struct subkey, git_signs), 0, NULL },
	F_STR(struct subkey, replaced_by, N),
	{ "acked", VARLINK_BOOL, 0, offsetof(struct subkey, acked), 0, NULL },
	{},
};

int codec_subkey_from_json(json_object *o, struct subkey *ret)
{
	return codec_decode(o, subkey_table, ret, sizeof(*ret), NULL, NULL);
}

int codec_key_to_json(const struct key *k, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	json_object *subs;

	if (!o)
		return -ENOMEM;
	if (put_str(o, "fingerprint", k->fingerprint) < 0 || put_str(o, "uid", k->uid) < 0 ||
	    put_bool(o, "revoked", k->revoked) < 0 || put_bool(o, "expired", k->expired) < 0 ||
	    put_bool(o, "disabled", k->disabled) < 0 ||
	    put_bool(o, "has_secret", k->has_secret) < 0 ||
	    put_bool(o, "tracked", k->tracked) < 0 ||
	    put_str(o, "level", level_to_string(k->level)) < 0)
		return -ENOMEM;
	if (k->relied_on && put_bool(o, "relied_on", true) < 0)
		return -ENOMEM;
	if (k->retired && put_bool(o, "retired", true) < 0)
		return -ENOMEM;
	if (put_time(o, "upstream_checked", k->upstream_checked) < 0 ||
	    (!isempty(k->upstream_error) && put_str(o, "upstream_error", k->upstream_error) < 0))
		return -ENOMEM;
	subs = json_object_new_array_ext((int)MIN(k->n_subkeys, (size_t)SUBKEYS_MAX));
	if (put(o, "subkeys", subs) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < k->n_subkeys; i++) {
		json_object *s;

		if (codec_subkey_to_json(&k->subkeys[i], &s) < 0)
			return -ENOMEM;
		if (json_object_array_add(subs, s) < 0) {
			json_object_put(s);
			return -ENOMEM;
		}
	}
	*ret = TAKE_PTR(o);
	return 0;
}

static int dispatch_subkeys(json_object *v, void *field, void *userdata)
{
	struct key *k = field;
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > SUBKEYS_MAX)
		return -EMSGSIZE;
	free(k->subkeys);
	k->subkeys = NULL;
	k->n_subkeys = 0;
	if (n == 0)
		return 0;
	k->subkeys = calloc(n, sizeof(struct subkey));
	if (!k->subkeys)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int r = codec_subkey_from_json(json_object_array_get_idx(v, i), &k->subkeys[i]);
		if (r < 0)
			return r; /* the key's done() frees the array */
		k->n_subkeys = i + 1;
	}
	return 0;
}

static const struct varlink_field key_table[] = {
	F_STR(struct key, fingerprint, M),
	F_STR(struct key, uid, M),
	F_BOOL(struct key, revoked),
	F_BOOL(struct key, expired),
	F_BOOL(struct key, disabled),
	F_BOOL(struct key, has_secret),
	F_BOOL(struct key, tracked),
	{ "relied_on", VARLINK_BOOL, 0, offsetof(struct key, relied_on), 0, NULL },
	{ "retired", VARLINK_BOOL, 0, offsetof(struct key, retired), 0, NULL },
	F_TIME(struct key, upstream_checked),
	F_STR(struct key, upstream_error, N),
	F_CB("level", struct key, level, M, codec_dispatch_level),
	{ "subkeys", VARLINK_CUSTOM, M, 0, 0, dispatch_subkeys },
	{},
};

static void key_done_cb(void *p)
{
	key_done(p);
}

int codec_key_from_json(json_object *o, struct key *ret)
{
	return codec_decode(o, key_table, ret, sizeof(*ret), NULL, key_done_cb);
}
