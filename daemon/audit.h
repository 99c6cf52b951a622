/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Key hygiene: ties subkeys to the tokens that hold them (audit_match) and derives findings from
 * tokens, keys, configuration and `now` (audit_run). Pure: no I/O, no clock, no logging, and no
 * action ever taken; a finding's hint says what the user could run.
 *
 * Rule ids (stable, they cross the wire): subkey-expiring, subkey-expired-no-replacement,
 * replacement-not-on-card, subkey-no-expiry, subkey-expiry-too-far, primary-secret-on-disk,
 * subkey-secret-on-disk, revoked-key-on-card, expired-key-on-card, revoked-default-key,
 * default-key-expired, default-key-missing, pin-retries-low, admin-pin-retries-low,
 * touch-off-signing, card-slot-unknown-key, backup-token, card-not-seen, counter-went-down,
 * scdaemon-ccid-conflict, git-signing-key-unusable, card-key-no-stub, key-revoked-upstream,
 * key-stale-upstream, key-roca-weak, token-advisory, piv-cert-expiring, piv-cert-expired,
 * piv-chuid-expiring; of the daemon itself: pcsc-refused, daemon-starting.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "types.h"
#include "upstream-compare.h"

struct advisory;

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

/* What a signing key spec (gpg.conf's default-key, git's user.signingkey) comes to. */
enum audit_sign_state {
	AUDIT_SIGN_USABLE,
	AUDIT_SIGN_UNKNOWN, /* no key here matches */
	AUDIT_SIGN_CANNOT_SIGN, /* the key has no subkey that can sign */
	AUDIT_SIGN_REVOKED,
	AUDIT_SIGN_EXPIRED,
	AUDIT_SIGN_NO_SECRET, /* neither on disk nor a card stub */
	AUDIT_SIGN_MAX,
};

struct audit_signing {
	enum audit_sign_state state;
	const struct key *key; /* the matching key; NULL when UNKNOWN */
	/* USABLE: the subkey gpg signs with; otherwise the newest that would have been. */
	const struct subkey *subkey;
};

/* Resolves spec as gpg does for signing: a fingerprint or key id naming that (sub)key with a
 * trailing '!', else the newest usable signing subkey (the primary key last) of the key it
 * names; a part of a user id names every key it matches, the first usable one wins. */
void audit_resolve_signing(const struct key *keys, size_t n_keys, const char *spec,
                           struct audit_signing *ret);

/* The default-key gpg uses among values (gpg.conf's, one a line, in the file's order): the last
 * one that names a key with a usable secret part here (not revoked, expired or disabled), as gpg
 * does; the last one when none does (gpg then ignores them all). Into buf, which it returns. */
const char *audit_default_key(const struct key *keys, size_t n_keys, const char *values, char *buf,
                              size_t size);

/* What the rules need of the daemon besides tokens, keys and configuration. */
struct audit_daemon {
	/* gpg.conf's default-key values, one a line, or NULL */
	const char *default_key;
	/* What git hands gpg --local-user (git-config.h): user.signingkey, or without it the
	 * committer identity when commit.gpgSign or tag.gpgSign is on; NULL when none */
	const char *git_signing_key;
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
	/* The vendors' advisories (advisory-table.h) the token-advisory rule applies; NULL: the
	 * built-in table. */
	const struct advisory *advisories;
	size_t n_advisories;
};

/* The earlier of next (0: none) and the next moment a PIV finding of a token changes (a
 * certificate or the CHUID crossing an [expiry] threshold or expiring): the expiry timer wakes
 * then, as for a subkey. */
int64_t audit_piv_next_change(const struct token *tokens, size_t n_tokens, const struct config *cfg,
                              int64_t now, int64_t next);

/* Runs every rule. keys should have levels (expiry_apply) and token_ids (audit_match) set.
 * daemon NULL: keys listed, nothing else known. *ret is a malloc'd array (NULL when n is 0);
 * at most FINDINGS_MAX findings. Returns 0 or -ENOMEM. */
int audit_run(const struct token *tokens, size_t n_tokens, const struct key *keys, size_t n_keys,
              const struct config *cfg, const struct audit_daemon *daemon, int64_t now,
              struct finding **ret, size_t *ret_n);
