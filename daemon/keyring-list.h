/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user's GnuPG keys, as gpg reports them through gpgme: the keys with a secret part here (on
 * disk or as a card stub) plus the fingerprints the configuration tracks. keyring_list() is the
 * blocking listing; struct keyring_watch runs it on a worker thread whenever GNUPGHOME changes
 * (inotify, debounced), posts the result to the sd-event loop and retries a bounded number of
 * times with backoff when gpg fails. Only this file (and card-scd.c, gpgme-init.c) includes
 * <gpgme.h>; gpgme errors become -errno here.
 *
 * Does not: modify the keyring, talk to gpg-agent or cards, or decide levels and findings.
 */
#pragma once

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define KEYRING_GPG_CONF_MAX (256u * 1024u)
#define KEYRING_TRACK_MAX 64
#define KEYRING_DEFAULT_KEY_MAX 256

/*
 * Lists the keys with a secret part in gnupghome (NULL: gpg's default) and the tracked
 * fingerprints, without reading anyone else's keys, oldest first (then by fingerprint).
 * *ret_keys is a malloc'd array of n keys (NULL when none); free it with keyring_keys_free().
 * On failure *ret_keys and *ret_n are left as they were: there is nothing to free.
 * Returns 0 or -errno with a reason in err: -ENOENT (no gpg), -EIO and others as gpgme maps them;
 * never hangs on a locked keyring for longer than gpg does (see keyring_watch for the timeout).
 */
int keyring_list(const char *gnupghome, const char *const *track, size_t n_track,
                 struct key **ret_keys, size_t *ret_n, char *err, size_t errsize);
/* Lets another thread (the watch's watchdog) cancel a running listing: gpgme_cancel_async() on
 * its context, now or as soon as it has one. lock also guards what its owner adds beside it. */
struct keyring_cancel {
	pthread_mutex_t lock;
	struct gpgme_context *ctx;
	bool cancelled;
};
void keyring_cancel(struct keyring_cancel *c);
/* Puts ctx (NULL: none) in c's slot while it runs; cancels it at once when c was cancelled. */
void keyring_cancel_set(struct keyring_cancel *c, struct gpgme_context *ctx);

/* keyring_list() with another gpg binary (gpg_path NULL: gpgme's default) and a cancel slot
 * (NULL: none). */
int keyring_list_cancellable(const char *gnupghome, const char *gpg_path, const char *const *track,
                             size_t n_track, struct keyring_cancel *cancel, struct key **ret_keys,
                             size_t *ret_n, char *err, size_t errsize);
/* Which way a listing went: gpg -K over every key, then the owned and tracked ones (FULL); the
 * owned keys known from before and the tracked ones in one run (OWNED); the ultimately trusted
 * keys tried as the owned ones, every keygrip accounted for (TRUST). */
enum keyring_way {
	KEYRING_WAY_FULL,
	KEYRING_WAY_OWNED,
	KEYRING_WAY_TRUST,
};
/*
 * keyring_list_cancellable() the short way when it can: owned (in/out, NULL: always the full way)
 * holds what the last listing learnt (keyring-owned.h). While private-keys-v1.d holds the same
 * keygrips and full is false, gpg lists just the owned and tracked fingerprints, with their
 * secret parts, in one run. Otherwise (and full false) the ultimately trusted keys and the owned
 * ones from before are tried the same way, and taken when every keygrip in private-keys-v1.d
 * belongs to a secret subkey among them; failing that the whole-keyring secret listing runs.
 * owned is rewritten unless the way was KEYRING_WAY_OWNED. *ret_way (may be NULL) says which.
 */
struct keyring_owned;
int keyring_list_owned(const char *home, const char *gpg_path, const char *const *track,
                       size_t n_track, struct keyring_cancel *cancel, struct keyring_owned *owned,
                       bool full, enum keyring_way *ret_way, struct key **ret_keys, size_t *ret_n,
                       char *err, size_t errsize);
/* The same with another gpg binary (tests); gpg_path NULL is gpgme's default. */
int keyring_list_with(const char *gnupghome, const char *gpg_path, const char *const *track,
                      size_t n_track, struct key **ret_keys, size_t *ret_n, char *err,
                      size_t errsize);
void keyring_keys_free(struct key *keys, size_t n);

/* gpg.conf's default-key values (quotes removed), in the file's order, one a line ('\n' between
 * them) into buf: gpg uses the last one whose key it may sign with (keyring-default-key.c).
 * Returns 1 when there is one, 0 when there is none (buf ""), -EBADMSG (NUL byte), -EMSGSIZE
 * (the values do not fit in size). Pure. */
int keyring_parse_default_key(const uint8_t *p, size_t n, char *buf, size_t size);
/* Reads gnupghome/gpg.conf and parses it; a missing file is 0 (none). */
int keyring_default_key(const char *gnupghome, char *buf, size_t size);

/* Checks the first bytes of pubring.kbx: empty is fine, else a keybox header blob ("KBXf").
 * Returns 0 or -EBADMSG. Pure: gpg lists a damaged keybox as empty without an error status. */
int keyring_check_keybox_header(const uint8_t *p, size_t n);
