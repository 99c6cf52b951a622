/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the files of a keyring listing share (keyring-list.c runs it, keyring-map.c turns gpgme's
 * keys into ours, keyring-context.c checks the home and makes the gpgme context). Not for other
 * files: keyring-list.h is the listing's interface.
 */
#pragma once

#include <gpgme.h>
#include <stdbool.h>
#include <stddef.h>

#include "keyring-owned.h"
#include "types.h"

/* What the secret listing says about one subkey. */
struct keyring_secret {
	char fpr[FPR_HEX_MAX];
	bool secret;
	bool cardkey;
	char card_serial[SERIAL_MAX];
};

struct keyring_listing {
	struct keyring_secret *sec;
	size_t n_sec, sec_allocated;
	char (*primaries)[FPR_HEX_MAX]; /* keys with a secret part */
	size_t n_primaries;
};

/* The one place gpgme's codes become errno values. */
int keyring_gpgme_errno(gpgme_error_t e);
/* Says what failed where into err; returns keyring_gpgme_errno(e). */
int keyring_fail(gpgme_error_t e, char *err, size_t errsize, const char *what, const char *home);
bool keyring_fpr_ok(const char *s);
bool keyring_fpr_in(const char *fpr, const char *const *list, size_t n);
void keyring_listing_done(struct keyring_listing *l);
/* Adds k, a key with a secret part, and its subkeys to l. */
int keyring_collect_secret(struct keyring_listing *l, gpgme_key_t k);
/* One gpgme key into ret (-EMSGSIZE: rejected, not cut); tracked and relied_on are left to the
 * listing. */
int keyring_map_key(gpgme_key_t k, const struct keyring_listing *l, struct key *ret);

/* True when home's private-keys-v1.d holds a key file that is not one of gpg-agent's ssh keys. */
bool keyring_home_has_secrets(const char *home);
/* A keygrip of o that no key of keys owns (with a secret part when secret_only), nor sshcontrol. */
bool keyring_owned_has_orphans(const char *home, const struct keyring_owned *o,
                               const struct key *keys, size_t n, bool secret_only);
/* The gpg binary ctx runs for OpenPGP, or NULL. */
const char *keyring_ctx_gpg(gpgme_ctx_t ctx);
/* Checks home and gpg and makes a gpgme context for a listing. */
int keyring_ctx_new(const char *home, const char *gpg_path, gpgme_ctx_t *ret, char *err,
                    size_t errsize);
