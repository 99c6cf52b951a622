/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads a fetched key without importing it (see upstream-read.h). gpgme's keylist from data runs
 * gpg --dry-run --import-options import-show (gpgme >= 1.14; Debian 12 has 1.18, Debian 13
 * 1.24), and it runs in a directory made for this one read and removed after it: even a gpg that
 * wrote on a dry run could not touch the user's keyring. Signatures are not listed (no
 * GPGME_KEYLIST_MODE_SIGS), so a key with thousands of them costs gpg's parse, not ours; the
 * bytes are bounded by the fetch (UPSTREAM_DATA_MAX).
 *
 * Does not: fetch, compare, talk to any daemon, or log.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gpgme.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "gpgconf-run.h"
#include "gpgme-init.h"
#include "upstream-read.h"

static int map_error(gpgme_error_t e)
{
	switch (gpgme_err_code(e)) {
	case GPG_ERR_INV_ENGINE:
	case GPG_ERR_ENOENT:
		return -ENOENT;
	case GPG_ERR_NO_DATA:
	case GPG_ERR_INV_PACKET:
	case GPG_ERR_BAD_DATA:
		return -EBADMSG;
	default:
		return -EIO;
	}
}

/* The throwaway home: whatever gpg left in it goes, then the directory. */
static void home_remove(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d) {
		while ((de = readdir(d)))
			if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
				if (unlinkat(dirfd(d), de->d_name, 0) < 0)
					(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
		closedir(d);
	}
	(void)rmdir(dir);
}

/* In the runtime directory, else in /tmp: under keyctld.service the runtime directory is
 * read-only and /tmp is the unit's own (PrivateTmp). */
static int home_make(char *buf, size_t size)
{
	const char *dirs[] = { getenv("XDG_RUNTIME_DIR"), "/tmp" };
	int r = -ENOENT;

	for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
		int n;

		if (isempty(dirs[i]))
			continue;
		n = snprintf(buf, size, "%s/keyctl-upstream-XXXXXX", dirs[i]);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		if (mkdtemp(buf))
			return 0;
		r = -errno;
	}
	return r;
}

static int64_t key_time(long v)
{
	return v > 0 ? (int64_t)v : 0;
}

/* Only what the comparison reads: fingerprints, times, revocation. */
static int map_key(gpgme_key_t k, struct key *ret)
{
	size_t n = 0;

	for (gpgme_subkey_t s = k->subkeys; s && n < SUBKEYS_MAX; s = s->next)
		n++;
	memset(ret, 0, sizeof(*ret));
	ret->subkeys = calloc(n ? n : 1, sizeof(*ret->subkeys));
	if (!ret->subkeys)
		return -ENOMEM;
	strcpy_trunc(ret->fingerprint, sizeof(ret->fingerprint), k->fpr ? k->fpr : "");
	if (k->uids && k->uids->uid)
		strcpy_trunc(ret->uid, sizeof(ret->uid), k->uids->uid);
	ret->revoked = k->revoked;
	ret->expired = k->expired;
	for (gpgme_subkey_t s = k->subkeys; s && ret->n_subkeys < n; s = s->next) {
		struct subkey *d = &ret->subkeys[ret->n_subkeys++];

		strcpy_trunc(d->fingerprint, sizeof(d->fingerprint), s->fpr ? s->fpr : "");
		d->is_primary = ret->n_subkeys == 1;
		d->created = key_time(s->timestamp);
		d->expires = key_time(s->expires);
		d->revoked = s->revoked;
		d->expired = s->expired;
		d->capabilities =
		        (s->can_sign ? CAP_SIGN : 0) | (s->can_encrypt ? CAP_ENCRYPT : 0) |
		        (s->can_authenticate ? CAP_AUTH : 0) | (s->can_certify ? CAP_CERTIFY : 0);
	}
	return 0;
}

/* Lists the keys in data; keeps the one named fpr. Returns 0, -EXDEV, -EBADMSG or -errno. */
static int list_from_data(gpgme_ctx_t ctx, gpgme_data_t data, const char *fpr, struct key *ret,
                          char *err, size_t errsize)
{
	gpgme_error_t e = gpgme_op_keylist_from_data_start(ctx, data, 0);
	gpgme_key_t k = NULL;
	unsigned seen = 0;
	int r = -EXDEV;

	if (e) {
		snprintf(err, errsize, "gpg cannot read the answer: %s", gpgme_strerror(e));
		return map_error(e);
	}
	while (seen < UPSTREAM_READ_KEYS_MAX && !gpgme_op_keylist_next(ctx, &k)) {
		seen++;
		if (r == -EXDEV && k->fpr && strcasecmp(k->fpr, fpr) == 0)
			r = map_key(k, ret);
		gpgme_key_unref(k);
	}
	(void)gpgme_op_keylist_end(ctx);
	if (seen == 0) {
		snprintf(err, errsize, "the answer holds no OpenPGP key");
		return -EBADMSG;
	}
	if (r == -EXDEV)
		snprintf(err, errsize, "the answer holds another key than %s", fpr);
	return r;
}

static int read_in_home(const char *home, const uint8_t *p, size_t n, const char *fpr,
                        struct key *ret, char *err, size_t errsize)
{
	gpgme_ctx_t ctx = NULL;
	gpgme_data_t data = NULL;
	gpgme_error_t e;
	int r;

	e = gpgme_new(&ctx);
	if (!e)
		e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	if (!e)
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, NULL, home);
	if (!e)
		e = gpgme_set_keylist_mode(ctx, GPGME_KEYLIST_MODE_LOCAL);
	if (!e)
		e = gpgme_data_new_from_mem(&data, (const char *)p, n, 0);
	if (e) {
		snprintf(err, errsize, "gpgme: %s", gpgme_strerror(e));
		r = map_error(e);
	} else
		r = list_from_data(ctx, data, fpr, ret, err, errsize);
	gpgme_data_release(data);
	gpgme_release(ctx);
	return r;
}

int upstream_read_key(const uint8_t *p, size_t n, const char *fpr, struct key *ret, char *err,
                      size_t errsize)
{
	char home[PATH_MAX];
	int r;

	gpgme_init_once();
	if (n == 0) {
		snprintf(err, errsize, "the answer is empty");
		return -EBADMSG;
	}
	r = home_make(home, sizeof(home));
	if (r < 0) {
		snprintf(err, errsize, "cannot make a scratch GnuPG home: %s", strerror(-r));
		return r;
	}
	r = read_in_home(home, p, n, fpr, ret, err, errsize);
	/* A gpg that started an agent in the scratch home must not leave it behind. */
	(void)gpgconf_run(home, "--kill", "all", NULL, 0);
	home_remove(home);
	return r;
}
