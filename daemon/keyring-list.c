/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keyring through gpgme. A listing runs two gpg operations in one context: the secret keys
 * first (only that listing carries is_cardkey and card_number per subkey; `sec#` shows as
 * secret=0 on the primary), then the public data for just those fingerprints and the tracked
 * ones, so the cost does not grow with other people's keys in pubring.kbx. gpg runs with
 * --trust-model=always: keyctl shows no validity, and gpg then never rewrites trustdb.gpg, which
 * would otherwise wake watch-keyring.c.
 *
 * Does not: write to the keyring, talk to gpg-agent, watch for changes, or log.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gpgme.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "gpg-conf.h"
#include "gpgme-cleanup.h"
#include "keyring-certified.h"
#include "gpgme-init.h"
#include "keyring-list.h"
#include "keyring-owned.h"
#include "keyring-ownertrust.h"
#include "keyring-roca.h"
#include "keyring-uid.h"

/* The one place gpgme's codes become errno values. */
static int map_error(gpgme_error_t e)
{
	int r = gpgme_err_code_to_errno(gpgme_err_code(e));

	if (gpgme_err_code(e) == GPG_ERR_CANCELED)
		return -ECANCELED;
	if (gpgme_err_code(e) == GPG_ERR_INV_ENGINE || gpgme_err_code(e) == GPG_ERR_ENOENT)
		return -ENOENT;
	return r > 0 ? -r : -EIO;
}

static int fail(gpgme_error_t e, char *err, size_t errsize, const char *what, const char *home)
{
	snprintf(err, errsize, "%s in %s: %s", what, home ? home : "the default GnuPG home",
	         gpgme_strerror(e));
	return map_error(e);
}

static bool hex_fpr_ok(const char *s)
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

/* What the secret listing says about one subkey. */
struct secret_info {
	char fpr[FPR_HEX_MAX];
	bool secret;
	bool cardkey;
	char card_serial[SERIAL_MAX];
};

struct listing {
	struct secret_info *sec;
	size_t n_sec, sec_allocated;
	char (*primaries)[FPR_HEX_MAX]; /* keys with a secret part */
	size_t n_primaries;
};

static void listing_done(struct listing *l)
{
	free(l->sec);
	free(l->primaries);
}

static const struct secret_info *secret_find(const struct listing *l, const char *fpr)
{
	for (size_t i = 0; i < l->n_sec; i++)
		if (strcasecmp(l->sec[i].fpr, fpr) == 0)
			return &l->sec[i];
	return NULL;
}

static bool is_primary_with_secret(const struct listing *l, const char *fpr)
{
	for (size_t i = 0; i < l->n_primaries; i++)
		if (strcasecmp(l->primaries[i], fpr) == 0)
			return true;
	return false;
}

static int collect_secret(struct listing *l, gpgme_key_t k)
{
	if (!k->subkeys || !hex_fpr_ok(k->subkeys->fpr))
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
		struct secret_info *si;

		if (!hex_fpr_ok(s->fpr))
			continue;
		if (l->n_sec == l->sec_allocated) {
			size_t m = l->sec_allocated ? l->sec_allocated * 2 : 64;
			struct secret_info *n = reallocarray(l->sec, m, sizeof(*n));

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
static int map_key(gpgme_key_t k, const struct listing *l, struct key *ret)
{
	size_t n = 0, i = 0;

	memset(ret, 0, sizeof(*ret));
	for (gpgme_subkey_t s = k->subkeys; s; s = s->next)
		n++;
	if (n == 0 || n > SUBKEYS_MAX || !hex_fpr_ok(k->subkeys->fpr))
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
		const struct secret_info *si;
		char *algo;

		if (!hex_fpr_ok(s->fpr))
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

void keyring_cancel_set(struct keyring_cancel *c, struct gpgme_context *ctx)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->ctx = ctx;
	if (ctx && c->cancelled)
		(void)gpgme_cancel_async(ctx);
	pthread_mutex_unlock(&c->lock);
}

void keyring_cancel(struct keyring_cancel *c)
{
	pthread_mutex_lock(&c->lock);
	c->cancelled = true;
	if (c->ctx)
		(void)gpgme_cancel_async(c->ctx);
	pthread_mutex_unlock(&c->lock);
}

/* gpg reports a damaged keyring only as an "ERROR <where> <code>" status line (and exit code 2,
 * which gpgme does not show for listings); remember the first that is not "no such key". */
struct status_watch {
	gpgme_error_t error;
	char where[64];
};

static gpgme_error_t on_status(void *userdata, const char *keyword, const char *args)
{
	struct status_watch *sw = userdata;
	const char *sp;
	unsigned long code;

	if (!keyword || !args || !streq(keyword, "ERROR") || sw->error)
		return 0;
	sp = strrchr(args, ' ');
	if (!sp)
		return 0;
	code = strtoul(sp + 1, NULL, 10);
	if (gpgme_err_code((gpgme_error_t)code) == GPG_ERR_NO_PUBKEY ||
	    gpgme_err_code((gpgme_error_t)code) == GPG_ERR_NOT_FOUND)
		return 0;
	sw->error = (gpgme_error_t)code ? (gpgme_error_t)code : GPG_ERR_GENERAL;
	strcpy_trunc(sw->where, sizeof(sw->where), args);
	return 0;
}

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
static bool home_has_secret_files(const char *home)
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

/* gpg -K over the whole keyring into l: which keys have a secret part, and where. */
static int list_secret_all(gpgme_ctx_t ctx, const char *home, struct listing *l,
                           struct status_watch *sw, char *err, size_t errsize)
{
	gpgme_error_t e;
	gpgme_key_t k;
	int r;

	e = gpgme_op_keylist_start(ctx, NULL, 1);
	if (e)
		return fail(e, err, errsize, "Failed to list secret keys", home);
	while (!(e = gpgme_op_keylist_next(ctx, &k))) {
		r = collect_secret(l, k);
		gpgme_key_unref(k);
		if (r < 0) {
			(void)gpgme_op_keylist_end(ctx);
			snprintf(err, errsize, "Too many secret keys (more than %d)", KEYS_MAX);
			return r;
		}
	}
	if (gpgme_err_code(e) != GPG_ERR_EOF)
		return fail(e, err, errsize, "Failed to list secret keys", home);
	if (sw->error)
		return fail(sw->error, err, errsize, "gpg failed listing secret keys", home);
	if (l->n_primaries == 0 && home_has_secret_files(home)) {
		snprintf(err, errsize,
		         "gpg listed no secret keys although %s/private-keys-v1.d has "
		         "some: is gpg-agent reachable?",
		         home);
		return -EHOSTDOWN;
	}
	return 0;
}

static bool fpr_in(const char *fpr, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(fpr, list[i]) == 0)
			return true;
	return false;
}

/* The fingerprints to list: owned (n_owned of them) and then the tracked ones not among them.
 * *ret is malloc'd; its strings point into owned and track. */
static int build_patterns(const char (*owned)[FPR_HEX_MAX], size_t n_owned,
                          const char *const *track, size_t n_track, const char ***ret,
                          size_t *ret_n)
{
	const char **patterns = calloc(n_owned + n_track + 1, sizeof(*patterns));
	size_t n = 0;

	if (!patterns)
		return -ENOMEM;
	for (size_t i = 0; i < n_owned; i++)
		patterns[n++] = owned[i];
	for (size_t i = 0; i < n_track; i++) {
		bool dup = false;

		for (size_t j = 0; j < n_owned && !dup; j++)
			dup = strcasecmp(owned[j], track[i]) == 0;
		if (hex_fpr_ok(track[i]) && !dup)
			patterns[n++] = track[i];
	}
	*ret = patterns;
	*ret_n = n;
	return 0;
}

/* The keys named by patterns (never empty: no pattern would mean every key). With collect, the
 * listing runs in --with-secret mode and fills l as it goes (the short way: no -K before it). */
static int list_named(gpgme_ctx_t ctx, const char *home, const char **patterns, size_t n_patterns,
                      struct listing *l, bool collect, const struct status_watch *sw,
                      struct key **ret_keys, size_t *ret_n, char *err, size_t errsize)
{
	struct key *keys = calloc(n_patterns, sizeof(*keys));
	size_t n_keys = 0;
	gpgme_error_t e;
	gpgme_key_t k;
	int r = 0;

	if (!keys)
		return -ENOMEM;
	e = gpgme_op_keylist_ext_start(ctx, patterns, 0, 0);
	if (e) {
		free(keys);
		return fail(e, err, errsize, "Failed to list public keys", home);
	}
	while (r >= 0 && !(e = gpgme_op_keylist_next(ctx, &k))) {
		/* A pattern can match twice only if pubring holds a duplicate; never overflow. */
		if (collect && k->secret)
			r = collect_secret(l, k);
		if (r >= 0 && n_keys < n_patterns) {
			r = map_key(k, l, &keys[n_keys]);
			if (r >= 0)
				n_keys++;
			else if (r != -ENOMEM)
				r = 0; /* that key is rejected, the rest stands */
		}
		gpgme_key_unref(k);
	}
	if (r < 0) {
		(void)gpgme_op_keylist_end(ctx);
		keyring_keys_free(keys, n_keys);
		return r;
	}
	if (gpgme_err_code(e) != GPG_ERR_EOF || sw->error) {
		keyring_keys_free(keys, n_keys);
		return fail(e ? e : sw->error, err, errsize, "Failed to list public keys", home);
	}
	if (n_keys == 0) {
		free(keys);
		keys = NULL;
	}
	*ret_keys = keys;
	*ret_n = n_keys;
	return 0;
}

/* Remembers what this full listing learnt into o (grips already read before it ran): too many
 * owned keys leave o invalid, and the next listing takes the full way again. */
static void owned_remember(struct keyring_owned *o, const struct listing *l)
{
	o->valid = l->n_primaries <= KEYRING_OWNED_MAX;
	o->n_fprs = 0;
	for (size_t i = 0; o->valid && i < l->n_primaries; i++) {
		char *f = o->fprs[o->n_fprs++];

		strcpy_trunc(f, FPR_HEX_MAX, l->primaries[i]);
		for (; *f; f++)
			*f = (char)toupper((unsigned char)*f);
	}
}

static int list_locked(gpgme_ctx_t ctx, const char *home, struct keyring_owned *owned, bool fast,
                       const char *const *track, size_t n_track, struct key **ret_keys,
                       size_t *ret_n, char *err, size_t errsize)
{
	_cleanup_(listing_done) struct listing l = {};
	struct status_watch sw = {};
	_cleanup_(freep) const char **patterns = NULL;
	size_t n_patterns = 0, n_keys = 0;
	struct key *keys = NULL;
	int r;

	gpgme_set_status_cb(ctx, on_status, &sw);
	if (fast) {
		if (gpgme_set_keylist_mode(ctx, gpgme_get_keylist_mode(ctx) |
		                                        GPGME_KEYLIST_MODE_WITH_SECRET))
			return -EINVAL;
		r = build_patterns((const char(*)[FPR_HEX_MAX])owned->fprs, owned->n_fprs, track,
		                   n_track, &patterns, &n_patterns);
	} else {
		r = list_secret_all(ctx, home, &l, &sw, err, errsize);
		if (r >= 0)
			r = build_patterns((const char(*)[FPR_HEX_MAX])l.primaries, l.n_primaries,
			                   track, n_track, &patterns, &n_patterns);
		if (r >= 0 && owned)
			owned_remember(owned, &l);
	}
	if (r < 0)
		return r;
	if (n_patterns == 0) {
		*ret_keys = NULL;
		*ret_n = 0;
		return 0;
	}
	r = list_named(ctx, home, patterns, n_patterns, &l, fast, &sw, &keys, &n_keys, err,
	               errsize);
	if (r < 0)
		return r;
	/* As in list_secret_all(): without gpg-agent, --with-secret shows no secret at all. */
	if (fast && l.n_primaries == 0 && owned->n_fprs > 0 && home_has_secret_files(home)) {
		keyring_keys_free(keys, n_keys);
		snprintf(err, errsize,
		         "gpg saw none of the secret keys in %s/private-keys-v1.d: is "
		         "gpg-agent reachable?",
		         home);
		return -EHOSTDOWN;
	}
	/* Only now: a failure must leave the caller nothing to free (its job frees what it
	 * holds, and a pointer kept after the free above was freed twice). */
	*ret_keys = keys;
	*ret_n = n_keys;
	return 0;
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
static const char *ctx_gpg(gpgme_ctx_t ctx)
{
	for (gpgme_engine_info_t i = gpgme_ctx_get_engine_info(ctx); i; i = i->next)
		if (i->protocol == GPGME_PROTOCOL_OpenPGP)
			return i->file_name;
	return NULL;
}

/* Checks home and gpg and makes a gpgme context for listing; the checks say what a bare gpgme
 * error would hide. */
static int ctx_setup(const char *home, const char *gpg_path, gpgme_ctx_t *ret, char *err,
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
		return fail(e, err, errsize, "No usable gpg", home);
	/* The default gpg for a home: made the process-wide default once, here on the listing
	 * thread since it runs gpg --version, so that the next contexts for that home are born with
	 * it and need no engine info of their own (which would run gpg --version each time). Only
	 * keyring listings set the global default; others set their context's own. */
	if (!gpg_path && home && !engine_default_for(NULL, home)) {
		e = gpgme_set_engine_info(GPGME_PROTOCOL_OpenPGP, NULL, home);
		if (e)
			return fail(e, err, errsize, "Failed to set up gpgme", home);
	}
	e = gpgme_new(&ctx);
	if (e)
		return fail(e, err, errsize, "Failed to create a gpgme context", home);
	e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_OpenPGP);
	/* Checked on the context itself: what it was born with is what it runs. */
	if (!e && (gpg_path || !ctx_engine_home_is(ctx, home)))
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_OpenPGP, gpg_path, home);
	if (!e)
		e = gpgme_set_keylist_mode(ctx, GPGME_KEYLIST_MODE_LOCAL |
		                                        GPGME_KEYLIST_MODE_WITH_KEYGRIP);
	if (e)
		return fail(e, err, errsize, "Failed to set up gpgme", home);
	/* gpgme remembers where it found gpg; if that binary is gone now, its exec fails in the
	 * child and the listing comes back empty without an error. Say so instead. */
	if (!ctx_gpg(ctx) || access(ctx_gpg(ctx), X_OK) < 0) {
		r = ctx_gpg(ctx) ? -errno : -ENOENT;
		snprintf(err, errsize, "No usable gpg at %s: %s",
		         ctx_gpg(ctx) ? ctx_gpg(ctx) : "(none)", strerror(-r));
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
static bool owned_has_orphans(const char *home, const struct keyring_owned *o,
                              const struct key *keys, size_t n, bool secret_only)
{
	_cleanup_(freep) uint8_t *sshcontrol = sshcontrol_read(home);

	for (size_t g = 0; g < o->n_grips; g++)
		if (!grip_accounted(sshcontrol, o->grips[g], keys, n, secret_only))
			return true;
	return false;
}

/* Drops the keys that are neither the user's own nor named (tracked or relied on): candidates
 * of the trust way that turned out to be someone else's key the user trusts ultimately. */
static void keys_keep_owned(struct key *keys, size_t *n, const char *const *names, size_t n_names)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		if (keys[i].has_secret || fpr_in(keys[i].fingerprint, names, n_names))
			keys[k++] = keys[i];
		else
			free(keys[i].subkeys);
	}
	*n = k;
}

/* The candidates for the trust way: the ultimately trusted keys of ot and what the last listing
 * knew as owned (a key imported with its secret has no owner trust). *ret is malloc'd. */
static int trust_candidates(const struct ownertrust *ot, size_t n_ot,
                            const struct keyring_owned *before, char (**ret)[FPR_HEX_MAX],
                            size_t *ret_n)
{
	size_t n = 0, extra = before ? before->n_fprs : 0;
	char(*c)[FPR_HEX_MAX] = calloc(n_ot + extra + 1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < n_ot; i++)
		if (ot[i].level >= OWNERTRUST_ULTIMATE)
			strcpy_trunc(c[n++], FPR_HEX_MAX, ot[i].fpr);
	for (size_t i = 0; i < extra; i++) {
		bool dup = false;

		for (size_t j = 0; j < n && !dup; j++)
			dup = strcasecmp(c[j], before->fprs[i]) == 0;
		if (!dup)
			strcpy_trunc(c[n++], FPR_HEX_MAX, before->fprs[i]);
	}
	*ret = c;
	*ret_n = n;
	return 0;
}

/* The trust way, for a home whose owned keys are not known (a first start, a secret key added or
 * removed): the candidates are listed with their secret parts in one short run, and taken as the
 * owned keys only when every keygrip in private-keys-v1.d (now) belongs to a secret subkey among
 * them. Then no key outside them can have a secret part, as gpg -K would have found. Returns 1
 * when it answered, 0 when the full way must run (nothing listed), or -ECANCELED. */
static int list_by_trust(gpgme_ctx_t ctx, const char *home, struct keyring_cancel *cancel,
                         const struct ownertrust *ot, size_t n_ot, struct keyring_owned *owned,
                         const struct keyring_owned *before, const struct keyring_owned *now,
                         const char *const *track, size_t n_track, struct key **ret_keys,
                         size_t *ret_n, char *err, size_t errsize)
{
	_cleanup_(listing_done) struct listing l = {};
	_cleanup_(freep) char(*cand)[FPR_HEX_MAX] = NULL;
	_cleanup_(freep) const char **patterns = NULL;
	struct status_watch sw = {};
	size_t n_cand = 0, n_patterns = 0, n_keys = 0;
	struct key *keys = NULL;
	int r;

	r = trust_candidates(ot, n_ot, before, &cand, &n_cand);
	if (r < 0)
		return r;
	if (n_cand == 0)
		return 0;
	r = build_patterns((const char(*)[FPR_HEX_MAX])cand, n_cand, track, n_track, &patterns,
	                   &n_patterns);
	if (r < 0)
		return r == -ENOMEM ? r : 0;
	gpgme_set_status_cb(ctx, on_status, &sw);
	if (gpgme_set_keylist_mode(ctx,
	                           gpgme_get_keylist_mode(ctx) | GPGME_KEYLIST_MODE_WITH_SECRET))
		return 0;
	keyring_cancel_set(cancel, ctx);
	r = list_named(ctx, home, patterns, n_patterns, &l, true, &sw, &keys, &n_keys, err,
	               errsize);
	keyring_cancel_set(cancel, NULL);
	(void)gpgme_set_keylist_mode(ctx,
	                             gpgme_get_keylist_mode(ctx) & ~GPGME_KEYLIST_MODE_WITH_SECRET);
	if (r == -ECANCELED || r == -ENOMEM)
		return r;
	err[0] = 0;
	if (r < 0 || owned_has_orphans(home, now, keys, n_keys, true)) {
		keyring_keys_free(keys, n_keys);
		return 0;
	}
	keys_keep_owned(keys, &n_keys, track, n_track);
	owned_remember(owned, &l);
	*ret_keys = keys;
	*ret_n = n_keys;
	return 1;
}

/* trustdb.gpg's mtime in nanoseconds; -1 when it does not exist or cannot be read. */
static int64_t trustdb_mtime(const char *home)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/trustdb.gpg", home) >= (int)sizeof(path) ||
	    stat(path, &st) < 0)
		return -1;
	return (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
}

/* Reads the owner trust when the trust way needs its ultimately trusted keys, or when the relied-on
 * keys are wanted and trustdb.gpg changed since they were read; keeps those (full or ultimate)
 * in owned. A failed read costs only the trust way and leaves the relied-on keys as they were. */
static int trust_read(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                      struct keyring_owned *owned, bool trust_way, struct ownertrust **ret,
                      size_t *ret_n)
{
	int64_t mtime;
	int r;

	if (!owned || !home)
		return 0;
	if (!owned->relied_wanted) {
		owned->n_relied = 0;
		owned->n_certified = 0;
		owned->trustdb_mtime_ns = 0;
	}
	mtime = trustdb_mtime(home);
	if (!trust_way && (!owned->relied_wanted || mtime == owned->trustdb_mtime_ns))
		return 0;
	r = ownertrust_read(home, gpg_path, cancel, OWNERTRUST_FULLY, ret, ret_n);
	if (r == -ECANCELED || r == -ENOMEM)
		return r;
	if (r < 0 || !owned->relied_wanted)
		return 0;
	owned->trustdb_mtime_ns = mtime;
	owned->n_relied = 0;
	for (size_t i = 0; i < *ret_n && owned->n_relied < KEYRING_RELIED_MAX; i++)
		strcpy_trunc(owned->relied[owned->n_relied++], FPR_HEX_MAX, (*ret)[i].fpr);
	return 0;
}

/* Whether fpr is one of the relied-on keys owned names (full or ultimate trust, or certified). */
static bool relied_in(const struct keyring_owned *owned, const char *fpr)
{
	for (size_t i = 0; owned && i < owned->n_relied; i++)
		if (strcasecmp(fpr, owned->relied[i]) == 0)
			return true;
	for (size_t i = 0; owned && i < owned->n_certified; i++)
		if (strcasecmp(fpr, owned->certified[i]) == 0)
			return true;
	return false;
}

_Static_assert(CERTIFIED_MAX <= KEYRING_RELIED_MAX, "the scan's keys fit in keyring_owned");

/* Scans for the keys own keys certified when owned asks for it (scan_certified), before the
 * listing, so that the listing names them; owned's fingerprints are the last listing's. A failed
 * scan keeps what the last one found. */
static int certified_update(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                            struct keyring_owned *owned)
{
	struct certified found[CERTIFIED_MAX];
	size_t n = 0;
	int r;

	if (!owned || !owned->scan_certified || !owned->relied_wanted)
		return 0;
	owned->scan_certified = false;
	r = certified_read(home, gpg_path, cancel, (const char(*)[FPR_HEX_MAX])owned->fprs,
	                   owned->n_fprs, (int64_t)time(NULL), found, &n);
	if (r == -ECANCELED || r == -ENOMEM)
		return r;
	if (r < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		strcpy_trunc(owned->certified[i], FPR_HEX_MAX, found[i].fpr);
	owned->n_certified = n;
	return 0;
}

/* The fingerprints to list besides the owned ones: track, then the relied-on keys of owned not
 * among them. *ret is malloc'd; its strings point into track and owned. */
static int track_with_relied(const char *const *track, size_t n_track,
                             const struct keyring_owned *owned, const char ***ret, size_t *ret_n)
{
	size_t n_relied = owned ? owned->n_relied : 0, n_cert = owned ? owned->n_certified : 0;
	const char **names = calloc(n_track + n_relied + n_cert + 1, sizeof(*names));
	size_t n = 0;

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n_track; i++)
		names[n++] = track[i];
	for (size_t i = 0; i < n_relied; i++)
		if (!fpr_in(owned->relied[i], track, n_track))
			names[n++] = owned->relied[i];
	for (size_t i = 0; i < n_cert; i++)
		if (!fpr_in(owned->certified[i], track, n_track) &&
		    !fpr_in(owned->certified[i], names + n_track, n - n_track))
			names[n++] = owned->certified[i];
	*ret = names;
	*ret_n = n;
	return 0;
}

/* The one place that says why a key was listed besides being the user's own: tracked (named in
 * the configuration) and relied_on (another's key the user trusts fully or ultimately, or
 * certified with an own key). */
static void keys_mark(struct key *keys, size_t n, const char *const *track, size_t n_track,
                      const struct keyring_owned *owned)
{
	for (size_t i = 0; i < n; i++) {
		struct key *k = &keys[i];

		k->tracked = fpr_in(k->fingerprint, track, n_track);
		k->relied_on = !k->has_secret && relied_in(owned, k->fingerprint);
	}
}

static int64_t key_created(const struct key *k)
{
	return k->n_subkeys > 0 ? k->subkeys[0].created : 0;
}

static int key_order(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (key_created(x) != key_created(y))
		return key_created(x) < key_created(y) ? -1 : 1;
	return strcmp(x->fingerprint, y->fingerprint);
}

/* Reads the keygrips now into *ret_now and picks the owned way when they are the ones owned
 * knew; otherwise owned is reset to them and a copy of what it knew goes to *ret_before (NULL
 * when it knew nothing of this home). The keygrips are read before gpg runs: a secret key added
 * while it runs makes the next listing a full one, never a short one that misses it. */
static int owned_way(const char *home, bool full, struct keyring_owned *owned,
                     struct keyring_owned **ret_now, struct keyring_owned **ret_before,
                     enum keyring_way *ret_way)
{
	struct keyring_owned *now = calloc(1, sizeof(*now));

	if (!now)
		return -ENOMEM;
	*ret_now = now;
	if (keyring_grips_read(home, now) < 0)
		now->n_grips = SIZE_MAX; /* unknown: equal to nothing */
	if (!full && owned->valid && streq(owned->home, home) && now->n_grips != SIZE_MAX &&
	    keyring_grips_equal(owned, now)) {
		*ret_way = KEYRING_WAY_OWNED;
		return 0;
	}
	if (owned->valid && streq(owned->home, home)) {
		*ret_before = malloc(sizeof(**ret_before));
		if (!*ret_before)
			return -ENOMEM;
		memcpy(*ret_before, owned, sizeof(**ret_before));
	}
	owned->valid = false;
	if (now->n_grips != SIZE_MAX) {
		memcpy(owned->grips, now->grips, sizeof(now->grips));
		owned->n_grips = now->n_grips;
		strcpy_trunc(owned->home, sizeof(owned->home), home);
	}
	return 0;
}

int keyring_list_owned(const char *home, const char *gpg_path, const char *const *track,
                       size_t n_track, struct keyring_cancel *cancel, struct keyring_owned *owned,
                       bool full, enum keyring_way *ret_way, struct key **ret_keys, size_t *ret_n,
                       char *err, size_t errsize)
{
	_cleanup_(ctx_releasep) gpgme_ctx_t ctx = NULL;
	_cleanup_(freep) struct keyring_owned *now = NULL, *before = NULL;
	_cleanup_(freep) struct ownertrust *ot = NULL;
	_cleanup_(freep) const char **names = NULL;
	enum keyring_way way = KEYRING_WAY_FULL;
	size_t n_ot = 0, n_names = 0;
	bool trust_way;
	int r;

	r = ctx_setup(home, gpg_path, &ctx, err, errsize);
	if (r < 0)
		return r;
	r = certified_update(home, ctx_gpg(ctx), cancel, owned);
	if (r < 0)
		return r;
	if (owned && home) {
		r = owned_way(home, full, owned, &now, &before, &way);
		if (r < 0)
			return r;
	}
	trust_way = way == KEYRING_WAY_FULL && !full && now && now->n_grips != SIZE_MAX;
	r = trust_read(home, ctx_gpg(ctx), cancel, owned, trust_way, &ot, &n_ot);
	if (r < 0)
		return r;
	r = track_with_relied(track, n_track, owned, &names, &n_names);
	if (r < 0)
		return r;
	if (trust_way) {
		r = list_by_trust(ctx, home, cancel, ot, n_ot, owned, before, now, names, n_names,
		                  ret_keys, ret_n, err, errsize);
		if (r < 0)
			return r;
		if (r > 0)
			way = KEYRING_WAY_TRUST;
	}
	if (way != KEYRING_WAY_TRUST) {
		keyring_cancel_set(cancel, ctx);
		r = list_locked(
		        ctx, home,
		        now && (way == KEYRING_WAY_OWNED || now->n_grips != SIZE_MAX) ? owned
		                                                                      : NULL,
		        way == KEYRING_WAY_OWNED, names, n_names, ret_keys, ret_n, err, errsize);
		keyring_cancel_set(cancel, NULL);
		if (r < 0)
			return r;
		if (way == KEYRING_WAY_FULL && owned && owned->valid &&
		    owned_has_orphans(home, owned, *ret_keys, *ret_n, false))
			owned->valid = false;
	}
	keys_mark(*ret_keys, *ret_n, track, n_track, owned);
	/* A failed test costs only key-roca-weak, and the next listing asks again. */
	(void)keyring_roca_mark(home, ctx_gpg(ctx), cancel, owned ? &owned->roca : NULL, *ret_keys,
	                        *ret_n);
	/* Oldest first, whichever way: gpg lists named keys in the order of the names in a keyboxd
	 * home and in the keybox's order otherwise, and the ways name them in different orders. */
	if (*ret_n > 1)
		qsort(*ret_keys, *ret_n, sizeof(**ret_keys), key_order);
	if (ret_way)
		*ret_way = way;
	return 0;
}

int keyring_list_cancellable(const char *home, const char *gpg_path, const char *const *track,
                             size_t n_track, struct keyring_cancel *cancel, struct key **ret_keys,
                             size_t *ret_n, char *err, size_t errsize)
{
	return keyring_list_owned(home, gpg_path, track, n_track, cancel, NULL, true, NULL,
	                          ret_keys, ret_n, err, errsize);
}

int keyring_list_with(const char *gnupghome, const char *gpg_path, const char *const *track,
                      size_t n_track, struct key **ret_keys, size_t *ret_n, char *err,
                      size_t errsize)
{
	return keyring_list_cancellable(gnupghome, gpg_path, track, n_track, NULL, ret_keys, ret_n,
	                                err, errsize);
}

int keyring_list(const char *gnupghome, const char *const *track, size_t n_track,
                 struct key **ret_keys, size_t *ret_n, char *err, size_t errsize)
{
	return keyring_list_with(gnupghome, NULL, track, n_track, ret_keys, ret_n, err, errsize);
}
