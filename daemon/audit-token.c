/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit's rules about a token (a card read, its PIN counters, its touch policy, its slots
 * against the keyring, its twin, the vendors' advisories about it) and about the daemon itself
 * (pcscd refused, still starting); one function per rule id, each a row of the table in audit.c.
 *
 * Does not: run the rules (audit.c does), read the clock, or log.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "advisory-table.h"
#include "audit-internal.h"
#include "card-openpgp.h"

/* Card rules judge what was read: a token with an error has no trustworthy card data. */
static bool card_read(const struct token *t)
{
	return t->has_openpgp && isempty(t->error);
}

void rule_counter_went_down(struct ctx *x, const struct rule *r, const struct token *t)
{
	char label[96];
	struct finding *f;

	if (!t->counter_went_down)
		return;
	f = audit_add(x, r->id, LEVEL_WARNING, NULL, NULL, t);
	if (!f)
		return;
	audit_textf(
	        f->message, sizeof(f->message),
	        "The signature counter of %s went down since it was last seen: the card was reset, "
	        "or another card carries its serial",
	        audit_token_label(t, label, sizeof(label)));
	audit_textf(f->hint, sizeof(f->hint),
	            "If you did not reset it, treat this token as suspect");
}

/* GnuPG 2.4's scdaemon with its CCID driver on never asks pcscd, and pcscd holds the USB reader:
 * keyctl reads the card, gpg says "No such device" (Debian #1102717). */
void rule_scdaemon_ccid_conflict(struct ctx *x, const struct rule *r, const struct token *t)
{
	const char *home = x->daemon->gnupghome;
	char label[96];
	struct finding *f;

	if (!card_read(t) || !t->present || isempty(t->gpg_error) || !x->daemon->scd_ccid_on)
		return;
	f = audit_add(x, r->id, LEVEL_WARNING, NULL, NULL, t);
	if (!f)
		return;
	audit_textf(
	        f->message, sizeof(f->message),
	        "gpg cannot reach %s, which keyctl reads through pcscd (%s): GnuPG's scdaemon uses "
	        "its own CCID driver and does not fall back to pcscd",
	        audit_token_label(t, label, sizeof(label)), t->gpg_error);
	if (isempty(home))
		audit_textf(f->hint, sizeof(f->hint),
		            "Add the line \"disable-ccid\" to scdaemon.conf in your GnuPG home, "
		            "then run: gpgconf --kill scdaemon");
	else
		audit_textf(f->hint, sizeof(f->hint),
		            "Add the line \"disable-ccid\" to %s/scdaemon.conf, then run: "
		            "gpgconf --kill scdaemon",
		            home);
}

/* A PIN counter at or below [audit] pin-retries-low: a warning, critical once it is 0. */
static struct finding *pin_finding(struct ctx *x, const struct rule *r, const struct token *t,
                                   unsigned left, char *label, size_t size)
{
	struct finding *f;

	if (!card_read(t) || left > x->cfg->pin_retries_low)
		return NULL;
	f = audit_add(x, r->id, left == 0 ? LEVEL_CRITICAL : LEVEL_WARNING, NULL, NULL, t);
	if (f)
		audit_token_label(t, label, size);
	return f;
}

void rule_pin_retries_low(struct ctx *x, const struct rule *r, const struct token *t)
{
	unsigned left = t->openpgp.pin_retries[0];
	char label[96];
	struct finding *f = pin_finding(x, r, t, left, label, sizeof(label));

	if (!f)
		return;
	if (left == 0)
		audit_textf(f->message, sizeof(f->message), "The user PIN of %s is blocked", label);
	else
		audit_textf(f->message, sizeof(f->message), "The user PIN of %s has %u tries left",
		            label, left);
	audit_textf(f->hint, sizeof(f->hint),
	            "Unblock or reset it with the admin PIN: gpg --card-edit, admin, passwd");
}

void rule_admin_pin_retries_low(struct ctx *x, const struct rule *r, const struct token *t)
{
	unsigned left = t->openpgp.pin_retries[2];
	char label[96];
	struct finding *f = pin_finding(x, r, t, left, label, sizeof(label));

	if (!f)
		return;
	if (left == 0)
		audit_textf(
		        f->message, sizeof(f->message),
		        "The admin PIN of %s is locked: the OpenPGP application can only be reset, "
		        "which erases its keys",
		        label);
	else
		audit_textf(f->message, sizeof(f->message), "The admin PIN of %s has %u tries left",
		            label, left);
	audit_textf(f->hint, sizeof(f->hint),
	            "Do not guess; find the admin PIN before the next attempt");
}

void rule_touch_off_signing(struct ctx *x, const struct rule *r, const struct token *t)
{
	const struct card_slot *sig = &t->openpgp.slots[SLOT_SIGN];
	char label[96];
	struct finding *f;

	if (!card_read(t) || isempty(sig->fingerprint) || sig->touch != TOUCH_OFF)
		return;
	f = audit_add(x, r->id, LEVEL_NOTICE, NULL, NULL, t);
	if (!f)
		return;
	audit_textf(f->message, sizeof(f->message),
	            "%s signs without a touch: software on this computer can sign while the PIN is "
	            "cached",
	            audit_token_label(t, label, sizeof(label)));
	audit_textf(f->hint, sizeof(f->hint), "%s",
	            t->kind == TOKEN_KIND_YUBIKEY ? "ykman openpgp keys set-touch sig on"
	                                          : "Enable the touch policy for signatures");
}

void rule_card_slot_unknown_key(struct ctx *x, const struct rule *r, const struct token *t)
{
	char label[96];

	/* Before the first listing every slot would look unknown. */
	if (!card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const char *fpr = t->openpgp.slots[s].fingerprint;
		const struct key *k = NULL;
		struct finding *f;

		if (isempty(fpr) || audit_find_subkey(x, fpr, &k))
			continue;
		f = audit_add(x, r->id, LEVEL_NOTICE, NULL, NULL, t);
		if (!f)
			continue;
		/* The subkey field keeps slots apart in the finding's identity. */
		strcpy_trunc(f->subkey, sizeof(f->subkey), fpr);
		audit_textf(
		        f->message, sizeof(f->message),
		        "The %s slot of %s holds key %s, which is in none of the keys keyctl knows",
		        audit_slot_name(s), audit_token_label(t, label, sizeof(label)), fpr);
		audit_textf(f->hint, sizeof(f->hint),
		            "Import its public key (gpg --recv-keys %s, or fetch in "
		            "gpg --card-edit), or add it to [keyring] track",
		            fpr);
	}
}

/* A warning about the card slot s holding sk of k: "The <slot> slot of <token> holds <role>
 * 0x<id> of <uid>, <what>". The hint is the caller's. */
static struct finding *slot_finding(struct ctx *x, const struct rule *r, const struct token *t,
                                    enum key_slot s, const struct key *k, const struct subkey *sk,
                                    const char *what)
{
	struct finding *f = audit_add(x, r->id, LEVEL_WARNING, k, sk, t);
	char label[96];

	if (f)
		audit_textf(f->message, sizeof(f->message),
		            "The %s slot of %s holds %s 0x%s of %s, %s", audit_slot_name(s),
		            audit_token_label(t, label, sizeof(label)), audit_subkey_role(sk),
		            audit_key_id(sk->fingerprint), audit_uid_or_fpr(k), what);
	return f;
}

void rule_revoked_key_on_card(struct ctx *x, const struct rule *r, const struct token *t)
{
	if (!card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const struct key *k = NULL;
		const struct subkey *sk = audit_find_subkey(x, t->openpgp.slots[s].fingerprint, &k);
		struct finding *f;

		if (!sk || !(sk->revoked || k->revoked))
			continue;
		f = slot_finding(x, r, t, s, k, sk, "which is revoked");
		if (f)
			audit_textf(
			        f->hint, sizeof(f->hint),
			        "Move a valid subkey to the card: gpg --edit-key %s, \"key N\", "
			        "\"keytocard\"",
			        k->fingerprint);
	}
}

void rule_expired_key_on_card(struct ctx *x, const struct rule *r, const struct token *t)
{
	if (!card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const struct key *k = NULL;
		const struct subkey *sk = audit_find_subkey(x, t->openpgp.slots[s].fingerprint, &k);
		struct finding *f;

		/* A revoked one is revoked-key-on-card's, expired or not; a replaced one is
		 * replacement-not-on-card's; a retired key's the user knows about. */
		if (!sk || sk->revoked || k->revoked || k->retired || !isempty(sk->replaced_by) ||
		    !(sk->expiry_level == LEVEL_EXPIRED || k->expired))
			continue;
		f = slot_finding(x, r, t, s, k, sk, "which has expired");
		if (f)
			renew_hint(k, sk, "1y", f->hint, sizeof(f->hint));
	}
}

/* A present card holds a subkey gpg knows only publicly: without a stub gpg-agent does not know
 * the card has its secret, and gpg refuses to sign or decrypt with it. */
void rule_card_key_no_stub(struct ctx *x, const struct rule *r, const struct token *t)
{
	if (!t->present || !card_read(t) || !x->daemon->keys_listed)
		return;
	for (enum key_slot s = 0; s < SLOT_MAX; s++) {
		const struct key *k = NULL;
		const struct subkey *sk = audit_find_subkey(x, t->openpgp.slots[s].fingerprint, &k);
		struct finding *f;

		/* A revoked or expired one is revoked- or expired-key-on-card's. */
		if (!sk || sk->secret != SECRET_NONE || sk->revoked || k->revoked ||
		    sk->expiry_level == LEVEL_EXPIRED || audit_key_expired(k))
			continue;
		f = slot_finding(x, r, t, s, k, sk,
		                 "but gpg does not know the card has its secret (no stub)");
		if (f)
			audit_textf(f->hint, sizeof(f->hint),
			            "With the card inserted, run gpg --card-status: it writes the "
			            "stubs");
	}
}

/* An inserted token holding fingerprints whose stubs name another card: a backup token that
 * gpg-agent will not use until it learns it. One finding per (token, key). */
void rule_backup_token(struct ctx *x, const struct rule *r, const struct token *t)
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
			f = audit_add(x, r->id, LEVEL_NOTICE, k, NULL, t);
			if (f) {
				audit_textf(f->message, sizeof(f->message),
				            "%s holds the same keys of %s as card #%s, which gpg "
				            "expects: it looks like a backup token",
				            audit_token_label(t, label, sizeof(label)),
				            audit_uid_or_fpr(k),
				            audit_serial_of(s->card_serial, serial));
				audit_textf(
				        f->hint, sizeof(f->hint),
				        "To use it instead, with it inserted: gpg-connect-agent "
				        "\"scd serialno\" \"learn --force\" /bye");
			}
			break;
		}
	}
}

/* An advisory's finding names the advisory in its key field: the finding's identity (and the id
 * an ack takes, "token-advisory:YSA-2024-03@yubikey-12345678") must tell two advisories about
 * one token apart, and no key of the keyring is its subject. */
static struct finding *advisory_add(struct ctx *x, const struct rule *r, const struct token *t,
                                    const struct advisory *a, enum level level)
{
	struct finding *f = audit_add(x, r->id, level, NULL, NULL, t);

	if (f)
		strcpy_trunc(f->key, sizeof(f->key), a->row->id);
	return f;
}

/* "the signature slot's nistp256 key 0x..., the authentication slot's ..." of slots. */
static void advisory_keys(const struct openpgp_card *c, unsigned slots, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (enum key_slot s = 0; s < SLOT_MAX && used < size; s++) {
		const struct card_slot *cs = &c->slots[s];
		int k;

		if (!(slots & ADVISORY_SLOT(s)))
			continue;
		k = snprintf(buf + used, size - used, "%sthe %s slot's %s key 0x%s",
		             used ? ", " : "", audit_slot_name(s),
		             isempty(cs->algorithm) ? "" : cs->algorithm,
		             audit_key_id(cs->fingerprint));
		if (k < 0)
			return;
		used += (size_t)k;
	}
}

/* "firmware 5.4.3", or "OpenPGP application 1.0.9" for a row about the applet's version. */
static const char *advisory_version_name(const struct advisory_row *row, const struct token *t,
                                         char *buf, size_t size)
{
	if (row->applet_version)
		snprintf(buf, size, "OpenPGP application %s", t->openpgp.firmware);
	else
		snprintf(buf, size, "firmware %s", t->firmware);
	return buf;
}

/* The token is in the advisory's range: a warning naming the card's keys it concerns, or, with
 * none, a notice when the token's FIDO application is affected whatever it holds, or its PIV
 * application for a row about no OpenPGP key (slots 0: Nitrokey 3's PIV admin key). A token
 * without such keys, FIDO or PIV (or not known to have them) gets nothing. */
static void advisory_affected(struct ctx *x, const struct rule *r, const struct token *t,
                              const struct advisory *a)
{
	const struct advisory_row *row = a->row;
	unsigned slots = card_read(t) ? advisory_slots(a, &t->openpgp) : 0;
	bool fido = (row->apps & ADVISORY_APP_FIDO) && (t->usb_interfaces & USB_IFACE_FIDO);
	bool piv = !row->slots && (row->apps & ADVISORY_APP_PIV) && t->piv.state != PIV_READ_NONE;
	char label[96], keys[256], version[48];
	struct finding *f;

	if (!slots && !fido && !piv)
		return;
	f = advisory_add(x, r, t, a, slots ? LEVEL_WARNING : LEVEL_NOTICE);
	if (!f)
		return;
	audit_token_label(t, label, sizeof(label));
	advisory_version_name(row, t, version, sizeof(version));
	if (slots) {
		advisory_keys(&t->openpgp, slots, keys, sizeof(keys));
		audit_textf(f->message, sizeof(f->message), "%s (%s) is affected by %s, %s: %s%s%s",
		            label, version, row->id, row->title, keys,
		            row->generated_only ? ", if generated on the card (a key imported into "
		                                  "it is not affected; keyctl cannot tell which)"
		                                : "",
		            fido ? "; its FIDO credentials too" : "");
	} else
		audit_textf(f->message, sizeof(f->message),
		            "%s (%s) is affected by %s, %s: %s%s; %s", label, version, row->id,
		            row->title,
		            fido ? "its FIDO credentials are, whatever they are used for"
		                 : "its PIV application is, whatever it holds",
		            fido && piv ? ", its PIV application too" : "",
		            card_read(t) ? "the OpenPGP keys on it are not"
		                         : "its OpenPGP keys were not read");
	audit_textf(f->hint, sizeof(f->hint), "%s See %s", row->remedy, row->url);
}

/* A token of a product the advisory names whose firmware keyctl does not know: information
 * (level ok: keyctl has no lower level, and it counts for no exit code or popup), never a
 * guess either way. */
static void advisory_unknown(struct ctx *x, const struct rule *r, const struct token *t,
                             const struct advisory *a)
{
	struct finding *f = advisory_add(x, r, t, a, LEVEL_OK);
	char label[96];

	if (!f)
		return;
	audit_textf(f->message, sizeof(f->message),
	            "%s of %s unknown: cannot tell whether %s, %s, applies",
	            a->row->applet_version ? "OpenPGP application version" : "Firmware",
	            audit_token_label(t, label, sizeof(label)), a->row->id, a->row->title);
	audit_textf(f->hint, sizeof(f->hint), "Check its %s (%s); see %s",
	            a->row->applet_version ? "OpenPGP application version" : "firmware version",
	            a->row->version_check ? a->row->version_check : "ykman info", a->row->url);
}

/* An advisory may take several rows (one per product line and range): an earlier row of the
 * same id that names this token already had its say. */
static bool advisory_told(const struct advisory *table, size_t i, const struct token *t)
{
	for (size_t j = 0; j < i; j++)
		if (streq(table[j].row->id, table[i].row->id) &&
		    advisory_match(&table[j], t) != ADVISORY_MATCH_NO)
			return true;
	return false;
}

/* One finding per advisory that concerns the token (advisory-table.c). */
void rule_token_advisory(struct ctx *x, const struct rule *r, const struct token *t)
{
	const struct advisory *table = x->daemon->advisories;
	size_t n = x->daemon->n_advisories;

	if (!table)
		n = advisory_builtin(&table);
	for (size_t i = 0; i < n; i++) {
		enum advisory_match m = advisory_match(&table[i], t);

		if (m == ADVISORY_MATCH_NO || advisory_told(table, i, t))
			continue;
		if (m == ADVISORY_MATCH_YES)
			advisory_affected(x, r, t, &table[i]);
		else
			advisory_unknown(x, r, t, &table[i]);
	}
}

/* The daemon's own troubles: they explain an answer that lacks tokens or keys. */
void rule_pcsc_refused(struct ctx *x, const struct rule *r)
{
	struct finding *f;

	if (isempty(x->daemon->pcsc_refused))
		return;
	f = audit_add(x, r->id, LEVEL_WARNING, NULL, NULL, NULL);
	if (!f)
		return;
	audit_textf(f->message, sizeof(f->message),
	            "pcscd refuses keyctld: %s. No card is read until it lets keyctld in",
	            x->daemon->pcsc_refused);
	audit_textf(f->hint, sizeof(f->hint),
	            "pcscd asks polkit, which lets in only your active local session's programs "
	            "(keyctld, a user service, is judged by your session): allow your user with a "
	            "polkit rule, or run pcscd with --disable-polkit; see "
	            "/usr/share/doc/keyctl/polkit.md");
}

void rule_daemon_starting(struct ctx *x, const struct rule *r)
{
	struct finding *f;

	if (isempty(x->daemon->starting))
		return;
	f = audit_add(x, r->id, LEVEL_WARNING, NULL, NULL, NULL);
	if (!f)
		return;
	audit_textf(f->message, sizeof(f->message),
	            "keyctld is still starting: %s; this answer may lack what that brings",
	            x->daemon->starting);
	audit_textf(f->hint, sizeof(f->hint),
	            "Ask again shortly; if it lasts, see journalctl --user -u keyctld");
}
