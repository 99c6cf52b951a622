/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Names of the model's enums as they appear on the wire, the deep copy of a key, and what a
 * touch wait may hold and how both clients word it.
 * Does not: parse or print JSON.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

static const char *const token_kind_names[TOKEN_KIND_MAX] = {
	[TOKEN_KIND_UNKNOWN] = "unknown",
	[TOKEN_KIND_YUBIKEY] = "yubikey",
	[TOKEN_KIND_NITROKEY] = "nitrokey",
	[TOKEN_KIND_OPENPGP_CARD] = "openpgp-card",
};

static const char *const read_path_names[READ_PATH_MAX] = {
	[READ_PATH_NONE] = "none",
	[READ_PATH_PCSC] = "pcsc",
	[READ_PATH_SCDAEMON] = "scdaemon",
};

static const char *const key_slot_names[SLOT_MAX] = {
	[SLOT_SIGN] = "sign",
	[SLOT_ENCRYPT] = "encrypt",
	[SLOT_AUTH] = "authenticate",
};

static const char *const touch_policy_names[TOUCH_MAX] = {
	[TOUCH_UNKNOWN] = "unknown", [TOUCH_OFF] = "off",
	[TOUCH_ON] = "on",           [TOUCH_FIXED] = "fixed",
	[TOUCH_CACHED] = "cached",   [TOUCH_CACHED_FIXED] = "cached-fixed",
};

static const char *const level_names[LEVEL_MAX] = {
	[LEVEL_OK] = "ok",           [LEVEL_NOTICE] = "notice",
	[LEVEL_WARNING] = "warning", [LEVEL_CRITICAL] = "critical",
	[LEVEL_EXPIRED] = "expired",
};

static const char *const secret_location_names[SECRET_MAX] = {
	[SECRET_NONE] = "none",
	[SECRET_DISK] = "disk",
	[SECRET_CARD] = "card",
};

static const char *const touch_app_names[TOUCH_APP_MAX] = {
	[TOUCH_APP_OPENPGP] = "openpgp",
	[TOUCH_APP_FIDO] = "fido",
	[TOUCH_APP_PIV] = "piv",
	[TOUCH_APP_OTP] = "otp",
};

static const char *const touch_end_names[TOUCH_END_MAX] = {
	[TOUCH_END_TOUCHED] = "touched",
	[TOUCH_END_TIMEOUT] = "timeout",
	[TOUCH_END_REMOVED] = "removed",
};

static const char *const piv_read_names[PIV_READ_MAX] = {
	[PIV_READ_NONE] = "none",
	[PIV_READ_OK] = "read",
	[PIV_READ_IN_USE] = "in-use",
	[PIV_READ_ERROR] = "error",
};

static const char *lookup(const char *const *names, size_t n, unsigned v)
{
	return v < n ? names[v] : NULL;
}

static int rlookup(const char *const *names, size_t n, const char *s)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], s) == 0)
			return (int)i;
	return -EINVAL;
}

#define DEFINE_ENUM_STRINGS(type, names, max)           \
	const char *type##_to_string(enum type v)       \
	{                                               \
		return lookup(names, max, (unsigned)v); \
	}                                               \
	int type##_from_string(const char *s)           \
	{                                               \
		return rlookup(names, max, s);          \
	}

DEFINE_ENUM_STRINGS(token_kind, token_kind_names, TOKEN_KIND_MAX)
DEFINE_ENUM_STRINGS(read_path, read_path_names, READ_PATH_MAX)
DEFINE_ENUM_STRINGS(key_slot, key_slot_names, SLOT_MAX)
DEFINE_ENUM_STRINGS(touch_policy, touch_policy_names, TOUCH_MAX)
DEFINE_ENUM_STRINGS(level, level_names, LEVEL_MAX)
DEFINE_ENUM_STRINGS(secret_location, secret_location_names, SECRET_MAX)
DEFINE_ENUM_STRINGS(touch_app, touch_app_names, TOUCH_APP_MAX)
DEFINE_ENUM_STRINGS(touch_end, touch_end_names, TOUCH_END_MAX)
DEFINE_ENUM_STRINGS(piv_read, piv_read_names, PIV_READ_MAX)

int key_copy(const struct key *src, struct key *ret)
{
	struct key k;

	/* memcpy, not assignment: padding must be copied too, as key_equal compares bytes */
	memcpy(&k, src, sizeof(k));
	k.subkeys = NULL;
	if (src->n_subkeys > 0) {
		k.subkeys = calloc(src->n_subkeys, sizeof(struct subkey));
		if (!k.subkeys)
			return -ENOMEM;
		memcpy(k.subkeys, src->subkeys, src->n_subkeys * sizeof(struct subkey));
	}
	memcpy(ret, &k, sizeof(k));
	return 0;
}

void key_done(struct key *k)
{
	free(k->subkeys);
	k->subkeys = NULL;
	k->n_subkeys = 0;
}

bool key_equal(const struct key *a, const struct key *b)
{
	struct key x, y;

	if (a->n_subkeys != b->n_subkeys)
		return false;
	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	x.subkeys = y.subkeys = NULL;
	if (memcmp(&x, &y, sizeof(x)) != 0)
		return false;
	return a->n_subkeys == 0 ||
	       memcmp(a->subkeys, b->subkeys, a->n_subkeys * sizeof(struct subkey)) == 0;
}

const char *token_kind_display(enum token_kind k)
{
	switch (k) {
	case TOKEN_KIND_YUBIKEY:
		return "YubiKey";
	case TOKEN_KIND_NITROKEY:
		return "Nitrokey";
	case TOKEN_KIND_OPENPGP_CARD:
		return "OpenPGP card";
	default:
		return "Token";
	}
}

void token_display_name(const struct token *t, char *buf, size_t size)
{
	const char *serial = *t->serial ? t->serial : t->openpgp.serial;

	snprintf(buf, size, "%s%s%s", *t->model ? t->model : token_kind_display(t->kind),
	         *serial ? " #" : "", serial);
}

/* OpenPGP slots by GnuPG's key refs, and what people call the key in each. */
static const struct {
	const char *ref, *words;
} openpgp_slots[] = {
	{ "sig", "signing key" },
	{ "dec", "decryption key" },
	{ "aut", "authentication key" },
};

static bool touch_slot_valid(enum touch_app a, const char *slot)
{
	switch (a) {
	case TOUCH_APP_OPENPGP:
		for (size_t i = 0; i < ELEMENTSOF(openpgp_slots); i++)
			if (streq(openpgp_slots[i].ref, slot))
				return true;
		return false;
	case TOUCH_APP_PIV:
		/* SP 800-73-4 key references are one byte: 9a, 9c, 9d, 9e, 82..95, f9. */
		return strlen(slot) == 2 && strspn(slot, "0123456789abcdef") == 2;
	default:
		return isempty(slot);
	}
}

int touch_pending_check(const struct touch_pending *tp)
{
	size_t n = strnlen(tp->requester, sizeof(tp->requester));

	if ((unsigned)tp->application >= TOUCH_APP_MAX ||
	    strnlen(tp->slot, sizeof(tp->slot)) >= sizeof(tp->slot) ||
	    !touch_slot_valid(tp->application, tp->slot) || tp->since <= 0 ||
	    tp->since_usec >= 1000000 || n >= sizeof(tp->requester))
		return -EINVAL;
	/* Printable ASCII only: it comes from a process name, which may hold any byte. */
	for (size_t i = 0; i < n; i++)
		if (tp->requester[i] < 0x20 || tp->requester[i] > 0x7e)
			return -EINVAL;
	return 0;
}

void touch_pending_describe(const struct touch_pending *tp, char *buf, size_t size)
{
	const char *what = "key";
	char piv[32];

	switch (tp->application) {
	case TOUCH_APP_OPENPGP:
		for (size_t i = 0; i < ELEMENTSOF(openpgp_slots); i++)
			if (streq(openpgp_slots[i].ref, tp->slot))
				what = openpgp_slots[i].words;
		break;
	case TOUCH_APP_FIDO:
		what = "FIDO";
		break;
	case TOUCH_APP_PIV:
		snprintf(piv, sizeof(piv), "PIV slot %s", tp->slot);
		what = piv;
		break;
	case TOUCH_APP_OTP:
		what = "OTP";
		break;
	default:
		break;
	}
	snprintf(buf, size, "%s%s%s", what, isempty(tp->requester) ? "" : "; likely ",
	         tp->requester);
}
