/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches GNUPGHOME and lists the keys again (keyring-list.c) on a worker thread after each
 * change, posting the result to the sd-event loop; retries a bounded number of times with backoff
 * when gpg fails.
 *
 * Does not: list keys itself, decide levels and findings, or log.
 */
#pragma once

#include <systemd/sd-event.h>

#include "git-config.h"
#include "keyring-list.h"
#include "keyring-owned.h"

#define KEYRING_DEBOUNCE_USEC (200u * 1000u)
#define KEYRING_RETRY_MIN_USEC (1000u * 1000u)
#define KEYRING_RETRY_MAX_USEC (300ull * 1000u * 1000u)
/* 1, 2, 4 ... 256, 300 s: then only a change in GNUPGHOME or a Reload lists again. */
#define KEYRING_RETRY_ATTEMPTS 10u
#define KEYRING_LIST_TIMEOUT_USEC (60ull * 1000u * 1000u)
/* The scan for keys own keys certified reads every signature in the keyring (0.6 s at 10,000
 * keys): after a change, at most once in this long. */
#define KEYRING_CERTIFIED_INTERVAL_USEC (10ull * 60u * 1000u * 1000u)
/* The first scan waits this long after the first listing (or the interval, when shorter). */
#define KEYRING_CERTIFIED_FIRST_USEC (60ull * 1000u * 1000u)

/* One refresh's outcome. The callback may take keys (set it to NULL); the rest is freed after. */
struct keyring_result {
	int error; /* 0 or -errno */
	char reason[ERROR_TEXT_MAX];
	struct key *keys;
	size_t n_keys;
	char default_key[KEYRING_DEFAULT_KEY_MAX]; /* "" when gpg.conf names none */
	char git_signing_key[GIT_SIGNING_KEY_MAX]; /* "" when git signs with no OpenPGP key */
	enum keyring_way way; /* how keyring_list_owned() went */
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
/* Refreshes now (or right after the running listing), the short way when it can. */
int keyring_watch_refresh(struct keyring_watch *w);
/* The same, listing every secret key again (Reload(full: true)). */
int keyring_watch_refresh_full(struct keyring_watch *w);
/* The listing that serves every refresh asked so far (a number for keyring_watch_listed()), and
 * whether its outcome has been given to the callback (a failure and the watchdog's timeout
 * count: what there is to know of it is known). */
uint64_t keyring_watch_asked(const struct keyring_watch *w);
bool keyring_watch_listed(const struct keyring_watch *w, uint64_t seq);
/* Where the owned keys (keyring-owned.h) are kept across restarts; "" or NULL: nowhere. Apply
 * before the loop runs. */
int keyring_watch_set_owned_path(struct keyring_watch *w, const char *path);
/* Replaces the tracked fingerprints (configuration reload); takes effect with the next listing. */
int keyring_watch_set_track(struct keyring_watch *w, const char *const *track, size_t n_track);
/* Whether the listings add the keys with full or ultimate owner trust, and the keys an own key
 * certified, as relied on (struct key's relied_on); applies from the next listing. The certified
 * keys come from a scan after a listing (keyring-certified.c), then listed again: a minute after
 * the first listing, and after a change of the public keys at most once per interval (tests
 * shorten both: the first wait is the interval when that is shorter). */
void keyring_watch_set_relied_trusted(struct keyring_watch *w, bool on);
void keyring_watch_set_certified_interval(struct keyring_watch *w, uint64_t usec);
/* For tests: another gpg binary, another listing timeout. Apply before the loop runs. */
int keyring_watch_set_gpg_path(struct keyring_watch *w, const char *gpg_path);
void keyring_watch_set_timeout(struct keyring_watch *w, uint64_t usec);
