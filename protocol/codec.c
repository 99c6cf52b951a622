/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * types.h structs <-> json-c objects, as io.keyctl.varlink declares them. Each type has one
 * encoder and one dispatch table (varlink.h) that type-checks every field on the way back; enums
 * travel as their *_to_string() names, bit sets as arrays of names, times as RFC 3339 plus epoch.
 *
 * Does not: frame messages, or accept anything that does not fit: a string longer than its
 * buffer or an array longer than its *_MAX is -EMSGSIZE, never cut.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec.h"
#include "util.h"
#include "varlink.h"

/* ---- encoding helpers: each returns 0 or -ENOMEM, and consumes v ---- */

static int put(json_object *o, const char *k, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, k, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int put_str(json_object *o, const char *k, const char *s)
{
	return put(o, k, json_object_new_string(s));
}

static int put_bool(json_object *o, const char *k, bool b)
{
	return put(o, k, json_object_new_boolean(b));
}

static int put_int(json_object *o, const char *k, int64_t v)
{
	return put(o, k, json_object_new_int64(v));
}

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

/* "name": "2026-12-08T10:00:00Z", "name_epoch": N; neither when t is 0. */
static int put_time(json_object *o, const char *k, int64_t t)
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

struct bit_name {
	unsigned bit;
	const char *name;
};

static const struct bit_name usb_iface_names[] = {
	{ USB_IFACE_OTP, "otp" },
	{ USB_IFACE_FIDO, "fido" },
	{ USB_IFACE_CCID, "ccid" },
	{},
};

static const struct bit_name cap_names[] = {
	{ CAP_SIGN, "sign" },
	{ CAP_ENCRYPT, "encrypt" },
	{ CAP_AUTH, "authenticate" },
	{ CAP_CERTIFY, "certify" },
	{},
};

static int put_bits(json_object *o, const char *k, unsigned bits, const struct bit_name *names)
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

#define BITS_ITEMS_MAX 16

static int dispatch_bits(json_object *v, unsigned *ret, const struct bit_name *names)
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

static int dispatch_usb_ifaces(json_object *v, void *field, void *userdata)
{
	return dispatch_bits(v, field, usb_iface_names);
}

static int dispatch_caps(json_object *v, void *field, void *userdata)
{
	return dispatch_bits(v, field, cap_names);
}

/* The RFC 3339 twin of an _epoch field: for people; checked for shape, then ignored. */
static int dispatch_time_text(json_object *v, void *field, void *userdata)
{
	if (!json_object_is_type(v, json_type_string))
		return -EBADMSG;
	if ((size_t)json_object_get_string_len(v) >= CODEC_TIME_MAX)
		return -EMSGSIZE;
	return 0;
}

#define DEFINE_ENUM_DISPATCH(fn, type, from_string)                \
	static int fn(json_object *v, void *field, void *userdata) \
	{                                                          \
		int r;                                             \
                                                                   \
		if (!json_object_is_type(v, json_type_string))     \
			return -EBADMSG;                           \
		r = from_string(json_object_get_string(v));        \
		if (r < 0)                                         \
			return -EBADMSG;                           \
		*(type *)field = (type)r;                          \
		return 0;                                          \
	}

DEFINE_ENUM_DISPATCH(dispatch_token_kind, enum token_kind, token_kind_from_string)
DEFINE_ENUM_DISPATCH(dispatch_read_path, enum read_path, read_path_from_string)
DEFINE_ENUM_DISPATCH(dispatch_touch, enum touch_policy, touch_policy_from_string)
DEFINE_ENUM_DISPATCH(dispatch_level, enum level, level_from_string)
DEFINE_ENUM_DISPATCH(dispatch_secret, enum secret_location, secret_location_from_string)
DEFINE_ENUM_DISPATCH(dispatch_event_type, enum event_type, event_type_from_string)

#define M VARLINK_MANDATORY
#define N VARLINK_NULLABLE
/* clang-format 14 and 19 lay brace-initialiser macros out differently: kept as written. */
/* clang-format off */
#define F_STR(st, m, fl) { #m, VARLINK_STRING, fl, offsetof(st, m), sizeof(((st *)0)->m), NULL }
#define F_BOOL(st, m) { #m, VARLINK_BOOL, M, offsetof(st, m), 0, NULL }
#define F_TYPE(st, m, t, fl) { #m, t, fl, offsetof(st, m), 0, NULL }
#define F_CB(name, st, m, fl, cb) { name, VARLINK_CUSTOM, fl, offsetof(st, m), 0, cb }
#define F_TIME(st, m) \
	{ #m, VARLINK_CUSTOM, N, 0, 0, dispatch_time_text }, \
	{ #m "_epoch", VARLINK_INT64, N, offsetof(st, m), 0, NULL }
/* clang-format on */

/* Decodes obj with table into *ret, zeroed first; on failure runs done (may be NULL) and zeroes
 * again, so that *ret never owns anything after an error. */
static int decode(json_object *obj, const struct varlink_field *table, void *ret, size_t size,
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

/* ---- CardSlot ---- */

static int put_card_slot(json_object *o, const struct card_slot *s)
{
	int r;

	if ((r = put_str(o, "fingerprint", s->fingerprint)) < 0 ||
	    (r = put_time(o, "created", s->created)) < 0 ||
	    (r = put_str(o, "algorithm", s->algorithm)) < 0 ||
	    (r = put_str(o, "touch", touch_policy_to_string(s->touch))) < 0)
		return r;
	return 0;
}

int codec_card_slot_to_json(const struct card_slot *s, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_card_slot(o, s) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static int dispatch_slot_name(json_object *v, void *field, void *userdata)
{
	int r;

	if (!json_object_is_type(v, json_type_string))
		return -EBADMSG;
	r = key_slot_from_string(json_object_get_string(v));
	if (r < 0)
		return -EBADMSG;
	*(int *)userdata = r;
	return 0;
}

static const struct varlink_field card_slot_table[] = {
	{ "slot", VARLINK_CUSTOM, 0, 0, 0, dispatch_slot_name },
	F_STR(struct card_slot, fingerprint, M),
	F_TIME(struct card_slot, created),
	F_STR(struct card_slot, algorithm, M),
	F_CB("touch", struct card_slot, touch, M, dispatch_touch),
	{},
};

int codec_card_slot_from_json(json_object *o, struct card_slot *ret)
{
	int slot = -1;

	return decode(o, card_slot_table, ret, sizeof(*ret), &slot, NULL);
}

/* ---- OpenPGPCard ---- */

int codec_openpgp_card_to_json(const struct openpgp_card *c, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	json_object *slots, *pins;

	if (!o)
		return -ENOMEM;
	if (put_str(o, "aid", c->aid) < 0 || put_str(o, "version", c->version) < 0 ||
	    put_int(o, "manufacturer_id", c->manufacturer_id) < 0 ||
	    put_str(o, "manufacturer", c->manufacturer) < 0 ||
	    put_str(o, "serial", c->serial) < 0 || put_str(o, "firmware", c->firmware) < 0)
		return -ENOMEM;
	slots = json_object_new_array();
	if (put(o, "slots", slots) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < SLOT_MAX; i++) {
		json_object *s = json_object_new_object();

		if (!s || json_object_array_add(slots, s) < 0) {
			json_object_put(s);
			return -ENOMEM;
		}
		if (put_str(s, "slot", key_slot_to_string(i)) < 0 ||
		    put_card_slot(s, &c->slots[i]) < 0)
			return -ENOMEM;
	}
	if (put_int(o, "signature_counter", c->signature_counter) < 0)
		return -ENOMEM;
	pins = json_object_new_object();
	if (put(o, "pin_retries", pins) < 0 || put_int(pins, "pw1", c->pin_retries[0]) < 0 ||
	    put_int(pins, "rc", c->pin_retries[1]) < 0 ||
	    put_int(pins, "pw3", c->pin_retries[2]) < 0)
		return -ENOMEM;
	if (put_str(o, "url", c->url) < 0 || put_str(o, "cardholder", c->cardholder) < 0 ||
	    put_int(o, "key_slots", c->key_slots) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static int dispatch_slots(json_object *v, void *field, void *userdata)
{
	struct card_slot *slots = field;
	bool seen[SLOT_MAX] = {};
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > SLOT_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		struct card_slot s;
		int slot = -1, r;

		r = decode(json_object_array_get_idx(v, i), card_slot_table, &s, sizeof(s), &slot,
		           NULL);
		if (r < 0)
			return r;
		/* Each slot named once: the name is the index, the order is only a convention. */
		if (slot < 0 || seen[slot])
			return -EBADMSG;
		seen[slot] = true;
		memcpy(&slots[slot], &s, sizeof(s));
	}
	return 0;
}

static const struct varlink_field pin_table[] = {
	{ "pw1", VARLINK_UINT8, M, 0, 0, NULL },
	{ "rc", VARLINK_UINT8, M, 1, 0, NULL },
	{ "pw3", VARLINK_UINT8, M, 2, 0, NULL },
	{},
};

static int dispatch_pins(json_object *v, void *field, void *userdata)
{
	return varlink_dispatch(v, pin_table, VARLINK_DISPATCH_ALLOW_UNKNOWN, field, NULL, NULL);
}

static const struct varlink_field openpgp_card_table[] = {
	F_STR(struct openpgp_card, aid, M),
	F_STR(struct openpgp_card, version, M),
	F_TYPE(struct openpgp_card, manufacturer_id, VARLINK_UINT16, M),
	F_STR(struct openpgp_card, manufacturer, M),
	F_STR(struct openpgp_card, serial, M),
	F_STR(struct openpgp_card, firmware, M),
	F_CB("slots", struct openpgp_card, slots, M, dispatch_slots),
	F_TYPE(struct openpgp_card, signature_counter, VARLINK_UINT32, M),
	F_CB("pin_retries", struct openpgp_card, pin_retries, M, dispatch_pins),
	F_STR(struct openpgp_card, url, M),
	F_STR(struct openpgp_card, cardholder, M),
	F_TYPE(struct openpgp_card, key_slots, VARLINK_UINT8, N),
	{},
};

int codec_openpgp_card_from_json(json_object *o, struct openpgp_card *ret)
{
	return decode(o, openpgp_card_table, ret, sizeof(*ret), NULL, NULL);
}

/* ---- Token ---- */

int codec_token_to_json(const struct token *t, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o)
		return -ENOMEM;
	if (put_str(o, "id", t->id) < 0 || put_str(o, "kind", token_kind_to_string(t->kind)) < 0 ||
	    put_str(o, "model", t->model) < 0 || put_str(o, "serial", t->serial) < 0 ||
	    put_str(o, "firmware", t->firmware) < 0 ||
	    put_bits(o, "usb_interfaces", t->usb_interfaces, usb_iface_names) < 0 ||
	    put_int(o, "usb_vendor", t->usb_vendor) < 0 ||
	    put_int(o, "usb_product", t->usb_product) < 0 || put_str(o, "reader", t->reader) < 0 ||
	    put_bool(o, "present", t->present) < 0 ||
	    put_time(o, "first_seen", t->first_seen) < 0 ||
	    put_time(o, "last_seen", t->last_seen) < 0)
		return -ENOMEM;
	if (t->has_openpgp) {
		json_object *c;

		if (codec_openpgp_card_to_json(&t->openpgp, &c) < 0 || put(o, "openpgp", c) < 0)
			return -ENOMEM;
	}
	if (put_str(o, "read_path", read_path_to_string(t->read_path)) < 0 ||
	    put_bool(o, "counter_went_down", t->counter_went_down) < 0 ||
	    put_bool(o, "serial_unique", !t->serial_shared) < 0 ||
	    put_str(o, "openpgp_error", t->openpgp.error) < 0 || put_str(o, "error", t->error) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static int dispatch_openpgp(json_object *v, void *field, void *userdata)
{
	struct token *t = field;
	char error[sizeof(t->openpgp.error)];
	int r;

	/* openpgp_error lives in the same struct and may have been decoded first. */
	memcpy(error, t->openpgp.error, sizeof(error));
	r = codec_openpgp_card_from_json(v, &t->openpgp);
	if (r < 0)
		return r;
	memcpy(t->openpgp.error, error, sizeof(error));
	t->has_openpgp = true;
	return 0;
}

static int dispatch_serial_unique(json_object *v, void *field, void *userdata)
{
	struct token *t = field;

	if (!json_object_is_type(v, json_type_boolean))
		return -EBADMSG;
	t->serial_shared = !json_object_get_boolean(v);
	return 0;
}

/* Carried on the token (it says why the openpgp object is partial, or absent), kept with it. */
static int dispatch_openpgp_error(json_object *v, void *field, void *userdata)
{
	struct token *t = field;

	if (!json_object_is_type(v, json_type_string))
		return -EBADMSG;
	return strcpy_bounded(t->openpgp.error, sizeof(t->openpgp.error),
	                      json_object_get_string(v));
}

static const struct varlink_field token_table[] = {
	F_STR(struct token, id, M),
	F_CB("kind", struct token, kind, M, dispatch_token_kind),
	F_STR(struct token, model, M),
	F_STR(struct token, serial, M),
	F_STR(struct token, firmware, M),
	F_CB("usb_interfaces", struct token, usb_interfaces, M, dispatch_usb_ifaces),
	F_TYPE(struct token, usb_vendor, VARLINK_UINT16, M),
	F_TYPE(struct token, usb_product, VARLINK_UINT16, M),
	F_STR(struct token, reader, M),
	F_BOOL(struct token, present),
	F_TIME(struct token, first_seen),
	F_TIME(struct token, last_seen),
	{ "openpgp", VARLINK_CUSTOM, N, 0, 0, dispatch_openpgp },
	F_CB("read_path", struct token, read_path, M, dispatch_read_path),
	F_BOOL(struct token, counter_went_down),
	{ "serial_unique", VARLINK_CUSTOM, N, 0, 0, dispatch_serial_unique },
	{ "openpgp_error", VARLINK_CUSTOM, N, 0, 0, dispatch_openpgp_error },
	F_STR(struct token, error, M),
	{},
};

int codec_token_from_json(json_object *o, struct token *ret)
{
	return decode(o, token_table, ret, sizeof(*ret), NULL, NULL);
}

/* ---- Subkey, Key ---- */

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
	F_CB("secret", struct subkey, secret, M, dispatch_secret),
	F_STR(struct subkey, card_serial, M),
	F_STR(struct subkey, token_id, M),
	F_CB("level", struct subkey, level, M, dispatch_level),
	{},
};

int codec_subkey_from_json(json_object *o, struct subkey *ret)
{
	return decode(o, subkey_table, ret, sizeof(*ret), NULL, NULL);
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
	F_CB("level", struct key, level, M, dispatch_level),
	{ "subkeys", VARLINK_CUSTOM, M, 0, 0, dispatch_subkeys },
	{},
};

static void key_done_cb(void *p)
{
	key_done(p);
}

int codec_key_from_json(json_object *o, struct key *ret)
{
	return decode(o, key_table, ret, sizeof(*ret), NULL, key_done_cb);
}

/* ---- Finding, DaemonInfo ---- */

int codec_finding_to_json(const struct finding *f, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_str(o, "rule", f->rule) < 0 ||
	    put_str(o, "level", level_to_string(f->level)) < 0 ||
	    put_str(o, "message", f->message) < 0 || put_str(o, "key", f->key) < 0 ||
	    put_str(o, "subkey", f->subkey) < 0 || put_str(o, "token", f->token) < 0 ||
	    put_str(o, "hint", f->hint) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static const struct varlink_field finding_table[] = {
	F_STR(struct finding, rule, M),    F_CB("level", struct finding, level, M, dispatch_level),
	F_STR(struct finding, message, M), F_STR(struct finding, key, M),
	F_STR(struct finding, subkey, M),  F_STR(struct finding, token, M),
	F_STR(struct finding, hint, M),    {},
};

int codec_finding_from_json(json_object *o, struct finding *ret)
{
	return decode(o, finding_table, ret, sizeof(*ret), NULL, NULL);
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
	    put_str(o, "renewal_url", d->renewal_url) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

/* Thresholds are days from 1 to 3650, strictly descending, at most THRESHOLDS_MAX. */
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
		if (x < 1 || x > 3650 || (i > 0 && (unsigned)x >= d->thresholds[i - 1]))
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
	{},
};

int codec_daemon_info_from_json(json_object *o, struct daemon_info *ret)
{
	return decode(o, daemon_info_table, ret, sizeof(*ret), NULL, NULL);
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

static int put_status(json_object *o, const struct daemon_info *d, const struct token *tokens,
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

	if (!o || put_status(o, d, tokens, n_tokens, keys, n_keys, findings, n_findings) < 0)
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

static void status_done_cb(void *p)
{
	keyctl_status_done(p);
}

int codec_status_from_json(json_object *params, struct keyctl_status *ret)
{
	return decode(params, status_table, ret, sizeof(*ret), NULL, status_done_cb);
}

/* ---- Event ---- */

static const char *const event_type_table[EVENT_MAX] = {
	[EVENT_STATE] = "state",
	[EVENT_TOKEN_ADDED] = "token-added",
	[EVENT_TOKEN_CHANGED] = "token-changed",
	[EVENT_TOKEN_REMOVED] = "token-removed",
	[EVENT_KEY_ADDED] = "key-added",
	[EVENT_KEY_CHANGED] = "key-changed",
	[EVENT_KEY_REMOVED] = "key-removed",
	[EVENT_LEVEL_CHANGED] = "level-changed",
	[EVENT_FINDING_RAISED] = "finding-raised",
	[EVENT_FINDING_CLEARED] = "finding-cleared",
	[EVENT_DAEMON_CHANGED] = "daemon-changed",
};

const char *event_type_to_string(enum event_type t)
{
	return (unsigned)t < EVENT_MAX ? event_type_table[t] : NULL;
}

int event_type_from_string(const char *s)
{
	for (int i = 0; i < EVENT_MAX; i++)
		if (streq(event_type_table[i], s))
			return i;
	return -EINVAL;
}

void keyctl_event_done(struct keyctl_event *e)
{
	keyctl_status_done(&e->status);
	key_done(&e->key);
	memset(e, 0, sizeof(*e));
}

static int wrap_event(json_object **ev, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put(o, "event", TAKE_PTR(*ev)) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

int codec_event_state_to_json(const struct daemon_info *d, const struct token *tokens,
                              size_t n_tokens, const struct key *keys, size_t n_keys,
                              const struct finding *findings, size_t n_findings, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *ev = json_object_new_object();

	if (!ev || put_str(ev, "type", "state") < 0 ||
	    put_status(ev, d, tokens, n_tokens, keys, n_keys, findings, n_findings) < 0)
		return -ENOMEM;
	return wrap_event(&ev, ret);
}

int codec_event_to_json(enum event_type type, const struct token *token, const struct key *key,
                        const char *subkey_fpr, enum level level, enum level old_level,
                        const struct finding *finding, const struct daemon_info *daemon,
                        json_object **ret)
{
	_cleanup_(json_object_putp) json_object *ev = json_object_new_object();
	json_object *x;

	if (!ev || !event_type_to_string(type) || type == EVENT_STATE)
		return ev ? -EINVAL : -ENOMEM;
	if (put_str(ev, "type", event_type_to_string(type)) < 0)
		return -ENOMEM;
	if (daemon && (codec_daemon_info_to_json(daemon, &x) < 0 || put(ev, "daemon", x) < 0))
		return -ENOMEM;
	if (token && (codec_token_to_json(token, &x) < 0 || put(ev, "token", x) < 0))
		return -ENOMEM;
	if (key && (codec_key_to_json(key, &x) < 0 || put(ev, "key", x) < 0))
		return -ENOMEM;
	if (type == EVENT_LEVEL_CHANGED &&
	    (put_str(ev, "subkey", subkey_fpr ? subkey_fpr : "") < 0 ||
	     put_str(ev, "level", level_to_string(level)) < 0 ||
	     put_str(ev, "old_level", level_to_string(old_level)) < 0))
		return -ENOMEM;
	if (finding && (codec_finding_to_json(finding, &x) < 0 || put(ev, "finding", x) < 0))
		return -ENOMEM;
	return wrap_event(&ev, ret);
}

static int dispatch_ev_status(json_object *v, void *field, void *userdata)
{
	struct keyctl_event *e = field;
	/* The status arrays sit beside "type" in the event object: decode it once, as a whole. */
	return varlink_dispatch(v, status_table + 1, VARLINK_DISPATCH_ALLOW_UNKNOWN, &e->status,
	                        NULL, NULL);
}

static int dispatch_ev_daemon(json_object *v, void *field, void *userdata)
{
	struct keyctl_event *e = field;
	int r = codec_daemon_info_from_json(v, &e->daemon);

	if (r >= 0)
		e->has_daemon = true;
	return r;
}

static int dispatch_ev_token(json_object *v, void *field, void *userdata)
{
	return codec_token_from_json(v, field);
}

static int dispatch_ev_key(json_object *v, void *field, void *userdata)
{
	return codec_key_from_json(v, field);
}

static int dispatch_ev_finding(json_object *v, void *field, void *userdata)
{
	return codec_finding_from_json(v, field);
}

static const struct varlink_field event_table[] = {
	F_CB("type", struct keyctl_event, type, M, dispatch_event_type),
	{ "daemon", VARLINK_CUSTOM, N, 0, 0, dispatch_ev_daemon },
	F_CB("token", struct keyctl_event, token, N, dispatch_ev_token),
	F_CB("key", struct keyctl_event, key, N, dispatch_ev_key),
	F_STR(struct keyctl_event, subkey, N),
	F_CB("level", struct keyctl_event, level, N, dispatch_level),
	F_CB("old_level", struct keyctl_event, old_level, N, dispatch_level),
	F_CB("finding", struct keyctl_event, finding, N, dispatch_ev_finding),
	{},
};

static void event_done_cb(void *p)
{
	keyctl_event_done(p);
}

int codec_event_from_json(json_object *params, struct keyctl_event *ret)
{
	json_object *ev;
	int r;

	if (!params || !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "event", &ev))
		return -EBADMSG;
	r = decode(ev, event_table, ret, sizeof(*ret), NULL, event_done_cb);
	if (r < 0)
		return r;
	/* The arrays of a "state" event; other events carry none. */
	r = dispatch_ev_status(ev, ret, NULL);
	if (r < 0) {
		keyctl_event_done(ret);
		return r;
	}
	if (ret->type == EVENT_STATE) {
		ret->status.daemon = ret->daemon;
		/* A state without its arrays is no state. */
		if (!json_object_object_get_ex(ev, "tokens", NULL) ||
		    !json_object_object_get_ex(ev, "keys", NULL) ||
		    !json_object_object_get_ex(ev, "findings", NULL) || !ret->has_daemon) {
			keyctl_event_done(ret);
			return -EBADMSG;
		}
	}
	return 0;
}
