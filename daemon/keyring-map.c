/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpgme's keys into keyctl's: the secret listing's facts per subkey (on disk, a card stub and its
 * card's serial), the public listing's keys and subkeys with their dates, capabilities and the
 * user id shown; gpgme's error codes into errno values. Every string gpgme hands over is bounded
 * here: a fingerprint that is not hex, or a key with more subkeys than we hold, is rejected.
 *
 * Does not: run gpg, or decide which keys are listed (keyring-list.c).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fileio.h"
#include "keyring-list-internal.h"
#include "keyring-list.h"
#include "keyring-uid.h"

/* The one place gpgme's codes become errno values. */
int keyring_gpgme_errno(gpgme_error_t e)
{
	int r = gpgme_err_code_to_errno(gpgme_err_code(e));

	if (gpgme_err_code(e) == GPG_ERR_CANCELED)
		return -ECANCELED;
	if (gpgme_err_code(e) == GPG_ERR_INV_ENGINE || gpgme_err_code(e) == GPG_ERR_ENOENT)
		return -ENOENT;
	return r > 0 ? -r : -EIO;
}

int keyring_fail(gpgme_error_t e, char *err, size_t errsize, const char *what, const char *home)
{
	snprintf(err, errsize, "%s in %s: %s", what, home ? home : "the default GnuPG home",
	         gpgme_strerror(e));
	return keyring_gpgme_errno(e);
}

bool keyring_fpr_ok(const char *s)
{
	size_t n;

	if (!s)
		return false;
	n = strlen(s);
	if (n == 0 || n >= FPR_HEX_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

void keyring_keys_free(struct key *keys, size_t n)
{
	for (size_t i = 0; keys && i < n; i++)
		free(keys[i].subkeys);
	free(keys);
}

void keyring_listing_done(struct keyring_listing *l)
{
	free(l->sec);
	free(l->primaries);
}

static const struct keyring_secret *secret_find(const struct keyring_listing *l, const char *fpr)
{
	for (size_t i = 0; i < l->n_sec; i++)
		if (strcasecmp(l->sec[i].fpr, fpr) == 0)
			return &l->sec[i];
	return NULL;
}

static bool is_primary_with_secret(const struct keyring_listing *l, const char *fpr)
{
	for (size_t i = 0; i < l->n_primaries; i++)
		if (strcasecmp(l->primaries[i], fpr) == 0)
			return true;
	return false;
}

int keyring_collect_secret(struct keyring_listing *l, gpgme_key_t k)
{
	if (!k->subkeys || !keyring_fpr_ok(k->subkeys->fpr))
		return 0; /* nothing we could name; skip */
	if (l->n_primaries >= KEYS_MAX)
		return -E2BIG;
	if (l->n_primaries == 0) {
		l->primaries = calloc(KEYS_MAX, sizeof(*l->primaries));
		if (!l->primaries)
			return -ENOMEM;
	}
	strcpy_trunc(l->primaries[l->n_primaries++], FPR_HEX_MAX, k->subkeys->fpr);

	for (gpgme_subkey_t s = k->subkeys; s; s = s->next) {
		struct keyring_secret *si;

		if (!keyring_fpr_ok(s->fpr))
			continue;
		if (l->n_sec == l->sec_allocated) {
			size_t m = l->sec_allocated ? l->sec_allocated * 2 : 64;
			struct keyring_secret *n = reallocarray(l->sec, m, sizeof(*n));

			if (!n)
				return -ENOMEM;
			l->sec = n;
			l->sec_allocated = m;
		}
		si = &l->sec[l->n_sec++];
		memset(si, 0, sizeof(*si));
		strcpy_trunc(si->fpr, sizeof(si->fpr), s->fpr);
		si->secret = s->secret;
		si->cardkey = s->is_cardkey;
		/* A serial that does not fit is dropped, not cut: the stub then matches no card. */
		if (s->is_cardkey && s->card_number &&
		    strcpy_bounded(si->card_serial, sizeof(si->card_serial), s->card_number) < 0)
			si->card_serial[0] = 0;
	}
	return 0;
}

static void map_uid(gpgme_key_t k, struct key *ret)
{
	/* The first uid that we can show, cut when long; gpg lists the primary uid first. */
	for (int pass = 0; pass < 2; pass++)
		for (gpgme_user_id_t u = k->uids; u; u = u->next) {
			if (!u->uid || (pass == 0 && (u->revoked || u->invalid)))
				continue;
			if (keyring_uid_acceptable(u->uid)) {
				keyring_uid_show(u->uid, ret->uid);
				return;
			}
		}
}

/* gpgme 1.x has signed long timestamps (-1 invalid), 2.x unsigned long (the same -1 as ULONG_MAX);
 * read through unsigned long, both come out as 0 ("not known") rather than a date in 1969. */
static int64_t gpgme_time(unsigned long v)
{
	return v == ULONG_MAX || v > (unsigned long)INT64_MAX ? 0 : (int64_t)v;
}

/* One gpgme key into ret; tracked and relied_on are keys_mark()'s. */
int keyring_map_key(gpgme_key_t k, const struct keyring_listing *l, struct key *ret)
{
	size_t n = 0, i = 0;

	memset(ret, 0, sizeof(*ret));
	for (gpgme_subkey_t s = k->subkeys; s; s = s->next)
		n++;
	if (n == 0 || n > SUBKEYS_MAX || !keyring_fpr_ok(k->subkeys->fpr))
		return -EMSGSIZE; /* rejected, not cut */
	ret->subkeys = calloc(n, sizeof(*ret->subkeys));
	if (!ret->subkeys)
		return -ENOMEM;

	strcpy_trunc(ret->fingerprint, sizeof(ret->fingerprint), k->subkeys->fpr);
	map_uid(k, ret);
	ret->revoked = k->revoked;
	ret->expired = k->expired;
	ret->disabled = k->disabled;
	ret->has_secret = is_primary_with_secret(l, ret->fingerprint);

	for (gpgme_subkey_t s = k->subkeys; s; s = s->next) {
		struct subkey *d = &ret->subkeys[i];
		const struct keyring_secret *si;
		char *algo;

		if (!keyring_fpr_ok(s->fpr))
			continue;
		strcpy_trunc(d->fingerprint, sizeof(d->fingerprint), s->fpr);
		if (s->keygrip && strcpy_bounded(d->keygrip, sizeof(d->keygrip), s->keygrip) < 0)
			d->keygrip[0] = 0;
		algo = gpgme_pubkey_algo_string(s);
		if (algo && strcpy_bounded(d->algorithm, sizeof(d->algorithm), algo) < 0)
			d->algorithm[0] = 0;
		gpgme_free(algo);
		d->capabilities =
		        (s->can_sign ? CAP_SIGN : 0) | (s->can_encrypt ? CAP_ENCRYPT : 0) |
		        (s->can_authenticate ? CAP_AUTH : 0) | (s->can_certify ? CAP_CERTIFY : 0);
		d->is_primary = i == 0;
		d->created = gpgme_time(s->timestamp);
		d->expires = gpgme_time(s->expires);
		d->revoked = s->revoked;
		d->expired = s->expired;
		d->disabled = s->disabled;
		si = secret_find(l, d->fingerprint);
		if (si && si->cardkey) {
			d->secret = SECRET_CARD;
			strcpy_trunc(d->card_serial, sizeof(d->card_serial), si->card_serial);
		} else if (si && si->secret)
			d->secret = SECRET_DISK;
		else
			d->secret = SECRET_NONE;
		i++;
	}
	ret->n_subkeys = i;
	return 0;
}

bool keyring_fpr_in(const char *fpr, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(fpr, list[i]) == 0)
			return true;
	return false;
}
