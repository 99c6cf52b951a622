/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the codec*.c files share and nothing else may use: the encoding helpers, the decoding
 * callbacks for types.h's enums and bit sets, the field-table macros, and the two pieces of the
 * status that an event reuses. Every type's own encoder, table and decoder stays in its file.
 *
 * Does not: belong to the API (codec.h): nothing but the codec*.c files includes it.
 */
#pragma once

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "codec.h"
#include "types.h"
#include "varlink.h"

/* ---- encoding helpers: each returns 0 or -ENOMEM, and consumes v ---- */

/* Static inline so that names this short never become symbols of the library. */

static inline int put(json_object *o, const char *k, json_object *v)
{
	return varlink_json_add(o, k, v);
}

static inline int put_str(json_object *o, const char *k, const char *s)
{
	return put(o, k, json_object_new_string(s));
}

static inline int put_bool(json_object *o, const char *k, bool b)
{
	return put(o, k, json_object_new_boolean(b));
}

static inline int put_int(json_object *o, const char *k, int64_t v)
{
	return put(o, k, json_object_new_int64(v));
}

/* "name": "2026-12-08T10:00:00Z", "name_epoch": N; neither when t is 0. */
static inline int put_time(json_object *o, const char *k, int64_t t)
{
	char ek[64], buf[CODEC_TIME_MAX];
	int r;

	if (t == 0)
		return 0;
	snprintf(ek, sizeof(ek), "%s_epoch", k);
	if (codec_format_time(t, buf, sizeof(buf)) >= 0) {
		r = put_str(o, k, buf);
		if (r < 0)
			return r;
	}
	return put_int(o, ek, t);
}

/* One bit of a bit set and its name on the wire; tables end with an empty entry. */
struct bit_name {
	unsigned bit;
	const char *name;
};

static inline int put_bits(json_object *o, const char *k, unsigned bits,
                           const struct bit_name *names)
{
	json_object *a = json_object_new_array();

	if (!a)
		return -ENOMEM;
	for (; names->name; names++)
		if ((bits & names->bit) &&
		    json_object_array_add(a, json_object_new_string(names->name)) < 0) {
			json_object_put(a);
			return -ENOMEM;
		}
	return put(o, k, a);
}

/* ---- decoding callbacks (varlink_dispatch_fn) ---- */

int codec_dispatch_bits(json_object *v, unsigned *ret, const struct bit_name *names);
int codec_dispatch_time_text(json_object *v, void *field, void *userdata);
/* Each enum travels as its *_to_string() name; an unknown name is -EBADMSG. */
int codec_dispatch_token_kind(json_object *v, void *field, void *userdata);
int codec_dispatch_read_path(json_object *v, void *field, void *userdata);
int codec_dispatch_touch(json_object *v, void *field, void *userdata);
int codec_dispatch_level(json_object *v, void *field, void *userdata);
int codec_dispatch_secret(json_object *v, void *field, void *userdata);
int codec_dispatch_event_type(json_object *v, void *field, void *userdata);
int codec_dispatch_touch_app(json_object *v, void *field, void *userdata);
int codec_dispatch_touch_end(json_object *v, void *field, void *userdata);
int codec_dispatch_piv_read(json_object *v, void *field, void *userdata);

#define M VARLINK_MANDATORY
#define N VARLINK_NULLABLE
/* clang-format 14 and 19 lay brace-initialiser macros out differently: kept as written. */
/* clang-format off */
#define F_STR(st, m, fl) { #m, VARLINK_STRING, fl, offsetof(st, m), sizeof(((st *)0)->m), NULL }
#define F_BOOL(st, m) { #m, VARLINK_BOOL, M, offsetof(st, m), 0, NULL }
#define F_TYPE(st, m, t, fl) { #m, t, fl, offsetof(st, m), 0, NULL }
#define F_CB(name, st, m, fl, cb) { name, VARLINK_CUSTOM, fl, offsetof(st, m), 0, cb }
#define F_TIME(st, m) \
	{ #m, VARLINK_CUSTOM, N, 0, 0, codec_dispatch_time_text }, \
	{ #m "_epoch", VARLINK_INT64, N, offsetof(st, m), 0, NULL }
/* clang-format on */

/* Decodes obj with table into *ret, zeroed first; on failure runs done (may be NULL) and zeroes
 * again, so that *ret never owns anything after an error. */
int codec_decode(json_object *obj, const struct varlink_field *table, void *ret, size_t size,
                 void *userdata, void (*done)(void *));

/* ---- the status, as a "state" event carries it too (codec-status.c) ---- */

/* Adds "daemon", "tokens", "keys" and "findings" to o. */
int codec_put_status(json_object *o, const struct daemon_info *d, const struct token *tokens,
                     size_t n_tokens, const struct key *keys, size_t n_keys,
                     const struct finding *findings, size_t n_findings);
/* Decodes the arrays of o into s, which is not zeroed first; "daemon" is left to the caller. */
int codec_status_arrays_from_json(json_object *o, struct keyctl_status *s);
