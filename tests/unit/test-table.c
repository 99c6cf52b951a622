/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status's renderers and exit code, from hand-built structs: the exact text a person
 * reads (table, with and without colour), the exact Prometheus exposition, and the exit code
 * a monitoring system acts on. Does not: talk to a daemon (tests/integration does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expiry-math.h"
#include "prometheus.h"
#include "status.h"
#include "table.h"
#include "test.h"

#define NOW INT64_C(1748736000) /* 2025-06-01 00:00:00 UTC */
#define DAY SECONDS_PER_DAY

#define ALICE "0123456789ABCDEF0123456789ABCDEF01234567"
#define ALICE_S "7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D"
#define ALICE_E "1122334455667788112233445566778811223344"
#define ALICE_A "AABBCCDDEEFF0011AABBCCDDEEFF0011AABBCCDD"
#define BOB "B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0"
#define BOB_E "E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E1"
#define BOB_S "5050505050505050505050505050505050505052"

struct fixture {
	struct daemon_info d;
	struct token tokens[2];
	struct subkey alice_sub[4], bob_sub[3];
	struct key keys[2];
	struct finding findings[3];
};

static void set_slot(struct card_slot *s, const char *fpr, const char *algo, enum touch_policy t)
{
	strcpy_trunc(s->fingerprint, sizeof(s->fingerprint), fpr);
	strcpy_trunc(s->algorithm, sizeof(s->algorithm), algo);
	s->touch = t;
}

static void set_subkey(struct subkey *s, const char *fpr, const char *algo, unsigned caps,
                       int64_t expires, enum secret_location where, const char *token,
                       enum level level)
{
	memset(s, 0, sizeof(*s));
	strcpy_trunc(s->fingerprint, sizeof(s->fingerprint), fpr);
	strcpy_trunc(s->algorithm, sizeof(s->algorithm), algo);
	s->capabilities = caps;
	s->created = NOW - 300 * DAY;
	s->expires = expires;
	s->expired = expires != 0 && expires <= NOW;
	s->secret = where;
	strcpy_trunc(s->token_id, sizeof(s->token_id), token);
	s->level = level;
}

static void set_finding(struct finding *f, const char *rule, enum level l, const char *msg,
                        const char *hint)
{
	memset(f, 0, sizeof(*f));
	strcpy_trunc(f->rule, sizeof(f->rule), rule);
	f->level = l;
	strcpy_trunc(f->message, sizeof(f->message), msg);
	strcpy_trunc(f->hint, sizeof(f->hint), hint);
}

/* A YubiKey holding Alice's three subkeys (expiring in 5 days, 20 days, never) under a sec#
 * primary; an absent card seen 3 days ago; Bob's expired key on disk with a subkey on a card this
 * machine never saw and a revoked one; three findings. */
static void fixture_init(struct fixture *x)
{
	struct token *y = &x->tokens[0], *c = &x->tokens[1];

	memset(x, 0, sizeof(*x));
	strcpy_trunc(x->d.version, sizeof(x->d.version), "0.1.0");
	x->d.started = NOW - 3 * 3600;
	x->d.now = NOW;
	x->d.pcsc_available = true;
	strcpy_trunc(x->d.gnupghome, sizeof(x->d.gnupghome), "/home/alice/.gnupg");
	x->d.keyring_refreshed = NOW - 120;

	strcpy_trunc(y->id, sizeof(y->id), "yubikey-12345678");
	y->kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(y->model, sizeof(y->model), "YubiKey 5 NFC");
	strcpy_trunc(y->serial, sizeof(y->serial), "12345678");
	strcpy_trunc(y->firmware, sizeof(y->firmware), "5.4.3");
	strcpy_trunc(y->reader, sizeof(y->reader), "Yubico YubiKey OTP+FIDO+CCID 00 00");
	y->usb_interfaces = USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID;
	y->present = true;
	y->first_seen = NOW - 100 * DAY;
	y->last_seen = NOW;
	y->has_openpgp = true;
	y->read_path = READ_PATH_PCSC;
	strcpy_trunc(y->openpgp.serial, sizeof(y->openpgp.serial), "00BC614E");
	set_slot(&y->openpgp.slots[SLOT_SIGN], ALICE_S, "ed25519", TOUCH_ON);
	set_slot(&y->openpgp.slots[SLOT_ENCRYPT], ALICE_E, "cv25519", TOUCH_OFF);
	set_slot(&y->openpgp.slots[SLOT_AUTH], ALICE_A, "ed25519", TOUCH_CACHED_FIXED);
	y->openpgp.pin_retries[0] = 3;
	y->openpgp.pin_retries[1] = 0;
	y->openpgp.pin_retries[2] = 3;
	y->openpgp.signature_counter = 42;

	strcpy_trunc(c->id, sizeof(c->id), "openpgp-000F0A1B2C3D");
	c->kind = TOKEN_KIND_OPENPGP_CARD;
	c->present = false;
	c->last_seen = NOW - 3 * DAY - 7200;
	c->has_openpgp = true;
	c->read_path = READ_PATH_SCDAEMON;
	strcpy_trunc(c->reader, sizeof(c->reader), "Cherry ST-2xxx 00 00");
	strcpy_trunc(c->openpgp.serial, sizeof(c->openpgp.serial), "0A1B2C3D");
	set_slot(&c->openpgp.slots[SLOT_SIGN], "FFFFFFFFFFFFFFFFFFFFFFFF0000000000000001",
	         "rsa4096", TOUCH_UNKNOWN);
	c->openpgp.pin_retries[0] = 3;
	c->openpgp.pin_retries[2] = 3;
	strcpy_trunc(c->error, sizeof(c->error), "Card reset by another application");

	set_subkey(&x->alice_sub[0], ALICE, "ed25519", CAP_CERTIFY, 0, SECRET_NONE, "", LEVEL_OK);
	x->alice_sub[0].is_primary = true;
	set_subkey(&x->alice_sub[1], ALICE_S, "ed25519", CAP_SIGN, NOW + 5 * DAY - 3600,
	           SECRET_CARD, "yubikey-12345678", LEVEL_WARNING);
	set_subkey(&x->alice_sub[2], ALICE_E, "cv25519", CAP_ENCRYPT, NOW + 20 * DAY, SECRET_CARD,
	           "yubikey-12345678", LEVEL_NOTICE);
	set_subkey(&x->alice_sub[3], ALICE_A, "ed25519", CAP_AUTH, 0, SECRET_CARD,
	           "yubikey-12345678", LEVEL_OK);
	strcpy_trunc(x->keys[0].fingerprint, sizeof(x->keys[0].fingerprint), ALICE);
	strcpy_trunc(x->keys[0].uid, sizeof(x->keys[0].uid), "Alice Example <alice@example.org>");
	x->keys[0].has_secret = true;
	x->keys[0].level = LEVEL_WARNING;
	x->keys[0].n_subkeys = 4;
	x->keys[0].subkeys = x->alice_sub;

	set_subkey(&x->bob_sub[0], BOB, "rsa4096", CAP_SIGN | CAP_CERTIFY, NOW - 2 * DAY - 60,
	           SECRET_DISK, "", LEVEL_EXPIRED);
	x->bob_sub[0].is_primary = true;
	set_subkey(&x->bob_sub[1], BOB_E, "rsa4096", CAP_ENCRYPT, NOW + 400 * DAY, SECRET_CARD, "",
	           LEVEL_OK);
	strcpy_trunc(x->bob_sub[1].card_serial, sizeof(x->bob_sub[1].card_serial),
	             "D2760001240103040006DEADBEEF0000");
	set_subkey(&x->bob_sub[2], BOB_S, "rsa2048", CAP_SIGN, NOW - 100 * DAY, SECRET_DISK, "",
	           LEVEL_EXPIRED);
	x->bob_sub[2].revoked = true;
	strcpy_trunc(x->keys[1].fingerprint, sizeof(x->keys[1].fingerprint), BOB);
	strcpy_trunc(x->keys[1].uid, sizeof(x->keys[1].uid), "Bob Backup <bob@example.org>");
	x->keys[1].has_secret = true;
	x->keys[1].expired = true;
	x->keys[1].level = LEVEL_EXPIRED;
	x->keys[1].n_subkeys = 3;
	x->keys[1].subkeys = x->bob_sub;

	set_finding(
	        &x->findings[0], "subkey-expiring", LEVEL_WARNING,
	        "Subkey 7A3B9C1D2E3F4A5B of Alice Example <alice@example.org> expires in 5 days "
	        "(2025-06-05).",
	        "gpg --quick-set-expire " ALICE " 1y " ALICE_S);
	set_finding(
	        &x->findings[1], "key-expired", LEVEL_EXPIRED,
	        "The primary key of Bob Backup <bob@example.org> expired 2 days ago; nobody can "
	        "encrypt to it any more and signatures made with it no longer verify as valid.",
	        "");
	set_finding(&x->findings[2], "token-unseen", LEVEL_NOTICE,
	            "OpenPGP card #0A1B2C3D has not been seen for 3 days.", "");
}

/* Renders into a string (the caller frees). */
static char *render_table(const struct fixture *x, size_t n_tokens, size_t n_keys,
                          size_t n_findings, bool color)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ASSERT_TRUE(f);
	ASSERT_OK(table_render(f, &x->d, x->tokens, n_tokens, x->keys, n_keys, x->findings,
	                       n_findings, NOW, color));
	fclose(f);
	return buf;
}

static char *render_prometheus(const struct fixture *x)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ASSERT_TRUE(f);
	ASSERT_OK(prometheus_render(f, &x->d, x->tokens, 2, x->keys, 2, x->findings, 3, NOW));
	fclose(f);
	return buf;
}

/* Prints where two texts part, which a 3 kB ASSERT_STREQ would bury. */
static void assert_text(const char *got, const char *want)
{
	size_t i = 0, line = 1;

	if (streq(got, want))
		return;
	for (; got[i] && got[i] == want[i]; i++)
		if (got[i] == '\n')
			line++;
	fprintf(stderr, "---- got:\n%s---- want:\n%s----\n", got, want);
	TEST_FAIL("texts differ at line %zu, byte %zu", line, i);
}

TEST(table_plain)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL;

	fixture_init(&x);
	ASSERT_OK(setenv("COLUMNS", "100", 1));
	s = render_table(&x, 2, 2, 3, false);
	assert_text(
	        s,
	        "keyctld 0.1.0, up 3 hours; keyring /home/alice/.gnupg read 2 minutes ago\n"
	        "\n"
	        "TOKENS\n"
	        "  YubiKey 5 NFC #12345678  present  firmware 5.4.3\n"
	        "    reader      Yubico YubiKey OTP+FIDO+CCID 00 00\n"
	        "    sign        2E3F4A5B7A3B9C1D  ed25519  touch on            Alice Example "
	        "<alice@example.org>\n"
	        "    encrypt     5566778811223344  cv25519  touch off           Alice Example "
	        "<alice@example.org>\n"
	        "    auth        EEFF0011AABBCCDD  ed25519  touch cached-fixed  Alice Example "
	        "<alice@example.org>\n"
	        "    PIN retries user 3, reset 0, admin 3\n"
	        "    signatures  42\n"
	        "  OpenPGP card #0A1B2C3D  absent, last seen 3 days ago\n"
	        "    reader      Cherry ST-2xxx 00 00, read through scdaemon\n"
	        "    error       Card reset by another application\n"
	        "    sign        0000000000000001  rsa4096  not in keyring\n"
	        "    encrypt     empty\n"
	        "    auth        empty\n"
	        "    PIN retries user 3, reset 0, admin 3\n"
	        "    signatures  0\n"
	        "\n"
	        "KEYS\n"
	        "  Alice Example <alice@example.org>  89ABCDEF01234567  warning\n"
	        "    [C]   ed25519  offline (sec#)              never                           "
	        "ok\n"
	        "    [S]   ed25519  on YubiKey 5 NFC #12345678  2025-06-05  in 5 days           "
	        "warning\n"
	        "    [E]   cv25519  on YubiKey 5 NFC #12345678  2025-06-21  in 20 days          "
	        "notice\n"
	        "    [A]   ed25519  on YubiKey 5 NFC #12345678  never                           "
	        "ok\n"
	        "  Bob Backup <bob@example.org>  B0B0B0B0B0B0B0B0  expired\n"
	        "    [SC]  rsa4096  on disk                     2025-05-29  expired 2 days ago  "
	        "expired\n"
	        "    [E]   rsa4096  card #DEADBEEF (not seen)   2026-07-06  in 400 days         "
	        "ok\n"
	        "    [S]   rsa2048  on disk                     2025-02-21                      "
	        "revoked\n"
	        "\n"
	        "FINDINGS\n"
	        "  warning   Subkey 7A3B9C1D2E3F4A5B of Alice Example <alice@example.org> expires "
	        "in 5 days\n"
	        "            (2025-06-05).\n"
	        "            hint:\n"
	        "              gpg --quick-set-expire 0123456789ABCDEF0123456789ABCDEF01234567 1y "
	        "7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D\n"
	        "  expired   The primary key of Bob Backup <bob@example.org> expired 2 days ago; "
	        "nobody can encrypt\n"
	        "            to it any more and signatures made with it no longer verify as "
	        "valid.\n"
	        "  notice    OpenPGP card #0A1B2C3D has not been seen for 3 days.\n");
}

TEST(table_color)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL;

	fixture_init(&x);
	ASSERT_OK(setenv("COLUMNS", "100", 1));
	x.d.keyring_stale = true;
	strcpy_trunc(x.d.keyring_error, sizeof(x.d.keyring_error), "gpg: keydb_search failed");
	x.d.pcsc_available = false;
	x.tokens[0].counter_went_down = true;
	s = render_table(&x, 1, 1, 1, true);
	assert_text(
	        s,
	        "keyctld 0.1.0, up 3 hours; keyring /home/alice/.gnupg read 2 minutes ago\n"
	        "  \033[33mkeyring is stale\033[0m: gpg: keydb_search failed\n"
	        "  \033[33mPC/SC is not available\033[0m: cards are not read (is pcscd installed "
	        "and running?)\n"
	        "\n"
	        "\033[1mTOKENS\033[0m\n"
	        "  \033[1mYubiKey 5 NFC #12345678\033[0m  \033[32mpresent\033[0m  firmware 5.4.3\n"
	        "    reader      Yubico YubiKey OTP+FIDO+CCID 00 00\n"
	        "    sign        2E3F4A5B7A3B9C1D  ed25519  touch on            \033[33mAlice "
	        "Example <alice@example.org>\033[0m\n"
	        "    encrypt     5566778811223344  cv25519  touch off           \033[36mAlice "
	        "Example <alice@example.org>\033[0m\n"
	        "    auth        EEFF0011AABBCCDD  ed25519  touch cached-fixed  Alice Example "
	        "<alice@example.org>\n"
	        "    PIN retries user 3, reset 0, admin 3\n"
	        "    signatures  \033[31m42 (lower than last seen: was the card reset?)\033[0m\n"
	        "\n"
	        "\033[1mKEYS\033[0m\n"
	        "  \033[1mAlice Example <alice@example.org>\033[0m  89ABCDEF01234567  "
	        "\033[33mwarning\033[0m\n"
	        "    [C]  ed25519  offline (sec#)              never                   "
	        "\033[32mok\033[0m\n"
	        "    [S]  ed25519  on YubiKey 5 NFC #12345678  2025-06-05  \033[33min 5 "
	        "days\033[0m   \033[33mwarning\033[0m\n"
	        "    [E]  cv25519  on YubiKey 5 NFC #12345678  2025-06-21  \033[36min 20 "
	        "days\033[0m  \033[36mnotice\033[0m\n"
	        "    [A]  ed25519  on YubiKey 5 NFC #12345678  never                   "
	        "\033[32mok\033[0m\n"
	        "\n"
	        "\033[1mFINDINGS\033[0m\n"
	        "  \033[33mwarning\033[0m   Subkey 7A3B9C1D2E3F4A5B of Alice Example "
	        "<alice@example.org> expires in 5 days\n"
	        "            (2025-06-05).\n"
	        "            hint:\n"
	        "              gpg --quick-set-expire 0123456789ABCDEF0123456789ABCDEF01234567 1y "
	        "7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D\n");
}

/* The terminal's width, 80 when the output is no terminal; a hint is never broken, however
 * long or quoted (a command broken across lines runs as two). */
TEST(table_width)
{
	static const char hint[] = "gpg --batch --yes --delete-secret-keys \"=Alice Example "
	                           "<alice@example.org>\" 0123456789ABCDEF0123456789ABCDEF01234567";
	struct fixture x;

	fixture_init(&x);
	set_finding(&x.findings[0], "key-expiring", LEVEL_WARNING,
	            "Subkey 7A3B9C1D2E3F4A5B of Alice Example <alice@example.org> expires in 5 "
	            "days (2025-06-05).",
	            hint);
	ASSERT_OK(unsetenv("COLUMNS"));
	{
		_cleanup_(freep) char *s = render_table(&x, 0, 0, 1, false);
		const char *f = strstr(s, "FINDINGS\n");

		ASSERT_TRUE(f);
		assert_text(f,
		            "FINDINGS\n"
		            "  warning   Subkey 7A3B9C1D2E3F4A5B of Alice Example "
		            "<alice@example.org> expires\n"
		            "            in 5 days (2025-06-05).\n"
		            "            hint:\n"
		            "              gpg --batch --yes --delete-secret-keys \"=Alice Example "
		            "<alice@example.org>\" 0123456789ABCDEF0123456789ABCDEF01234567\n");
	}
	ASSERT_OK(setenv("COLUMNS", "200", 1));
	{
		_cleanup_(freep) char *s = render_table(&x, 0, 0, 1, false);
		const char *f = strstr(s, "FINDINGS\n");

		ASSERT_TRUE(f);
		assert_text(
		        f,
		        "FINDINGS\n"
		        "  warning   Subkey 7A3B9C1D2E3F4A5B of Alice Example "
		        "<alice@example.org> expires in 5 days (2025-06-05).\n"
		        "            hint: gpg --batch --yes --delete-secret-keys \"=Alice "
		        "Example <alice@example.org>\" 0123456789ABCDEF0123456789ABCDEF01234567\n");
	}
	/* Nonsense is no width; a tiny one is raised to what a finding can be read in. */
	ASSERT_OK(setenv("COLUMNS", "80x", 1));
	{
		_cleanup_(freep) char *s = render_table(&x, 0, 0, 1, false);

		ASSERT_TRUE(strstr(s, "expires\n            in 5 days"));
	}
	ASSERT_OK(setenv("COLUMNS", "5", 1));
	{
		_cleanup_(freep) char *s = render_table(&x, 0, 0, 1, false);

		ASSERT_TRUE(strstr(s, "  warning   Subkey 7A3B9C1D2E3F4A5B of\n"));
	}
	ASSERT_OK(unsetenv("COLUMNS"));
}

TEST(table_empty)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL;

	fixture_init(&x);
	x.d.keyring_refreshed = 0;
	x.d.started = 0;
	s = render_table(&x, 0, 0, 0, false);
	assert_text(s, "keyctld 0.1.0; keyring /home/alice/.gnupg not read yet\n"
	               "\n"
	               "TOKENS\n"
	               "  none seen\n"
	               "\n"
	               "KEYS\n"
	               "  none: no key with a secret part and none tracked\n"
	               "\n"
	               "FINDINGS\n"
	               "  none\n");
}

/* The header says when the published copies were last checked, and what that check could not
 * do. */
TEST(table_upstream)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL, *t = NULL;

	fixture_init(&x);
	x.d.keyring_refreshed = 0;
	x.d.started = 0;
	x.d.upstream_checked = NOW - 7200;
	s = render_table(&x, 0, 0, 0, false);
	ASSERT_TRUE(strstr(s, "\n  published copies checked 2 hours ago\n") != NULL);
	strcpy(x.d.upstream_error, "0123456789ABCDEF: dirmngr: No keyserver available");
	t = render_table(&x, 0, 0, 0, false);
	ASSERT_TRUE(strstr(t, "\n  published copies checked 2 hours ago: incomplete "
	                      "(0123456789ABCDEF: dirmngr: No keyserver available)\n") != NULL);
}

/* Others' keys say why they are listed: named in the configuration, or trusted (relied on). */
TEST(table_others_keys)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL, *t = NULL;

	fixture_init(&x);
	x.keys[1].has_secret = false;
	x.keys[1].relied_on = true;
	s = render_table(&x, 0, 2, 0, false);
	ASSERT_TRUE(strstr(s, ", relied on") != NULL);
	ASSERT_TRUE(strstr(s, ", tracked") == NULL);
	x.keys[1].tracked = true;
	t = render_table(&x, 0, 2, 0, false);
	ASSERT_TRUE(strstr(t, ", tracked") != NULL);
	ASSERT_TRUE(strstr(t, ", relied on") == NULL);
}

TEST(prometheus)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL;

	fixture_init(&x);
	s = render_prometheus(&x);
	assert_text(s, "# HELP keyctl_daemon_up Whether keyctld answered (1) or not (0).\n"
	               "# TYPE keyctl_daemon_up gauge\n"
	               "keyctl_daemon_up 1\n"
	               "# HELP keyctl_keyring_stale 1 when the last keyring listing failed and the "
	               "keys shown are older.\n"
	               "# TYPE keyctl_keyring_stale gauge\n"
	               "keyctl_keyring_stale 0\n"
	               "# HELP keyctl_keyring_refreshed_timestamp_seconds When the keyring was "
	               "last listed successfully.\n"
	               "# TYPE keyctl_keyring_refreshed_timestamp_seconds gauge\n"
	               "keyctl_keyring_refreshed_timestamp_seconds 1748735880\n"
	               "# HELP keyctl_token_present 1 when the token is plugged in.\n"
	               "# TYPE keyctl_token_present gauge\n"
	               "keyctl_token_present{token=\"yubikey-12345678\",kind=\"yubikey\",serial="
	               "\"12345678\"} 1\n"
	               "keyctl_token_present{token=\"openpgp-000F0A1B2C3D\",kind=\"openpgp-card\","
	               "serial=\"0A1B2C3D\"} 0\n"
	               "# HELP keyctl_token_last_seen_timestamp_seconds When the token was last "
	               "seen plugged in.\n"
	               "# TYPE keyctl_token_last_seen_timestamp_seconds gauge\n"
	               "keyctl_token_last_seen_timestamp_seconds{token=\"yubikey-12345678\",kind="
	               "\"yubikey\",serial=\"12345678\"} 1748736000\n"
	               "keyctl_token_last_seen_timestamp_seconds{token=\"openpgp-000F0A1B2C3D\","
	               "kind=\"openpgp-card\",serial=\"0A1B2C3D\"} 1748469600\n"
	               "# HELP keyctl_token_pin_retries Tries left for the OpenPGP PINs (user PW1, "
	               "reset code, admin PW3).\n"
	               "# TYPE keyctl_token_pin_retries gauge\n"
	               "keyctl_token_pin_retries{token=\"yubikey-12345678\",kind=\"yubikey\","
	               "serial=\"12345678\",pin=\"user\"} 3\n"
	               "keyctl_token_pin_retries{token=\"yubikey-12345678\",kind=\"yubikey\","
	               "serial=\"12345678\",pin=\"reset\"} 0\n"
	               "keyctl_token_pin_retries{token=\"yubikey-12345678\",kind=\"yubikey\","
	               "serial=\"12345678\",pin=\"admin\"} 3\n"
	               "keyctl_token_pin_retries{token=\"openpgp-000F0A1B2C3D\",kind=\"openpgp-"
	               "card\",serial=\"0A1B2C3D\",pin=\"user\"} 3\n"
	               "keyctl_token_pin_retries{token=\"openpgp-000F0A1B2C3D\",kind=\"openpgp-"
	               "card\",serial=\"0A1B2C3D\",pin=\"reset\"} 0\n"
	               "keyctl_token_pin_retries{token=\"openpgp-000F0A1B2C3D\",kind=\"openpgp-"
	               "card\",serial=\"0A1B2C3D\",pin=\"admin\"} 3\n"
	               "# HELP keyctl_token_touch_pending 1 while the token waits for a touch "
	               "(application and slot say which key), else 0; present tokens only.\n"
	               "# TYPE keyctl_token_touch_pending gauge\n"
	               "keyctl_token_touch_pending{token=\"yubikey-12345678\",application=\"\","
	               "slot=\"\"} 0\n"
	               "# HELP keyctl_subkey_expiry_timestamp_seconds When the (sub)key expires; "
	               "absent for keys that never expire.\n"
	               "# TYPE keyctl_subkey_expiry_timestamp_seconds gauge\n"
	               "keyctl_subkey_expiry_timestamp_seconds{key="
	               "\"0123456789ABCDEF0123456789ABCDEF01234567\",subkey="
	               "\"7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D\",usage=\"sign\",uid=\"Alice "
	               "Example <alice@example.org>\"} 1749164400\n"
	               "keyctl_subkey_expiry_timestamp_seconds{key="
	               "\"0123456789ABCDEF0123456789ABCDEF01234567\",subkey="
	               "\"1122334455667788112233445566778811223344\",usage=\"encrypt\",uid=\"Alice "
	               "Example <alice@example.org>\"} 1750464000\n"
	               "keyctl_subkey_expiry_timestamp_seconds{key="
	               "\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\",subkey="
	               "\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\",usage=\"sign,certify\",uid="
	               "\"Bob Backup <bob@example.org>\"} 1748563140\n"
	               "keyctl_subkey_expiry_timestamp_seconds{key="
	               "\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\",subkey="
	               "\"E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E1\",usage=\"encrypt\",uid=\"Bob "
	               "Backup <bob@example.org>\"} 1783296000\n"
	               "# HELP keyctl_subkey_expiry_days Whole days until the (sub)key expires, "
	               "rounded up; 0 or less once expired.\n"
	               "# TYPE keyctl_subkey_expiry_days gauge\n"
	               "keyctl_subkey_expiry_days{key=\"0123456789ABCDEF0123456789ABCDEF01234567\","
	               "subkey=\"7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D\",usage=\"sign\",uid="
	               "\"Alice Example <alice@example.org>\"} 5\n"
	               "keyctl_subkey_expiry_days{key=\"0123456789ABCDEF0123456789ABCDEF01234567\","
	               "subkey=\"1122334455667788112233445566778811223344\",usage=\"encrypt\",uid="
	               "\"Alice Example <alice@example.org>\"} 20\n"
	               "keyctl_subkey_expiry_days{key=\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\","
	               "subkey=\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\",usage=\"sign,certify\","
	               "uid=\"Bob Backup <bob@example.org>\"} -2\n"
	               "keyctl_subkey_expiry_days{key=\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\","
	               "subkey=\"E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E1\",usage=\"encrypt\",uid="
	               "\"Bob Backup <bob@example.org>\"} 400\n"
	               "# HELP keyctl_subkey_level The (sub)key's level: 0 ok, 1 notice, 2 "
	               "warning, 3 critical, 4 expired.\n"
	               "# TYPE keyctl_subkey_level gauge\n"
	               "keyctl_subkey_level{key=\"0123456789ABCDEF0123456789ABCDEF01234567\","
	               "subkey=\"0123456789ABCDEF0123456789ABCDEF01234567\",usage=\"certify\",uid="
	               "\"Alice Example <alice@example.org>\"} 0\n"
	               "keyctl_subkey_level{key=\"0123456789ABCDEF0123456789ABCDEF01234567\","
	               "subkey=\"7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D\",usage=\"sign\",uid="
	               "\"Alice Example <alice@example.org>\"} 2\n"
	               "keyctl_subkey_level{key=\"0123456789ABCDEF0123456789ABCDEF01234567\","
	               "subkey=\"1122334455667788112233445566778811223344\",usage=\"encrypt\",uid="
	               "\"Alice Example <alice@example.org>\"} 1\n"
	               "keyctl_subkey_level{key=\"0123456789ABCDEF0123456789ABCDEF01234567\","
	               "subkey=\"AABBCCDDEEFF0011AABBCCDDEEFF0011AABBCCDD\",usage=\"auth\",uid="
	               "\"Alice Example <alice@example.org>\"} 0\n"
	               "keyctl_subkey_level{key=\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\","
	               "subkey=\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\",usage=\"sign,certify\","
	               "uid=\"Bob Backup <bob@example.org>\"} 4\n"
	               "keyctl_subkey_level{key=\"B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0\","
	               "subkey=\"E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E0E1\",usage=\"encrypt\",uid="
	               "\"Bob Backup <bob@example.org>\"} 0\n"
	               "# HELP keyctl_findings Number of audit findings by level.\n"
	               "# TYPE keyctl_findings gauge\n"
	               "keyctl_findings{level=\"ok\"} 0\n"
	               "keyctl_findings{level=\"notice\"} 1\n"
	               "keyctl_findings{level=\"warning\"} 1\n"
	               "keyctl_findings{level=\"critical\"} 0\n"
	               "keyctl_findings{level=\"expired\"} 1\n");
}

TEST(prometheus_escape)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ASSERT_TRUE(f);
	prometheus_put_label_value(f, "Eve \"E\\vil\" <e@x>\nline");
	fclose(f);
	ASSERT_STREQ(buf, "\"Eve \\\"E\\\\vil\\\" <e@x>\\nline\"");
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &size);
	ASSERT_TRUE(f);
	ASSERT_OK(prometheus_render_down(f));
	fclose(f);
	ASSERT_STREQ(buf, "# HELP keyctl_daemon_up Whether keyctld answered (1) or not (0).\n"
	                  "# TYPE keyctl_daemon_up gauge\n"
	                  "keyctl_daemon_up 0\n");
	free(buf);
}

TEST(exit_code)
{
	struct fixture x;

	fixture_init(&x);
	/* Everything: Bob's expired key and the expired finding make it critical. */
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 2, x.findings, 3, NOW, -1), STATUS_EXIT_CRITICAL);
	/* Alice alone: her signing subkey is at warning. */
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, -1), STATUS_EXIT_WARNING);
	/* Nothing at all is fine. */
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, NULL, 0, NOW, -1), STATUS_EXIT_OK);

	/* Notice does not page anyone: 0. */
	x.alice_sub[1].level = LEVEL_NOTICE;
	x.keys[0].level = LEVEL_NOTICE;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, -1), STATUS_EXIT_OK);
	/* ... unless --warn-days reaches it: the signing subkey is 5 days away (4 d 23 h). */
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, 4), STATUS_EXIT_OK);
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, 5), STATUS_EXIT_WARNING);
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, 0), STATUS_EXIT_OK);

	/* A revoked subkey at critical is ignored: nobody renews it. */
	x.alice_sub[2].level = LEVEL_CRITICAL;
	x.alice_sub[2].revoked = true;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, -1), STATUS_EXIT_OK);
	/* ... and --warn-days does not count it either. */
	x.alice_sub[1].revoked = true;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, 30), STATUS_EXIT_OK);

	/* Another's key listed only because it is relied on: its expiry is not ours to page on;
	 * tracked, it is. */
	x.keys[1].has_secret = false;
	x.keys[1].relied_on = true;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 2, NULL, 0, NOW, -1), STATUS_EXIT_OK);
	x.keys[1].tracked = true;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 2, NULL, 0, NOW, -1), STATUS_EXIT_CRITICAL);
	x.keys[1].tracked = false;
	x.keys[1].relied_on = false;
	x.keys[1].has_secret = true;

	/* A stale keyring is a warning: what is shown may be old. */
	x.d.keyring_stale = true;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, -1), STATUS_EXIT_WARNING);
	/* Never listed at all: unknown, unless something known is critical. */
	x.d.keyring_refreshed = 0;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 1, NULL, 0, NOW, -1), STATUS_EXIT_UNKNOWN);
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, NULL, 0, NOW, -1), STATUS_EXIT_UNKNOWN);
	x.findings[0].level = LEVEL_CRITICAL;
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, &x.findings[0], 1, NOW, -1),
	          STATUS_EXIT_CRITICAL);
	x.findings[0].level = LEVEL_WARNING;
	x.d.keyring_refreshed = NOW - 120;
	x.d.keyring_stale = false;

	/* Findings alone: notice 0, warning 1, critical 2. */
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, &x.findings[2], 1, NOW, -1), STATUS_EXIT_OK);
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, &x.findings[0], 1, NOW, -1), STATUS_EXIT_WARNING);
	x.findings[0].level = LEVEL_CRITICAL;
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, &x.findings[0], 1, NOW, -1),
	          STATUS_EXIT_CRITICAL);
}

/* What the daemon does not count (a replaced subkey, a retired key) is shown as information
 * and honoured by the exit code, --warn-days and the metrics. */
TEST(superseded)
{
	struct fixture x;
	_cleanup_(freep) char *t = NULL, *p = NULL;

	fixture_init(&x);
	/* Alice's encryption subkey (20 days left) was replaced; her signing subkey is renewed. */
	x.alice_sub[1].expires = NOW + 200 * DAY;
	x.alice_sub[1].level = LEVEL_OK;
	x.alice_sub[2].level = LEVEL_OK;
	strcpy(x.alice_sub[2].replaced_by, "5A1E0F3C9B7D2E4F6A8C0B1D3E5F7A9C2B4D6E80");
	x.keys[0].level = LEVEL_OK;
	/* Bob's expired key is retired: the daemon counts its levels as ok. */
	x.keys[1].retired = true;
	x.keys[1].level = LEVEL_OK;
	for (size_t i = 0; i < x.keys[1].n_subkeys; i++)
		x.bob_sub[i].level = LEVEL_OK;

	ASSERT_EQ(status_exit_code(&x.d, x.keys, 2, NULL, 0, NOW, -1), STATUS_EXIT_OK);
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 2, NULL, 0, NOW, 30), STATUS_EXIT_OK);
	/* Still counted (its replacement not on its card): at most a warning, from the daemon. */
	x.alice_sub[2].level = LEVEL_WARNING;
	ASSERT_EQ(status_exit_code(&x.d, x.keys, 2, NULL, 0, NOW, -1), STATUS_EXIT_WARNING);
	x.alice_sub[2].level = LEVEL_OK;

	t = render_table(&x, 2, 2, 0, false);
	ASSERT_TRUE(strstr(t, "2025-06-21  in 20 days          replaced by 0x3E5F7A9C2B4D6E80\n"));
	ASSERT_TRUE(strstr(t, "Bob Backup <bob@example.org>  B0B0B0B0B0B0B0B0  retired\n"));
	ASSERT_TRUE(strstr(t, "2025-05-29  expired 2 days ago  retired\n"));

	p = render_prometheus(&x);
	ASSERT_TRUE(strstr(p,
	                   "keyctl_subkey_superseded{key=\"0123456789ABCDEF0123456789ABCDEF01234567"
	                   "\",subkey=\"" ALICE_E "\",usage=\"encrypt\",uid=\"Alice Example "
	                   "<alice@example.org>\",reason=\"replaced\",replaced_by=\"5A1E0F3C9B7D"
	                   "2E4F6A8C0B1D3E5F7A9C2B4D6E80\"} 1\n"));
	ASSERT_TRUE(strstr(p, "reason=\"retired\",replaced_by=\"\"} 1\n"));
	ASSERT_FALSE(strstr(p, "keyctl_subkey_level{key=\"0123456789ABCDEF0123456789ABCDEF01234567"
	                       "\",subkey=\"" ALICE_E));
	ASSERT_FALSE(strstr(p, "keyctl_subkey_level{key=\"B0B0"));
	ASSERT_FALSE(strstr(p, "keyctl_subkey_expiry_days{key=\"B0B0"));
}

/* An acknowledged finding (level ok, acked): dim "acked" with the way back, no exit code. */
TEST(acked)
{
	struct fixture x;
	_cleanup_(freep) char *s = NULL, *c = NULL;

	fixture_init(&x);
	ASSERT_OK(setenv("COLUMNS", "100", 1));
	x.findings[0].level = LEVEL_OK;
	x.findings[0].acked = true;
	strcpy_trunc(x.findings[0].key, sizeof(x.findings[0].key), ALICE);
	strcpy_trunc(x.findings[0].subkey, sizeof(x.findings[0].subkey), ALICE_S);
	s = render_table(&x, 0, 0, 1, false);
	ASSERT_TRUE(strstr(s, "  acked     Subkey 7A3B9C1D2E3F4A5B of Alice Example") != NULL);
	ASSERT_TRUE(strstr(s, "            acknowledged; undo: keyctl-status "
	                      "--unack=subkey-expiring:" ALICE_S "\n") != NULL);
	c = render_table(&x, 0, 0, 1, true);
	ASSERT_TRUE(strstr(c, "\033[2macked\033[0m") != NULL);
	ASSERT_EQ(status_exit_code(&x.d, NULL, 0, x.findings, 1, NOW, -1), STATUS_EXIT_OK);
}

TEST(helpers)
{
	char buf[64];

	ASSERT_STREQ(table_short_fpr(ALICE), "89ABCDEF01234567");
	ASSERT_STREQ(table_short_fpr("ABCD"), "ABCD");
	table_format_usage(buf, sizeof(buf), CAP_SIGN | CAP_CERTIFY);
	ASSERT_STREQ(buf, "[SC]");
	table_format_usage(buf, sizeof(buf), CAP_SIGN | CAP_ENCRYPT | CAP_AUTH | CAP_CERTIFY);
	ASSERT_STREQ(buf, "[SEAC]");
	table_format_usage(buf, sizeof(buf), 0);
	ASSERT_STREQ(buf, "[-]");
	table_format_ago(buf, sizeof(buf), NOW - 59, NOW);
	ASSERT_STREQ(buf, "just now");
	table_format_ago(buf, sizeof(buf), NOW - 60, NOW);
	ASSERT_STREQ(buf, "1 minute ago");
	table_format_ago(buf, sizeof(buf), NOW - 7199, NOW);
	ASSERT_STREQ(buf, "1 hour ago");
	table_format_ago(buf, sizeof(buf), NOW - 3 * DAY - 7200, NOW);
	ASSERT_STREQ(buf, "3 days ago");
	expiry_format_relative(buf, sizeof(buf), NOW + 5 * DAY - 3600, NOW);
	ASSERT_STREQ(buf, "in 5 days");
	expiry_format_relative(buf, sizeof(buf), NOW + 1, NOW);
	ASSERT_STREQ(buf, "in 1 day");
	expiry_format_relative(buf, sizeof(buf), NOW - 3600, NOW);
	ASSERT_STREQ(buf, "expired today");
	expiry_format_relative(buf, sizeof(buf), NOW - DAY - 1, NOW);
	ASSERT_STREQ(buf, "expired 1 day ago");
	expiry_format_relative(buf, sizeof(buf), 0, NOW);
	ASSERT_STREQ(buf, "never");
}

TEST(days)
{
	/* The one function the table, Prometheus and --warn-days count days with. */
	ASSERT_EQ(expiry_days_left(NOW + 5 * DAY - 3600, NOW), 5);
	ASSERT_EQ(expiry_days_left(NOW + 5 * DAY, NOW), 5);
	ASSERT_EQ(expiry_days_left(NOW + 5 * DAY + 1, NOW), 6);
	ASSERT_EQ(expiry_days_left(NOW + 1, NOW), 1);
	ASSERT_EQ(expiry_days_left(NOW - 3600, NOW), 0);
	ASSERT_EQ(expiry_days_left(NOW - 2 * DAY - 60, NOW), -2);
}

TEST(events)
{
	struct fixture x;
	struct keyctl_event e;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ASSERT_TRUE(f);
	fixture_init(&x);
	memset(&e, 0, sizeof(e));
	e.type = EVENT_STATE;
	e.status.daemon = x.d;
	e.status.tokens = x.tokens;
	e.status.n_tokens = 2;
	e.status.keys = x.keys;
	e.status.n_keys = 2;
	e.status.findings = x.findings;
	e.status.n_findings = 3;
	ASSERT_OK(table_render_event(f, &e, NOW + 3723, false));

	memset(&e, 0, sizeof(e));
	e.type = EVENT_TOKEN_CHANGED;
	e.token = x.tokens[0];
	e.token.present = false;
	ASSERT_OK(table_render_event(f, &e, NOW, false));

	memset(&e, 0, sizeof(e));
	e.type = EVENT_LEVEL_CHANGED;
	e.key = x.keys[0];
	strcpy_trunc(e.subkey, sizeof(e.subkey), ALICE_S);
	e.old_level = LEVEL_NOTICE;
	e.level = LEVEL_WARNING;
	ASSERT_OK(table_render_event(f, &e, NOW, false));
	ASSERT_OK(table_render_event(f, &e, NOW, true));

	memset(&e, 0, sizeof(e));
	e.type = EVENT_FINDING_RAISED;
	e.finding = x.findings[2];
	ASSERT_OK(table_render_event(f, &e, NOW, false));
	e.type = EVENT_FINDING_CLEARED;
	ASSERT_OK(table_render_event(f, &e, NOW, false));

	memset(&e, 0, sizeof(e));
	e.type = EVENT_DAEMON_CHANGED;
	e.daemon.keyring_stale = true;
	strcpy_trunc(e.daemon.keyring_error, sizeof(e.daemon.keyring_error), "gpg timed out");
	e.daemon.pcsc_available = true;
	ASSERT_OK(table_render_event(f, &e, NOW, false));
	fclose(f);

	assert_text(buf,
	            "01:02:03 state: 2 tokens (1 present), 2 keys, 3 findings; expired\n"
	            "00:00:00 token changed: YubiKey 5 NFC #12345678, absent\n"
	            "00:00:00 level: Alice Example <alice@example.org> 89ABCDEF01234567 subkey "
	            "2E3F4A5B7A3B9C1D: notice -> warning, expires in 5 days\n"
	            "00:00:00 level: Alice Example <alice@example.org> 89ABCDEF01234567 subkey "
	            "2E3F4A5B7A3B9C1D: notice -> \033[33mwarning\033[0m, expires in 5 days\n"
	            "00:00:00 finding: notice OpenPGP card #0A1B2C3D has not been seen for 3 "
	            "days.\n"
	            "00:00:00 finding cleared: OpenPGP card #0A1B2C3D has not been seen for 3 "
	            "days.\n"
	            "00:00:00 daemon: keyring is stale: gpg timed out\n");
	free(buf);
}

int main(void)
{
	/* Event lines carry local time: pin it. */
	setenv("TZ", "UTC", 1);
	tzset();
	RUN(days);
	RUN(helpers);
	RUN(acked);
	RUN(table_plain);
	RUN(table_color);
	RUN(table_width);
	RUN(table_empty);
	RUN(table_upstream);
	RUN(table_others_keys);
	RUN(prometheus);
	RUN(prometheus_escape);
	RUN(exit_code);
	RUN(superseded);
	RUN(events);
	return 0;
}
