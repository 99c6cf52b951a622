/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The audit's rules about the published copies of the owned and relied-on keys, the keyserver's
 * and the Web Key Directory's (what the last upstream check, watch-upstream.c, brought back): a
 * revocation published but not here, and an owned key whose published copy is behind ours. One
 * function per rule id, each a row of the table in audit.c.
 *
 * Does not: fetch anything, compare keys itself (upstream-compare.c), or log.
 */
#include <errno.h>
#include <stdio.h>
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

/* The published copies one result holds, by source (NULL: none this time). A rule sets bit
 * 1 << SOURCE in its hits for each copy that shows what it looks for. */
enum { KEYSERVER, WKD, SOURCES };

static void copies(const struct upstream_result *u, const struct key *c[static SOURCES])
{
	c[KEYSERVER] = u->r == 0 ? &u->published : NULL;
	c[WKD] = u->wkd_asked && u->wkd_r == 0 ? &u->wkd : NULL;
}

/* "The keyserver's copy", "The Web Key Directory's copy", or both: the copies that hit. */
static void copies_name(char *buf, size_t size, unsigned hit)
{
	if (hit == (1u << KEYSERVER | 1u << WKD))
		snprintf(buf, size, "The keyserver's and the Web Key Directory's copies");
	else
		snprintf(buf, size, "The %s's copy",
		         hit & 1u << KEYSERVER ? "keyserver" : "Web Key Directory");
}

/* What a published copy knows and we do not: a revocation. Critical: the key (or a subkey) is
 * still trusted here for encryption or verification. */
void rule_key_revoked_upstream(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->daemon->n_upstream; i++) {
		const struct upstream_result *u = &x->daemon->upstream[i];
		const struct key *k = key_by_fpr(x, u->fingerprint);
		const struct key *c[SOURCES];
		char what[64] = "", who[96];
		unsigned hit = 0;
		struct finding *f;

		copies(u, c);
		for (int j = 0; j < SOURCES; j++)
			if (c[j] && upstream_revoked_news(k, c[j], hit ? NULL : what, sizeof(what)))
				hit |= 1u << j;
		if (!hit)
			continue;
		f = audit_add(x, r->id, LEVEL_CRITICAL, k, NULL, NULL);
		if (!f)
			continue;
		copies_name(who, sizeof(who), hit);
		strcpy_trunc(f->key, sizeof(f->key), u->fingerprint);
		audit_textf(f->message, sizeof(f->message), "%s of %s%s show%s %s revoked; %s", who,
		            k ? audit_uid_or_fpr(k) : u->fingerprint,
		            u->relied_on ? " (relied on)" : "", hit == 3u ? "" : "s", what,
		            k ? "your copy does not" : "your keyring has no copy");
		if (hit & 1u << KEYSERVER)
			audit_textf(f->hint, sizeof(f->hint), "gpg %s %s",
			            k ? "--refresh-keys" : "--recv-keys", u->fingerprint);
		else
			audit_textf(f->hint, sizeof(f->hint), "gpg --locate-external-keys %s",
			            u->mail);
	}
}

/* What we have and a published copy does not: only the owner can publish it. The WKD is named
 * in the hint when its copy is behind, or when the key has a mail address and its WKD was not
 * seen (not asked, or out of reach). */
void rule_key_stale_upstream(struct ctx *x, const struct rule *r)
{
	for (size_t i = 0; i < x->daemon->n_upstream; i++) {
		const struct upstream_result *u = &x->daemon->upstream[i];
		const struct key *k = key_by_fpr(x, u->fingerprint);
		const struct key *c[SOURCES];
		char why[160] = "", who[96], mail[UPSTREAM_MAIL_MAX];
		unsigned hit = 0;
		bool ks, wkd, wkd_unseen;
		struct finding *f;

		if (u->relied_on || !k || !k->has_secret)
			continue;
		copies(u, c);
		for (int j = 0; j < SOURCES; j++)
			if (c[j] && upstream_stale(k, c[j], hit ? NULL : why, sizeof(why)))
				hit |= 1u << j;
		if (!hit)
			continue;
		f = audit_add(x, r->id, LEVEL_WARNING, k, NULL, NULL);
		if (!f)
			continue;
		copies_name(who, sizeof(who), hit);
		audit_textf(f->message, sizeof(f->message), "%s of %s %s behind: %s", who,
		            audit_uid_or_fpr(k), hit == 3u ? "are" : "is", why);
		ks = hit & 1u << KEYSERVER;
		wkd = hit & 1u << WKD;
		wkd_unseen = !u->wkd_asked || (u->wkd_r != 0 && u->wkd_r != -ENOENT);
		if (wkd)
			audit_textf(f->hint, sizeof(f->hint),
			            "%s%s%supdate your Web Key Directory with gpg --export-options "
			            "export-minimal --export %s",
			            ks ? "gpg --send-keys " : "", ks ? k->fingerprint : "",
			            ks ? "; " : "", k->fingerprint);
		else
			audit_textf(f->hint, sizeof(f->hint), "gpg --send-keys %s%s",
			            k->fingerprint,
			            wkd_unseen && upstream_uid_mail(k->uid, mail, sizeof(mail))
			                    ? "; and update your Web Key Directory (gpg-wks-client)"
			                    : "");
	}
}
