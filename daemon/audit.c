/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The hygiene audit: matching subkeys to tokens and the rules listed in audit.h. Each rule is a
 * small function that looks at the model's structs and appends findings worded for a person:
 * which key (its user id and long key id), which token ("YubiKey #12345678"), when, and a hint.
 * The identity of a finding is (rule, key, subkey, token), so each rule fills those fields such
 * that two different problems never share one identity.
 *
 * Does not: run anything (hints are text), read the clock, log, or decide expiry levels
 * (expiry.c sets them beforehand).
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "audit.h"
#include "card-openpgp.h"
#include "expiry-math.h"
#include "upstream-compare.h"

struct ctx {
	const struct token *tokens;
	size_t n_tokens;
	const struct key *keys;
	size_t n_keys;
	const struct config *cfg;
	const struct audit_daemon *daemon;
	int64_t now;
	struct finding *f;
	size_t n, allocated;
	int error;
};

static _printf_(3, 4) void textf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	/* Our own words: cutting an overlong uid is acceptable here. */
	va_start(ap, fmt);
	(void)vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

static bool fpr_eq(const char *a, const char *b)
{
	return !isempty(a) && !isempty(b) && strcasecmp(a, b) == 0;
}

/* The long key id: the fingerprint's last 16 digits (v4). */
static const char *key_id(const char *fpr)
{
	size_t n = strlen(fpr);

	return n > 16 ? fpr + n - 16 : fpr;
}

static const char *uid_or_fpr(const struct key *k)
{
	return isempty(k->uid) ? k->fingerprint : k->uid;
}

static const char *subkey_role(const struct subkey *s)
{
	if (s->is_primary)
		return "Primary key";
	if (s->capabilities & CAP_SIGN)
		return "Signing subkey";
	if (s->capabilities & CAP_ENCRYPT)
		return "Encryption subkey";
	if (s->capabilities & CAP_AUTH)
		return "Authentication subkey";
	return "Subkey";
}

static const char *slot_name(enum key_slot s)
{
	static const char *const names[SLOT_MAX] = {
		[SLOT_SIGN] = "signature",
		[SLOT_ENCRYPT] = "encryption",
		[SLOT_AUTH] = "authentication",
	};
	return s < SLOT_MAX ? names[s] : "?";
}

static const struct token *token_by_id(const struct ctx *x, const char *id)
{
	if (isempty(id))
		return NULL;
	for (size_t i = 0; i < x->n_tokens; i++)
		if (streq(x->tokens[i].id, id))
			return &x->tokens[i];
	return NULL;
}

static const char *token_label(const struct token *t, char *buf, size_t size)
{
	const char *serial = !isempty(t->serial) ? t->serial : t->openpgp.serial;
	const char *kind =
	        t->kind == TOKEN_KIND_UNKNOWN ? "OpenPGP card" : token_kind_display(t->kind);

	if (isempty(serial))
		textf(buf, size, "%s %s", kind, t->id);
	else
		textf(buf, size, "%s #%s", kind, serial);
	return buf;
}

/* " on YubiKey #12345678", " on card #12345678" (a stub whose card we never saw), or "". */
static const char *where(const struct ctx *x, const struct subkey *s, char *buf, size_t size)
{
	const struct token *t = token_by_id(x, s->token_id);
	char label[96], serial[9];

	if (t)
		textf(buf, size, " on %s", token_label(t, label, sizeof(label)));
	else if (s->secret == SECRET_CARD && !isempty(s->card_serial))
		textf(buf, size, " on card #%s", audit_serial_of(s->card_serial, serial));
	else
		buf[0] = 0;
	return buf;
}

static struct finding *add(struct ctx *x, const char *rule, enum level level, const struct key *k,
                           const struct subkey *s, const struct token *t)
{
	struct finding *f;

	if (x->error < 0 || x->n >= FINDINGS_MAX)
		return NULL;
	if (x->n == x->allocated) {
		size_t m = x->allocated ? x->allocated * 2 : 16;
		struct finding *nf = reallocarray(x->f, m, sizeof(*nf));

		if (!nf) {
			x->error = -ENOMEM;
			return NULL;
		}
		x->f = nf;
		x->allocated = m;
	}
	/* A subkey's finding names the token that holds it (its message says "on YubiKey #..."),
	 * so that clients can tie the two. */
	if (!t && s && !isempty(s->token_id))
		t = token_by_id(x, s->token_id);
	f = &x->f[x->n++];
	memset(f, 0, sizeof(*f));
	strcpy_trunc(f->rule, sizeof(f->rule), rule);
	f->level = level;
	if (k)
		strcpy_trunc(f->key, sizeof(f->key), k->fingerprint);
	if (s)
		strcpy_trunc(f->subkey, sizeof(f->subkey), s->fingerprint);
	if (t)
		strcpy_trunc(f->token, sizeof(f->token), t->id);
	return f;
}

static void hint_set_expire(const struct key *k, const struct subkey *s, const char *period,
                            char *buf, size_t size)
{
	if (s->is_primary)
		textf(buf, size, "gpg --quick-set-expire %s %s", k->fingerprint, period);
	else
		textf(buf, size, "gpg --quick-set-expire %s %s %s", k->fingerprint, period,
		      s->fingerprint);
}

/* Another non-revoked, unexpired subkey that does at least what s does and lasts longer. With
 * allow_primary, the primary key counts too (it can still sign when the subkey cannot). */
static bool has_successor(const struct key *k, const struct subkey *s, bool allow_primary)
{
	for (size_t i = 0; i < k->n_subkeys; i++) {
		const struct subkey *o = &k->subkeys[i];
		unsigned need = s->capabilities & (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH);

		if (o == s || o->revoked || o->level == LEVEL_EXPIRED)
			continue;
		if (o->is_primary && !allow_primary)
			continue;
		if ((o->capabilities & need) != need || need == 0)
			continue;
		if (o->expires == 0 || (s->expires != 0 && o->expires > s->expires))
			return true;
	}
	return false;
}

static bool key_usable(const struct key *k)
{
	return !k->revoked && k->n_subkeys > 0;
}

static const struct subkey *find_subkey(const struct ctx *x, const char *fpr,
                                        const struct key **ret_key)
{
	for (size_t i = 0; i < x->n_keys; i++)
		for (size_t j = 0; j < x->keys[i].n_subkeys; j++)
			if (fpr_eq(x->keys[i].subkeys[j].fingerprint, fpr)) {
				*ret_key = &x->keys[i];
				return &x->keys[i].subkeys[j];
			}
	return NULL;
}

/*
 * The rules. Each is one function for one rule id, called by audit_run() in the order of the table
 * at the end, with the id from its row: per subkey of a usable key (an expired key's primary
 * alone), per usable key, once over all keys, per token, or once for the daemon.
 */
struct rule;
typedef void (*subkey_rule_fn)(struct ctx *x, const struct rule *r, const struct key *k,
                               const struct subkey *s);
typedef void (*key_rule_fn)(struct ctx *x, const struct rule *r, const struct key *k);
typedef void (*token_rule_fn)(struct ctx *x, const struct rule *r, const struct token *t);
typedef void (*global_rule_fn)(struct ctx *x, const struct rule *r);

struct rule {
	const char *id;
	subkey_rule_fn subkey;
	key_rule_fn key;
	global_rule_fn keys_done; /* after every key, before the tokens */
	token_rule_fn token;
	global_rule_fn daemon; /* last: the daemon's own troubles */
};

/* " on YubiKey #..." where it is known, the relative and the absolute date of s's expiry. */
struct expiry_words {
	char loc[112], rel[EXPIRY_TEXT_MAX], date[16];
};

static void expiry_words(const struct ctx *x, const struct subkey *s, struct expiry_words *w)
{
	where(x, s, w->loc, sizeof(w->loc));
	expiry_format_relative(w->rel, sizeof(w->rel), s->expires, x->now);
	expiry_format_date(w->date, sizeof(w->date), s->expires);
}

static void rule_subkey_expiring(struct ctx *x, const struct rule *r, const struct key *k,
                                 const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;

	if (s->level < LEVEL_NOTICE || s->level > LEVEL_CRITICAL || has_successor(k, s, false))
		return;
	f = add(x, r->id, s->level, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	textf(f->message, sizeof(f->message), "%s 0x%s of %s%s expires %s (%s)", subkey_role(s),
	      key_id(s->fingerprint), uid_or_fpr(k), w.loc, w.rel, w.date);
	hint_set_expire(k, s, "1y", f->hint, sizeof(f->hint));
}

static void rule_subkey_expired_no_replacement(struct ctx *x, const struct rule *r,
                                               const struct key *k, const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;

	if (s->level != LEVEL_EXPIRED || has_successor(k, s, true))
		return;
	f = add(x, r->id, LEVEL_CRITICAL, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	if (s->expires != 0)
		textf(f->message, sizeof(f->message),
		      "%s 0x%s of %s%s %s (%s) and nothing replaces it", subkey_role(s),
		      key_id(s->fingerprint), uid_or_fpr(k), w.loc, w.rel, w.date);
	else
		textf(f->message, sizeof(f->message),
		      "%s 0x%s of %s%s has expired and nothing replaces it", subkey_role(s),
		      key_id(s->fingerprint), uid_or_fpr(k), w.loc);
	hint_set_expire(k, s, "1y", f->hint, sizeof(f->hint));
}

static void rule_subkey_no_expiry(struct ctx *x, const struct rule *r, const struct key *k,
                                  const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;

	if (s->level == LEVEL_EXPIRED || s->expires != 0)
		return;
	f = add(x, r->id, LEVEL_NOTICE, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	textf(f->message, sizeof(f->message),
	      "%s 0x%s of %s%s never expires: an expiry date is the dead man's switch if the "
	      "secret is lost",
	      subkey_role(s), key_id(s->fingerprint), uid_or_fpr(k), w.loc);
	hint_set_expire(k, s, "2y", f->hint, sizeof(f->hint));
}

static void rule_subkey_expiry_too_far(struct ctx *x, const struct rule *r, const struct key *k,
                                       const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;

	if (s->level == LEVEL_EXPIRED || s->expires == 0 || x->cfg->max_validity_days == 0 ||
	    s->expires - x->now <= (int64_t)x->cfg->max_validity_days * SECONDS_PER_DAY)
		return;
	f = add(x, r->id, LEVEL_NOTICE, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	textf(f->message, sizeof(f->message),
	      "%s 0x%s of %s%s expires %s (%s), more than %u days ahead", subkey_role(s),
	      key_id(s->fingerprint), uid_or_fpr(k), w.loc, w.rel, w.date,
	      x->cfg->max_validity_days);
	hint_set_expire(k, s, "1y", f->hint, sizeof(f->hint));
}

static void rule_primary_secret_on_disk(struct ctx *x, const struct rule *r, const struct key *k)
{
	const struct subkey *primary = &k->subkeys[0];
	struct finding *f;

	if (primary->level == LEVEL_EXPIRED || primary->secret != SECRET_DISK)
		return;
	f = add(x, r->id, LEVEL_NOTICE, k, primary, NULL);
	if (!f)
		return;
	textf(f->message, sizeof(f->message),
	      "The secret primary key of %s (0x%s) is on this computer's disk", uid_or_fpr(k),
	      key_id(k->fingerprint));
	textf(f->hint, sizeof(f->hint),
	      "Back it up offline (gpg --armor --export-secret-keys %s), then keep only the "
	      "subkeys here: gpg --delete-secret-keys %s!",
	      k->fingerprint, k->fingerprint);
}

static void rule_subkey_secret_on_disk(struct ctx *x, const struct rule *r, const struct key *k)
{
	struct finding *f;

	if (k->subkeys[0].level == LEVEL_EXPIRED)
		return;
	for (size_t i = 1; i < k->n_subkeys; i++) {
		const struct subkey *s = &k->subkeys[i];

		if (s->revoked || s->level == LEVEL_EXPIRED || s->secret != SECRET_DISK ||
		    !(s->capabilities & (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH)))
			continue;
		f = add(x, r->id, LEVEL_NOTICE, k, s, NULL);
		if (!f)
			continue;
		textf(f->message, sizeof(f->message),
		      "%s 0x%s of %s is on this computer's disk, not on a token", subkey_role(s),
		      key_id(s->fingerprint), uid_or_fpr(k));
		textf(f->hint, sizeof(f->hint),
		      "After an offline backup: gpg --edit-key %s, then \"key %zu\" and "
		      "\"keytocard\"",
		      k->fingerprint, i);
	}
}

static void rule_card_not_seen(struct ctx *x, const struct rule *r, const struct key *k)
{
	const struct token *done[SUBKEYS_MAX];
	size_t n_done = 0;

	for (size_t j = 0; j < k->n_subkeys && n_done < ELEMENTSOF(done); j++) {
		const struct subkey *s = &k->subkeys[j];
		const struct token *t = token_by_id(x, s->token_id);
		char label[96], date[16];
		bool seen = false;
		struct finding *f;

		if (!t || t->present || s->revoked || s->level == LEVEL_EXPIRED)
			continue;
		for (size_t d = 0; d < n_done; d++)
			seen = seen || done[d] == t;
		if (seen || t->last_seen <= 0 ||
		    x->now - t->last_seen <= (int64_t)x->cfg->card_unseen_days * SECONDS_PER_DAY)
			continue;
		done[n_done++] = t;
		f = add(x, r->id, LEVEL_NOTICE, k, NULL, t);
		if (!f)
			continue;
		textf(f->message, sizeof(f->message),
		      "%s, which holds keys of %s, was last seen %" PRId64 " days ago (%s)",
		      token_label(t, label, sizeof(label)), uid_or_fpr(k),
		      (x->now - t->last_seen) / SECONDS_PER_DAY,
		      expiry_format_date(date, sizeof(date), t->last_seen));
		textf(f->hint, sizeof(f->hint),
		      "Check that you still have it; if it is lost, revoke its subkeys: gpg "
		      "--edit-key %s, \"key N\", \"revkey\"",
		      k->fingerprint);
	}
}

static void rule_revoked_default_key(struct ctx *x, const struct rule *r)
{
	const char *default_key = x->daemon->default_key;

	if (isempty(default_key))
		return;
	for (size_t i = 0; i < x->n_keys; i++) {
		const struct key *k = &x->keys[i];
		bool expired =
		        k->expired || (k->n_subkeys > 0 && k->subkeys[0].level == LEVEL_EXPIRED);
		struct finding *f;

		if (!(k->revoked || expired) || !audit_key_matches_spec(k, default_key))
			continue;
		f = add(x, r->id, LEVEL_WARNING, k, NULL, NULL);
		if (!f)
			continue;
		textf(f->message, sizeof(f->message),
		      "gpg.conf names %s (0x%s) as default-key, but that key is %s", uid_or_fpr(k),
		      key_id(k->fingerprint), k->revoked ? "revoked" : "expired");
		textf(f->hint, sizeof(f->hint),
		      "Point default-key in gpg.conf at a valid key, or remove the line");
	}
}

/* The key named fpr among the listed keys, or NULL. */
static const struct key *key_by_fpr(const struct ctx *x, const char *fpr)
{
	for (size_t i = 0; i < x->n_keys; i++)
		if (strcasecmp(x->keys[i].fingerprint, fpr) == 0)
			return &x->keys[i];
	return NULL;
}

/* What the keyserver knows and we do not: a revocation. Critical: the key (or a subkey) is
 * still trusted here for encryption or verification. */
static void rule_key_revoked_upstream(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->daemon->n_upstream; i++) {
		const struct upstream_result *u = &x->daemon->upstream[i];
		const struct key *k = key_by_fpr(x, u->fingerprint);
		char what[64];
		struct finding *f;

		if (u->r < 0 || !upstream_revoked_news(k, &u->published, what, sizeof(what)))
			continue;
		f = add(x, r->id, LEVEL_CRITICAL, k, NULL, NULL);
		if (!f)
			continue;
		strcpy_trunc(f->key, sizeof(f->key), u->fingerprint);
		textf(f->message, sizeof(f->message),
		      "The keyserver's copy of %s%s shows %s revoked; %s",
		      k ? uid_or_fpr(k) : u->fingerprint, u->relied_on ? " (relied on)" : "", what,
		      k ? "your copy does not" : "your keyring has no copy");
		textf(f->hint, sizeof(f->hint), "gpg %s %s", k ? "--refresh-keys" : "--recv-keys",
		      u->fingerprint);
	}
}

/* The mail address in a user id ("Name <a@b.example>" or a bare address), for the WKD hint. */
static bool uid_has_mail(const char *uid)
{
	const char *at = strchr(uid, '@');

	return at && at != uid && at[1] && at[1] != '>';
}

/* What we have and the keyserver does not: only the owner can publish it. */
static void rule_key_stale_upstream(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->daemon->n_upstream; i++) {
		const struct upstream_result *u = &x->daemon->upstream[i];
		const struct key *k = key_by_fpr(x, u->fingerprint);
		char why[160];
		struct finding *f;

		if (u->r < 0 || u->relied_on || !k || !k->has_secret ||
		    !upstream_stale(k, &u->published, why, sizeof(why)))
			continue;
		f = add(x, r->id, LEVEL_WARNING, k, NULL, NULL);
		if (!f)
			continue;
		textf(f->message, sizeof(f->message), "The keyserver's copy of %s is behind: %s",
		      uid_or_fpr(k), why);
		textf(f->hint, sizeof(f->hint), "gpg --send-keys %s%s", k->fingerprint,
		      uid_has_mail(k->uid) ? "; and update your Web Key Directory (gpg-wks-client)"
		                           : "");
	}
}

/* Card rules judge what was read: a token with an error has no trustworthy card data. */
static bool card_read(const struct token *t)
{
	return t->has_openpgp && isempty(t->error);
}

static void rule_counter_went_down(struct ctx *x, const struct rule *r, const struct token *t)
{
	char label[96];
	struct finding *f;

	if (!t->counter_went_down)
		return;
	f = add(x, r->id, LEVEL_WARNING, NULL, NULL, t);
	if (!f)
		return;
	textf(f->message, sizeof(f->message),
	      "The signature counter of %s went down since it was last seen: the card was reset, "
	      "or another card carries its serial",
	      token_label(t, label, sizeof(label)));
	textf(f->hint, sizeof(f->hint), "If you did not reset it, treat this token as suspect");
}

/* GnuPG 2.4's scdaemon with its CCID driver on never asks pcscd, and pcscd holds the USB reader:
 * keyctl reads the card, gpg says "No such device" (Debian #1102717). */
static void rule_scdaemon_ccid_conflict(struct ctx *x, const struct rule *r, const struct token *t)
{
	const char *home = x->daemon->gnupghome;
	char label[96];
	struct finding *f;

	if (!card_read(t) || !t->present || isempty(t->gpg_error) || !x->daemon->scd_ccid_on)
		return;
	f = add(x, r->id, LEVEL_WARNING, NULL, NULL, t);
	if (!f)
		return;
	textf(f->message, sizeof(f->message),
	      "gpg cannot reach %s, which keyctl reads through pcscd (%s): GnuPG's scdaemon uses "
	      "its own CCID driver and does not fall back to pcscd",
	      token_label(t, label, sizeof(label)), t->gpg_error);
	if (isempty(home))
		textf(f->hint, sizeof(f->hint),
		      "Add the line \"disable-ccid\" to scdaemon.conf in your GnuPG home, "
		      "then run: gpgconf --kill scdaemon");
	else
		textf(f->hint, sizeof(f->hint),
		      "Add the line \"disable-ccid\" to %s/scdaemon.conf, then run: gpgconf --kill "
		      "scdaemon",
		      home);
}

/* A PIN counter at or below [audit] pin-retries-low: a warning, critical once it is 0. */
static struct finding *pin_finding(struct ctx *x, const struct rule *r, const struct token *t,
                                   unsigned left, char *label, size_t size)
{
	struct finding *f;

	if (!card_read(t) || left > x->cfg->pin_retries_low)
		return NULL;
	f = add(x, r->id, left == 0 ? LEVEL_CRITICAL : LEVEL_WARNING, NULL, NULL, t);
	if (f)
		token_label(t, label, size);
	return f;
}

static void rule_pin_retries_low(struct ctx *x, const struct rule *r, const struct token *t)
{
	unsigned left = t->openpgp.pin_retries[0];
	char label[96];
	struct finding *f = pin_finding(x, r, t, left, label, sizeof(label));

	if (!f)
		return;
	if (left == 0)
		textf(f->message, sizeof(f->message), "The user PIN of %s is blocked", label);
	else
		textf(f->message, sizeof(f->message), "The user PIN of %s has %u tries left", label,
		      left);
	textf(f->hint, sizeof(f->hint),
	      "Unblock or reset it with the admin PIN: gpg --card-edit, admin, passwd");
}

static void rule_admin_pin_retries_low(struct ctx *x, const struct rule *r, const struct token *t)
{
	unsigned left = t->openpgp.pin_retries[2];
	char label[96];
	struct finding *f = pin_finding(x, r, t, left, label, sizeof(label));

	if (!f)
		return;
	if (left == 0)
		textf(f->message, sizeof(f->message),
		      "The admin PIN of %s is locked: the OpenPGP application can only be reset, "
		      "which erases its keys",
		      label);
	else
		textf(f->message, sizeof(f->message), "The admin PIN of %s has %u tries left",
		      label, left);
	textf(f->hint, sizeof(f->hint), "Do not guess; find the admin PIN before the next attempt");
}

static void rule_touch_off_signing(struct ctx *x, const struct rule *r, const struct token *t)
{
	const struct card_slot *sig = &t->openpgp.slots[SLOT_SIGN];
	char label[96];
	struct finding *f;

	if (!card_read(t) || isempty(sig->fingerprint) || sig->touch != TOUCH_OFF)
		return;
	f = add(x, r->id, LEVEL_NOTICE, NULL, NULL, t);
	if (!f)
		return;
	textf(f->message, sizeof(f->message),
	      "%s signs without a touch: software on this computer can sign while the PIN is "
	      "cached",
	      token_label(t, label, sizeof(label)));
	textf(f->hint, sizeof(f->hint), "%s",
	      t->kind == TOKEN_KIND_YUBIKEY ? "ykman openpgp keys set-touch sig on"
	                                    : "Enable the touch policy for signatures");
}

static void rule_card_slot_unknown_key(struct ctx *x, const struct rule *r, const struct token *t)
{
	char label[96];

	/* Before the first listing every slot would look unknown. */
	if (!card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const char *fpr = t->openpgp.slots[s].fingerprint;
		const struct key *k = NULL;
		struct finding *f;

		if (isempty(fpr) || find_subkey(x, fpr, &k))
			continue;
		f = add(x, r->id, LEVEL_NOTICE, NULL, NULL, t);
		if (!f)
			continue;
		/* The subkey field keeps slots apart in the finding's identity. */
		strcpy_trunc(f->subkey, sizeof(f->subkey), fpr);
		textf(f->message, sizeof(f->message),
		      "The %s slot of %s holds key %s, which is in none of the keys keyctl knows",
		      slot_name(s), token_label(t, label, sizeof(label)), fpr);
		textf(f->hint, sizeof(f->hint),
		      "Import its public key (gpg --recv-keys %s, or fetch in gpg --card-edit), or "
		      "add it to [keyring] track",
		      fpr);
	}
}

static void rule_revoked_key_on_card(struct ctx *x, const struct rule *r, const struct token *t)
{
	char label[96];

	if (!card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const struct key *k = NULL;
		const struct subkey *sk = find_subkey(x, t->openpgp.slots[s].fingerprint, &k);
		struct finding *f;

		if (!sk || !(sk->revoked || k->revoked))
			continue;
		f = add(x, r->id, LEVEL_WARNING, k, sk, t);
		if (!f)
			continue;
		textf(f->message, sizeof(f->message),
		      "The %s slot of %s holds %s 0x%s of %s, which is revoked", slot_name(s),
		      token_label(t, label, sizeof(label)), subkey_role(sk),
		      key_id(sk->fingerprint), uid_or_fpr(k));
		textf(f->hint, sizeof(f->hint),
		      "Move a valid subkey to the card: gpg --edit-key %s, \"key N\", "
		      "\"keytocard\"",
		      k->fingerprint);
	}
}

static void rule_expired_key_on_card(struct ctx *x, const struct rule *r, const struct token *t)
{
	char label[96];

	if (!card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const struct key *k = NULL;
		const struct subkey *sk = find_subkey(x, t->openpgp.slots[s].fingerprint, &k);
		struct finding *f;

		/* A revoked one is revoked-key-on-card's, expired or not. */
		if (!sk || sk->revoked || k->revoked || !(sk->level == LEVEL_EXPIRED || k->expired))
			continue;
		f = add(x, r->id, LEVEL_WARNING, k, sk, t);
		if (!f)
			continue;
		textf(f->message, sizeof(f->message),
		      "The %s slot of %s holds %s 0x%s of %s, which has expired", slot_name(s),
		      token_label(t, label, sizeof(label)), subkey_role(sk),
		      key_id(sk->fingerprint), uid_or_fpr(k));
		hint_set_expire(k, sk, "1y", f->hint, sizeof(f->hint));
	}
}

/* An inserted token holding fingerprints whose stubs name another card: a backup token that
 * gpg-agent will not use until it learns it. One finding per (token, key). */
static void rule_backup_token(struct ctx *x, const struct rule *r, const struct token *t)
{
	if (!t->present || !t->has_openpgp)
		return;
	for (size_t i = 0; i < x->n_keys; i++) {
		const struct key *k = &x->keys[i];

		for (size_t j = 0; j < k->n_subkeys; j++) {
			const struct subkey *s = &k->subkeys[j];
			char label[96], serial[9];
			struct finding *f;

			if (s->secret != SECRET_CARD || !audit_token_holds(t, s->fingerprint) ||
			    audit_card_serial_matches(s->card_serial, &t->openpgp))
				continue;
			f = add(x, r->id, LEVEL_NOTICE, k, NULL, t);
			if (f) {
				textf(f->message, sizeof(f->message),
				      "%s holds the same keys of %s as card #%s, which gpg "
				      "expects: "
				      "it looks like a backup token",
				      token_label(t, label, sizeof(label)), uid_or_fpr(k),
				      audit_serial_of(s->card_serial, serial));
				textf(f->hint, sizeof(f->hint),
				      "To use it instead, with it inserted: gpg-connect-agent "
				      "\"scd "
				      "serialno\" \"learn --force\" /bye");
			}
			break;
		}
	}
}

/* The daemon's own troubles: they explain an answer that lacks tokens or keys. */
static void rule_pcsc_refused(struct ctx *x, const struct rule *r)
{
	struct finding *f;

	if (isempty(x->daemon->pcsc_refused))
		return;
	f = add(x, r->id, LEVEL_WARNING, NULL, NULL, NULL);
	if (!f)
		return;
	textf(f->message, sizeof(f->message),
	      "pcscd refuses keyctld: %s. No card is read until it lets keyctld in",
	      x->daemon->pcsc_refused);
	textf(f->hint, sizeof(f->hint),
	      "pcscd asks polkit: allow your user with a polkit rule, or run pcscd with "
	      "--disable-polkit; see /usr/share/doc/keyctl/polkit.md");
}

static void rule_daemon_starting(struct ctx *x, const struct rule *r)
{
	struct finding *f;

	if (isempty(x->daemon->starting))
		return;
	f = add(x, r->id, LEVEL_WARNING, NULL, NULL, NULL);
	if (!f)
		return;
	textf(f->message, sizeof(f->message),
	      "keyctld is still starting: %s; this answer may lack what that brings",
	      x->daemon->starting);
	textf(f->hint, sizeof(f->hint),
	      "Ask again shortly; if it lasts, see journalctl --user -u keyctld");
}

/* Every rule, one row each; the order is the order of the findings. */
static const struct rule rules[] = {
	{ "subkey-expiring", .subkey = rule_subkey_expiring },
	{ "subkey-expired-no-replacement", .subkey = rule_subkey_expired_no_replacement },
	{ "subkey-no-expiry", .subkey = rule_subkey_no_expiry },
	{ "subkey-expiry-too-far", .subkey = rule_subkey_expiry_too_far },
	{ "primary-secret-on-disk", .key = rule_primary_secret_on_disk },
	{ "subkey-secret-on-disk", .key = rule_subkey_secret_on_disk },
	{ "card-not-seen", .key = rule_card_not_seen },
	{ "revoked-default-key", .keys_done = rule_revoked_default_key },
	{ "key-revoked-upstream", .keys_done = rule_key_revoked_upstream },
	{ "key-stale-upstream", .keys_done = rule_key_stale_upstream },
	{ "counter-went-down", .token = rule_counter_went_down },
	{ "scdaemon-ccid-conflict", .token = rule_scdaemon_ccid_conflict },
	{ "pin-retries-low", .token = rule_pin_retries_low },
	{ "admin-pin-retries-low", .token = rule_admin_pin_retries_low },
	{ "touch-off-signing", .token = rule_touch_off_signing },
	{ "card-slot-unknown-key", .token = rule_card_slot_unknown_key },
	{ "revoked-key-on-card", .token = rule_revoked_key_on_card },
	{ "expired-key-on-card", .token = rule_expired_key_on_card },
	{ "backup-token", .token = rule_backup_token },
	{ "pcsc-refused", .daemon = rule_pcsc_refused },
	{ "daemon-starting", .daemon = rule_daemon_starting },
};

static void run_key_rules(struct ctx *x, const struct key *k)
{
	/* An expired key is one finding (its primary), not one per subkey. */
	bool key_expired = k->subkeys[0].level == LEVEL_EXPIRED;

	for (size_t i = 0; i < k->n_subkeys; i++) {
		const struct subkey *s = &k->subkeys[i];

		if (s->revoked || (key_expired && !s->is_primary))
			continue;
		for (size_t j = 0; j < ELEMENTSOF(rules); j++)
			if (rules[j].subkey)
				rules[j].subkey(x, &rules[j], k, s);
	}
	for (size_t j = 0; j < ELEMENTSOF(rules); j++)
		if (rules[j].key)
			rules[j].key(x, &rules[j], k);
}

int audit_run(const struct token *tokens, size_t n_tokens, const struct key *keys, size_t n_keys,
              const struct config *cfg, const struct audit_daemon *daemon, int64_t now,
              struct finding **ret, size_t *ret_n)
{
	static const struct audit_daemon none = { .keys_listed = true };
	struct ctx x = {
		.tokens = tokens,
		.n_tokens = n_tokens,
		.keys = keys,
		.n_keys = n_keys,
		.cfg = cfg,
		.daemon = daemon ? daemon : &none,
		.now = now,
	};

	for (size_t i = 0; i < n_keys; i++)
		if (key_usable(&keys[i]))
			run_key_rules(&x, &keys[i]);
	for (size_t j = 0; j < ELEMENTSOF(rules); j++)
		if (rules[j].keys_done)
			rules[j].keys_done(&x, &rules[j]);
	for (size_t i = 0; i < n_tokens; i++)
		for (size_t j = 0; j < ELEMENTSOF(rules); j++)
			if (rules[j].token)
				rules[j].token(&x, &rules[j], &tokens[i]);
	for (size_t j = 0; j < ELEMENTSOF(rules); j++)
		if (rules[j].daemon)
			rules[j].daemon(&x, &rules[j]);
	if (x.error < 0) {
		free(x.f);
		return x.error;
	}
	*ret = x.n > 0 ? x.f : (free(x.f), NULL);
	*ret_n = x.n;
	return 0;
}
