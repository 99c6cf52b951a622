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
#include <string.h>
#include <strings.h>

#include "audit-ack.h"
#include "audit-internal.h"
#include "audit.h"
#include "card-openpgp.h"
#include "expiry-math.h"

void audit_textf(char *buf, size_t size, const char *fmt, ...)
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
const char *audit_key_id(const char *fpr)
{
	size_t n = strlen(fpr);

	return n > 16 ? fpr + n - 16 : fpr;
}

const char *audit_uid_or_fpr(const struct key *k)
{
	return isempty(k->uid) ? k->fingerprint : k->uid;
}

const char *audit_subkey_role(const struct subkey *s)
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

const char *audit_slot_name(enum key_slot s)
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

const char *audit_token_label(const struct token *t, char *buf, size_t size)
{
	const char *serial = !isempty(t->serial) ? t->serial : t->openpgp.serial;
	const char *kind =
	        t->kind == TOKEN_KIND_UNKNOWN ? "OpenPGP card" : token_kind_display(t->kind);

	if (isempty(serial))
		audit_textf(buf, size, "%s %s", kind, t->id);
	else
		audit_textf(buf, size, "%s #%s", kind, serial);
	return buf;
}

/* " on YubiKey #12345678", " on card #12345678" (a stub whose card we never saw), or "". */
static const char *where(const struct ctx *x, const struct subkey *s, char *buf, size_t size)
{
	const struct token *t = token_by_id(x, s->token_id);
	char label[96], serial[9];

	if (t)
		audit_textf(buf, size, " on %s", audit_token_label(t, label, sizeof(label)));
	else if (s->secret == SECRET_CARD && !isempty(s->card_serial))
		audit_textf(buf, size, " on card #%s", audit_serial_of(s->card_serial, serial));
	else
		buf[0] = 0;
	return buf;
}

struct finding *audit_add(struct ctx *x, const char *rule, enum level level, const struct key *k,
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

/* The end of an expiry message about a key that is not the user's to renew. */
static const char *renewer(const struct key *k)
{
	return k->has_secret ? "" : "; only its owner can renew it";
}

/* Another non-revoked, unexpired subkey that does at least what s does and lasts longer. With
 * allow_primary, the primary key counts too (it can still sign when the subkey cannot). */
static bool has_successor(const struct key *k, const struct subkey *s, bool allow_primary)
{
	for (size_t i = 0; i < k->n_subkeys; i++) {
		const struct subkey *o = &k->subkeys[i];
		unsigned need = s->capabilities & (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH);

		if (o == s || o->revoked || o->expiry_level == LEVEL_EXPIRED)
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

/* What the subkey's own finding reports: an ack (audit-ack.c) lowered its level to ok, and the
 * finding keeps the level the ack is weighed against, so the ack holds, or is forgotten when
 * the level rises. */
static enum level own_level(const struct subkey *s)
{
	return s->acked ? s->acked_level : s->level;
}

static bool key_usable(const struct key *k)
{
	return !k->revoked && k->n_subkeys > 0;
}

const struct subkey *audit_find_subkey(const struct ctx *x, const char *fpr,
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

static bool git_signs_with(const struct ctx *x, const struct subkey *s)
{
	return !isempty(x->daemon->git_signing_key) && x->git.state == AUDIT_SIGN_USABLE &&
	       x->git.subkey == s;
}

static void rule_subkey_expiring(struct ctx *x, const struct rule *r, const struct key *k,
                                 const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;

	enum level level = own_level(s);

	if (level < LEVEL_NOTICE || level > LEVEL_CRITICAL || has_successor(k, s, false))
		return;
	f = audit_add(x, r->id, level, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	audit_textf(f->message, sizeof(f->message), "%s 0x%s of %s%s expires %s (%s)%s%s",
	            audit_subkey_role(s), audit_key_id(s->fingerprint), audit_uid_or_fpr(k), w.loc,
	            w.rel, w.date, git_signs_with(x, s) ? " (git signs with it)" : "", renewer(k));
	renew_hint(k, s, "1y", f->hint, sizeof(f->hint));
}

static void rule_subkey_expired_no_replacement(struct ctx *x, const struct rule *r,
                                               const struct key *k, const struct subkey *s)
{
	char when[EXPIRY_TEXT_MAX + 20];
	struct expiry_words w;
	struct finding *f;

	/* A subkey's successor does not stand in for an expired primary key. */
	if (own_level(s) != LEVEL_EXPIRED || (!s->is_primary && has_successor(k, s, true)))
		return;
	f = audit_add(x, r->id, LEVEL_CRITICAL, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	if (s->expires != 0)
		audit_textf(when, sizeof(when), "%s (%s)", w.rel, w.date);
	else
		audit_textf(when, sizeof(when), "has expired");
	/* Nothing replaces a primary key: every subkey is unusable until it is renewed. */
	audit_textf(f->message, sizeof(f->message), "%s 0x%s of %s%s %s%s%s", audit_subkey_role(s),
	            audit_key_id(s->fingerprint), audit_uid_or_fpr(k), w.loc, when,
	            s->is_primary ? ": none of its subkeys can be used until it is renewed"
	                          : " and nothing replaces it",
	            renewer(k));
	renew_hint(k, s, "1y", f->hint, sizeof(f->hint));
}

/* A replaced subkey that is still counted (expiry.c: its replacement is not on the card that
 * holds it): the card signs with the old one until the new one is moved there. */
static void rule_replacement_not_on_card(struct ctx *x, const struct rule *r, const struct key *k,
                                         const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;
	size_t n = 0;

	if (isempty(s->replaced_by) || own_level(s) < LEVEL_NOTICE)
		return;
	while (n < k->n_subkeys && !fpr_eq(k->subkeys[n].fingerprint, s->replaced_by))
		n++;
	f = audit_add(x, r->id, own_level(s), k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	audit_textf(f->message, sizeof(f->message),
	            "%s 0x%s of %s%s %s%s (%s); its replacement 0x%s is not on that card yet",
	            audit_subkey_role(s), audit_key_id(s->fingerprint), audit_uid_or_fpr(k), w.loc,
	            s->expiry_level == LEVEL_EXPIRED ? "" : "expires ", w.rel, w.date,
	            audit_key_id(s->replaced_by));
	audit_textf(f->hint, sizeof(f->hint),
	            "Move the replacement to the card: gpg --edit-key %s, then \"key %zu\" and "
	            "\"keytocard\"",
	            k->fingerprint, n);
}

static void rule_subkey_no_expiry(struct ctx *x, const struct rule *r, const struct key *k,
                                  const struct subkey *s)
{
	struct expiry_words w;
	struct finding *f;

	if (s->expiry_level == LEVEL_EXPIRED || s->expires != 0)
		return;
	f = audit_add(x, r->id, LEVEL_NOTICE, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	audit_textf(f->message, sizeof(f->message),
	            "%s 0x%s of %s%s never expires: an expiry date is the dead man's switch if the "
	            "secret is lost%s",
	            audit_subkey_role(s), audit_key_id(s->fingerprint), audit_uid_or_fpr(k), w.loc,
	            renewer(k));
	renew_hint(k, s, "2y", f->hint, sizeof(f->hint));
}

/* The validity (expiry less creation), as keyctl.conf(5) says: a subkey made for five years is
 * too long-lived also in its last year. Without a creation time, from now. */
static void rule_subkey_expiry_too_far(struct ctx *x, const struct rule *r, const struct key *k,
                                       const struct subkey *s)
{
	int64_t from = s->created > 0 ? s->created : x->now;
	struct expiry_words w;
	struct finding *f;

	if (s->expiry_level == LEVEL_EXPIRED || s->expires == 0 || x->cfg->max_validity_days == 0 ||
	    s->expires - from <= (int64_t)x->cfg->max_validity_days * SECONDS_PER_DAY)
		return;
	f = audit_add(x, r->id, LEVEL_NOTICE, k, s, NULL);
	if (!f)
		return;
	expiry_words(x, s, &w);
	audit_textf(f->message, sizeof(f->message),
	            "%s 0x%s of %s%s is valid for %" PRId64 " days, more than %u: it expires %s "
	            "(%s)%s",
	            audit_subkey_role(s), audit_key_id(s->fingerprint), audit_uid_or_fpr(k), w.loc,
	            (s->expires - from + SECONDS_PER_DAY - 1) / SECONDS_PER_DAY,
	            x->cfg->max_validity_days, w.rel, w.date, renewer(k));
	renew_hint(k, s, "1y", f->hint, sizeof(f->hint));
}

static void rule_primary_secret_on_disk(struct ctx *x, const struct rule *r, const struct key *k)
{
	const struct subkey *primary = &k->subkeys[0];
	struct finding *f;

	if (primary->expiry_level == LEVEL_EXPIRED || primary->secret != SECRET_DISK)
		return;
	f = audit_add(x, r->id, LEVEL_NOTICE, k, primary, NULL);
	if (!f)
		return;
	audit_textf(f->message, sizeof(f->message),
	            "The secret primary key of %s (0x%s) is on this computer's disk",
	            audit_uid_or_fpr(k), audit_key_id(k->fingerprint));
	audit_textf(f->hint, sizeof(f->hint),
	            "Back it up offline (gpg --armor --export-secret-keys %s), then keep only the "
	            "subkeys here: gpg --delete-secret-keys %s!",
	            k->fingerprint, k->fingerprint);
}

static void rule_subkey_secret_on_disk(struct ctx *x, const struct rule *r, const struct key *k)
{
	struct finding *f;

	if (k->subkeys[0].expiry_level == LEVEL_EXPIRED)
		return;
	for (size_t i = 1; i < k->n_subkeys; i++) {
		const struct subkey *s = &k->subkeys[i];

		if (s->revoked || s->expiry_level == LEVEL_EXPIRED || s->secret != SECRET_DISK ||
		    !(s->capabilities & (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH)))
			continue;
		f = audit_add(x, r->id, LEVEL_NOTICE, k, s, NULL);
		if (!f)
			continue;
		audit_textf(f->message, sizeof(f->message),
		            "%s 0x%s of %s is on this computer's disk, not on a token",
		            audit_subkey_role(s), audit_key_id(s->fingerprint),
		            audit_uid_or_fpr(k));
		audit_textf(f->hint, sizeof(f->hint),
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

		if (!t || t->present || s->revoked || s->expiry_level == LEVEL_EXPIRED)
			continue;
		for (size_t d = 0; d < n_done; d++)
			seen = seen || done[d] == t;
		if (seen || t->last_seen <= 0 ||
		    x->now - t->last_seen <= (int64_t)x->cfg->card_unseen_days * SECONDS_PER_DAY)
			continue;
		done[n_done++] = t;
		f = audit_add(x, r->id, LEVEL_NOTICE, k, NULL, t);
		if (!f)
			continue;
		audit_textf(f->message, sizeof(f->message),
		            "%s, which holds keys of %s, was last seen %" PRId64 " days ago (%s)",
		            audit_token_label(t, label, sizeof(label)), audit_uid_or_fpr(k),
		            (x->now - t->last_seen) / SECONDS_PER_DAY,
		            expiry_format_date(date, sizeof(date), t->last_seen));
		audit_textf(f->hint, sizeof(f->hint),
		            "Check that you still have it; if it is lost, revoke its subkeys: gpg "
		            "--edit-key %s, \"key N\", \"revkey\"",
		            k->fingerprint);
	}
}

/* What to do about a ROCA-weak (sub)key: the owner replaces and revokes it, anyone else stops
 * relying on it. j is its index ("key N" of gpg --edit-key). */
static void roca_hint(const struct key *k, size_t j, char *buf, size_t size)
{
	if (!k->has_secret)
		audit_textf(
		        buf, size,
		        "Only its owner can replace it: tell them. Meanwhile encrypt nothing to "
		        "it and trust nothing it signs; to stop relying on it: gpg --edit-key %s "
		        "trust (or gpg --delete-keys %s)",
		        k->fingerprint, k->fingerprint);
	else if (j == 0)
		audit_textf(
		        buf, size,
		        "Make a new key elsewhere than on the affected chip (a YubiKey 4 is fixed "
		        "from firmware 4.3.5), move to it, then revoke this one: gpg "
		        "--gen-revoke %s, and gpg --import that certificate",
		        k->fingerprint);
	else
		audit_textf(
		        buf, size,
		        "Revoke it and make a new subkey elsewhere than on the affected chip (a "
		        "YubiKey 4 is fixed from firmware 4.3.5): gpg --edit-key %s, then \"key "
		        "%zu\", \"revkey\" and \"addkey\"",
		        k->fingerprint, j);
}

/* Every RSA (sub)key that the listing found ROCA-weak (keyring-roca.c), the user's own or
 * another's: its secret key can be computed from its public key, whoever holds the chip. A
 * revoked one is done with; a retired key is shown, never a finding. */
static void rule_key_roca_weak(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->n_keys; i++) {
		const struct key *k = &x->keys[i];

		if (k->revoked || k->retired)
			continue;
		for (size_t j = 0; j < k->n_subkeys; j++) {
			const struct subkey *s = &k->subkeys[j];
			char loc[128];
			struct finding *f;

			if (!s->roca_weak || s->revoked)
				continue;
			f = audit_add(x, r->id, LEVEL_CRITICAL, k, s, NULL);
			if (!f)
				return;
			audit_textf(
			        f->message, sizeof(f->message),
			        "%s 0x%s of %s%s is ROCA-weak (CVE-2017-15361, %s made by "
			        "Infineon's flawed RSA generator): its secret key can be computed "
			        "from its public key",
			        audit_subkey_role(s), audit_key_id(s->fingerprint),
			        audit_uid_or_fpr(k), where(x, s, loc, sizeof(loc)), s->algorithm);
			roca_hint(k, j, f->hint, sizeof(f->hint));
		}
	}
}

static const char *const sign_state_words[AUDIT_SIGN_MAX] = {
	[AUDIT_SIGN_CANNOT_SIGN] = "cannot sign",
	[AUDIT_SIGN_REVOKED] = "is revoked",
	[AUDIT_SIGN_EXPIRED] = "has expired",
	[AUDIT_SIGN_NO_SECRET] = "has no secret part here, neither on disk nor on a card",
};

/* The fingerprint of a key other than skip that can sign here, for a hint; "NEWFPR" when there
 * is none. */
static const char *usable_signing_key(const struct ctx *x, const struct key *skip)
{
	for (size_t i = 0; i < x->n_keys; i++) {
		struct audit_signing sg;

		if (&x->keys[i] == skip || x->keys[i].revoked)
			continue;
		audit_resolve_signing(&x->keys[i], 1, x->keys[i].fingerprint, &sg);
		if (sg.state == AUDIT_SIGN_USABLE)
			return x->keys[i].fingerprint;
	}
	return "NEWFPR";
}

/* "git's user.signingkey (0xABCD) ...": why a signing key spec does not resolve to a usable
 * subkey, worded for whoever reads it (what, e.g. "git's user.signingkey"). */
static void signing_message(struct finding *f, const char *what, const char *spec,
                            const struct audit_signing *sg, const char *then)
{
	const struct key *k = sg->key;
	const struct subkey *s = sg->subkey;

	if (sg->state == AUDIT_SIGN_UNKNOWN)
		audit_textf(f->message, sizeof(f->message),
		            "%s (%s) names no key with a secret part on this computer%s", what,
		            spec, then);
	else if (!s)
		audit_textf(f->message, sizeof(f->message),
		            "%s (%s) names %s (0x%s), which has no subkey that can sign%s", what,
		            spec, audit_uid_or_fpr(k), audit_key_id(k->fingerprint), then);
	else
		audit_textf(f->message, sizeof(f->message),
		            "%s (%s) signs with %s 0x%s of %s, which %s%s", what, spec,
		            audit_subkey_role(s), audit_key_id(s->fingerprint), audit_uid_or_fpr(k),
		            sign_state_words[sg->state], then);
}

bool audit_key_expired(const struct key *k)
{
	return k->expired || k->subkeys[0].expiry_level == LEVEL_EXPIRED;
}

/* A usable signing subkey of the key the spec named, as the spec should name it: that subkey
 * with '!' when the spec named one exactly, else the key (gpg then takes its newest). */
static const char *same_key_signer(const struct key *k, const char *spec, char *buf, size_t size)
{
	struct audit_signing sg;
	size_t n = strlen(spec);

	if (!k || k->revoked)
		return NULL;
	audit_resolve_signing(k, 1, k->fingerprint, &sg);
	if (sg.state != AUDIT_SIGN_USABLE)
		return NULL;
	while (n > 0 && (spec[n - 1] == ' ' || spec[n - 1] == '\t'))
		n--;
	if (n > 0 && spec[n - 1] == '!')
		audit_textf(buf, size, "%s!", sg.subkey->fingerprint);
	else
		audit_textf(buf, size, "%s", k->fingerprint);
	return buf;
}

/* The way out that fits the trouble: the same key's usable signing subkey when it has one, else
 * mending the key, or pointing at another key (set_other). */
static void signing_hint(const struct ctx *x, struct finding *f, const char *spec,
                         const struct audit_signing *sg, const char *set_other)
{
	const struct key *k = sg->key;
	char fix[FINDING_TEXT_MAX] = "", same[FPR_HEX_MAX + 1];

	if (same_key_signer(k, spec, same, sizeof(same))) {
		audit_textf(f->hint, sizeof(f->hint), "%s %s", set_other, same);
		return;
	}
	if (sg->state == AUDIT_SIGN_EXPIRED)
		renew_hint(k, audit_key_expired(k) ? &k->subkeys[0] : sg->subkey, "1y", fix,
		           sizeof(fix));
	else if (sg->state == AUDIT_SIGN_NO_SECRET)
		audit_textf(fix, sizeof(fix),
		            "Insert the card that holds it and run gpg --card-status");
	else if (sg->state == AUDIT_SIGN_CANNOT_SIGN)
		audit_textf(fix, sizeof(fix), "gpg --quick-add-key %s ed25519 sign 1y",
		            k->fingerprint);
	audit_textf(f->hint, sizeof(f->hint), "%s%s%s %s", fix, *fix ? "; or " : "", set_other,
	            usable_signing_key(x, k));
}

/* Whether git's spec is its committer identity ("Name <email>", commit.gpgSign without
 * user.signingkey) rather than a user.signingkey. */
static bool git_spec_is_ident(const char *spec)
{
	size_t n = strlen(spec);

	return n > 2 && spec[n - 1] == '>' && strchr(spec, '<');
}

static void rule_git_signing_key_unusable(struct ctx *x, const struct rule *r)
{
	const char *spec = x->daemon->git_signing_key;
	struct finding *f;

	/* Before the first listing every key would look unknown. */
	if (isempty(spec) || !x->daemon->keys_listed || x->git.state == AUDIT_SIGN_USABLE)
		return;
	f = audit_add(x, r->id, LEVEL_CRITICAL, x->git.key, x->git.subkey, NULL);
	if (!f)
		return;
	signing_message(f,
	                git_spec_is_ident(spec) ? "git's committer identity (commit.gpgSign, no "
	                                          "user.signingkey)"
	                                        : "git's user.signingkey",
	                spec, &x->git, ": git cannot sign commits");
	signing_hint(x, f, spec, &x->git, "git config --global user.signingkey");
}

/* What gpg.conf's default-key comes to, for the three rules about it: a revoked key (or signing
 * subkey), an expired one, or none gpg can sign with here (not here, no secret, cannot sign). */
enum default_trouble {
	DEFAULT_FINE,
	DEFAULT_REVOKED,
	DEFAULT_EXPIRED,
	DEFAULT_MISSING,
};

static enum default_trouble default_key_trouble(const struct ctx *x, char *spec, size_t size,
                                                struct audit_signing *sg)
{
	const struct key *k;

	if (isempty(x->daemon->default_key) || !x->daemon->keys_listed)
		return DEFAULT_FINE;
	audit_default_key(x->keys, x->n_keys, x->daemon->default_key, spec, size);
	audit_resolve_signing(x->keys, x->n_keys, spec, sg);
	k = sg->key;
	if (sg->state == AUDIT_SIGN_USABLE)
		return DEFAULT_FINE;
	if ((k && k->revoked) || sg->state == AUDIT_SIGN_REVOKED)
		return DEFAULT_REVOKED;
	if ((k && audit_key_expired(k)) || sg->state == AUDIT_SIGN_EXPIRED)
		return DEFAULT_EXPIRED;
	return DEFAULT_MISSING;
}

/* The one finding of the default-key rule for want, when gpg.conf's default-key has that
 * trouble: a whole key revoked or expired in its own words, else what the spec signs with. */
static void default_key_rule(struct ctx *x, const struct rule *r, enum default_trouble want)
{
	char spec[FINDING_TEXT_MAX];
	struct audit_signing sg;
	const struct key *k;
	struct finding *f;

	if (default_key_trouble(x, spec, sizeof(spec), &sg) != want)
		return;
	k = sg.key;
	f = audit_add(x, r->id, LEVEL_WARNING, k, NULL, NULL);
	if (!f)
		return;
	if (want == DEFAULT_REVOKED && k->revoked) {
		audit_textf(f->message, sizeof(f->message),
		            "gpg.conf names %s (0x%s) as default-key, but that key is revoked",
		            audit_uid_or_fpr(k), audit_key_id(k->fingerprint));
		audit_textf(f->hint, sizeof(f->hint),
		            "Point default-key in gpg.conf at a valid key, or remove the line");
		return;
	}
	if (want == DEFAULT_EXPIRED && audit_key_expired(k)) {
		audit_textf(f->message, sizeof(f->message),
		            "gpg.conf names %s (0x%s) as default-key, but that key has expired%s",
		            audit_uid_or_fpr(k), audit_key_id(k->fingerprint), renewer(k));
		/* The renewal of the primary key, whatever subkey the spec came to. */
		sg.state = AUDIT_SIGN_EXPIRED;
	} else {
		signing_message(f, "gpg.conf's default-key", spec, &sg, "");
	}
	signing_hint(x, f, spec, &sg, "point default-key in gpg.conf at");
}

static void rule_revoked_default_key(struct ctx *x, const struct rule *r)
{
	default_key_rule(x, r, DEFAULT_REVOKED);
}

static void rule_default_key_expired(struct ctx *x, const struct rule *r)
{
	default_key_rule(x, r, DEFAULT_EXPIRED);
}

/* Not here, no secret part here, or no subkey that can sign. */
static void rule_default_key_missing(struct ctx *x, const struct rule *r)
{
	default_key_rule(x, r, DEFAULT_MISSING);
}

/* Every rule, one row each; the order is the order of the findings. */
static const struct rule rules[] = {
	{ "subkey-expiring", .subkey = rule_subkey_expiring },
	{ "subkey-expired-no-replacement", .subkey = rule_subkey_expired_no_replacement },
	{ "replacement-not-on-card", .subkey = rule_replacement_not_on_card },
	{ "subkey-no-expiry", .subkey = rule_subkey_no_expiry },
	{ "subkey-expiry-too-far", .subkey = rule_subkey_expiry_too_far },
	{ "primary-secret-on-disk", .key = rule_primary_secret_on_disk },
	{ "subkey-secret-on-disk", .key = rule_subkey_secret_on_disk },
	{ "card-not-seen", .key = rule_card_not_seen },
	{ "revoked-default-key", .keys_done = rule_revoked_default_key },
	{ "default-key-expired", .keys_done = rule_default_key_expired },
	{ "default-key-missing", .keys_done = rule_default_key_missing },
	{ "git-signing-key-unusable", .keys_done = rule_git_signing_key_unusable },
	{ "key-revoked-upstream", .keys_done = rule_key_revoked_upstream },
	{ "key-stale-upstream", .keys_done = rule_key_stale_upstream },
	{ "key-roca-weak", .keys_done = rule_key_roca_weak },
	{ "counter-went-down", .token = rule_counter_went_down },
	{ "scdaemon-ccid-conflict", .token = rule_scdaemon_ccid_conflict },
	{ "pin-retries-low", .token = rule_pin_retries_low },
	{ "admin-pin-retries-low", .token = rule_admin_pin_retries_low },
	{ "touch-off-signing", .token = rule_touch_off_signing },
	{ "card-slot-unknown-key", .token = rule_card_slot_unknown_key },
	{ "revoked-key-on-card", .token = rule_revoked_key_on_card },
	{ "expired-key-on-card", .token = rule_expired_key_on_card },
	{ "backup-token", .token = rule_backup_token },
	{ "card-key-no-stub", .token = rule_card_key_no_stub },
	{ "token-advisory", .token = rule_token_advisory },
	{ "piv-cert-expiring", .token = rule_piv_cert_expiring },
	{ "piv-cert-expired", .token = rule_piv_cert_expired },
	{ "piv-chuid-expiring", .token = rule_piv_chuid_expiring },
	{ "pcsc-refused", .daemon = rule_pcsc_refused },
	{ "daemon-starting", .daemon = rule_daemon_starting },
};

static void run_key_rules(struct ctx *x, const struct key *k)
{
	/* An expired key is one finding (its primary), not one per subkey. */
	bool key_expired = k->subkeys[0].expiry_level == LEVEL_EXPIRED;

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

	/* Before the expiry rules, which name the subkey git signs with. */
	if (!isempty(x.daemon->git_signing_key))
		audit_resolve_signing(keys, n_keys, x.daemon->git_signing_key, &x.git);
	for (size_t i = 0; i < n_keys; i++)
		/* A retired key is the user's "I know": shown, never a finding. */
		if (key_usable(&keys[i]) && !key_relied_only(&keys[i]) && !keys[i].retired)
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
	audit_ack_run(x.f, x.n, x.daemon);
	*ret = x.n > 0 ? x.f : (free(x.f), NULL);
	*ret_n = x.n;
	return 0;
}
