/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the OpenPGP card through scdaemon (via gpg-agent's Assuan socket) when the card is held
 * by scdaemon and our own PC/SC read cannot or should not run. Only SERIALNO, APDU (GET DATA
 * and GET RESPONSE) and GETATTR are sent: nothing here can ask for a PIN (no PKSIGN, PKDECRYPT,
 * CHECKPIN, LEARN --force).
 *
 * Does not: talk PC/SC, touch the keyring, or log (callers do).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* How long one scd_read_card() may take in total before it gives up with -ETIMEDOUT. */
#define SCD_TIMEOUT_MS 10000
/* How long scd_agent_running() waits for gpgconf to name the agent's socket. */
#define SCD_PROBE_TIMEOUT_MS 3000
/* Longest status line we accept from the agent (Assuan's own line limit is 1000). */
#define SCD_LINE_MAX 1000

/*
 * Reads the card scdaemon currently has (SCD SERIALNO openpgp, then GETATTR of the fields keyctl
 * shows) into *ret (zeroed first). gnupghome NULL or "" means GnuPG's default. Starts gpg-agent
 * (gpgconf --launch gpg-agent) when it is not running. Returns 0; -ENOENT no OpenPGP card in
 * scdaemon's reader; -ETIMEDOUT; -EHOSTDOWN agent unreachable; -EIO other. err gets a sentence.
 */
int scd_read_card(const char *gnupghome, struct openpgp_card *ret, char *err, size_t errsize);

/*
 * Whether scdaemon reaches a card at all: SCD SERIALNO openpgp alone (starting gpg-agent as
 * scd_read_card() does). Returns 0 when it names a card; -ENODEV when scdaemon finds none (card
 * not present, no such device); -ETIMEDOUT, -EHOSTDOWN, -EIO when the question went unanswered.
 * err gets scdaemon's words.
 */
int scd_card_reachable(const char *gnupghome, char *err, size_t errsize);

/*
 * 1 when gnupghome's scdaemon uses its own CCID driver alone: GnuPG >= 2.4 (which no longer falls
 * back to PC/SC when that driver finds nothing, Debian #1102717) and neither the system's nor the
 * home's scdaemon.conf says disable-ccid. 0 when not; -errno when a file cannot be read.
 */
int scd_ccid_driver_on(const char *gnupghome);

/* True when gpg-agent's socket for gnupghome accepts connections (does not start the agent).
 * False too when finding the socket takes over SCD_PROBE_TIMEOUT_MS. */
bool scd_agent_running(const char *gnupghome);

/*
 * Pure parser of one Assuan status line's keyword and arguments as scdaemon sends them for
 * SERIALNO/GETATTR ("KEY-FPR 1 3C7E...", "CHV-STATUS +1+127+127+127+3+0+3", percent-plus
 * escaped), merged into *c. Unknown keywords are ignored (returns 0). Returns 0, -EBADMSG on a
 * malformed value, -EMSGSIZE when a value exceeds its field.
 */
int scd_parse_status(const uint8_t *p, size_t n, struct openpgp_card *c);
