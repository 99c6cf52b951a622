/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The data model that crosses the wire: tokens, keys, findings and the daemon's own state. The
 * daemon's model holds these structs and the clients decode into them, so that both sides share
 * one definition (io.keyctl.varlink is its textual twin). Plain data only: fixed-size strings,
 * so a struct can be copied and compared with memcpy/memcmp; the one variable part (a key's
 * subkeys) is a counted array owned by the key. Every instance starts zeroed (calloc or memset)
 * and is copied with memcpy, so that padding and the bytes after a string's NUL compare equal.
 *
 * Does not: know JSON (codec*.c), sockets (varlink.c) or any device.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

enum token_kind {
	TOKEN_KIND_UNKNOWN,
	TOKEN_KIND_YUBIKEY,
	TOKEN_KIND_NITROKEY,
	TOKEN_KIND_OPENPGP_CARD,
	TOKEN_KIND_MAX,
};

/* How the OpenPGP data of a token was obtained. */
enum read_path {
	READ_PATH_NONE,
	READ_PATH_PCSC, /* our own shared-mode read */
	READ_PATH_SCDAEMON, /* asked scdaemon through gpg-agent, the card being held exclusively */
	READ_PATH_MAX,
};

/* OpenPGP card key slots, in the card's order (OpenPGP card 3.4, 4.4.3.7). */
enum key_slot {
	SLOT_SIGN,
	SLOT_ENCRYPT,
	SLOT_AUTH,
	SLOT_MAX,
};

/* User interaction flag (touch policy), OpenPGP card 3.4, 4.4.3.6 (DO D6-D8). */
enum touch_policy {
	TOUCH_UNKNOWN, /* DO absent: the card has no button */
	TOUCH_OFF,
	TOUCH_ON,
	TOUCH_FIXED,
	TOUCH_CACHED,
	TOUCH_CACHED_FIXED,
	TOUCH_MAX,
};

/* Ordered: a higher level is worse, so levels compare with < and max(). */
enum level {
	LEVEL_OK,
	LEVEL_NOTICE,
	LEVEL_WARNING,
	LEVEL_CRITICAL,
	LEVEL_EXPIRED,
	LEVEL_MAX,
};

/* Where the secret part of a (sub)key lives, as far as this machine can tell. */
enum secret_location {
	SECRET_NONE, /* public only, or `sec#`/`ssb#`: the secret is elsewhere */
	SECRET_DISK, /* a real secret key in private-keys-v1.d */
	SECRET_CARD, /* a stub that points at a card serial */
	SECRET_MAX,
};

#define CAP_SIGN 0x1u
#define CAP_ENCRYPT 0x2u
#define CAP_AUTH 0x4u
#define CAP_CERTIFY 0x8u

#define USB_IFACE_OTP 0x1u
#define USB_IFACE_FIDO 0x2u
#define USB_IFACE_CCID 0x4u

/* Hex fingerprint: 40 digits for v4 keys, 64 for v5; plus NUL. */
#define FPR_HEX_MAX 65
#define TOKEN_ID_MAX 64
#define SERIAL_MAX 33
#define READER_NAME_MAX 128 /* pcsc-lite's MAX_READERNAME */
#define ERROR_TEXT_MAX 160
#define UID_MAX 256 /* a longer user id: its first 252 bytes or fewer and "…" (keyring-uid.h) */
#define URL_MAX 256
#define CARDHOLDER_MAX 64
#define ALGO_NAME_MAX 24
#define SUBKEYS_MAX 64
#define FINDING_TEXT_MAX 512
#define RULE_ID_MAX 40
#define TOKENS_MAX 64
#define KEYS_MAX 4096
#define FINDINGS_MAX 1024
#define THRESHOLDS_MAX 16
/* A finding's id (finding_id()): "<rule>:<fingerprint>@<token>" at the longest, and its NUL. */
#define FINDING_ID_MAX 192
#define ACKS_MAX 256 /* acknowledged findings the daemon remembers */
#define TOUCH_SLOT_MAX 8 /* "sig", "dec", "aut", a PIV slot "9c"; and the NUL */
#define REQUESTER_MAX 32 /* a program's name (comm is 15 bytes) or "a remote host" */

struct card_slot {
	char fingerprint[FPR_HEX_MAX]; /* upper-case hex; "" when the slot is empty */
	int64_t created; /* epoch seconds; 0 when unset */
	char algorithm[ALGO_NAME_MAX]; /* "rsa2048", "ed25519", "cv25519", "nistp256", ... */
	enum touch_policy touch;
};

struct openpgp_card {
	char aid[33]; /* the full application identifier, hex */
	char version[8]; /* spec version, "3.4" */
	uint16_t manufacturer_id;
	char manufacturer[32]; /* "Yubico", "Nitrokey", ... */
	char serial[SERIAL_MAX]; /* 8 hex digits, as GnuPG prints them */
	char firmware[16]; /* Yubico's GET VERSION, "5.4.3"; "" elsewhere */
	struct card_slot slots[SLOT_MAX];
	uint32_t signature_counter;
	uint8_t pin_retries[3]; /* PW1, RC, PW3 */
	char url[URL_MAX];
	char cardholder[CARDHOLDER_MAX];
	/* Fingerprint slots in C5: 3, or 4 where the card has an attestation key (YubiKey >= 5.2);
	 * 0 when C5 could not be read. */
	uint8_t key_slots;
	/* What could not be read, and which data object ("C5: 50 bytes, not 3 or 4
	 * fingerprints"); "" when everything was read. The rest of the struct is still valid. */
	char error[ERROR_TEXT_MAX];
};

#define PIV_CERTS_MAX 24 /* 9A, 9C, 9D, 9E and the retired 82-95 */
#define PIV_NAME_MAX 128 /* a subject or issuer as RFC 4514 text, cut with an ellipsis */

/* How the PIV application of a token was read (doc/piv.md). */
enum piv_read {
	PIV_READ_NONE, /* no PIV application, or not asked */
	PIV_READ_OK,
	PIV_READ_IN_USE, /* another program held the card: "PIV not read: the card is in use" */
	PIV_READ_ERROR, /* the application answered what could not be read: error says what */
	PIV_READ_MAX,
};

/* One certificate of a PIV slot (NIST SP 800-73-4), as GnuTLS parsed it. */
struct piv_cert {
	char slot[3]; /* two lower-case hex digits: "9a", "82" */
	char subject[PIV_NAME_MAX], issuer[PIV_NAME_MAX]; /* RFC 4514 */
	int64_t not_before, not_after; /* epoch seconds; 0 when unreadable */
	bool self_signed; /* issuer equals subject and its own key verifies the signature */
	char key_algorithm[ALGO_NAME_MAX]; /* "rsa2048", "nistp256", "nistp384", "ed25519" ... */
	/* Why this slot's certificate could not be read ("not a certificate: ..."); "" when fine:
	 * the other fields are then unset. */
	char error[ERROR_TEXT_MAX];
};

/* What a token's PIV application says, read without a PIN (doc/piv.md). */
struct piv_app {
	enum piv_read state;
	int64_t chuid_expiry; /* the CHUID's expiration date (tag 35), 0 when none */
	char error[ERROR_TEXT_MAX]; /* what could not be read of the application; "" when fine */
	uint8_t n_certs; /* the slots holding a certificate, in the order read */
	struct piv_cert certs[PIV_CERTS_MAX];
};

/* Which application of a token waits for a touch (doc/touch.md). */
enum touch_app {
	TOUCH_APP_OPENPGP,
	TOUCH_APP_FIDO,
	TOUCH_APP_PIV,
	TOUCH_APP_OTP,
	TOUCH_APP_MAX,
};

/* How a wait for a touch ended (the touch-done event). */
enum touch_end {
	TOUCH_END_TOUCHED, /* the token answered: touched, or the operation ended otherwise */
	TOUCH_END_TIMEOUT, /* the token gave up waiting, or its client did */
	TOUCH_END_REMOVED, /* the token was unplugged while it waited */
	TOUCH_END_MAX,
};

/* A token waiting for a touch: set by a detector (model_touch_set()), never remembered across
 * restarts. touch_pending_check() says which values are allowed. */
struct touch_pending {
	enum touch_app application;
	/* OpenPGP: "sig", "dec" or "aut" (GnuPG's key refs); PIV: the slot in two lower-case hex
	 * digits ("9c"); FIDO and OTP: "". */
	char slot[TOUCH_SLOT_MAX];
	int64_t since; /* epoch seconds when the wait began */
	/* The microseconds within that second, 0..999999: latency is measured in milliseconds
	 * (tools/bench), and "since" alone is a second wide. */
	uint32_t since_usec;
	/* The program most likely behind it ("git", "gpg", "ssh", "firefox"): printable ASCII,
	 * "" when unknown. Shown as "likely git": it is a guess. */
	char requester[REQUESTER_MAX];
};

struct token {
	char id[TOKEN_ID_MAX]; /* stable: "yubikey-12345678", "openpgp-000F0A1B2C3D", ... */
	enum token_kind kind;
	char model[64]; /* "YubiKey 5 NFC" */
	char serial[SERIAL_MAX]; /* the device's serial as its maker prints it */
	char firmware[16];
	unsigned usb_interfaces; /* USB_IFACE_* */
	uint16_t usb_vendor, usb_product;
	char reader[READER_NAME_MAX]; /* PC/SC reader; "" when none */
	bool present;
	int64_t first_seen, last_seen; /* epoch seconds */
	bool has_openpgp;
	struct openpgp_card openpgp;
	enum read_path read_path;
	bool counter_went_down; /* signature counter lower than last seen for this serial */
	/* The card's serial is one many cards share (00000000 on unpersonalised cards, or a
	 * test-card manufacturer id): the id then names the reader too, so two such cards stay
	 * two tokens. */
	bool serial_shared;
	char error[ERROR_TEXT_MAX]; /* why the token could not be read fully; "" when fine */
	/* Daemon-side, not on the wire: why scdaemon finds no card where we read one over PC/SC
	 * (the scdaemon-ccid-conflict rule); "" when it does or was not asked. */
	char gpg_error[ERROR_TEXT_MAX];
	/* Waits for a touch now (only while present); touch says what for, zeroed otherwise. */
	bool touch_waiting;
	struct touch_pending touch;
	/* The PIV application: read at insertion only (never while another program uses the card),
	 * kept across sightings until read again. */
	struct piv_app piv;
};

struct subkey {
	char fingerprint[FPR_HEX_MAX];
	char keygrip[41];
	char algorithm[ALGO_NAME_MAX];
	unsigned capabilities; /* CAP_* */
	bool is_primary;
	int64_t created;
	int64_t expires; /* 0: never */
	bool revoked, expired, disabled;
	enum secret_location secret;
	char card_serial[SERIAL_MAX]; /* the stub's card serial when secret == SECRET_CARD */
	char token_id[TOKEN_ID_MAX]; /* the token that holds it; "" when none is known */
	/* What counts (expiry.c decides): its expiry level, lowered to ok when it is superseded
	 * (revoked, replaced, its key retired) and to at most warning when its replacement is not
	 * yet on the card that holds it. */
	enum level level;
	bool git_signs; /* git's user.signingkey resolves to it, and it can sign */
	/* The newer usable subkey of the same use on the same key that takes over from it; "" when
	 * none. */
	char replaced_by[FPR_HEX_MAX];
	/* The user acknowledged the finding about its expiry (subkey-expiring and the like): level
	 * is ok while that finding stays at or below the acknowledged level. */
	bool acked;
	/* Daemon-side, not on the wire: the level the ack lowered to ok (set when acked), which the
	 * finding keeps showing so that the ack is weighed against it. */
	enum level acked_level;
	/* Daemon-side, not on the wire: the token that holds it (token_id) is plugged in now
	 * (audit_match()). */
	bool token_present;
	/* Daemon-side, not on the wire: its level by the clock alone, before what counts lowered
	 * it. The audit's "has it expired" reads this one. */
	enum level expiry_level;
	/* Daemon-side, not on the wire: an RSA (sub)key whose modulus has the ROCA structure
	 * (roca.h, tested on the listing's thread: keyring-roca.c); the key-roca-weak finding. */
	bool roca_weak;
};

struct key {
	char fingerprint[FPR_HEX_MAX]; /* the primary key's */
	char uid[UID_MAX]; /* primary user id */
	bool revoked, expired, disabled;
	bool has_secret; /* any secret part here: on disk, on a card, or `sec#` with secret subkeys
	                  */
	bool tracked; /* named in the configuration */
	bool relied_on; /* another's key with full or ultimate owner trust, or certified by an own
	                   key */
	bool retired; /* named in keyctl.conf's [keyring] retired: shown, never counted */
	/* Its last upstream check: when (0: never), and why it brought no copy ("" when it did). */
	int64_t upstream_checked;
	char upstream_error[ERROR_TEXT_MAX];
	enum level level; /* worst level of its subkeys that count (ok when retired) */
	size_t n_subkeys;
	struct subkey *subkeys; /* subkeys[0] is the primary key */
};

struct finding {
	char rule[RULE_ID_MAX]; /* stable rule id, "subkey-expiring" */
	enum level level;
	char message[FINDING_TEXT_MAX];
	char key[FPR_HEX_MAX]; /* the key it names; "" when none */
	char subkey[FPR_HEX_MAX]; /* the subkey it names; "" when none */
	char token[TOKEN_ID_MAX]; /* the token it names; "" when none */
	char hint[FINDING_TEXT_MAX]; /* what to do: a command line or a sentence; "" when none */
	/* Acknowledged by the user (keyctl-status --ack): level is then ok, the finding shown as
	 * information only. */
	bool acked;
};

/* Varlink errors of Ack and Unack. */
#define KEYCTL_ERROR_NO_SUCH_FINDING "io.keyctl.NoSuchFinding"
#define KEYCTL_ERROR_TOO_MANY_ACKS "io.keyctl.TooManyAcks"

/* A finding's id, what keyctl-status --ack takes: its rule, then ":" and the fingerprint of the
 * subkey (else of the key) it names, then "@" and the token it names when it names no subkey
 * (a subkey's finding learns its token when the card is read: still the same finding). */
static inline void finding_id(const struct finding *f, char *buf, size_t size)
{
	const char *fpr = !isempty(f->subkey) ? f->subkey : f->key;
	const char *token = isempty(f->subkey) ? f->token : "";

	(void)snprintf(buf, size, "%s%s%s%s%s", f->rule, isempty(fpr) ? "" : ":", fpr,
	               isempty(token) ? "" : "@", token);
}

struct daemon_info {
	char version[32];
	int64_t started; /* epoch seconds */
	int64_t now;
	bool pcsc_available;
	char pcsc_error[ERROR_TEXT_MAX]; /* why pcscd refuses us; "" when it does not */
	char gnupghome[PATH_MAX]; /* whole: a path is never cut */
	bool keyring_stale;
	char keyring_error[ERROR_TEXT_MAX];
	int64_t keyring_refreshed; /* epoch seconds of the last good listing; 0 never */
	int64_t next_deadline; /* next threshold crossing; 0 none */
	/* The expiry policy in force, so that clients announce the same crossings. */
	unsigned n_thresholds;
	unsigned thresholds[THRESHOLDS_MAX]; /* days, strictly descending */
	unsigned warning_days, critical_days;
	char renewal_url[URL_MAX];
	/* The last upstream check (CheckUpstream): when it ended (0 never), and what it could not
	 * do ("" when it did all). */
	int64_t upstream_checked;
	char upstream_error[ERROR_TEXT_MAX];
};

const char *token_kind_to_string(enum token_kind k);
/* For people: "YubiKey", "Nitrokey", "OpenPGP card", "Token". */
const char *token_kind_display(enum token_kind k);
/* "YubiKey 5 NFC #12345678": the model its maker prints (else the kind) and the serial on its
 * back (else the card's); no "#" part when neither is known. */
void token_display_name(const struct token *t, char *buf, size_t size);
int token_kind_from_string(const char *s); /* enum value or -EINVAL */
const char *read_path_to_string(enum read_path p);
int read_path_from_string(const char *s);
const char *key_slot_to_string(enum key_slot s);
int key_slot_from_string(const char *s);
const char *touch_policy_to_string(enum touch_policy t);
int touch_policy_from_string(const char *s);
const char *level_to_string(enum level l);
int level_from_string(const char *s);
const char *secret_location_to_string(enum secret_location s);
int secret_location_from_string(const char *s);
const char *touch_app_to_string(enum touch_app a); /* "openpgp", "fido", "piv", "otp" */
int touch_app_from_string(const char *s);
const char *touch_end_to_string(enum touch_end e); /* "touched", "timeout", "removed" */
int touch_end_from_string(const char *s);
const char *piv_read_to_string(enum piv_read p); /* "none", "read", "in-use", "error" */
int piv_read_from_string(const char *s);

/* 0 when tp holds only allowed values (a known application, a slot of that application's
 * form, since > 0, since_usec < 1000000, a printable ASCII requester), else -EINVAL. The codec
 * refuses what fails it, and so does the model. */
int touch_pending_check(const struct touch_pending *tp);
/* For people, as both clients word it: "signing key; likely git", "FIDO", "PIV slot 9c". */
void touch_pending_describe(const struct touch_pending *tp, char *buf, size_t size);

/* Listed only because the user relies on it (relied_on): someone else's key, neither own nor
 * tracked. Only its revocation is the user's business: no expiry finding, popup or exit code is
 * about it, since only its owner can renew it. */
static inline bool key_relied_only(const struct key *k)
{
	return k->relied_on && !k->has_secret && !k->tracked;
}

/* Shown as information but not counted: a revoked subkey, one replaced by a newer subkey
 * (unless the daemon still counts it: its replacement is not on its card yet), any subkey of a
 * retired key. The daemon has already lowered its level; this tells the outputs to say why. */
static inline bool subkey_superseded(const struct key *k, const struct subkey *s)
{
	return k->retired || s->revoked ||
	       (!isempty(s->replaced_by) && s->level == LEVEL_OK && !s->acked);
}

/* Deep copy of a key (its subkeys array). Returns 0 or -ENOMEM. */
int key_copy(const struct key *src, struct key *ret);
/* Frees what a key owns, not the key itself. */
void key_done(struct key *k);
bool key_equal(const struct key *a, const struct key *b);
