/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The codec's shared half: the RFC 3339 time format, and the decoding callbacks every type's
 * table uses (enums travel as their *_to_string() names, bit sets as arrays of names, times as
 * RFC 3339 plus epoch, of which only the epoch is trusted). Each type's encoder, table and decoder
 * live in their own file: codec-token.c (CardSlot, OpenPGPCard, Token), codec-key.c (Subkey, Key),
 * codec-status.c (Finding, DaemonInfo and the status) and codec-event.c (Watch's events); the
 * encoding helpers are static inline in codec-internal.h.
 *
 * Does not: frame messages, or accept anything that does not fit: a string longer than its
 * buffer or an array longer than its *_MAX is -EMSGSIZE, never cut.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "codec-internal.h"
#include "util.h"

int codec_format_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if ((int64_t)tt != t || !gmtime_r(&tt, &tm))
		return -ERANGE;
	/* Four-digit years only: RFC 3339 has no others. */
	if (tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
		return -ERANGE;
	if (strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		return -ENOBUFS;
	return 0;
}

/* ---- decoding callbacks (varlink_dispatch_fn) ---- */

#define BITS_ITEMS_MAX 16

int codec_dispatch_bits(json_object *v, unsigned *ret, const struct bit_name *names)
{
	size_t n;
	unsigned bits = 0;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > BITS_ITEMS_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(v, i);
		const struct bit_name *b;

		if (!json_object_is_type(e, json_type_string))
			return -EBADMSG;
		for (b = names; b->name; b++)
			if (streq(b->name, json_object_get_string(e)))
				break;
		if (!b->name)
			return -EBADMSG;
		bits |= b->bit;
	}
	*ret = bits;
	return 0;
}

/* The RFC 3339 twin of an _epoch field: for people; checked for shape, then ignored. */
int codec_dispatch_time_text(json_object *v, void *field, void *userdata)
{
	if (!json_object_is_type(v, json_type_string))
		return -EBADMSG;
	if ((size_t)json_object_get_string_len(v) >= CODEC_TIME_MAX)
		return -EMSGSIZE;
	return 0;
}

#define DEFINE_ENUM_DISPATCH(fn, type, from_string)            \
	int fn(json_object *v, void *field, void *userdata)    \
	{                                                      \
		int r;                                         \
                                                               \
		if (!json_object_is_type(v, json_type_string)) \
			return -EBADMSG;                       \
		r = from_string(json_object_get_string(v));    \
		if (r < 0)                                     \
			return -EBADMSG;                       \
		*(type *)field = (type)r;                      \
		return 0;                                      \
	}

DEFINE_ENUM_DISPATCH(codec_dispatch_token_kind, enum token_kind, token_kind_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_read_path, enum read_path, read_path_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_touch, enum touch_policy, touch_policy_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_level, enum level, level_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_secret, enum secret_location, secret_location_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_event_type, enum event_type, event_type_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_touch_app, enum touch_app, touch_app_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_touch_end, enum touch_end, touch_end_from_string)
DEFINE_ENUM_DISPATCH(codec_dispatch_piv_read, enum piv_read, piv_read_from_string)

int codec_decode(json_object *obj, const struct varlink_field *table, void *ret, size_t size,
                 void *userdata, void (*done)(void *))
{
	int r;

	memset(ret, 0, size);
	r = varlink_dispatch(obj, table, VARLINK_DISPATCH_ALLOW_UNKNOWN, ret, userdata, NULL);
	if (r < 0) {
		if (done)
			done(ret);
		memset(ret, 0, size);
	}
	return r;
}

int codec_state_file(const uint8_t *p, size_t n, size_t max, int64_t version, const char *field,
                     json_object **ret_root, json_object **ret_array)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *v, *a;
	int r;

	if (n > max)
		return -EMSGSIZE;
	if (memchr(p, 0, n))
		return -EBADMSG;
	r = varlink_message_parse((const char *)p, n, &o);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(o, "version", &v) ||
	    !json_object_is_type(v, json_type_int) || json_object_get_int64(v) != version)
		return -EBADMSG;
	if (!json_object_object_get_ex(o, field, &a) || !json_object_is_type(a, json_type_array))
		return -EBADMSG;
	*ret_array = a;
	*ret_root = TAKE_PTR(o);
	return 0;
}
