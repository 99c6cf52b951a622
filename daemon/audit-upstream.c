/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit's rules about the keyserver's copies of the owned and relied-on keys (what the last
 * upstream check, watch-upstream.c, brought back): a revocation published but not here, and an
 * owned key whose published copy is behind ours. One function per rule id, each a row of the
 * table in audit.c.
 *
 * Does not: fetch anything, compare keys itself (upstream-compare.c), or log.
 */
#include <string.h>
#include <strings.h>

#include "audit-internal.h"
#include "upstream-compare.h"

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
void rule_key_revoked_upstream(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->daemon->n_upstream; i++) {
		const struct upstream_result *u = &x->daemon->upstream[i];
		const struct key *k = key_by_fpr(x, u->fingerprint);
		char what[64];
		struct finding *f;

		if (u->r < 0 || !upstream_revoked_news(k, &u->published, what, sizeof(what)))
			continue;
		f = audit_add(x, r->id, LEVEL_CRITICAL, k, NULL, NULL);
		if (!f)
			continue;
		strcpy_trunc(f->key, sizeof(f->key), u->fingerprint);
		audit_textf(f->message, sizeof(f->message),
		            "The keyserver's copy of %s%s shows %s revoked; %s",
		            k ? audit_uid_or_fpr(k) : u->fingerprint,
		            u->relied_on ? " (relied on)" : "", what,
		            k ? "your copy does not" : "your keyring has no copy");
		audit_textf(f->hint, sizeof(f->hint), "gpg %s %s",
		            k ? "--refresh-keys" : "--recv-keys", u->fingerprint);
	}
}

/* The mail address in a user id ("Name <a@b.example>" or a bare address), for the WKD hint. */
static bool uid_has_mail(const char *uid)
{
	const char *at = strchr(uid, '@');

	return at && at != uid && at[1] && at[1] != '>';
}

/* What we have and the keyserver does not: only the owner can publish it. */
void rule_key_stale_upstream(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->daemon->n_upstream; i++) {
		const struct upstream_result *u = &x->daemon->upstream[i];
		const struct key *k = key_by_fpr(x, u->fingerprint);
		char why[160];
		struct finding *f;

		if (u->r < 0 || u->relied_on || !k || !k->has_secret ||
		    !upstream_stale(k, &u->published, why, sizeof(why)))
			continue;
		f = audit_add(x, r->id, LEVEL_WARNING, k, NULL, NULL);
		if (!f)
			continue;
		audit_textf(f->message, sizeof(f->message),
		            "The keyserver's copy of %s is behind: %s", audit_uid_or_fpr(k), why);
		audit_textf(f->hint, sizeof(f->hint), "gpg --send-keys %s%s", k->fingerprint,
		            uid_has_mail(k->uid)
		                    ? "; and update your Web Key Directory (gpg-wks-client)"
		                    : "");
	}
}
