/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A token <-> JSON: the Token type of io.keyctl.varlink, with the OpenPGPCard it may carry and
 * that card's three CardSlots, and the TouchPending it carries while it waits for a touch. A
 * card's slots go out as an array of objects named by "slot" and come back indexed by that
 * name, each named once, in any order. The PivApp of a token read at insertion, with its
 * certificates in the order read.
 *
 * Does not: encode or decode keys (codec-key.c), or the status that lists tokens (codec-status.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "codec-internal.h"
#include "util.h"

static const struct bit_name usb_iface_names[] = {
	{ USB_IFACE_OTP, "otp" },
	{ USB_IFACE_FIDO, "fido" },
	{ USB_IFACE_CCID, "ccid" },
	{},
};

static int dispatch_usb_ifaces(json_object *v, void *field, void *userdata)
{
	return codec_dispatch_bits(v, field, usb_iface_names);
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
	F_CB("touch", struct card_slot, touch, M, codec_dispatch_touch),
	{},
};

int codec_card_slot_from_json(json_object *o, struct card_slot *ret)
{
	int slot = -1;

	return codec_decode(o, card_slot_table, ret, sizeof(*ret), &slot, NULL);
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

		r = codec_decode(json_object_array_get_idx(v, i), card_slot_table, &s, sizeof(s),
		                 &slot, NULL);
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
	return codec_decode(o, openpgp_card_table, ret, sizeof(*ret), NULL, NULL);
}

/* ---- TouchPending ---- */

int codec_touch_pending_to_json(const struct touch_pending *tp, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put_str(o, "application", touch_app_to_string(tp->application)) < 0 ||
	    put_str(o, "slot", tp->slot) < 0 || put_time(o, "since", tp->since) < 0 ||
	    put_int(o, "since_usec", tp->since_usec) < 0 ||
	    put_str(o, "requester", tp->requester) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

static const struct varlink_field touch_pending_table[] = {
	F_CB("application", struct touch_pending, application, M, codec_dispatch_touch_app),
	F_STR(struct touch_pending, slot, M),
	F_TIME(struct touch_pending, since),
	F_TYPE(struct touch_pending, since_usec, VARLINK_UINT32, N),
	F_STR(struct touch_pending, requester, M),
	{},
};

int codec_touch_pending_from_json(json_object *o, struct touch_pending *ret)
{
	int r = codec_decode(o, touch_pending_table, ret, sizeof(*ret), NULL, NULL);

	if (r < 0)
		return r;
	/* Each field fits its buffer; whether the values go together is touch_pending_check()'s:
	 * a slot of another application, no since, a requester with control characters. */
	if (touch_pending_check(ret) < 0) {
		memset(ret, 0, sizeof(*ret));
		return -EBADMSG;
	}
	return 0;
}

/* ---- PivApp ---- */

static int put_piv_cert(json_object *certs, const struct piv_cert *c)
{
	json_object *o = json_object_new_object();

	if (!o || json_object_array_add(certs, o) < 0) {
		json_object_put(o);
		return -ENOMEM;
	}
	if (put_str(o, "slot", c->slot) < 0 || put_str(o, "subject", c->subject) < 0 ||
	    put_str(o, "issuer", c->issuer) < 0 || put_time(o, "not_before", c->not_before) < 0 ||
	    put_time(o, "not_after", c->not_after) < 0 ||
	    put_bool(o, "self_signed", c->self_signed) < 0 ||
	    put_str(o, "key_algorithm", c->key_algorithm) < 0 || put_str(o, "error", c->error) < 0)
		return -ENOMEM;
	return 0;
}

int codec_piv_app_to_json(const struct piv_app *p, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	json_object *certs;

	if (!o || put_str(o, "state", piv_read_to_string(p->state)) < 0 ||
	    put_time(o, "chuid_expiry", p->chuid_expiry) < 0 || put_str(o, "error", p->error) < 0)
		return -ENOMEM;
	certs = json_object_new_array();
	if (put(o, "certs", certs) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_certs && i < PIV_CERTS_MAX; i++)
		if (put_piv_cert(certs, &p->certs[i]) < 0)
			return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

/* Two lower-case hex digits, as types.h keeps a slot: the clients print it as it comes. */
static int dispatch_piv_slot(json_object *v, void *field, void *userdata)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string))
		return -EBADMSG;
	s = json_object_get_string(v);
	if (strlen(s) != 2 || !strchr("0123456789abcdef", s[0]) ||
	    !strchr("0123456789abcdef", s[1]))
		return -EBADMSG;
	memcpy(field, s, 3);
	return 0;
}

static const struct varlink_field piv_cert_table[] = {
	F_CB("slot", struct piv_cert, slot, M, dispatch_piv_slot),
	F_STR(struct piv_cert, subject, M),
	F_STR(struct piv_cert, issuer, M),
	F_TIME(struct piv_cert, not_before),
	F_TIME(struct piv_cert, not_after),
	F_BOOL(struct piv_cert, self_signed),
	F_STR(struct piv_cert, key_algorithm, M),
	F_STR(struct piv_cert, error, M),
	{},
};

static int dispatch_piv_certs(json_object *v, void *field, void *userdata)
{
	struct piv_app *p = userdata;
	size_t n;

	if (!json_object_is_type(v, json_type_array))
		return -EBADMSG;
	n = json_object_array_length(v);
	if (n > PIV_CERTS_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		int r = codec_decode(json_object_array_get_idx(v, i), piv_cert_table, &p->certs[i],
		                     sizeof(p->certs[i]), NULL, NULL);

		if (r < 0)
			return r;
	}
	p->n_certs = (uint8_t)n;
	return 0;
}

static const struct varlink_field piv_app_table[] = {
	F_CB("state", struct piv_app, state, M, codec_dispatch_piv_read),
	F_TIME(struct piv_app, chuid_expiry),
	F_STR(struct piv_app, error, M),
	F_CB("certs", struct piv_app, certs, M, dispatch_piv_certs),
	{},
};

int codec_piv_app_from_json(json_object *o, struct piv_app *ret)
{
	return codec_decode(o, piv_app_table, ret, sizeof(*ret), ret, NULL);
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
	/* Absent while never read: a token without PIV, or not plugged in since. */
	if (t->piv.state != PIV_READ_NONE) {
		json_object *piv;

		if (codec_piv_app_to_json(&t->piv, &piv) < 0 || put(o, "piv", piv) < 0)
			return -ENOMEM;
	}
	if (t->touch_waiting) {
		json_object *tp;

		if (codec_touch_pending_to_json(&t->touch, &tp) < 0 ||
		    put(o, "touch_pending", tp) < 0)
			return -ENOMEM;
	}
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

static int dispatch_touch_pending(json_object *v, void *field, void *userdata)
{
	struct token *t = field;
	int r = codec_touch_pending_from_json(v, &t->touch);

	if (r < 0)
		return r;
	t->touch_waiting = true;
	return 0;
}

static int dispatch_piv(json_object *v, void *field, void *userdata)
{
	struct token *t = field;

	return codec_piv_app_from_json(v, &t->piv);
}

static const struct varlink_field token_table[] = {
	F_STR(struct token, id, M),
	F_CB("kind", struct token, kind, M, codec_dispatch_token_kind),
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
	F_CB("read_path", struct token, read_path, M, codec_dispatch_read_path),
	F_BOOL(struct token, counter_went_down),
	{ "serial_unique", VARLINK_CUSTOM, N, 0, 0, dispatch_serial_unique },
	{ "openpgp_error", VARLINK_CUSTOM, N, 0, 0, dispatch_openpgp_error },
	F_STR(struct token, error, M),
	{ "touch_pending", VARLINK_CUSTOM, N, 0, 0, dispatch_touch_pending },
	{ "piv", VARLINK_CUSTOM, N, 0, 0, dispatch_piv },
	{},
};

int codec_token_from_json(json_object *o, struct token *ret)
{
	return codec_decode(o, token_table, ret, sizeof(*ret), NULL, NULL);
}
