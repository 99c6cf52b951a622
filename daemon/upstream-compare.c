/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The comparisons behind key-revoked-upstream and key-stale-upstream (see upstream-compare.h).
 * Subkeys are matched by fingerprint, each side at most SUBKEYS_MAX long, so a comparison costs
 * at most SUBKEYS_MAX^2 string compares whatever the keyserver sent (signatures are never
 * listed: upstream-read.c).
 *
 * Does not: fetch, log, or decide levels.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "upstream-compare.h"

void upstream_result_done(struct upstream_result *u)
{
	key_done(&u->published);
	key_done(&u->wkd);
}

bool upstream_uid_mail(const char *uid, char *buf, size_t size)
{
	const char *lt = strrchr(uid, '<'), *start = lt ? lt + 1 : uid, *at, *dot;
	size_t n = lt ? strcspn(start, ">") : strlen(start);

	if (size > 0)
		buf[0] = 0;
	if ((lt && start[n] != '>') || n == 0 || n >= size)
		return false;
	for (size_t i = 0; i < n; i++)
		if (start[i] <= ' ' || start[i] > '~' || start[i] == '<' || start[i] == '%')
			return false;
	at = memchr(start, '@', n);
	if (!at || at == start || memchr(at + 1, '@', n - (size_t)(at + 1 - start)))
		return false;
	dot = memchr(at + 1, '.', n - (size_t)(at + 1 - start));
	if (!dot || dot == at + 1 || dot == start + n - 1)
		return false;
	memcpy(buf, start, n);
	buf[n] = 0;
	return true;
}

static const struct subkey *subkey_find(const struct key *k, const char *fpr)
{
	for (size_t i = 0; k && i < k->n_subkeys; i++)
		if (strcasecmp(k->subkeys[i].fingerprint, fpr) == 0)
			return &k->subkeys[i];
	return NULL;
}

/* The long key id people type: the last 16 digits. */
static const char *tail16(const char *fpr)
{
	size_t n = strlen(fpr);

	return n > 16 ? fpr + n - 16 : fpr;
}

/* "text" or "text 0x<tail16(fpr)> rest" into buf, which may be NULL. */
static void say(char *buf, size_t size, const char *text, const char *fpr, const char *rest)
{
	if (!buf || size == 0)
		return;
	if (fpr)
		snprintf(buf, size, "%s 0x%s%s", text, tail16(fpr), rest);
	else
		snprintf(buf, size, "%s", text);
}

bool upstream_revoked_news(const struct key *local, const struct key *published, char *what,
                           size_t size)
{
	if (published->revoked && !(local && local->revoked)) {
		say(what, size, "the key", NULL, NULL);
		return true;
	}
	for (size_t i = 0; i < published->n_subkeys; i++) {
		const struct subkey *p = &published->subkeys[i];
		const struct subkey *l = subkey_find(local, p->fingerprint);

		if (!p->revoked || (l && l->revoked))
			continue;
		/* A subkey we do not hold cannot be used by mistake here; still news when we
		 * know nothing of the key at all. */
		if (local && !l)
			continue;
		if (p->is_primary)
			say(what, size, "the key", NULL, NULL);
		else
			say(what, size, "subkey", p->fingerprint, "");
		return true;
	}
	return false;
}

/* Published expiry before the local one: 0 is never, which comes after every date. */
static bool expires_sooner(int64_t published, int64_t local)
{
	return published != 0 && (local == 0 || published < local);
}

bool upstream_stale(const struct key *local, const struct key *published, char *why, size_t size)
{
	if (local->revoked && !published->revoked) {
		say(why, size, "the published copy lacks the key's revocation", NULL, NULL);
		return true;
	}
	for (size_t i = 0; i < local->n_subkeys; i++) {
		const struct subkey *l = &local->subkeys[i];
		const struct subkey *p = subkey_find(published, l->fingerprint);

		if (!p) {
			say(why, size, "the published copy lacks subkey", l->fingerprint, "");
			return true;
		}
		if (l->revoked && !p->revoked) {
			say(why, size, "the published copy lacks the revocation of subkey",
			    l->fingerprint, "");
			return true;
		}
		if (!l->revoked && expires_sooner(p->expires, l->expires)) {
			if (l->is_primary)
				say(why, size, "the published copy expires sooner than yours", NULL,
				    NULL);
			else
				say(why, size, "the published copy of subkey", l->fingerprint,
				    " expires sooner than yours");
			return true;
		}
	}
	return false;
}
