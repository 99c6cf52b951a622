/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model's merging of sightings into tokens and its change events: what a client of Watch
 * would be told, in order, for insertions, removals, keyring refreshes, audit passes and touch
 * waits.
 */
#include "model.h"
#include "test.h"

#define EVENTS_MAX 64

struct recorder {
	unsigned n;
	enum model_event_type type[EVENTS_MAX];
	char what[EVENTS_MAX][FPR_HEX_MAX + RULE_ID_MAX];
	enum level level[EVENTS_MAX];
	bool reworded[EVENTS_MAX];
	enum touch_end touch_end[EVENTS_MAX];
	bool touch_waiting[EVENTS_MAX];
};

static void record(struct model *m, const struct model_event *ev, void *userdata)
{
	struct recorder *r = userdata;
	const char *what = "";

	ASSERT_TRUE(r->n < EVENTS_MAX);
	if (ev->token)
		what = ev->token->id;
	else if (ev->subkey)
		what = ev->subkey->fingerprint;
	else if (ev->key)
		what = ev->key->fingerprint;
	else if (ev->finding)
		what = ev->finding->rule;
	r->type[r->n] = ev->type;
	r->level[r->n] = ev->subkey ? ev->subkey->level : LEVEL_OK;
	r->reworded[r->n] = ev->reworded;
	r->touch_end[r->n] = ev->touch_end;
	r->touch_waiting[r->n] = ev->token && ev->token->touch_waiting;
	strcpy_trunc(r->what[r->n], sizeof(r->what[0]), what);
	r->n++;
}

static struct token usb_yubikey(const char *serial)
{
	struct token t;

	memset(&t, 0, sizeof(t));
	t.kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(t.model, sizeof(t.model), "YubiKey 5 NFC");
	strcpy_trunc(t.serial, sizeof(t.serial), serial);
	t.usb_vendor = 0x1050;
	t.usb_product = 0x0407;
	t.usb_interfaces = USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID;
	return t;
}

static struct token card_yubikey(const char *serial, uint32_t counter)
{
	struct token t;

	memset(&t, 0, sizeof(t));
	t.kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(t.serial, sizeof(t.serial), serial);
	strcpy_trunc(t.reader, sizeof(t.reader), "Yubico YubiKey OTP+FIDO+CCID 00 00");
	t.has_openpgp = true;
	t.read_path = READ_PATH_PCSC;
	strcpy_trunc(t.openpgp.serial, sizeof(t.openpgp.serial), serial);
	t.openpgp.signature_counter = counter;
	return t;
}

TEST(usb_and_card_are_one_token)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	const struct token *tokens;
	struct token u = usb_yubikey("12345678"), c = card_yubikey("12345678", 7);

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_subscribe(m, record, &rec));
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/devices/usb1/1-1", &u, 100));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Yubico YubiKey OTP+FIDO+CCID 00 00", &c,
	                             101));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "yubikey-12345678");
	ASSERT_STREQ(tokens[0].model, "YubiKey 5 NFC");
	ASSERT_STREQ(tokens[0].reader, "Yubico YubiKey OTP+FIDO+CCID 00 00");
	ASSERT_EQ(tokens[0].usb_product, 0x0407);
	ASSERT_TRUE(tokens[0].has_openpgp);
	ASSERT_EQ(tokens[0].first_seen, 100);
	ASSERT_EQ(rec.n, 2);
	ASSERT_EQ(rec.type[0], MODEL_TOKEN_ADDED);
	ASSERT_EQ(rec.type[1], MODEL_TOKEN_CHANGED);

	/* Same data again: no event. */
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Yubico YubiKey OTP+FIDO+CCID 00 00", &c,
	                             102));
	ASSERT_EQ(rec.n, 2);

	/* Card side goes, USB stays: still present, reader gone. */
	ASSERT_OK(
	        model_sighting_remove(m, SIGHTING_PCSC, "Yubico YubiKey OTP+FIDO+CCID 00 00", 103));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_TRUE(tokens[0].present);
	ASSERT_STREQ(tokens[0].reader, "");
	ASSERT_EQ(rec.type[2], MODEL_TOKEN_CHANGED);

	/* Both gone: removed, but remembered as absent with its last sighting. */
	ASSERT_OK(model_sighting_remove(m, SIGHTING_USB, "/sys/devices/usb1/1-1", 200));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_FALSE(tokens[0].present);
	ASSERT_EQ(tokens[0].last_seen, 200);
	ASSERT_EQ(rec.type[3], MODEL_TOKEN_REMOVED);
	ASSERT_STREQ(rec.what[3], "yubikey-12345678");
	ASSERT_ERR(model_sighting_remove(m, SIGHTING_USB, "/sys/devices/usb1/1-1", 201), ENOENT);
}

TEST(serialless_usb_pairs_with_only_reader)
{
	_cleanup_(model_freep) struct model *m = NULL;
	const struct token *tokens;
	struct token u = usb_yubikey(""), c = card_yubikey("87654321", 1);

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/x", &u, 1));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_TRUE(strncmp(tokens[0].id, "yubikey-u", 9) == 0);
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &c, 2));
	/* The serial-less placeholder is forgotten; one token with the card's serial remains. */
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "yubikey-87654321");
	ASSERT_EQ(tokens[0].usb_product, 0x0407);

	/* Two different serials never merge. */
	struct token u2 = usb_yubikey("11111111");
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/x", &u2, 3));
	ASSERT_EQ(model_tokens(m, &tokens), 2);
}

static struct token usb_nitrokey(const char *serial)
{
	struct token t;

	memset(&t, 0, sizeof(t));
	t.kind = TOKEN_KIND_NITROKEY;
	strcpy_trunc(t.model, sizeof(t.model), "Nitrokey 3");
	strcpy_trunc(t.serial, sizeof(t.serial), serial);
	t.usb_vendor = 0x20a0;
	t.usb_product = 0x42b2;
	t.usb_interfaces = USB_IFACE_FIDO | USB_IFACE_CCID;
	return t;
}

static struct token card_nitrokey(const char *serial)
{
	struct token t;

	memset(&t, 0, sizeof(t));
	t.kind = TOKEN_KIND_NITROKEY;
	strcpy_trunc(t.serial, sizeof(t.serial), serial);
	strcpy_trunc(t.reader, sizeof(t.reader), "Nitrokey Nitrokey 3 00 00");
	t.has_openpgp = true;
	t.read_path = READ_PATH_PCSC;
	strcpy_trunc(t.openpgp.serial, sizeof(t.openpgp.serial), serial);
	return t;
}

/* A Nitrokey's USB serial is not its OpenPGP card serial: the one USB and the one card sighting
 * of that kind are one token, named by the card; its USB-serial name is not remembered. */
TEST(nitrokey_usb_serial_differs_from_card)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	const struct token *tokens;
	struct token u = usb_nitrokey("A1B2C3D4E5F60718"), c = card_nitrokey("A1B2C3D4");

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_subscribe(m, record, &rec));
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/nk", &u, 10));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "nitrokey-A1B2C3D4E5F60718");
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Nitrokey Nitrokey 3 00 00", &c, 11));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "nitrokey-A1B2C3D4");
	ASSERT_STREQ(tokens[0].serial, "A1B2C3D4");
	ASSERT_STREQ(tokens[0].model, "Nitrokey 3");
	ASSERT_STREQ(tokens[0].reader, "Nitrokey Nitrokey 3 00 00");
	ASSERT_EQ(tokens[0].usb_vendor, 0x20a0);
	ASSERT_TRUE(tokens[0].has_openpgp);
	ASSERT_TRUE(tokens[0].present);
	ASSERT_EQ(rec.n, 3);
	ASSERT_EQ(rec.type[0], MODEL_TOKEN_ADDED);
	ASSERT_STREQ(rec.what[0], "nitrokey-A1B2C3D4E5F60718");
	ASSERT_EQ(rec.type[1], MODEL_TOKEN_ADDED);
	ASSERT_STREQ(rec.what[1], "nitrokey-A1B2C3D4");
	ASSERT_EQ(rec.type[2], MODEL_TOKEN_REMOVED);
	ASSERT_STREQ(rec.what[2], "nitrokey-A1B2C3D4E5F60718");

	/* The card out of sight first (pcscd gone, or its removal seen first): the device keeps
	 * the card's name; a udev change event with the same USB serial does not forget it. */
	ASSERT_OK(model_sighting_remove(m, SIGHTING_PCSC, "Nitrokey Nitrokey 3 00 00", 20));
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/nk", &u, 20));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "nitrokey-A1B2C3D4");
	ASSERT_TRUE(tokens[0].present);
	ASSERT_STREQ(tokens[0].reader, "");
	ASSERT_EQ(rec.n, 4);
	ASSERT_EQ(rec.type[3], MODEL_TOKEN_CHANGED);

	/* Unplugged: the card's token is remembered, absent. */
	ASSERT_OK(model_sighting_remove(m, SIGHTING_USB, "/sys/nk", 21));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "nitrokey-A1B2C3D4");
	ASSERT_FALSE(tokens[0].present);

	/* Plugged again, card first this time: the same one token, present. */
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Nitrokey Nitrokey 3 00 00", &c, 30));
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/nk", &u, 31));
	ASSERT_EQ(model_tokens(m, &tokens), 1);
	ASSERT_STREQ(tokens[0].id, "nitrokey-A1B2C3D4");
	ASSERT_TRUE(tokens[0].present);
	ASSERT_EQ(tokens[0].usb_product, 0x42b2);

	/* A second one: the first pair is known by its card's serial, so the second device and
	 * card are again the only unpaired ones. */
	struct token u2 = usb_nitrokey("0000000000000002"), c2 = card_nitrokey("00000002");
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/nk2", &u2, 40));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Nitrokey Nitrokey 3 01 00", &c2, 41));
	ASSERT_EQ(model_tokens(m, &tokens), 2);
	ASSERT_STREQ(tokens[0].id, "nitrokey-A1B2C3D4");
	ASSERT_STREQ(tokens[1].id, "nitrokey-00000002");

	/* Two new ones at once: which device holds which card is unknown, so nothing pairs. */
	_cleanup_(model_freep) struct model *two = NULL;
	ASSERT_OK(model_new(&two));
	ASSERT_OK(model_sighting_put(two, SIGHTING_USB, "/sys/nk", &u, 1));
	ASSERT_OK(model_sighting_put(two, SIGHTING_USB, "/sys/nk2", &u2, 1));
	ASSERT_OK(model_sighting_put(two, SIGHTING_PCSC, "Nitrokey Nitrokey 3 00 00", &c, 2));
	ASSERT_OK(model_sighting_put(two, SIGHTING_PCSC, "Nitrokey Nitrokey 3 01 00", &c2, 2));
	ASSERT_EQ(model_tokens(two, &tokens), 4);

	/* YubiKeys keep pairing by equal serials only: a different USB serial stays apart. */
	_cleanup_(model_freep) struct model *y = NULL;
	struct token yu = usb_yubikey("11111111"), yc = card_yubikey("22222222", 1);
	ASSERT_OK(model_new(&y));
	ASSERT_OK(model_sighting_put(y, SIGHTING_USB, "/sys/yk", &yu, 1));
	ASSERT_OK(model_sighting_put(y, SIGHTING_PCSC, "r", &yc, 2));
	ASSERT_EQ(model_tokens(y, &tokens), 2);
}

TEST(counter_going_down_is_flagged)
{
	_cleanup_(model_freep) struct model *m = NULL;
	const struct token *tokens;
	struct token c = card_yubikey("12345678", 50);

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "r", &c, 1));
	ASSERT_OK(model_sighting_remove(m, SIGHTING_PCSC, "r", 2));
	c.openpgp.signature_counter = 60;
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "r", &c, 3));
	model_tokens(m, &tokens);
	ASSERT_FALSE(tokens[0].counter_went_down);
	ASSERT_OK(model_sighting_remove(m, SIGHTING_PCSC, "r", 4));
	c.openpgp.signature_counter = 3;
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "r", &c, 5));
	model_tokens(m, &tokens);
	ASSERT_TRUE(tokens[0].counter_went_down);
	ASSERT_EQ(tokens[0].first_seen, 1);
}

static struct key make_key(const char *fpr, const char *sub, enum level level)
{
	struct key k;

	memset(&k, 0, sizeof(k));
	strcpy_trunc(k.fingerprint, sizeof(k.fingerprint), fpr);
	strcpy_trunc(k.uid, sizeof(k.uid), "Alice <alice@example.org>");
	k.n_subkeys = 2;
	k.subkeys = calloc(2, sizeof(struct subkey));
	ASSERT_TRUE(k.subkeys);
	strcpy_trunc(k.subkeys[0].fingerprint, FPR_HEX_MAX, fpr);
	k.subkeys[0].is_primary = true;
	strcpy_trunc(k.subkeys[1].fingerprint, FPR_HEX_MAX, sub);
	k.subkeys[1].level = level;
	return k;
}

static int derive_levels(struct model *m, void *userdata)
{
	enum level *level = userdata;
	struct key *keys;
	size_t n = model_keys_mutable(m, &keys);
	struct finding f;

	for (size_t i = 0; i < n; i++)
		keys[i].subkeys[1].level = *level;
	memset(&f, 0, sizeof(f));
	strcpy_trunc(f.rule, sizeof(f.rule), "subkey-expiring");
	f.level = *level;
	return model_findings_replace(m, &f, *level == LEVEL_OK ? 0 : 1);
}

TEST(keys_levels_and_findings)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	enum level level = LEVEL_OK;
	struct key keys[2];
	const char *A = "AAAA000000000000000000000000000000000001";
	const char *B = "BBBB000000000000000000000000000000000002";

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_subscribe(m, record, &rec));
	model_set_deriver(m, derive_levels, &level);

	keys[0] = make_key(A, "A5", LEVEL_OK);
	keys[1] = make_key(B, "B5", LEVEL_OK);
	ASSERT_OK(model_keys_replace(m, keys, 2));
	ASSERT_EQ(rec.n, 2);
	ASSERT_EQ(rec.type[0], MODEL_KEY_ADDED);
	ASSERT_EQ(rec.type[1], MODEL_KEY_ADDED);

	/* Time passes: the deriver moves levels; one LEVEL_CHANGED per subkey, then KEY_CHANGED,
	 * then the finding. */
	level = LEVEL_WARNING;
	ASSERT_OK(model_update(m));
	ASSERT_EQ(rec.n, 7);
	ASSERT_EQ(rec.type[2], MODEL_LEVEL_CHANGED);
	ASSERT_STREQ(rec.what[2], "A5");
	ASSERT_EQ(rec.level[2], LEVEL_WARNING);
	ASSERT_EQ(rec.type[3], MODEL_KEY_CHANGED);
	ASSERT_EQ(rec.type[6], MODEL_FINDING_RAISED);
	ASSERT_STREQ(rec.what[6], "subkey-expiring");

	/* Nothing changed: nothing told. */
	ASSERT_OK(model_update(m));
	ASSERT_EQ(rec.n, 7);

	/* Key B leaves the keyring; the finding clears when the level is ok again. */
	keys[0] = make_key(A, "A5", LEVEL_OK);
	level = LEVEL_OK;
	ASSERT_OK(model_keys_replace(m, keys, 1));
	ASSERT_EQ(rec.type[7], MODEL_KEY_REMOVED);
	ASSERT_STREQ(rec.what[7], B);
	ASSERT_EQ(rec.type[8], MODEL_LEVEL_CHANGED);
	ASSERT_EQ(rec.type[9], MODEL_KEY_CHANGED);
	ASSERT_EQ(rec.type[10], MODEL_FINDING_CLEARED);
	ASSERT_EQ(rec.n, 11);
}

struct wording {
	enum level level;
	const char *message;
};

static int derive_wording(struct model *m, void *userdata)
{
	const struct wording *w = userdata;
	struct finding f;

	memset(&f, 0, sizeof(f));
	strcpy_trunc(f.rule, sizeof(f.rule), "subkey-expiring");
	strcpy_trunc(f.subkey, sizeof(f.subkey), "A5");
	strcpy_trunc(f.message, sizeof(f.message), w->message);
	f.level = w->level;
	return model_findings_replace(m, &f, 1);
}

TEST(reworded_findings_are_marked)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	struct wording w = { LEVEL_WARNING, "expires in 5 days" };

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_subscribe(m, record, &rec));
	model_set_deriver(m, derive_wording, &w);

	ASSERT_OK(model_update(m));
	ASSERT_EQ(rec.n, 1);
	ASSERT_EQ(rec.type[0], MODEL_FINDING_RAISED);
	ASSERT_FALSE(rec.reworded[0]);

	/* The card holding the key was read: same problem, more words. */
	w.message = "on YubiKey #1 expires in 5 days";
	ASSERT_OK(model_update(m));
	ASSERT_EQ(rec.n, 2);
	ASSERT_EQ(rec.type[1], MODEL_FINDING_RAISED);
	ASSERT_TRUE(rec.reworded[1]);

	/* Same words: nothing. A new level: a new problem, not a rewording. */
	ASSERT_OK(model_update(m));
	ASSERT_EQ(rec.n, 2);
	w.level = LEVEL_CRITICAL;
	ASSERT_OK(model_update(m));
	ASSERT_EQ(rec.n, 3);
	ASSERT_EQ(rec.type[2], MODEL_FINDING_RAISED);
	ASSERT_FALSE(rec.reworded[2]);
}

TEST(daemon_info_changes)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	struct daemon_info info;

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_subscribe(m, record, &rec));
	memcpy(&info, model_daemon_info(m), sizeof(info));
	info.now = 5;
	ASSERT_EQ(model_daemon_info_put(m, &info), 0);
	info.pcsc_available = true;
	ASSERT_EQ(model_daemon_info_put(m, &info), 1);
	ASSERT_EQ(rec.n, 1);
	ASSERT_EQ(rec.type[0], MODEL_DAEMON_CHANGED);
	model_unsubscribe(m, record, &rec);
	info.pcsc_available = false;
	ASSERT_EQ(model_daemon_info_put(m, &info), 1);
	ASSERT_EQ(rec.n, 1);
}

TEST(absent_tokens_are_bounded)
{
	_cleanup_(model_freep) struct model *m = NULL;
	const struct token *tokens;

	ASSERT_OK(model_new(&m));
	for (unsigned i = 0; i < TOKENS_MAX + 10; i++) {
		char serial[16];
		struct token c;

		snprintf(serial, sizeof(serial), "%08u", i);
		c = card_yubikey(serial, 1);
		ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "r", &c, i));
		ASSERT_OK(model_sighting_remove(m, SIGHTING_PCSC, "r", i));
	}
	ASSERT_EQ(model_tokens(m, &tokens), TOKENS_MAX);
	/* The oldest were forgotten first. */
	ASSERT_STREQ(tokens[0].serial, "00000010");
}

/* Two unpersonalised cards with the default serial 00000000 (SmartPGP, tests/data/cards) in
 * two readers: two tokens, and the token says its serial is not unique. */
TEST(shared_serials_stay_two_tokens)
{
	_cleanup_(model_freep) struct model *m = NULL;
	const struct token *tokens;
	struct token a = {}, b = {};

	ASSERT_OK(model_new(&m));
	for (int i = 0; i < 2; i++) {
		struct token *t = i ? &b : &a;

		t->kind = TOKEN_KIND_OPENPGP_CARD;
		strcpy_trunc(t->serial, sizeof(t->serial), "00000000");
		t->serial_shared = true;
		t->has_openpgp = true;
		strcpy_trunc(t->openpgp.serial, sizeof(t->openpgp.serial), "00000000");
	}
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Generic Reader 00 00", &a, 1));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "Generic Reader 01 00", &b, 1));
	ASSERT_EQ(model_tokens(m, &tokens), 2);
	ASSERT_TRUE(!streq(tokens[0].id, tokens[1].id));
	ASSERT_TRUE(strncmp(tokens[0].id, "openpgp-card-00000000-r", 23) == 0);
	ASSERT_TRUE(tokens[0].serial_shared && tokens[1].serial_shared);
}

static struct touch_pending touch_sig(const char *requester)
{
	struct touch_pending tp;

	memset(&tp, 0, sizeof(tp));
	tp.application = TOUCH_APP_OPENPGP;
	strcpy_trunc(tp.slot, sizeof(tp.slot), "sig");
	tp.since = 300;
	tp.since_usec = 5000;
	strcpy_trunc(tp.requester, sizeof(tp.requester), requester);
	return tp;
}

TEST(touch_pending_and_done)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	struct token u = usb_yubikey("12345678"), c = card_yubikey("12345678", 7);
	struct touch_pending tp = touch_sig(""), bad;
	const struct token *t;
	uint64_t gen;

	ASSERT_OK(model_new(&m));
	ASSERT_ERR(model_touch_set(m, "yubikey-12345678", &tp), ENOENT);
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/devices/usb1/1-1", &u, 100));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &c, 101));
	ASSERT_OK(model_subscribe(m, record, &rec));

	gen = model_generation(m);
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", &tp), 1);
	ASSERT_TRUE(model_generation(m) > gen);
	ASSERT_EQ(rec.n, 1);
	ASSERT_EQ(rec.type[0], MODEL_TOUCH_PENDING);
	ASSERT_STREQ(rec.what[0], "yubikey-12345678");
	ASSERT_TRUE(rec.touch_waiting[0]);
	t = model_token_get(m, "yubikey-12345678");
	ASSERT_TRUE(t->touch_waiting);
	ASSERT_STREQ(t->touch.slot, "sig");
	ASSERT_EQ(t->touch.since_usec, 5000);

	/* The same again: nothing; the requester learned: told again. */
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", &tp), 0);
	ASSERT_EQ(rec.n, 1);
	tp = touch_sig("git");
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", &tp), 1);
	ASSERT_EQ(rec.type[1], MODEL_TOUCH_PENDING);
	ASSERT_STREQ(model_token_get(m, "yubikey-12345678")->touch.requester, "git");

	/* A sighting of the same token (a card read) keeps the wait, and says nothing of it. */
	c.openpgp.signature_counter = 8;
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &c, 102));
	ASSERT_EQ(rec.type[2], MODEL_TOKEN_CHANGED);
	ASSERT_TRUE(rec.touch_waiting[2]);
	ASSERT_TRUE(model_token_get(m, "yubikey-12345678")->touch_waiting);

	/* Bad values are refused, and change nothing. */
	bad = touch_sig("git\n");
	ASSERT_ERR(model_touch_set(m, "yubikey-12345678", &bad), EINVAL);
	bad = touch_sig("git");
	strcpy_trunc(bad.slot, sizeof(bad.slot), "9c");
	ASSERT_ERR(model_touch_set(m, "yubikey-12345678", &bad), EINVAL);
	ASSERT_ERR(model_touch_done(m, "yubikey-12345678", TOUCH_END_MAX), EINVAL);
	ASSERT_EQ(rec.n, 3);

	/* Touched: done, once. */
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", NULL), 1);
	ASSERT_EQ(rec.type[3], MODEL_TOUCH_DONE);
	ASSERT_EQ(rec.touch_end[3], TOUCH_END_TOUCHED);
	ASSERT_FALSE(rec.touch_waiting[3]);
	t = model_token_get(m, "yubikey-12345678");
	ASSERT_FALSE(t->touch_waiting);
	ASSERT_EQ(t->touch.since, 0);
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", NULL), 0);
	ASSERT_EQ(model_touch_done(m, "yubikey-12345678", TOUCH_END_TIMEOUT), 0);
	ASSERT_EQ(rec.n, 4);

	/* Unplugged while waiting: touch-done "removed", then token-removed; no wait remembered. */
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", &tp), 1);
	ASSERT_OK(model_sighting_remove(m, SIGHTING_PCSC, "reader", 103));
	ASSERT_OK(model_sighting_remove(m, SIGHTING_USB, "/sys/devices/usb1/1-1", 104));
	ASSERT_EQ(rec.type[rec.n - 2], MODEL_TOUCH_DONE);
	ASSERT_EQ(rec.touch_end[rec.n - 2], TOUCH_END_REMOVED);
	ASSERT_EQ(rec.type[rec.n - 1], MODEL_TOKEN_REMOVED);
	ASSERT_FALSE(rec.touch_waiting[rec.n - 1]);
	t = model_token_get(m, "yubikey-12345678");
	ASSERT_FALSE(t->present);
	ASSERT_FALSE(t->touch_waiting);
	ASSERT_ERR(model_touch_set(m, "yubikey-12345678", &tp), ENOENT);
	ASSERT_ERR(model_touch_done(m, "yubikey-12345678", TOUCH_END_TIMEOUT), ENOENT);
}

/* A remembered token put back (state.c) never brings a wait with it, nor ends a live one. */
TEST(touch_not_remembered)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct recorder rec = { 0 };
	struct token c = card_yubikey("12345678", 7), saved;
	struct touch_pending tp = touch_sig("gpg");
	const struct token *t;

	ASSERT_OK(model_new(&m));
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &c, 101));
	ASSERT_EQ(model_touch_set(m, "yubikey-12345678", &tp), 1);
	memcpy(&saved, model_token_get(m, "yubikey-12345678"), sizeof(saved));
	ASSERT_TRUE(saved.touch_waiting);

	/* A put of the same token while it waits keeps the wait. */
	ASSERT_OK(model_subscribe(m, record, &rec));
	saved.touch_waiting = false;
	memset(&saved.touch, 0, sizeof(saved.touch));
	ASSERT_OK(model_token_put(m, &saved));
	ASSERT_TRUE(model_token_get(m, "yubikey-12345678")->touch_waiting);

	/* A remembered, absent token that says it waits does not. */
	saved.touch_waiting = true;
	saved.touch = tp;
	saved.present = false;
	strcpy_trunc(saved.id, sizeof(saved.id), "yubikey-99999999");
	ASSERT_OK(model_token_put(m, &saved));
	t = model_token_get(m, "yubikey-99999999");
	ASSERT_TRUE(t);
	ASSERT_FALSE(t->touch_waiting);
	ASSERT_EQ(t->touch.since, 0);
}

TEST(token_id_by_sighting)
{
	_cleanup_(model_freep) struct model *m = NULL;
	struct token u = usb_yubikey(""), c = card_yubikey("87654321", 1);
	char id[TOKEN_ID_MAX], small[4];

	ASSERT_OK(model_new(&m));
	ASSERT_ERR(model_token_id_by_sighting(m, SIGHTING_USB, "/sys/x", id, sizeof(id)), ENOENT);
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/x", &u, 1));
	ASSERT_OK(model_token_id_by_sighting(m, SIGHTING_USB, "/sys/x", id, sizeof(id)));
	ASSERT_TRUE(strncmp(id, "yubikey-u", 9) == 0);
	/* Its card read: the USB device is now part of the card's token. */
	ASSERT_OK(model_sighting_put(m, SIGHTING_PCSC, "reader", &c, 2));
	ASSERT_OK(model_token_id_by_sighting(m, SIGHTING_USB, "/sys/x", id, sizeof(id)));
	ASSERT_STREQ(id, "yubikey-87654321");
	ASSERT_OK(model_token_id_by_sighting(m, SIGHTING_PCSC, "reader", id, sizeof(id)));
	ASSERT_STREQ(id, "yubikey-87654321");
	ASSERT_ERR(model_token_id_by_sighting(m, SIGHTING_PCSC, "/sys/x", id, sizeof(id)), ENOENT);
	ASSERT_ERR(model_token_id_by_sighting(m, SIGHTING_USB, "/sys/x", small, sizeof(small)),
	           ENOBUFS);

	/* A second device: its own token, and the first keeps its id after the other goes. */
	struct token u2 = usb_yubikey("11111111");
	ASSERT_OK(model_sighting_put(m, SIGHTING_USB, "/sys/y", &u2, 3));
	ASSERT_OK(model_token_id_by_sighting(m, SIGHTING_USB, "/sys/y", id, sizeof(id)));
	ASSERT_STREQ(id, "yubikey-11111111");
	ASSERT_OK(model_sighting_remove(m, SIGHTING_PCSC, "reader", 4));
	ASSERT_OK(model_token_id_by_sighting(m, SIGHTING_USB, "/sys/y", id, sizeof(id)));
	ASSERT_STREQ(id, "yubikey-11111111");
	ASSERT_ERR(model_token_id_by_sighting(m, SIGHTING_PCSC, "reader", id, sizeof(id)), ENOENT);
}

int main(void)
{
	RUN(usb_and_card_are_one_token);
	RUN(shared_serials_stay_two_tokens);
	RUN(serialless_usb_pairs_with_only_reader);
	RUN(nitrokey_usb_serial_differs_from_card);
	RUN(counter_going_down_is_flagged);
	RUN(keys_levels_and_findings);
	RUN(reworded_findings_are_marked);
	RUN(daemon_info_changes);
	RUN(absent_tokens_are_bounded);
	RUN(touch_pending_and_done);
	RUN(touch_not_remembered);
	RUN(token_id_by_sighting);
	return 0;
}
