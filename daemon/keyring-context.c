/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The home a listing reads and the gpgme context it reads it with: a home that is no directory
 * or holds a damaged keybox, a gpg that is gone, secret key files gpg did not see (gpg-agent
 * unreachable), keygrips no listed key owns; gpgme's engine set to the home once per process.
 *
 * Does not: list keys, or create a home (gpg would; a watcher must not).
 */
#include <errno.h>
#include <fcntl.h>
#include <gpgme.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "gpgme-cleanup.h"
#include "gpgme-init.h"
#include "keyring-list-internal.h"
#include "keyring-list.h"
#include "keyring-owned.h"

int keyring_check_keybox_header(const uint8_t *p, size_t n)
{
	/* keybox-blob.c: u32 length, u8 type (1: header), u8 version, u16 flags, "KBXf". */
	if (n == 0)
		return 0;
	if (n < 12)
		return -EBADMSG;
	if (p[4] != 1 || memcmp(p + 8, "KBXf", 4) != 0)
		return -EBADMSG;
	return 0;
}

static int check_keybox(const char *home, char *err, size_t errsize)
{
	_cleanup_(closep) int fd = -1;
	char path[PATH_MAX];
	uint8_t buf[12];
	ssize_t n;

	if (snprintf(path, sizeof(path), "%s/pubring.kbx", home) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0; /* no keybox (yet, or a pubring.gpg): gpg will say */
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return 0;
	if (keyring_check_keybox_header(buf, (size_t)n) < 0) {
		snprintf(err, errsize, "%s is not a keybox file (damaged?)", path);
		return -EBADMSG;
	}
	return 0;
}

/* home/sshcontrol's bytes (NUL-terminated), which name gpg-agent's ssh keys: keygrips that
 * belong to no OpenPGP key. NULL when there is none. */
static uint8_t *sshcontrol_read(const char *home)
{
	char path[PATH_MAX];
	uint8_t *p = NULL;
	size_t n = 0;

	if (!home || snprintf(path, sizeof(path), "%s/sshcontrol", home) >= (int)sizeof(path))
		return NULL;
	(void)file_read_bounded(path, 256u * 1024u, &p, &n);
	return p;
}

static bool grip_is_ssh(const uint8_t *sshcontrol, const char *grip)
{
	return sshcontrol && strcasestr((const char *)sshcontrol, grip);
}

/* True when private-keys-v1.d holds a key file that is not one of gpg-agent's ssh keys. gpg asks
 * gpg-agent which secret keys exist; when it cannot reach the agent it exits 2 and gpgme reports
 * an empty, successful listing, so an empty answer next to such key files is a failure, not an
 * empty keyring. */
bool keyring_home_has_secrets(const char *home)
{
	_cleanup_(freep) struct keyring_owned *o = calloc(1, sizeof(*o));
	_cleanup_(freep) uint8_t *sshcontrol = NULL;
	int r;

	if (!home || !o)
		return false;
	r = keyring_grips_read(home, o);
	if (r == -E2BIG)
		return true; /* more key files than we count: surely not all ssh keys */
	if (r < 0)
		return false;
	sshcontrol = sshcontrol_read(home);
	for (size_t g = 0; g < o->n_grips; g++)
		if (!grip_is_ssh(sshcontrol, o->grips[g]))
			return true;
	return false;
}

/* Whether gpgme's process-wide OpenPGP engine runs the default gpg in home. */
static bool engine_default_for(const char *gpg_path, const char *home)
{
	gpgme_engine_info_t info;

	if (gpg_path || gpgme_get_engine_info(&info))
		return false;
	for (; info; info = info->next)
		if (info->protocol == GPGME_PROTOCOL_OpenPGP)
			return home ? info->home_dir && streq(info->home_dir, home)
			            : !info->home_dir;
	return false;
}

/* Whether ctx's OpenPGP engine runs in home (NULL: gpg's default home). */
static bool ctx_engine_home_is(gpgme_ctx_t ctx, const char *home)
{
	for (gpgme_engine_info_t i = gpgme_ctx_get_engine_info(ctx); i; i = i->next)
		if (i->protocol == GPGME_PROTOCOL_OpenPGP)
			return home ? i->home_dir && streq(i->home_dir, home) : !i->home_dir;
	return false;
}

/* The gpg binary ctx runs for OpenPGP, or NULL. */
const char *keyring_ctx_gpg(gpgme_ctx_t ctx)
{
	for (gpgme_engine_info_t i = gpgme_ctx_get_engine_info(ctx); i; i = i->next)
		if (i->protocol == GPGME_PROTOCOL_OpenPGP)
			return i->file_name;
	return NULL;
}

/* Checks home and gpg and makes a gpgme context for listing; the checks say what a bare gpgme
 * error would hide. */
int keyring_ctx_new(const char *home, const char *gpg_path, gpgme_ctx_t *ret, char *err,
                    size_t errsize)
{
	_cleanup_(ctx_releasep) gpgme_ctx_t ctx = NULL;
	gpgme_error_t e;
	int r;

	gpgme_init_once();
	if (home) {
		struct stat st;

		/* gpg would create a missing home; a watcher must not. */
		if (stat(home, &st) < 0) {
			/* Taken first: snprintf() may set errno. */
			r = -errno;
			snprintf(err, errsize, "GnuPG home %s: %s", home, strerror(-r));
			return r;
		}
		if (!S_ISDIR(st.st_mode)) {
			snprintf(err, errsize, "GnuPG home %s is not a directory", home);
			return -ENOTDIR;
		}
		r = check_keybox(home, err, errsize);
		if (r < 0)
			return r;
	}
	if (gpg_path && access(gpg_path, X_OK) < 0) {
		r = -errno;
		snprintf(err, errsize, "gpg at %s: %s", gpg_path, strerror(-r));
		return r;
	}
	e = gpgme_engine_check_version(GPGME_PROTOCOL_OpenPGP);
	if (e && !gpg_path)
		return keyring_fail(e, err, errsize, "No usable gpg", home);
	/* The default gpg for a home: made the process-wide default once, here on the listing
	 * thread since it runs gpg --version, so that the next contexts for that home are born with
	 * it and need no engine info of their own (which would run gpg --version each time). Only
	 * keyring listings set the global default; others set their context's own. */
	if (!gpg_path && home && !engine_default_for(NULL, home)) {
		e = gpgme_set_engine_info(GPGME_PROTOCOL_OpenPGP, NULL, home);
		if (e)
			return keyring_fail(e, err, errsize, "Failed to set up gpgme", home);
	}
	e = gpgme_new(&ctx);
	if (e)
		return keyring_fail(e, err, errsize, "Failed to create a gpgme context", home);
	e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	/* Checked on the context itself: what it was born with is what it runs. */
	if (!e && (gpg_path || !ctx_engine_home_is(ctx, home)))
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, gpg_path, home);
	if (!e)
		e = gpgme_set_keylist_mode(ctx, GPGME_KEYLIST_MODE_LOCAL |
		                                        GPGME_KEYLIST_MODE_WITH_KEYGRIP);
	if (e)
		return keyring_fail(e, err, errsize, "Failed to set up gpgme", home);
	/* gpgme remembers where it found gpg; if that binary is gone now, its exec fails in the
	 * child and the listing comes back empty without an error. Say so instead. */
	if (!keyring_ctx_gpg(ctx) || access(keyring_ctx_gpg(ctx), X_OK) < 0) {
		r = keyring_ctx_gpg(ctx) ? -errno : -ENOENT;
		snprintf(err, errsize, "No usable gpg at %s: %s",
		         keyring_ctx_gpg(ctx) ? keyring_ctx_gpg(ctx) : "(none)", strerror(-r));
		return r;
	}
	gpgme_set_offline(ctx, 1);
	(void)gpgme_set_ctx_flag(ctx, "trust-model", "always");
	/* Hands every status line, ERROR included, to on_status(). */
	(void)gpgme_set_ctx_flag(ctx, "full-status", "1");
	*ret = TAKE_PTR(ctx);
	return 0;
}

/* Whether grip is one of gpg-agent's ssh keys or the keygrip of a subkey that keys list with a
 * secret part (on disk or a card stub) when secret_only, of any subkey otherwise. */
static bool grip_accounted(const uint8_t *sshcontrol, const char *grip, const struct key *keys,
                           size_t n, bool secret_only)
{
	if (grip_is_ssh(sshcontrol, grip))
		return true;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++)
			if (strcasecmp(keys[i].subkeys[j].keygrip, grip) == 0 &&
			    (!secret_only || keys[i].subkeys[j].secret != SECRET_NONE))
				return true;
	return false;
}

/* A keygrip in private-keys-v1.d that no listed key owns (and no ssh key of sshcontrol): a
 * secret whose public key is missing. Importing that public key later makes a key the user's own
 * without any keygrip changing, which the short way cannot see; such a home always lists fully. */
bool keyring_owned_has_orphans(const char *home, const struct keyring_owned *o,
                               const struct key *keys, size_t n, bool secret_only)
{
	_cleanup_(freep) uint8_t *sshcontrol = sshcontrol_read(home);

	for (size_t g = 0; g < o->n_grips; g++)
		if (!grip_accounted(sshcontrol, o->grips[g], keys, n, secret_only))
			return true;
	return false;
}
