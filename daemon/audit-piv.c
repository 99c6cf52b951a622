/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit's rules about a token's PIV application (Token.piv, read by card-piv.c):
 * piv-cert-expiring and piv-cert-expired at the [expiry] thresholds, piv-chuid-expiring; and
 * the next moment one of them changes, for the expiry timer.
 *
 * A CA-issued certificate's date is the issuer's word: TLS client authentication, Windows
 * logon, S/MIME and git's x509 signing refuse it once past. A self-signed one is, as a rule,
 * the placeholder ykman or an agent writes because the slot wants a certificate: ssh and age
 * agents use the key and ignore the dates (yubikey-agent#85: "the expiry of the certificate
 * doesn't matter"), so its expiry is information unless [piv] raise-self-signed = yes. A
 * retired slot (82-95) keeps an old key management key to decrypt old messages: its certificate
 * lapsing is expected, information too. Each finding names its slot in its key field (the
 * finding's identity, and the ack id "piv-cert-expiring:9a@yubikey-12345678"), as
 * token-advisory names its advisory there.
 *
 * Does not: read the card, the clock or the configuration file, or log.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "audit-internal.h"
#include "expiry.h"

static const char *slot_title(const char *slot)
{
	static const struct {
		const char *slot, *title;
	} titles[] = {
		{ "9a", "PIV Authentication" },
		{ "9c", "Digital Signature" },
		{ "9d", "Key Management" },
		{ "9e", "Card Authentication" },
	};

	for (size_t i = 0; i < ELEMENTSOF(titles); i++)
		if (streq(titles[i].slot, slot))
			return titles[i].title;
	return NULL;
}

static bool slot_retired(const char *slot)
{
	return !slot_title(slot);
}

/* Certificates worth judging: read whole (no slot error) and with a date. */
static bool cert_usable(const struct piv_cert *c)
{
	return isempty(c->error) && c->not_after > 0;
}

static bool piv_read(const struct token *t)
{
	return t->piv.state == PIV_READ_OK || t->piv.state == PIV_READ_ERROR;
}

/* Information only (level ok) by default: see the file's comment. */
static bool cert_info_only(const struct ctx *x, const struct piv_cert *c)
{
	return slot_retired(c->slot) || (c->self_signed && !x->cfg->piv_raise_self_signed);
}

static const char *why_info(const struct ctx *x, const struct piv_cert *c)
{
	if (!cert_info_only(x, c))
		return "";
	if (slot_retired(c->slot))
		return ": a retired slot keeps an old key to decrypt old messages, its certificate "
		       "lapses as expected";
	return ": ssh and age agents ignore a self-signed certificate's dates";
}

static void cert_hint(const struct piv_cert *c, char *buf, size_t size)
{
	if (c->self_signed)
		audit_textf(
		        buf, size,
		        "To renew it: ykman piv keys export %s pub.pem && ykman piv certificates "
		        "generate -s \"%s\" %s pub.pem",
		        c->slot, c->subject, c->slot);
	else if (!slot_retired(c->slot))
		audit_textf(
		        buf, size,
		        "Ask its issuer for a new certificate, then: ykman piv certificates import "
		        "%s CERT.pem",
		        c->slot);
}

/* "The PIV Authentication certificate (slot 9A) of YubiKey #12345678, "CN=alice" issued by
 * "CN=Example CA", expires in 6 days (2026-12-09)". */
static struct finding *cert_finding(struct ctx *x, const struct rule *r, const struct token *t,
                                    const struct piv_cert *c, enum level level)
{
	struct finding *f =
	        audit_add(x, r->id, cert_info_only(x, c) ? LEVEL_OK : level, NULL, NULL, t);
	char label[96], from[PIV_NAME_MAX + 16], rel[EXPIRY_TEXT_MAX], date[16];
	const char *title = slot_title(c->slot);

	if (!f)
		return NULL;
	strcpy_trunc(f->key, sizeof(f->key), c->slot);
	if (c->self_signed)
		audit_textf(from, sizeof(from), "self-signed");
	else
		audit_textf(from, sizeof(from), "issued by \"%s\"", c->issuer);
	expiry_format_relative(rel, sizeof(rel), c->not_after, x->now);
	expiry_format_date(date, sizeof(date), c->not_after);
	audit_textf(f->message, sizeof(f->message),
	            "The %s certificate (slot %c%c) of %s, \"%s\" %s, %s%s (%s)%s",
	            title ? title : "Retired Key Management", toupper((unsigned char)c->slot[0]),
	            toupper((unsigned char)c->slot[1]), audit_token_label(t, label, sizeof(label)),
	            c->subject, from, level == LEVEL_EXPIRED ? "" : "expires ", rel, date,
	            why_info(x, c));
	cert_hint(c, f->hint, sizeof(f->hint));
	return f;
}

/* One finding per certificate whose level by the clock is in [lo, hi]; an expired one is
 * critical at most, as a subkey's. */
static void cert_rule(struct ctx *x, const struct rule *r, const struct token *t, enum level lo,
                      enum level hi)
{
	struct expiry_policy p = expiry_policy_from_config(x->cfg);

	if (!piv_read(t))
		return;
	for (size_t i = 0; i < t->piv.n_certs && i < PIV_CERTS_MAX; i++) {
		const struct piv_cert *c = &t->piv.certs[i];
		enum level l =
		        cert_usable(c) ? expiry_level(&p, c->not_after, false, x->now) : LEVEL_OK;
		struct finding *f;

		if (l < lo || l > hi)
			continue;
		f = cert_finding(x, r, t, c, l);
		if (f && f->level == LEVEL_EXPIRED)
			f->level = LEVEL_CRITICAL;
	}
}

void rule_piv_cert_expiring(struct ctx *x, const struct rule *r, const struct token *t)
{
	cert_rule(x, r, t, LEVEL_NOTICE, LEVEL_CRITICAL);
}

void rule_piv_cert_expired(struct ctx *x, const struct rule *r, const struct token *t)
{
	cert_rule(x, r, t, LEVEL_EXPIRED, LEVEL_EXPIRED);
}

/* The CHUID's expiration date (SP 800-73-4 3.1.2, tag 35): ykman writes 2030-01-01 into every
 * CHUID it makes. Middleware that checks it refuses the card once past; a warning at most. */
void rule_piv_chuid_expiring(struct ctx *x, const struct rule *r, const struct token *t)
{
	struct expiry_policy p = expiry_policy_from_config(x->cfg);
	char label[96], rel[EXPIRY_TEXT_MAX], date[16];
	enum level l;
	struct finding *f;

	if (!piv_read(t) || t->piv.chuid_expiry <= 0)
		return;
	l = expiry_level(&p, t->piv.chuid_expiry, false, x->now);
	if (l < LEVEL_NOTICE)
		return;
	f = audit_add(x, r->id, MIN(l, LEVEL_WARNING), NULL, NULL, t);
	if (!f)
		return;
	strcpy_trunc(f->key, sizeof(f->key), "chuid");
	expiry_format_relative(rel, sizeof(rel), t->piv.chuid_expiry, x->now);
	expiry_format_date(date, sizeof(date), t->piv.chuid_expiry);
	audit_textf(f->message, sizeof(f->message),
	            "The PIV card identifier (CHUID) of %s %s%s (%s)",
	            audit_token_label(t, label, sizeof(label)),
	            l == LEVEL_EXPIRED ? "" : "expires ", rel, date);
	audit_textf(f->hint, sizeof(f->hint),
	            "ykman piv objects generate chuid (a new card identifier: Windows and macOS "
	            "pair the card anew)");
}

int64_t audit_piv_next_change(const struct token *tokens, size_t n_tokens, const struct config *cfg,
                              int64_t now, int64_t next)
{
	struct expiry_policy p = expiry_policy_from_config(cfg);

	for (size_t i = 0; i < n_tokens; i++) {
		const struct piv_app *a = &tokens[i].piv;
		int64_t t = a->chuid_expiry > 0 ? expiry_next_change(&p, a->chuid_expiry, now) : 0;

		if (t > 0 && (next == 0 || t < next))
			next = t;
		for (size_t j = 0; j < a->n_certs && j < PIV_CERTS_MAX; j++) {
			if (!cert_usable(&a->certs[j]))
				continue;
			t = expiry_next_change(&p, a->certs[j].not_after, now);
			if (t > 0 && (next == 0 || t < next))
				next = t;
		}
	}
	return next;
}
