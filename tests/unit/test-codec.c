/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * codec.c: every type survives encode -> text -> parse -> decode bit for bit (memcmp of zeroed
 * structs), and every kind of bad field is refused: wrong JSON type, overlong string, unknown
 * enum name, too many items, missing mandatory field.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "test.h"
#include "varlink.h"

static void fill_token(struct token *t)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->id, "yubikey-12345678");
	t->kind = TOKEN_KIND_YUBIKEY;
	strcpy(t->model, "YubiKey 5 NFC");
	strcpy(t->serial, "12345678");
	strcpy(t->firmware, "5.4.3");
	t->usb_interfaces = USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID;
	t->usb_vendor = 0x1050;
	t->usb_product = 0x0407;
	strcpy(t->reader, "Yubico YubiKey OTP+FIDO+CCID 00 00");
	t->present = true;
	t->first_seen = 1764748800;
	t->last_seen = 1765188000;
	t->has_openpgp = true;
	strcpy(t->openpgp.aid, "D2760001240103040006123456780000");
	strcpy(t->openpgp.version, "3.4");
	t->openpgp.manufacturer_id = 6;
	strcpy(t->openpgp.manufacturer, "Yubico");
	strcpy(t->openpgp.serial, "12345678");
	strcpy(t->openpgp.firmware, "5.4.3");
	strcpy(t->openpgp.slots[SLOT_SIGN].fingerprint, "0123456789ABCDEF0123456789ABCDEF01234567");
	t->openpgp.slots[SLOT_SIGN].created = 1700000000;
	strcpy(t->openpgp.slots[SLOT_SIGN].algorithm, "ed25519");
	t->openpgp.slots[SLOT_SIGN].touch = TOUCH_CACHED_FIXED;
	strcpy(t->openpgp.slots[SLOT_ENCRYPT].fingerprint,
	       "89ABCDEF0123456789ABCDEF0123456789ABCDEF");
	strcpy(t->openpgp.slots[SLOT_ENCRYPT].algorithm, "cv25519");
	t->openpgp.slots[SLOT_ENCRYPT].touch = TOUCH_OFF;
	/* SLOT_AUTH left empty. */
	t->openpgp.signature_counter = 4711;
	t->openpgp.pin_retries[0] = 3;
	t->openpgp.pin_retries[1] = 0;
	t->openpgp.pin_retries[2] = 3;
	strcpy(t->openpgp.url, "https://keys.openpgp.org/vks/v1/by-fingerprint/0123");
	strcpy(t->openpgp.cardholder, "Doe<<Jane");
	t->read_path = READ_PATH_PCSC;
	t->counter_went_down = true;
	strcpy(t->error, "");
	t->piv.state = PIV_READ_OK;
	t->piv.chuid_expiry = 1893456000; /* 2030-01-01, as ykman writes it */
	t->piv.n_certs = 2;
	strcpy(t->piv.certs[0].slot, "9a");
	strcpy(t->piv.certs[0].subject, "CN=SSH key");
	strcpy(t->piv.certs[0].issuer, "CN=SSH key");
	t->piv.certs[0].not_before = 1700000000;
	t->piv.certs[0].not_after = 1731536000;
	t->piv.certs[0].self_signed = true;
	strcpy(t->piv.certs[0].key_algorithm, "nistp256");
	strcpy(t->piv.certs[1].slot, "82");
	strcpy(t->piv.certs[1].error, "not a certificate: ASN1 parser: Error in DER parsing");
}

static struct key make_key(void)
{
	struct key k = {};

	strcpy(k.fingerprint, "0123456789ABCDEF0123456789ABCDEF01234567");
	strcpy(k.uid, "Jane Doe <jane@example.org> \"ünïcödé\"");
	k.has_secret = true;
	k.tracked = true;
	k.level = LEVEL_WARNING;
	k.n_subkeys = 3;
	k.subkeys = calloc(3, sizeof(struct subkey));
	ASSERT_TRUE(k.subkeys);
	for (int i = 0; i < 3; i++) {
		struct subkey *s = &k.subkeys[i];

		snprintf(s->fingerprint, sizeof(s->fingerprint), "%039dA", i);
		snprintf(s->keygrip, sizeof(s->keygrip), "%040d", i + 7);
		strcpy(s->algorithm, i == 1 ? "cv25519" : "ed25519");
		s->capabilities = i == 0 ? CAP_SIGN | CAP_CERTIFY : i == 1 ? CAP_ENCRYPT : CAP_AUTH;
		s->is_primary = i == 0;
		s->created = 1700000000 + i;
		s->expires = i == 2 ? 0 : 1796284800; /* the third never expires */
		s->revoked = i == 2;
		s->secret = i == 0 ? SECRET_DISK : SECRET_CARD;
		if (i)
			strcpy(s->card_serial, "12345678");
		if (i)
			strcpy(s->token_id, "yubikey-12345678");
		s->level = i == 1 ? LEVEL_WARNING : LEVEL_OK;
	}
	return k;
}

static void fill_finding(struct finding *f)
{
	memset(f, 0, sizeof(*f));
	strcpy(f->rule, "subkey-expiring");
	f->level = LEVEL_WARNING;
	strcpy(f->message, "Encryption subkey 89AB expires in 12 days");
	strcpy(f->key, "0123456789ABCDEF0123456789ABCDEF01234567");
	strcpy(f->subkey, "89ABCDEF0123456789ABCDEF0123456789ABCDEF");
	strcpy(f->token, "yubikey-12345678");
	strcpy(f->hint, "gpg --quick-set-expire 0123456789ABCDEF0123456789ABCDEF01234567 1y '*'");
}

static void fill_daemon(struct daemon_info *d)
{
	memset(d, 0, sizeof(*d));
	strcpy(d->version, "0.1.0");
	d->started = 1765180000;
	d->now = 1765188000;
	d->pcsc_available = true;
	strcpy(d->gnupghome, "/home/jane/.gnupg");
	d->keyring_stale = true;
	strcpy(d->keyring_error, "gpg: keyblock resource: No such file");
	d->keyring_refreshed = 1765187000;
	d->next_deadline = 1766000000;
	d->n_thresholds = 3;
	d->thresholds[0] = 30;
	d->thresholds[1] = 14;
	d->thresholds[2] = 7;
}

/* Encode, serialize, parse back: what a client gets off the socket. */
static json_object *through_text(json_object *o)
{
	_cleanup_(freep) char *m = NULL;
	json_object *back = NULL;
	size_t n;

	ASSERT_OK(varlink_reply_build(o, false, &m, &n));
	json_object_put(o);
	ASSERT_OK(varlink_message_parse(m, n - 1, &back));
	o = json_object_get(json_object_object_get(back, "parameters"));
	json_object_put(back);
	return o;
}

TEST(roundtrip_token)
{
	struct token t, back;
	json_object *o;

	fill_token(&t);
	ASSERT_OK(codec_token_to_json(&t, &o));
	o = through_text(o);
	ASSERT_STREQ(json_object_get_string(json_object_object_get(o, "first_seen")),
	             "2025-12-03T08:00:00Z");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(o, "first_seen_epoch")), 1764748800);
	ASSERT_STREQ(json_object_get_string(json_object_object_get(json_object_object_get(o, "piv"),
	                                                           "chuid_expiry")),
	             "2030-01-01T00:00:00Z");
	memset(&back, 0xaa, sizeof(back));
	ASSERT_OK(codec_token_from_json(o, &back));
	ASSERT_EQ(memcmp(&t, &back, sizeof(t)), 0);
	json_object_put(o);

	/* PIV read but found busy: no certificates, the state says why. */
	memset(&t.piv, 0, sizeof(t.piv));
	t.piv.state = PIV_READ_IN_USE;
	strcpy(t.piv.error, "PIV not read: the card is in use");
	ASSERT_OK(codec_token_to_json(&t, &o));
	o = through_text(o);
	ASSERT_OK(codec_token_from_json(o, &back));
	ASSERT_EQ(memcmp(&t, &back, sizeof(t)), 0);
	json_object_put(o);

	/* Without an OpenPGP application, PIV never read, and with no times at all. */
	memset(&t.piv, 0, sizeof(t.piv));
	t.has_openpgp = false;
	memset(&t.openpgp, 0, sizeof(t.openpgp));
	t.first_seen = t.last_seen = 0;
	t.kind = TOKEN_KIND_OPENPGP_CARD;
	ASSERT_OK(codec_token_to_json(&t, &o));
	ASSERT_FALSE(json_object_object_get_ex(o, "openpgp", NULL));
	ASSERT_FALSE(json_object_object_get_ex(o, "piv", NULL));
	ASSERT_FALSE(json_object_object_get_ex(o, "first_seen", NULL));
	ASSERT_FALSE(json_object_object_get_ex(o, "first_seen_epoch", NULL));
	o = through_text(o);
	ASSERT_OK(codec_token_from_json(o, &back));
	ASSERT_EQ(memcmp(&t, &back, sizeof(t)), 0);
	json_object_put(o);
}

TEST(roundtrip_key)
{
	struct key k = make_key(), back;
	json_object *o;

	k.subkeys[1].git_signs = true;
	strcpy_trunc(k.subkeys[1].replaced_by, sizeof(k.subkeys[1].replaced_by),
	             "5A1E0F3C9B7D2E4F6A8C0B1D3E5F7A9C2B4D6E80");
	k.relied_on = true;
	k.retired = true;
	k.upstream_checked = 1796524127;
	strcpy_trunc(k.upstream_error, sizeof(k.upstream_error), "dirmngr: No keyserver available");
	ASSERT_OK(codec_key_to_json(&k, &o));
	o = through_text(o);
	ASSERT_OK(codec_key_from_json(o, &back));
	ASSERT_TRUE(key_equal(&k, &back));
	ASSERT_EQ(back.n_subkeys, 3);
	for (size_t i = 0; i < 3; i++)
		ASSERT_EQ(memcmp(&k.subkeys[i], &back.subkeys[i], sizeof(struct subkey)), 0);
	ASSERT_STREQ(back.uid, k.uid);
	/* The subkey that never expires says so by silence. */
	ASSERT_FALSE(json_object_object_get_ex(
	        json_object_array_get_idx(json_object_object_get(o, "subkeys"), 2), "expires",
	        NULL));
	ASSERT_TRUE(back.relied_on);
	ASSERT_EQ(back.upstream_checked, 1796524127);
	ASSERT_STREQ(back.upstream_error, "dirmngr: No keyserver available");
	/* git_signs likewise: present on the one subkey, absent (false) on the others. */
	ASSERT_TRUE(back.subkeys[1].git_signs);
	ASSERT_FALSE(back.subkeys[0].git_signs);
	ASSERT_FALSE(json_object_object_get_ex(
	        json_object_array_get_idx(json_object_object_get(o, "subkeys"), 0), "git_signs",
	        NULL));
	/* replaced_by and retired likewise: only where set. */
	ASSERT_TRUE(back.retired);
	ASSERT_STREQ(back.subkeys[1].replaced_by, "5A1E0F3C9B7D2E4F6A8C0B1D3E5F7A9C2B4D6E80");
	ASSERT_FALSE(json_object_object_get_ex(
	        json_object_array_get_idx(json_object_object_get(o, "subkeys"), 0), "replaced_by",
	        NULL));
	key_done(&back);
	json_object_put(o);
	key_done(&k);
}

TEST(roundtrip_finding_daemon)
{
	struct finding f, fb;
	struct daemon_info d, db;
	json_object *o;

	fill_finding(&f);
	ASSERT_OK(codec_finding_to_json(&f, &o));
	o = through_text(o);
	ASSERT_OK(codec_finding_from_json(o, &fb));
	ASSERT_EQ(memcmp(&f, &fb, sizeof(f)), 0);
	json_object_put(o);

	fill_daemon(&d);
	ASSERT_OK(codec_daemon_info_to_json(&d, &o));
	o = through_text(o);
	ASSERT_OK(codec_daemon_info_from_json(o, &db));
	ASSERT_EQ(memcmp(&d, &db, sizeof(d)), 0);
	json_object_put(o);

	/* Thresholds are held to keyctl.conf's rule: 1..3650 days, strictly descending. */
	static const char *const bad[] = { "[30, 30]", "[7, 14]", "[0]", "[3651]", "[\"7\"]" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_OK(codec_daemon_info_to_json(&d, &o));
		json_object_object_add(o, "thresholds", json_tokener_parse(bad[i]));
		ASSERT_TRUE(codec_daemon_info_from_json(o, &db) < 0);
		json_object_put(o);
	}
}

TEST(roundtrip_status_and_events)
{
	struct token t[2];
	struct key k[1] = { make_key() };
	struct finding f[1];
	struct daemon_info d;
	struct keyctl_status s;
	struct keyctl_event e;
	json_object *o;

	fill_token(&t[0]);
	fill_token(&t[1]);
	strcpy(t[1].id, "openpgp-000F0A1B2C3D");
	t[1].present = false;
	fill_finding(&f[0]);
	fill_daemon(&d);

	ASSERT_OK(codec_status_to_json(&d, t, 2, k, 1, f, 1, &o));
	o = through_text(o);
	ASSERT_OK(codec_status_from_json(o, &s));
	ASSERT_EQ(memcmp(&s.daemon, &d, sizeof(d)), 0);
	ASSERT_EQ(s.n_tokens, 2);
	ASSERT_EQ(memcmp(s.tokens, t, sizeof(t)), 0);
	ASSERT_EQ(s.n_keys, 1);
	ASSERT_TRUE(key_equal(&s.keys[0], &k[0]));
	ASSERT_EQ(s.n_findings, 1);
	ASSERT_EQ(memcmp(s.findings, f, sizeof(f)), 0);
	keyctl_status_done(&s);
	json_object_put(o);

	/* GetTokens' reply decodes into the same struct, the rest empty. */
	ASSERT_OK(codec_tokens_to_json(t, 2, &o));
	ASSERT_OK(codec_status_from_json(o, &s));
	ASSERT_EQ(s.n_tokens, 2);
	ASSERT_EQ(s.n_keys, 0);
	keyctl_status_done(&s);
	json_object_put(o);

	ASSERT_OK(codec_event_state_to_json(&d, t, 2, k, 1, f, 1, &o));
	o = through_text(o);
	ASSERT_OK(codec_event_from_json(o, &e));
	ASSERT_EQ(e.type, EVENT_STATE);
	ASSERT_EQ(e.status.n_tokens, 2);
	ASSERT_EQ(e.status.n_keys, 1);
	ASSERT_EQ(memcmp(&e.status.daemon, &d, sizeof(d)), 0);
	keyctl_event_done(&e);
	json_object_put(o);

	ASSERT_OK(codec_event_to_json(EVENT_LEVEL_CHANGED, NULL, &k[0], k[0].subkeys[1].fingerprint,
	                              LEVEL_CRITICAL, LEVEL_WARNING, NULL, NULL, &o));
	o = through_text(o);
	ASSERT_OK(codec_event_from_json(o, &e));
	ASSERT_EQ(e.type, EVENT_LEVEL_CHANGED);
	ASSERT_TRUE(key_equal(&e.key, &k[0]));
	ASSERT_STREQ(e.subkey, k[0].subkeys[1].fingerprint);
	ASSERT_EQ(e.level, LEVEL_CRITICAL);
	ASSERT_EQ(e.old_level, LEVEL_WARNING);
	keyctl_event_done(&e);
	json_object_put(o);

	ASSERT_OK(
	        codec_event_to_json(EVENT_TOKEN_REMOVED, &t[1], NULL, NULL, 0, 0, NULL, NULL, &o));
	o = through_text(o);
	ASSERT_OK(codec_event_from_json(o, &e));
	ASSERT_EQ(e.type, EVENT_TOKEN_REMOVED);
	ASSERT_EQ(memcmp(&e.token, &t[1], sizeof(t[1])), 0);
	keyctl_event_done(&e);
	json_object_put(o);

	ASSERT_OK(codec_event_to_json(EVENT_DAEMON_CHANGED, NULL, NULL, NULL, 0, 0, NULL, &d, &o));
	ASSERT_OK(codec_event_from_json(o, &e));
	ASSERT_TRUE(e.has_daemon);
	ASSERT_EQ(memcmp(&e.daemon, &d, sizeof(d)), 0);
	keyctl_event_done(&e);
	json_object_put(o);

	ASSERT_ERR(codec_event_to_json(EVENT_STATE, NULL, NULL, NULL, 0, 0, NULL, NULL, &o),
	           EINVAL);
	for (int i = 0; i < EVENT_MAX; i++)
		ASSERT_EQ(event_type_from_string(event_type_to_string(i)), i);
	key_done(&k[0]);
}

/* Replaces field (a JSON text) in a good token's encoding and expects decode to fail with err. */
static void token_bad(const char *field, const char *json_value, int err)
{
	struct token t, back;
	json_object *o, *v = NULL;

	fill_token(&t);
	ASSERT_OK(codec_token_to_json(&t, &o));
	if (json_value) {
		v = json_tokener_parse(json_value);
		ASSERT_TRUE(v || streq(json_value, "null"));
		json_object_object_add(o, field, v);
	} else
		json_object_object_del(o, field);
	memset(&back, 0x55, sizeof(back));
	if (codec_token_from_json(o, &back) != -err)
		TEST_FAIL("token field %s = %s: expected -%d", field, json_value, err);
	/* Failure leaves a zeroed struct that owns nothing. */
	struct token zero = {};
	ASSERT_EQ(memcmp(&back, &zero, sizeof(zero)), 0);
	json_object_put(o);
}

TEST(token_rejects)
{
	char longid[TOKEN_ID_MAX + 3];

	memset(longid, 'a', sizeof(longid));
	longid[0] = '"';
	longid[TOKEN_ID_MAX + 1] = '"';
	longid[TOKEN_ID_MAX + 2] = 0; /* a 64-character id: one too many */

	token_bad("id", "17", EBADMSG);
	token_bad("id", longid, EMSGSIZE);
	token_bad("id", NULL, EBADMSG); /* mandatory */
	token_bad("id", "null", EBADMSG);
	token_bad("kind", "\"smartcard\"", EBADMSG);
	token_bad("kind", "1", EBADMSG);
	token_bad("present", "\"true\"", EBADMSG);
	token_bad("usb_vendor", "65536", EBADMSG);
	token_bad("usb_vendor", "-1", EBADMSG);
	token_bad("usb_interfaces", "[\"otp\",\"bluetooth\"]", EBADMSG);
	token_bad("usb_interfaces", "\"otp\"", EBADMSG);
	token_bad("usb_interfaces",
	          "[\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\","
	          "\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\",\"otp\"]",
	          EMSGSIZE);
	token_bad("first_seen_epoch", "\"1764748800\"", EBADMSG);
	token_bad("first_seen_epoch", "1.5", EBADMSG);
	token_bad("first_seen", "1764748800", EBADMSG);
	token_bad("read_path", "\"usb\"", EBADMSG);
	token_bad("openpgp", "[]", EBADMSG);
	token_bad("openpgp", "{\"aid\":\"x\"}", EBADMSG);
	token_bad("error", "{}", EBADMSG);
	token_bad("piv", "[]", EBADMSG);
	token_bad("piv", "{\"state\":\"read\",\"error\":\"\",\"certs\":[{}]}", EBADMSG);
	token_bad("piv", "{\"state\":\"half\",\"error\":\"\",\"certs\":[]}", EBADMSG);
	token_bad("piv", "{\"state\":\"read\",\"error\":\"\"}", EBADMSG);
	/* A slot is two lower-case hex digits: the clients print it as it comes. */
	token_bad("piv",
	          "{\"state\":\"read\",\"error\":\"\",\"certs\":[{\"slot\":\"9A\","
	          "\"subject\":\"\",\"issuer\":\"\",\"self_signed\":false,"
	          "\"key_algorithm\":\"\",\"error\":\"\"}]}",
	          EBADMSG);

	/* Unknown fields are a newer daemon's business: ignored. */
	{
		struct token t, back;
		json_object *o;

		fill_token(&t);
		ASSERT_OK(codec_token_to_json(&t, &o));
		json_object_object_add(o, "battery", json_object_new_int(80));
		ASSERT_OK(codec_token_from_json(o, &back));
		ASSERT_EQ(memcmp(&t, &back, sizeof(t)), 0);
		json_object_put(o);
	}
}

static void card_bad(const char *field, const char *json_value, int err)
{
	struct token t, back;
	json_object *o, *c;

	fill_token(&t);
	ASSERT_OK(codec_token_to_json(&t, &o));
	c = json_object_object_get(o, "openpgp");
	json_object_object_add(c, field, json_tokener_parse(json_value));
	if (codec_token_from_json(o, &back) != -err)
		TEST_FAIL("card field %s = %s: expected -%d", field, json_value, err);
	json_object_put(o);
}

TEST(card_rejects)
{
	card_bad("slots", "[{},{},{},{}]", EMSGSIZE);
	card_bad("slots",
	         "[{\"slot\":\"sign\",\"fingerprint\":\"\",\"algorithm\":\"\",\"touch\":\"on\"},"
	         "{\"slot\":\"sign\",\"fingerprint\":\"\",\"algorithm\":\"\",\"touch\":\"on\"}]",
	         EBADMSG);
	card_bad(
	        "slots",
	        "[{\"slot\":\"sign\",\"fingerprint\":\"\",\"algorithm\":\"\",\"touch\":\"maybe\"}]",
	        EBADMSG);
	card_bad("slots", "[{\"fingerprint\":\"\",\"algorithm\":\"\",\"touch\":\"on\"}]", EBADMSG);
	card_bad("pin_retries", "{\"pw1\":3,\"rc\":0}", EBADMSG);
	card_bad("pin_retries", "{\"pw1\":3,\"rc\":0,\"pw3\":256}", EBADMSG);
	card_bad("pin_retries", "[3,0,3]", EBADMSG);
	card_bad("signature_counter", "-1", EBADMSG);
	card_bad("version", "\"3.4.0.0.0.0\"", EMSGSIZE);
}

TEST(key_and_status_rejects)
{
	struct key k = make_key(), back;
	struct keyctl_status s;
	json_object *o, *subs, *sk;

	ASSERT_OK(codec_key_to_json(&k, &o));
	sk = json_object_array_get_idx(json_object_object_get(o, "subkeys"), 1);
	json_object_object_add(sk, "level", json_object_new_string("doomed"));
	ASSERT_ERR(codec_key_from_json(o, &back), EBADMSG);
	json_object_object_add(sk, "level", json_object_new_string("expired"));
	json_object_object_add(sk, "capabilities", json_tokener_parse("[\"sign\",\"fly\"]"));
	ASSERT_ERR(codec_key_from_json(o, &back), EBADMSG);
	json_object_object_add(sk, "capabilities", json_tokener_parse("[\"sign\"]"));
	json_object_object_add(sk, "secret", json_object_new_string("cloud"));
	ASSERT_ERR(codec_key_from_json(o, &back), EBADMSG);
	json_object_object_add(sk, "secret", json_object_new_string("card"));
	ASSERT_OK(codec_key_from_json(o, &back));
	key_done(&back);

	/* SUBKEYS_MAX + 1 subkeys. */
	subs = json_object_new_array();
	for (int i = 0; i <= SUBKEYS_MAX; i++)
		json_object_array_add(subs, json_object_get(sk));
	json_object_object_add(o, "subkeys", subs);
	ASSERT_ERR(codec_key_from_json(o, &back), EMSGSIZE);
	json_object_put(o);

	/* A status with one key too many; and a bad third key after two good ones (no leak). */
	o = json_object_new_object();
	subs = json_object_new_array();
	json_object_object_add(o, "keys", subs);
	{
		json_object *good;

		ASSERT_OK(codec_key_to_json(&k, &good));
		for (int i = 0; i <= KEYS_MAX; i++)
			json_object_array_add(subs, json_object_get(good));
		ASSERT_ERR(codec_status_from_json(o, &s), EMSGSIZE);
		json_object_array_del_idx(subs, 3, KEYS_MAX + 1 - 3);
		ASSERT_OK(codec_status_from_json(o, &s));
		ASSERT_EQ(s.n_keys, 3);
		keyctl_status_done(&s);
		json_object_array_put_idx(subs, 2, json_object_new_string("not a key"));
		ASSERT_ERR(codec_status_from_json(o, &s), EBADMSG);
		ASSERT_EQ(s.n_keys, 0);
		ASSERT_TRUE(s.keys == NULL);
		json_object_put(good);
	}
	json_object_object_add(o, "tokens", json_object_new_object());
	ASSERT_ERR(codec_status_from_json(o, &s), EBADMSG);
	json_object_put(o);

	/* Findings: too many, and a bad level. */
	o = json_object_new_object();
	subs = json_object_new_array();
	json_object_object_add(o, "findings", subs);
	for (int i = 0; i <= FINDINGS_MAX; i++)
		json_object_array_add(subs, json_object_new_object());
	ASSERT_ERR(codec_status_from_json(o, &s), EMSGSIZE);
	json_object_put(o);
	{
		struct finding f, fb;

		fill_finding(&f);
		ASSERT_OK(codec_finding_to_json(&f, &o));
		json_object_object_add(o, "level", json_object_new_string("meh"));
		ASSERT_ERR(codec_finding_from_json(o, &fb), EBADMSG);
		json_object_object_add(o, "level", json_object_new_string("ok"));
		json_object_object_add(
		        o, "rule",
		        json_object_new_string("a-rule-id-that-is-far-too-long-to-be-real"));
		ASSERT_ERR(codec_finding_from_json(o, &fb), EMSGSIZE);
		json_object_put(o);
	}
	/* Events: unknown type; state without its arrays. */
	o = json_tokener_parse("{\"event\":{\"type\":\"token-exploded\"}}");
	{
		struct keyctl_event e;

		ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG);
		json_object_put(o);
		o = json_tokener_parse("{\"event\":{\"type\":\"state\"}}");
		ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG);
		json_object_put(o);
		o = json_tokener_parse("{\"event\":\"state\"}");
		ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG);
		json_object_put(o);
	}
	key_done(&k);
}

static void fill_touch(struct touch_pending *tp)
{
	memset(tp, 0, sizeof(*tp));
	tp->application = TOUCH_APP_OPENPGP;
	strcpy(tp->slot, "sig");
	tp->since = 1796724000;
	tp->since_usec = 250000;
	strcpy(tp->requester, "git");
}

TEST(roundtrip_touch)
{
	struct token t, back;
	struct keyctl_event e;
	json_object *o, *tp;

	fill_token(&t);
	t.touch_waiting = true;
	fill_touch(&t.touch);
	ASSERT_OK(codec_token_to_json(&t, &o));
	o = through_text(o);
	ASSERT_TRUE(json_object_object_get_ex(o, "touch_pending", &tp));
	ASSERT_STREQ(json_object_get_string(json_object_object_get(tp, "application")), "openpgp");
	ASSERT_STREQ(json_object_get_string(json_object_object_get(tp, "since")),
	             "2026-12-08T10:00:00Z");
	ASSERT_EQ(json_object_get_int64(json_object_object_get(tp, "since_usec")), 250000);
	memset(&back, 0xaa, sizeof(back));
	ASSERT_OK(codec_token_from_json(o, &back));
	ASSERT_EQ(memcmp(&t, &back, sizeof(t)), 0);
	json_object_put(o);

	/* Not waiting: no touch_pending at all, and none after decoding. */
	fill_token(&t);
	ASSERT_OK(codec_token_to_json(&t, &o));
	ASSERT_FALSE(json_object_object_get_ex(o, "touch_pending", NULL));
	json_object_put(o);

	/* FIDO and PIV slots; an unknown requester. */
	t.touch_waiting = true;
	fill_touch(&t.touch);
	t.touch.application = TOUCH_APP_PIV;
	strcpy(t.touch.slot, "9c");
	memset(t.touch.requester, 0, sizeof(t.touch.requester));
	ASSERT_OK(codec_token_to_json(&t, &o));
	ASSERT_OK(codec_token_from_json(o, &back));
	ASSERT_EQ(memcmp(&t, &back, sizeof(t)), 0);
	json_object_put(o);

	/* The events: touch-pending carries it, touch-done says how the wait ended. */
	fill_touch(&t.touch);
	ASSERT_OK(codec_event_touch_to_json(EVENT_TOUCH_PENDING, &t, TOUCH_END_TOUCHED, &o));
	o = through_text(o);
	ASSERT_OK(codec_event_from_json(o, &e));
	ASSERT_EQ(e.type, EVENT_TOUCH_PENDING);
	ASSERT_EQ(memcmp(&e.token, &t, sizeof(t)), 0);
	ASSERT_FALSE(e.has_touch_end);
	keyctl_event_done(&e);
	json_object_put(o);

	t.touch_waiting = false;
	memset(&t.touch, 0, sizeof(t.touch));
	ASSERT_OK(codec_event_touch_to_json(EVENT_TOUCH_DONE, &t, TOUCH_END_REMOVED, &o));
	o = through_text(o);
	ASSERT_OK(codec_event_from_json(o, &e));
	ASSERT_EQ(e.type, EVENT_TOUCH_DONE);
	ASSERT_TRUE(e.has_touch_end);
	ASSERT_EQ(e.touch_end, TOUCH_END_REMOVED);
	ASSERT_EQ(memcmp(&e.token, &t, sizeof(t)), 0);
	keyctl_event_done(&e);
	json_object_put(o);

	ASSERT_ERR(codec_event_touch_to_json(EVENT_TOKEN_ADDED, &t, TOUCH_END_TOUCHED, &o), EINVAL);
	ASSERT_ERR(codec_event_touch_to_json(EVENT_TOUCH_DONE, NULL, TOUCH_END_TOUCHED, &o),
	           EINVAL);
}

/* Replaces field (a JSON text) of a waiting token's touch_pending and expects decode to fail. */
static void touch_bad(const char *field, const char *json_value, int err)
{
	struct token t, back, zero = {};
	json_object *o, *tp, *v = NULL;

	fill_token(&t);
	t.touch_waiting = true;
	fill_touch(&t.touch);
	ASSERT_OK(codec_token_to_json(&t, &o));
	ASSERT_TRUE(json_object_object_get_ex(o, "touch_pending", &tp));
	if (json_value) {
		v = json_tokener_parse(json_value);
		ASSERT_TRUE(v || streq(json_value, "null"));
		json_object_object_add(tp, field, v);
	} else
		json_object_object_del(tp, field);
	memset(&back, 0x55, sizeof(back));
	if (codec_token_from_json(o, &back) != -err)
		TEST_FAIL("touch_pending field %s = %s: expected -%d", field, json_value, err);
	ASSERT_EQ(memcmp(&back, &zero, sizeof(zero)), 0);
	json_object_put(o);
}

TEST(touch_rejects)
{
	struct keyctl_event e;
	json_object *o;

	touch_bad("application", "\"smartcard\"", EBADMSG);
	touch_bad("application", NULL, EBADMSG);
	touch_bad("application", "2", EBADMSG);
	touch_bad("slot", "\"sign\"", EBADMSG); /* GnuPG's refs, not the card slot's name */
	touch_bad("slot", "\"9c\"", EBADMSG); /* a PIV slot on OpenPGP */
	touch_bad("slot", "\"\"", EBADMSG);
	touch_bad("slot", "\"sigsigsig\"", EMSGSIZE);
	touch_bad("slot", NULL, EBADMSG);
	touch_bad("since_epoch", NULL, EBADMSG); /* a wait has a start */
	touch_bad("since_epoch", "0", EBADMSG);
	touch_bad("since_epoch", "-5", EBADMSG);
	touch_bad("since_epoch", "\"1796724000\"", EBADMSG);
	touch_bad("since_usec", "1000000", EBADMSG);
	touch_bad("since_usec", "-1", EBADMSG);
	touch_bad("requester", "\"git\\u001b[31m\"", EBADMSG); /* a terminal escape */
	touch_bad("requester", "\"gît\"", EBADMSG);
	touch_bad("requester", "\"0123456789abcdef0123456789abcdef\"", EMSGSIZE);
	touch_bad("requester", "\"g\\u0000it\"", EBADMSG);
	touch_bad("requester", NULL, EBADMSG);
	token_bad("touch_pending", "\"sig\"", EBADMSG);
	token_bad("touch_pending", "{}", EBADMSG);

	/* PIV: two lower-case hex digits; FIDO: no slot. */
	{
		struct touch_pending tp;

		fill_touch(&tp);
		tp.application = TOUCH_APP_PIV;
		strcpy(tp.slot, "9C");
		ASSERT_ERR(touch_pending_check(&tp), EINVAL);
		strcpy(tp.slot, "9c");
		ASSERT_OK(touch_pending_check(&tp));
		tp.application = TOUCH_APP_FIDO;
		ASSERT_ERR(touch_pending_check(&tp), EINVAL);
		tp.slot[0] = 0;
		ASSERT_OK(touch_pending_check(&tp));
		tp.application = TOUCH_APP_MAX;
		ASSERT_ERR(touch_pending_check(&tp), EINVAL);
	}

	/* Touch events: no token, a pending one without touch_pending, an unknown end. */
	o = json_tokener_parse("{\"event\":{\"type\":\"touch-pending\"}}");
	ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG);
	json_object_put(o);
	{
		struct token t;
		json_object *ev, *x;

		fill_token(&t);
		ASSERT_OK(codec_event_touch_to_json(EVENT_TOUCH_DONE, &t, TOUCH_END_TIMEOUT, &o));
		ev = json_object_object_get(o, "event");
		json_object_object_add(ev, "type", json_object_new_string("touch-pending"));
		ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG);
		json_object_object_add(ev, "type", json_object_new_string("touch-done"));
		ASSERT_OK(codec_event_from_json(o, &e));
		ASSERT_EQ(e.touch_end, TOUCH_END_TIMEOUT);
		keyctl_event_done(&e);
		json_object_object_add(ev, "touch_end", json_object_new_string("exploded"));
		ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG);
		json_object_put(o);

		t.touch_waiting = true;
		fill_touch(&t.touch);
		ASSERT_OK(codec_token_to_json(&t, &x));
		o = json_tokener_parse("{\"event\":{\"type\":\"touch-done\"}}");
		json_object_object_add(json_object_object_get(o, "event"), "token", x);
		ASSERT_ERR(codec_event_from_json(o, &e), EBADMSG); /* done, yet still waiting */
		json_object_put(o);
	}
}

TEST(format_time)
{
	char buf[CODEC_TIME_MAX];

	ASSERT_OK(codec_format_time(1796724000, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "2026-12-08T10:00:00Z");
	ASSERT_OK(codec_format_time(0, buf, sizeof(buf)));
	ASSERT_STREQ(buf, "1970-01-01T00:00:00Z");
	ASSERT_ERR(codec_format_time(INT64_MAX, buf, sizeof(buf)), ERANGE);
}

int main(void)
{
	RUN(roundtrip_token);
	RUN(roundtrip_key);
	RUN(roundtrip_finding_daemon);
	RUN(roundtrip_status_and_events);
	RUN(token_rejects);
	RUN(card_rejects);
	RUN(key_and_status_rejects);
	RUN(format_time);
	RUN(roundtrip_touch);
	RUN(touch_rejects);
	return 0;
}
