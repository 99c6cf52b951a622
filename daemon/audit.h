/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Key hygiene: ties subkeys to the tokens that hold them (audit_match) and derives findings from
 * tokens, keys, configuration and `now` (audit_run). Pure: no I/O, no clock, no logging, and no
 * action ever taken; a finding's hint says what the user could run.
 *
 * Rule ids (stable, they cross the wire): subkey-expiring, subkey-expired-no-replacement,
 * subkey-no-expiry, subkey-expiry-too-far, primary-secret-on-disk, subkey-secret-on-disk,
 * revoked-key-on-card, expired-key-on-card, revoked-default-key, pin-retries-low,
 * admin-pin-retries-low, touch-off-signing, card-slot-unknown-key, backup-token, card-not-seen,
 * counter-went-down, scdaemon-ccid-conflict, key-revoked-upstream, key-stale-upstream; of the
 * daemon itself: pcsc-refused, daemon-starting.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "types.h"
#include "upstream-compare.h"

/*
 * Sets each subkey's token_id: the token whose card slot holds the subkey's fingerprint (a token
 * whose serial also matches the stub wins, then a present one), else the token whose OpenPGP
 * serial equals the stub's card serial; "" when none.
 */
void audit_match(const struct token *tokens, size_t n_tokens, struct key *keys, size_t n_keys);

/* True when a stub's card serial (gpg's card number: the full AID "D276000124010304000612345678
 * 0000", or a bare serial) names this card. */
bool audit_card_serial_matches(const char *card_serial, const struct openpgp_card *c);
/* A stub's card serial as people read it: the serial inside a full AID (buf), else as it is. */
const char *audit_serial_of(const char *card_serial, char buf[static 9]);
/* True when one of the token's card slots holds fpr. */
bool audit_token_holds(const struct token *t, const char *fpr);

/* True when gpg.conf's default-key value (fingerprint, key id with or without 0x, or a part of the
 * user id such as an address) names this key. */
bool audit_key_matches_spec(const struct key *k, const char *spec);

/* What the rules need of the daemon besides tokens, keys and configuration. */
struct audit_daemon {
	const char *default_key; /* gpg.conf's default-key, or NULL */
	/* False until the first keyring listing has ended: a card slot is then judged against
	 * no keys at all, and "in none of the keys keyctl knows" would be a false alarm. */
	bool keys_listed;
	const char *pcsc_refused; /* why pcscd does not let us in, or NULL */
	/* scdaemon uses its own CCID driver alone (GnuPG >= 2.4, no disable-ccid): a token's
	 * gpg_error is then that conflict. */
	bool scd_ccid_on;
	const char *gnupghome; /* for hints that name a file in it; NULL: "your GnuPG home" */
	const char *starting; /* what the start still waits for after its bound, or NULL */
	/* The last upstream check of each key (watch-upstream.c); failures and keys not
	 * published raise nothing. */
	const struct upstream_result *upstream;
	size_t n_upstream;
};

/* Runs every rule. keys should have levels (expiry_apply) and token_ids (audit_match) set.
 * daemon NULL: keys listed, nothing else known. *ret is a malloc'd array (NULL when n is 0);
 * at most FINDINGS_MAX findings. Returns 0 or -ENOMEM. */
int audit_run(const struct token *tokens, size_t n_tokens, const struct key *keys, size_t n_keys,
              const struct config *cfg, const struct audit_daemon *daemon, int64_t now,
              struct finding **ret, size_t *ret_n);
