/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which of a key's user ids may be shown, and how one too long for struct key is shown: cut at a
 * character boundary with an ellipsis, never dropped (issue 31: a key whose only user id was
 * 1,994 characters long was listed as "(no user id)"). Pure: gpgme's strings in, text out.
 * Does not: choose among a key's user ids (keyring-list.c does), or read GnuPG.
 */
#pragma once

#include <stdbool.h>

#include "types.h"

/* The bytes of a user id kept when it does not fit in UID_MAX: room for "…" (3 bytes) and the
 * NUL. */
#define KEYRING_UID_CUT (UID_MAX - 4)

/* True when s is valid UTF-8 without control characters (C0, DEL, C1), whatever its length: the
 * test a user id must pass to be shown. */
bool keyring_uid_acceptable(const char *s);

/* An acceptable user id into buf: whole when shorter than UID_MAX bytes, else its first
 * KEYRING_UID_CUT bytes or fewer, ending where a character ends, then "…". */
void keyring_uid_show(const char *s, char buf[UID_MAX]);
