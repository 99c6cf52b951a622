/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The user's GnuPG keys, as gpg reports them through gpgme: the keys with a secret part here (on
 * disk or as a card stub) plus the fingerprints the configuration tracks. keyring_list() is the
 * blocking listing; struct keyring_watch runs it on a worker thread whenever GNUPGHOME changes
 * (inotify, debounced), posts the result to the sd-event loop and retries a bounded number of
 * times with backoff when gpg fails. Only this file (and scd-fallback.c, gpgme-init.c) includes
 * <gpgme.h>; gpgme errors become -errno here.
 *
 * Does not: modify the keyring, talk to gpg-agent or cards, or decide levels and findings.
 */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "types.h"

#define KEYRING_GPG_CONF_MAX (256u * 1024u)
#define KEYRING_TRACK_MAX 64
#define KEYRING_DEFAULT_KEY_MAX 256
#define KEYRING_DEBOUNCE_USEC (200u * 1000u)
#define KEYRING_RETRY_MIN_USEC (1000u * 1000u)
#define KEYRING_RETRY_MAX_USEC (300ull * 1000u * 1000u)
/* 1, 2, 4 ... 256, 300 s: then only a change in GNUPGHOME or a Reload lists again. */
#define KEYRING_RETRY_ATTEMPTS 10u
#define KEYRING_LIST_TIMEOUT_USEC (60ull * 1000u * 1000u)

/*
 * Lists the keys with a secret part in gnupghome (NULL: gpg's default) and the tracked
 * fingerprints, without reading anyone else's keys. *ret_keys is a malloc'd array of n keys
 * (NULL when none); free it with keyring_keys_free(). Returns 0 or -errno with a reason in err:
 * -ENOENT (no gpg), -EIO and others as gpgme maps them; never hangs on a locked keyring for longer
 * than gpg does (see keyring_watch for the timeout).
 */
int keyring_list(const char *gnupghome, const char *const *track, size_t n_track,
                 struct key **ret_keys, size_t *ret_n, char *err, size_t errsize);
/* The same with another gpg binary (tests); gpg_path NULL is gpgme's default. */
int keyring_list_with(const char *gnupghome, const char *gpg_path, const char *const *track,
                      size_t n_track, struct key **ret_keys, size_t *ret_n, char *err,
                      size_t errsize);
void keyring_keys_free(struct key *keys, size_t n);

/* gpg.conf's first default-key value (quotes removed) into buf. Returns 1 when found, 0 when
 * there is none (buf ""), -EBADMSG (NUL byte), -EMSGSIZE (value longer than size). Pure. */
int keyring_parse_default_key(const uint8_t *p, size_t n, char *buf, size_t size);
/* Reads gnupghome/gpg.conf and parses it; a missing file is 0 (none). */
int keyring_default_key(const char *gnupghome, char *buf, size_t size);

/* Checks the first bytes of pubring.kbx: empty is fine, else a keybox header blob ("KBXf").
 * Returns 0 or -EBADMSG. Pure: gpg lists a damaged keybox as empty without an error status. */
int keyring_check_keybox_header(const uint8_t *p, size_t n);

/* True when s is valid UTF-8 without control characters and fits in UID_MAX: the test a user id
 * must pass to be shown. Pure. */
bool keyring_uid_acceptable(const char *s);

/* One refresh's outcome. The callback may take keys (set it to NULL); the rest is freed after. */
struct keyring_result {
	int error; /* 0 or -errno */
	char reason[ERROR_TEXT_MAX];
	struct key *keys;
	size_t n_keys;
	char default_key[KEYRING_DEFAULT_KEY_MAX]; /* "" when gpg.conf names none */
};

struct keyring_watch;
typedef void (*keyring_watch_fn)(struct keyring_watch *w, struct keyring_result *res,
                                 void *userdata);

/*
 * Watches gnupghome and refreshes as soon as the loop runs and after every change (debounced 200
 * ms). Results come to fn on the loop thread. A failed refresh is retried after 1 s, doubling up to
 * 5 min; there are no other wake-ups. A listing that takes longer than 60 s is cancelled
 * (-ETIMEDOUT).
 */
int keyring_watch_new(sd_event *e, const char *gnupghome, const char *const *track, size_t n_track,
                      keyring_watch_fn fn, void *userdata, struct keyring_watch **ret);
/* Cancels a running listing and waits for its thread. */
struct keyring_watch *keyring_watch_free(struct keyring_watch *w);
static inline void keyring_watch_freep(struct keyring_watch **w)
{
	if (*w)
		keyring_watch_free(*w);
}
/* Refreshes now (or right after the running listing). */
int keyring_watch_refresh(struct keyring_watch *w);
/* Replaces the tracked fingerprints (configuration reload); takes effect with the next listing. */
int keyring_watch_set_track(struct keyring_watch *w, const char *const *track, size_t n_track);
/* For tests: another gpg binary, another listing timeout. Apply before the loop runs. */
int keyring_watch_set_gpg_path(struct keyring_watch *w, const char *gpg_path);
void keyring_watch_set_timeout(struct keyring_watch *w, uint64_t usec);
