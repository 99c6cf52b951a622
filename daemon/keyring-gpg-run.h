/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One gpg run with colon output over the user's home, its output handed over as it comes (the
 * readers in keyring-certified.c and keyring-roca.c parse it chunk by chunk, never whole):
 * gpg --batch --no-tty --with-colons --trust-model=always (never a trustdb check, which would
 * write trustdb.gpg) and the caller's arguments, through gpgme's spawn engine, cancellable from
 * another thread like a listing.
 *
 * Does not: parse what gpg prints, or write to the keyring.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct keyring_cancel;

/* What gpg printed, the next size bytes of it; returns size (anything else is an error). */
typedef ssize_t (*keyring_gpg_write_fn)(void *handle, const void *buf, size_t size);

#define KEYRING_GPG_ARGS_MAX 8 /* besides the names */

/*
 * Runs gpg_path (the listing's gpg) in home (NULL: gpg's default) with args (at most
 * KEYRING_GPG_ARGS_MAX) and then names (n_names, may be 0) after the fixed options. cancel may
 * be NULL. Returns 0 once gpg ended, -ECANCELED, -EIO when it could not run, -ENOMEM.
 */
int keyring_gpg_colons(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                       const char *const *args, size_t n_args, const char *const *names,
                       size_t n_names, keyring_gpg_write_fn write, void *handle);
