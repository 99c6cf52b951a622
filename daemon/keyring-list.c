/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keyring through gpgme. A listing runs two gpg operations in one context: the secret keys
 * first (only that listing carries is_cardkey and card_number per subkey; `sec#` shows as
 * secret=0 on the primary), then the public data for just those fingerprints and the tracked
 * ones, so the cost does not grow with other people's keys in pubring.kbx. gpg runs with
 * --trust-model=always: keyctl shows no validity, and gpg then never rewrites trustdb.gpg, which
 * would otherwise wake watch-keyring.c.
 *
 * The gpgme keys become ours in keyring-map.c; the home is checked and the context made in
 * keyring-context.c.
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
#include "keyring-list-internal.h"
#include "keyring-list.h"
#include "keyring-owned.h"
#include "keyring-ownertrust.h"
#include "keyring-roca.h"
#include "keyring-uid.h"

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

/* gpg -K over the whole keyring into l: which keys have a secret part, and where. */
static int list_secret_all(gpgme_ctx_t ctx, const char *home, struct keyring_listing *l,
                           struct status_watch *sw, char *err, size_t errsize)
{
	gpgme_error_t e;
	gpgme_key_t k;
	int r;

	e = gpgme_op_keylist_start(ctx, NULL, 1);
	if (e)
		return keyring_fail(e, err, errsize, "Failed to list secret keys", home);
	while (!(e = gpgme_op_keylist_next(ctx, &k))) {
		r = keyring_collect_secret(l, k);
		gpgme_key_unref(k);
		if (r < 0) {
			(void)gpgme_op_keylist_end(ctx);
			snprintf(err, errsize, "Too many secret keys (more than %d)", KEYS_MAX);
			return r;
		}
	}
	if (gpgme_err_code(e) != GPG_ERR_EOF)
		return keyring_fail(e, err, errsize, "Failed to list secret keys", home);
	if (sw->error)
		return keyring_fail(sw->error, err, errsize, "gpg failed listing secret keys",
		                    home);
	if (l->n_primaries == 0 && keyring_home_has_secrets(home)) {
		snprintf(err, errsize,
		         "gpg listed no secret keys although %s/private-keys-v1.d has "
		         "some: is gpg-agent reachable?",
		         home);
		return -EHOSTDOWN;
	}
	return 0;
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
		if (keyring_fpr_ok(track[i]) && !dup)
			patterns[n++] = track[i];
	}
	*ret = patterns;
	*ret_n = n;
	return 0;
}

/* The keys named by patterns (never empty: no pattern would mean every key). With collect, the
 * listing runs in --with-secret mode and fills l as it goes (the short way: no -K before it). */
static int list_named(gpgme_ctx_t ctx, const char *home, const char **patterns, size_t n_patterns,
                      struct keyring_listing *l, bool collect, const struct status_watch *sw,
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
		return keyring_fail(e, err, errsize, "Failed to list public keys", home);
	}
	while (r >= 0 && !(e = gpgme_op_keylist_next(ctx, &k))) {
		/* A pattern can match twice only if pubring holds a duplicate; never overflow. */
		if (collect && k->secret)
			r = keyring_collect_secret(l, k);
		if (r >= 0 && n_keys < n_patterns) {
			r = keyring_map_key(k, l, &keys[n_keys]);
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
		return keyring_fail(e ? e : sw->error, err, errsize, "Failed to list public keys",
		                    home);
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
static void owned_remember(struct keyring_owned *o, const struct keyring_listing *l)
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
	_cleanup_(keyring_listing_done) struct keyring_listing l = {};
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
	if (fast && l.n_primaries == 0 && owned->n_fprs > 0 && keyring_home_has_secrets(home)) {
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

/* Drops the keys that are neither the user's own nor named (tracked or relied on): candidates
 * of the trust way that turned out to be someone else's key the user trusts ultimately. */
static void keys_keep_owned(struct key *keys, size_t *n, const char *const *names, size_t n_names)
{
	size_t k = 0;

	for (size_t i = 0; i < *n; i++) {
		if (keys[i].has_secret || keyring_fpr_in(keys[i].fingerprint, names, n_names))
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
	_cleanup_(keyring_listing_done) struct keyring_listing l = {};
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
	if (r < 0 || keyring_owned_has_orphans(home, now, keys, n_keys, true)) {
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
		if (!keyring_fpr_in(owned->relied[i], track, n_track))
			names[n++] = owned->relied[i];
	for (size_t i = 0; i < n_cert; i++)
		if (!keyring_fpr_in(owned->certified[i], track, n_track) &&
		    !keyring_fpr_in(owned->certified[i], names + n_track, n - n_track))
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

		k->tracked = keyring_fpr_in(k->fingerprint, track, n_track);
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

	r = keyring_ctx_new(home, gpg_path, &ctx, err, errsize);
	if (r < 0)
		return r;
	r = certified_update(home, keyring_ctx_gpg(ctx), cancel, owned);
	if (r < 0)
		return r;
	if (owned && home) {
		r = owned_way(home, full, owned, &now, &before, &way);
		if (r < 0)
			return r;
	}
	trust_way = way == KEYRING_WAY_FULL && !full && now && now->n_grips != SIZE_MAX;
	r = trust_read(home, keyring_ctx_gpg(ctx), cancel, owned, trust_way, &ot, &n_ot);
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
		    keyring_owned_has_orphans(home, owned, *ret_keys, *ret_n, false))
			owned->valid = false;
	}
	keys_mark(*ret_keys, *ret_n, track, n_track, owned);
	/* A failed test costs only key-roca-weak, and the next listing asks again. */
	(void)keyring_roca_mark(home, keyring_ctx_gpg(ctx), cancel, owned ? &owned->roca : NULL,
	                        *ret_keys, *ret_n);
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
