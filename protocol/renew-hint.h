/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The command that renews a (sub)key, as the daemon's findings and the notifier's popups both
 * say it: it must run where the user reads it, or say where it runs.
 *
 * Does not: decide whether a key needs renewing (expiry-math.c, the daemon's audit).
 */
#pragma once

#include <stddef.h>

#include "types.h"

/* Into buf: `gpg --refresh-keys FPR` for a key that is not the user's (no secret part here:
 * only its owner can renew it, ours is to fetch what they published); else `gpg
 * --quick-set-expire FPR PERIOD [SUBFPR]`, preceded by where it runs when the primary secret is
 * offline (sec#: gpg here would answer "No secret key"). */
void renew_hint(const struct key *k, const struct subkey *s, const char *period, char *buf,
                size_t size);
