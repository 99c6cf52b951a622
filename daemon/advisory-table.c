/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The advisories keyctld knows (see advisory-table.h), their version parser and their matching
 * against a token. Each row cites its vendor's page; the products are named as keyctld names a
 * token's model: "YubiKey 5" and "YubiKey 4" from the USB device's firmware (card-usb.c), plain
 * "YubiKey" when only the OpenPGP application was read (card-pcsc.c, whose GET VERSION still
 * gives the firmware), "Security Key by Yubico" and "YubiKey NEO" from their product ids
 * (card-usb-table.c). keyctld reads no firmware version of other makers' tokens (Nitrokey,
 * Gnuk): doc/advisories.md lists the advisories considered and why those have no row.
 *
 * Does not: read the clock, touch a device, or log, except advisory_builtin() for a row that
 * does not parse (once, at its first call).
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "advisory-table.h"
#include "log.h"

#define YUBICO_ADVISORIES "https://www.yubico.com/support/security-advisories/"
/* ECDSA is what leaks (a nonce's modular inversion): the keys that sign, the signature and the
 * authentication slots; the encryption slot's ECC key does ECDH. */
#define ECDSA_SLOTS (ADVISORY_SLOT(SLOT_SIGN) | ADVISORY_SLOT(SLOT_AUTH))

#define YSA_2024_03_REMEDY                                                                       \
	"The firmware cannot be updated. Use ed25519 or RSA keys on this token, or move to one " \
	"with firmware 5.7 or later; its FIDO credentials move only to a new token. The attack " \
	"needs the token in hand, lab equipment and often its PIN."

/* Yubico's "Infineon ECDSA Private Key Recovery Customer Resources": YubiKey 5 (FIPS, CSPN) and
 * Security Key Series before 5.7, YubiKey Bio before 5.7.2; FIDO by default, PIV and OpenPGP by
 * the key's algorithm. YubiHSM 2 is no token keyctld watches. One row per product line. */
/* Unformatted: clang-format 14 (Debian 12) and 19 (Debian 13) lay a brace-list macro out
 * differently, and the lint runs both. */
/* clang-format off */
#define ECDSA_CURVES { "nistp", "brainpool", "secp256k1", NULL }
#define YSA_2024_03(before_, apps_, ...) {                                                        \
	.id = "YSA-2024-03", .vendor = "Yubico", .title = "Infineon ECDSA side channel (EUCLEAK)", \
	.kind = TOKEN_KIND_YUBIKEY, .models = { __VA_ARGS__, NULL },                               \
	.from = "5.0.0", .before = before_, .apps = apps_,                                         \
	.algorithms = ECDSA_CURVES, .slots = ECDSA_SLOTS,                                          \
	.version_check = "ykman info", .remedy = YSA_2024_03_REMEDY,                               \
	.url = YUBICO_ADVISORIES "ysa-2024-03/" }
/* clang-format on */

static const struct advisory_row rows[] = {
	YSA_2024_03("5.7.0", ADVISORY_APP_OPENPGP | ADVISORY_APP_PIV | ADVISORY_APP_FIDO,
	            "YubiKey 5", "YubiKey 4/5", "YubiKey", "Security Key by Yubico"),
	/* The Bio's own range. keyctld does not tell a Bio from a YubiKey 5 by its USB ids yet:
	 * the row waits for a model named so. */
	YSA_2024_03("5.7.2", ADVISORY_APP_PIV | ADVISORY_APP_FIDO, "YubiKey Bio"),
	/* ROCA (CVE-2017-15361): on-card RSA key generation of the YubiKey 4; fixed in 4.3.5.
	 * The lower bound is Yubico's own check before it generates a key (yubikey-manager,
	 * ykman/util.py is_cve201715361_vulnerable_firmware_version: 4.2.0 <= v < 4.3.5). */
	{
	        .id = "YSA-2017-01",
	        .vendor = "Yubico",
	        .title = "Infineon weak RSA key generation (ROCA)",
	        .kind = TOKEN_KIND_YUBIKEY,
	        .models = { "YubiKey 4", "YubiKey", NULL },
	        .from = "4.2.0",
	        .before = "4.3.5",
	        .apps = ADVISORY_APP_OPENPGP | ADVISORY_APP_PIV,
	        .algorithms = { "rsa", NULL },
	        .slots = ADVISORY_SLOTS_ALL,
	        .generated_only = true,
	        .version_check = "ykman info",
	        .remedy = "Revoke a key generated on this YubiKey and make a new one off the card "
	                  "(or on a newer token); keyctld tests every RSA key of the keyring "
	                  "itself: a key-roca-weak finding names each affected one.",
	        .url = YUBICO_ADVISORIES "ysa-2017-01/",
	},
	/* YubiKey FIPS Series 4.4.2 and 4.4.4 (there is no 4.4.3), fixed in 4.4.5: reduced
	 * randomness after power-up, for RSA and ECC key generation and ECDSA signatures, in PIV,
	 * OpenPGP, U2F and OATH. Firmware 4.4.x is only the FIPS series. */
	{
	        .id = "YSA-2019-02",
	        .vendor = "Yubico",
	        .title = "YubiKey FIPS reduced randomness after power-up",
	        .kind = TOKEN_KIND_YUBIKEY,
	        .models = { "YubiKey 4", "YubiKey", NULL },
	        .from = "4.4.2",
	        .before = "4.4.5",
	        .apps = ADVISORY_APP_OPENPGP | ADVISORY_APP_PIV | ADVISORY_APP_FIDO,
	        .slots = ADVISORY_SLOTS_ALL,
	        .version_check = "ykman info",
	        .remedy = "Yubico replaces these devices: ask for a new one, and replace the keys "
	                  "generated on this one; its ECDSA signatures made soon after power-up "
	                  "may expose the key.",
	        .url = YUBICO_ADVISORIES "ysa-2019-02/",
	},
	/* YSA-2015-1 (CVE-2015-3298): the YubiKey NEO's OpenPGP applet (ykneo-openpgp) signs,
	 * decrypts and authenticates without a verified user PIN. The fix came in 1.0.9, but some
	 * NEOs shipped a 1.0.9 without it: the advisory says look for 1.0.10 or later, and names
	 * no lower bound. The range is the applet's version, which GET VERSION answers inside the
	 * OpenPGP application (01 00 06 is 1.0.6, the advisory's own check), not the NEO's
	 * firmware 3.x. */
	{
	        .id = "YSA-2015-1",
	        .vendor = "Yubico",
	        .title = "YubiKey NEO OpenPGP applet PIN bypass",
	        .kind = TOKEN_KIND_YUBIKEY,
	        .models = { "YubiKey NEO", "YubiKey", NULL },
	        .from = "0.0.0",
	        .before = "1.0.10",
	        .applet_version = true,
	        .apps = ADVISORY_APP_OPENPGP,
	        .slots = ADVISORY_SLOTS_ALL,
	        .version_check = "gpg-connect-agent --hex \"scd apdu 00 f1 00 00\" /bye, whose "
	                         "first three bytes are the version",
	        .remedy = "Anyone holding this token, malware on a host it is plugged into or a "
	                  "reader within NFC range can use its keys without the PIN. Use another "
	                  "token for them (new keys if they were made on this one), and revoke "
	                  "them if this one was ever out of your hands.",
	        .url = "https://developers.yubico.com/ykneo-openpgp/"
	               "SecurityAdvisory%202015-04-14.html",
	},
	/* Nitrokey 3 firmware 1.8.0 (and test releases with PIV before it, whose "-test.<date>"
	 * versions no row can name) accepted invalid keys as the PIV admin key: generating keys and
	 * overwriting certificates without it, never reading keys or using them without the PIN.
	 * Fixed in 1.8.1. keyctld reads no Nitrokey firmware yet: the finding says it cannot tell.
	 * No OpenPGP key is concerned (slots 0): the PIV application as a whole is. */
	{
	        .id = "CVE-2025-25201",
	        .vendor = "Nitrokey",
	        .title = "Nitrokey 3 PIV admin key not validated",
	        .kind = TOKEN_KIND_NITROKEY,
	        .models = { "Nitrokey 3", NULL },
	        .from = "1.8.0",
	        .before = "1.8.1",
	        .apps = ADVISORY_APP_PIV,
	        .version_check = "nitropy nk3 status",
	        .remedy = "Update its firmware to 1.8.1 or later (nitropy nk3 update). Without the "
	                  "PIV admin key anyone could make new PIV keys and replace certificates, "
	                  "not read keys or use them without the PIN: check that its PIV "
	                  "certificates are still yours.",
	        .url = "https://github.com/Nitrokey/nitrokey-3-firmware/security/advisories/"
	               "GHSA-jfhm-ppq8-7hgx",
	},
};

int advisory_version_parse(const uint8_t *p, size_t n, struct advisory_version *ret)
{
	uint32_t v[3] = { 0, 0, 0 };
	size_t part = 0, digits = 0;

	if (n > ADVISORY_VERSION_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (c == '.') {
			if (digits == 0 || part == 2)
				return -EBADMSG;
			part++;
			digits = 0;
			continue;
		}
		if (c < '0' || c > '9')
			return -EBADMSG;
		/* One spelling per version: "5.07.0" is not "5.7.0". */
		if (digits == 1 && v[part] == 0)
			return -EBADMSG;
		if (++digits > 5)
			return -EMSGSIZE;
		v[part] = v[part] * 10 + (uint32_t)(c - '0');
		if (v[part] > UINT16_MAX)
			return -EMSGSIZE;
	}
	/* "5.7" is not "5.7.0": a row or a firmware says all three, or is not understood. */
	if (part != 2 || digits == 0)
		return -EBADMSG;
	*ret = (struct advisory_version){ (uint16_t)v[0], (uint16_t)v[1], (uint16_t)v[2] };
	return 0;
}

int advisory_version_parse_string(const char *s, struct advisory_version *ret)
{
	if (!s)
		return -EBADMSG;
	return advisory_version_parse((const uint8_t *)s, strnlen(s, ADVISORY_VERSION_MAX + 1),
	                              ret);
}

int advisory_version_cmp(const struct advisory_version *a, const struct advisory_version *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	return 0;
}

size_t advisory_compile(const struct advisory_row *rows_in, size_t n, struct advisory *ret,
                        advisory_bad_row_fn bad, void *userdata)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		const struct advisory_row *row = &rows_in[i];
		struct advisory a = { .row = row };
		const char *which = row->from;
		int r = advisory_version_parse_string(row->from, &a.from);

		if (r >= 0) {
			which = row->before;
			r = advisory_version_parse_string(row->before, &a.before);
		}
		/* An empty range would match nothing and hide a typo. */
		if (r >= 0 && advisory_version_cmp(&a.from, &a.before) >= 0)
			r = -ERANGE;
		if (r < 0) {
			if (bad)
				bad(row, which ? which : "(none)", r, userdata);
			continue;
		}
		ret[kept++] = a;
	}
	return kept;
}

size_t advisory_rows_builtin(const struct advisory_row **ret)
{
	*ret = rows;
	return ELEMENTSOF(rows);
}

static struct advisory builtin[ELEMENTSOF(rows)];
static size_t n_builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void log_bad_row(const struct advisory_row *row, const char *version, int error,
                        void *userdata)
{
	(void)userdata;
	log_error_errno(error,
	                "Advisory %s: firmware version \"%s\" not understood (%m), row ignored",
	                row->id ? row->id : "(no id)", version);
}

static void builtin_compile(void)
{
	n_builtin = advisory_compile(rows, ELEMENTSOF(rows), builtin, log_bad_row, NULL);
}

size_t advisory_builtin(const struct advisory **ret)
{
	(void)pthread_once(&builtin_once, builtin_compile);
	*ret = builtin;
	return n_builtin;
}

static bool model_named(const struct advisory_row *row, const char *model)
{
	for (size_t i = 0; i < ADVISORY_MODELS_MAX && row->models[i]; i++)
		if (streq(row->models[i], model))
			return true;
	return false;
}

enum advisory_match advisory_match(const struct advisory *a, const struct token *t)
{
	const char *version = t->firmware;
	size_t size = sizeof(t->firmware);
	struct advisory_version v;

	if (t->kind != a->row->kind || isempty(t->model) || !model_named(a->row, t->model))
		return ADVISORY_MATCH_NO;
	if (a->row->applet_version) {
		version = t->openpgp.firmware;
		size = sizeof(t->openpgp.firmware);
	}
	/* Without its version a token named only by its kind ("YubiKey": a card read through
	 * scdaemon) is no product in particular: saying "cannot tell" of every advisory of its
	 * maker would be noise. */
	if (advisory_version_parse((const uint8_t *)version, strnlen(version, size), &v) < 0)
		return streq(t->model, token_kind_display(t->kind)) ? ADVISORY_MATCH_NO
		                                                    : ADVISORY_MATCH_UNKNOWN;
	if (advisory_version_cmp(&v, &a->from) < 0 || advisory_version_cmp(&v, &a->before) >= 0)
		return ADVISORY_MATCH_NO;
	return ADVISORY_MATCH_YES;
}

static bool algorithm_named(const struct advisory_row *row, const char *algorithm)
{
	if (!row->algorithms[0])
		return true;
	for (size_t i = 0; i < ADVISORY_ALGOS_MAX && row->algorithms[i]; i++)
		if (strncmp(algorithm, row->algorithms[i], strlen(row->algorithms[i])) == 0)
			return true;
	return false;
}

unsigned advisory_slots(const struct advisory *a, const struct openpgp_card *c)
{
	unsigned slots = 0;

	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const struct card_slot *cs = &c->slots[s];

		if (!(a->row->slots & ADVISORY_SLOT(s)) || isempty(cs->fingerprint))
			continue;
		if (algorithm_named(a->row, cs->algorithm))
			slots |= ADVISORY_SLOT(s);
	}
	return slots;
}
