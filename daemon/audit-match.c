/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which token holds which subkey (audit_match), whether a stub's card serial names a card, and
 * gpg's matching of a key specification (default-key) and which subkey it signs with, and which
 * of gpg.conf's default-key lines gpg uses: the lookups the audit rules and the daemon share.
 *
 * Does not: raise findings (audit.c).
 */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "audit-internal.h"
#include "audit.h"
#include "card-openpgp.h"

/* A stub's card serial as people read it: the serial inside a full AID, else as it is. */
const char *audit_serial_of(const char *card_serial, char buf[static 9])
{
	const char *s = card_aid_serial(card_serial, buf);

	return s ? s : card_serial;
}

bool audit_card_serial_matches(const char *card_serial, const struct openpgp_card *c)
{
	char buf[9];

	if (isempty(card_serial))
		return false;
	/* Full AIDs: the manufacturer counts too, the version does not (GnuPG 2.4's stubs). */
	if (strlen(card_serial) == 32 && strlen(c->aid) == 32)
		return card_aid_same_card(card_serial, c->aid);
	return !isempty(c->serial) && strcasecmp(audit_serial_of(card_serial, buf), c->serial) == 0;
}

bool audit_token_holds(const struct token *t, const char *fpr)
{
	if (!t->has_openpgp)
		return false;
	for (size_t s = 0; s < SLOT_MAX; s++)
		if (!isempty(fpr) && strcasecmp(t->openpgp.slots[s].fingerprint, fpr) == 0)
			return true;
	return false;
}

void audit_match(const struct token *tokens, size_t n_tokens, struct key *keys, size_t n_keys)
{
	for (size_t i = 0; i < n_keys; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++) {
			struct subkey *s = &keys[i].subkeys[j];
			const struct token *best = NULL;
			int best_score = 0;

			for (size_t t = 0; t < n_tokens; t++) {
				bool holds = audit_token_holds(&tokens[t], s->fingerprint);
				bool stub = tokens[t].has_openpgp &&
				            audit_card_serial_matches(s->card_serial,
				                                      &tokens[t].openpgp);
				int score = holds ? 2 + (stub ? 2 : 0) + tokens[t].present
				                  : (stub ? 1 : 0);

				if (score > best_score) {
					best = &tokens[t];
					best_score = score;
				}
			}
			s->token_id[0] = 0;
			s->token_present = best && best->present;
			if (best)
				strcpy_trunc(s->token_id, sizeof(s->token_id), best->id);
		}
}

bool audit_key_matches_spec(const struct key *k, const char *spec)
{
	const char *p = spec;
	size_t n;
	bool hex = true;

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncasecmp(p, "0x", 2) == 0)
		p += 2;
	n = strlen(p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '!'))
		n--;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		hex = hex && isxdigit((unsigned char)p[i]);
	if (hex && (n == 8 || n == 16 || n == 40 || n == 64)) {
		for (size_t j = 0; j < k->n_subkeys; j++) {
			const char *f = k->subkeys[j].fingerprint;
			size_t fl = strlen(f);

			if (fl >= n && strncasecmp(f + fl - n, p, n) == 0)
				return true;
		}
		return false;
	}
	/* "<alice@example.org>", "alice@example.org", "Alice": gpg's substring match. */
	if (*p == '<' || *p == '=' || *p == '@')
		p++, n--;
	if (n > 0 && p[n - 1] == '>')
		n--;
	if (n == 0)
		return false;
	for (const char *u = k->uid; *u; u++)
		if (strncasecmp(u, p, n) == 0)
			return true;
	return false;
}

/* The hex digits of a fingerprint or key id spec ("0x" and blanks off); 0 when it is not one. */
static size_t spec_hex(const char *spec, const char **ret, bool *ret_exact)
{
	const char *p = spec;
	size_t n;

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncasecmp(p, "0x", 2) == 0)
		p += 2;
	n = strlen(p);
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	*ret_exact = n > 0 && p[n - 1] == '!';
	n -= *ret_exact;
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)p[i]))
			return 0;
	*ret = p;
	return n == 8 || n == 16 || n == 40 || n == 64 ? n : 0;
}

static bool fpr_ends_with(const char *fpr, const char *hex, size_t n)
{
	size_t fl = strlen(fpr);

	return fl >= n && strncasecmp(fpr + fl - n, hex, n) == 0;
}

static enum audit_sign_state subkey_state(const struct key *k, const struct subkey *s)
{
	if (!(s->capabilities & CAP_SIGN))
		return AUDIT_SIGN_CANNOT_SIGN;
	if (k->revoked || s->revoked)
		return AUDIT_SIGN_REVOKED;
	if (k->expired || k->subkeys[0].expiry_level == LEVEL_EXPIRED || s->expired ||
	    s->expiry_level == LEVEL_EXPIRED)
		return AUDIT_SIGN_EXPIRED;
	/* gpg skips a candidate whose secret the agent does not have (finish_lookup). */
	if (s->secret == SECRET_NONE)
		return AUDIT_SIGN_NO_SECRET;
	return AUDIT_SIGN_USABLE;
}

/* gpg's choice among k's signing subkeys: the newest usable one, the primary key only when no
 * subkey is; failing that, the newest one that can sign, to say why. */
static void resolve_in_key(const struct key *k, const char *hex, size_t n, bool exact,
                           struct audit_signing *ret)
{
	const struct subkey *best = NULL;
	enum audit_sign_state best_state = AUDIT_SIGN_CANNOT_SIGN;

	for (size_t j = 0; j < k->n_subkeys; j++) {
		const struct subkey *s = &k->subkeys[j];
		enum audit_sign_state st = subkey_state(k, s);
		bool better;

		if (exact ? !fpr_ends_with(s->fingerprint, hex, n) : !(s->capabilities & CAP_SIGN))
			continue;
		if (exact || !best)
			better = true;
		else if ((st == AUDIT_SIGN_USABLE) != (best_state == AUDIT_SIGN_USABLE))
			better = st == AUDIT_SIGN_USABLE;
		else if (s->is_primary != best->is_primary)
			better = best->is_primary;
		else
			better = s->created > best->created;
		if (better) {
			best = s;
			best_state = st;
		}
	}
	ret->state = best ? best_state : AUDIT_SIGN_CANNOT_SIGN;
	ret->key = k;
	ret->subkey = best;
}

void audit_resolve_signing(const struct key *keys, size_t n_keys, const char *spec,
                           struct audit_signing *ret)
{
	const char *hex = NULL;
	bool exact = false;
	size_t n = spec_hex(spec, &hex, &exact);

	*ret = (struct audit_signing){ .state = AUDIT_SIGN_UNKNOWN };
	/* '!' counts after a fingerprint or key id only, as in gpg. */
	exact = exact && n > 0;
	for (size_t i = 0; i < n_keys; i++) {
		struct audit_signing r;

		if (!audit_key_matches_spec(&keys[i], spec))
			continue;
		resolve_in_key(&keys[i], hex, n, exact, &r);
		if (ret->state == AUDIT_SIGN_UNKNOWN || r.state == AUDIT_SIGN_USABLE)
			*ret = r;
		if (r.state == AUDIT_SIGN_USABLE)
			return;
	}
}

/* Whether gpg may take spec as its default key (getkey.c, parse_def_secret_key()): the first key
 * it names has a key or subkey (that very one with '!') that is not revoked, expired or disabled
 * and whose secret part is here. */
static bool default_key_ok(const struct key *keys, size_t n_keys, const char *spec)
{
	const char *hex = NULL;
	bool exact = false;
	size_t n = spec_hex(spec, &hex, &exact);

	for (size_t i = 0; i < n_keys; i++) {
		const struct key *k = &keys[i];

		if (!audit_key_matches_spec(k, spec))
			continue;
		if (k->revoked || k->disabled || audit_key_expired(k))
			return false;
		for (size_t j = 0; j < k->n_subkeys; j++) {
			const struct subkey *s = &k->subkeys[j];

			if (exact && n > 0 && !fpr_ends_with(s->fingerprint, hex, n))
				continue;
			if (!s->revoked && !s->expired && !s->disabled &&
			    s->expiry_level != LEVEL_EXPIRED && s->secret != SECRET_NONE)
				return true;
		}
		return false;
	}
	return false;
}

const char *audit_default_key(const struct key *keys, size_t n_keys, const char *values, char *buf,
                              size_t size)
{
	const char *end = values + strlen(values);

	buf[0] = 0;
	/* From the last line up: the first that gpg may take wins; none, the last one. */
	while (end > values) {
		const char *start = end;

		while (start > values && start[-1] != '\n')
			start--;
		if ((size_t)(end - start) < size) {
			memcpy(buf, start, (size_t)(end - start));
			buf[end - start] = 0;
			if (default_key_ok(keys, n_keys, buf))
				return buf;
		}
		end = start > values ? start - 1 : values;
	}
	/* gpg ignores them all then: the last one is what the user meant. */
	end = strrchr(values, '\n');
	strcpy_trunc(buf, size, end ? end + 1 : values);
	return buf;
}
