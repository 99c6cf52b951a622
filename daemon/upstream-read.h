/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A published key's bytes (what dirmngr fetched) read into a struct key without importing them:
 * gpg lists them from data (--import-options show-only --dry-run) in a throwaway GNUPGHOME, so
 * that the user's keyring is never opened, let alone written.
 *
 * Does not: fetch, compare, or log.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Keys in one answer looked at before giving up: a keyserver answers one key per fingerprint. */
#define UPSTREAM_READ_KEYS_MAX 16

/*
 * Reads the key with fingerprint fpr out of the n bytes at p (armored or binary OpenPGP). Blocking
 * (runs gpg); call on a worker thread. On success *ret holds the key (free with key_done()).
 * Returns 0, -EBADMSG when the bytes hold no key, -EXDEV when they hold keys but not fpr, -ENOENT
 * when gpg is missing, -EIO otherwise; err says which.
 */
int upstream_read_key(const uint8_t *p, size_t n, const char *fpr, struct key *ret, char *err,
                      size_t errsize);
