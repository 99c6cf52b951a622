/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The words of keyctl-notify. A subkey's notification names the key (primary user id), the
 * subkey (GnuPG's long key id and its use), where its secret lives (the token's model and
 * serial), its expiry date and how far that is ("in 5 days", counted by protocol/expiry-math.c
 * exactly as the daemon counts), and what to do: the gpg command line that renews it, and the
 * team's renewal page when one is configured. A token waiting for a touch is named with what
 * waits and who likely asked.
 *
 * Does not: decide what is announced, escape markup, or talk to anything.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "expiry-math.h"
#include "notify-text.h"
#include "renew-hint.h"

/* Appends to a buffer of our own text; cutting at the end is acceptable for a notification. */
_printf_(3, 4) static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strnlen(buf, size);
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

enum notify_text_urgency notify_text_urgency_for(enum level l)
{
	switch (l) {
	case LEVEL_NOTICE:
	case LEVEL_WARNING:
		return NOTIFY_TEXT_URGENCY_NORMAL;
	case LEVEL_CRITICAL:
	case LEVEL_EXPIRED:
		return NOTIFY_TEXT_URGENCY_CRITICAL;
	default:
		return NOTIFY_TEXT_URGENCY_LOW;
	}
}

const char *notify_text_short_fpr(const char *fpr)
{
	size_t n = strlen(fpr);

	return n > 16 ? fpr + n - 16 : fpr;
}

void notify_text_group_fpr(char *buf, size_t size, const char *fpr)
{
	if (strlen(fpr) != 40) {
		snprintf(buf, size, "%s", fpr);
		return;
	}
	buf[0] = 0;
	for (size_t i = 0; i < 10; i++)
		append(buf, size, "%s%.4s", i == 0 ? "" : i == 5 ? "  " : " ", fpr + 4 * i);
}

void notify_text_usage(char *buf, size_t size, unsigned caps)
{
	static const struct {
		unsigned cap;
		const char *name;
	} table[] = {
		{ CAP_SIGN, "sign" },
		{ CAP_ENCRYPT, "encrypt" },
		{ CAP_AUTH, "auth" },
		{ CAP_CERTIFY, "certify" },
	};

	buf[0] = 0;
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (caps & table[i].cap)
			append(buf, size, "%s%s", buf[0] ? "/" : "", table[i].name);
}

/* "signing subkey", "encryption subkey", "primary key", "sign/auth subkey". */
static void subkey_noun(char *buf, size_t size, const struct subkey *s)
{
	char use[48];

	if (s->is_primary) {
		snprintf(buf, size, "primary key");
		return;
	}
	switch (s->capabilities & (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH | CAP_CERTIFY)) {
	case CAP_SIGN:
		snprintf(buf, size, "signing subkey");
		return;
	case CAP_ENCRYPT:
		snprintf(buf, size, "encryption subkey");
		return;
	case CAP_AUTH:
		snprintf(buf, size, "authentication subkey");
		return;
	default:
		notify_text_usage(use, sizeof(use), s->capabilities);
		snprintf(buf, size, "%s%ssubkey", use, use[0] ? " " : "");
	}
}

/* Where the secret part is: "on YubiKey 5 NFC #12345678", "on card #12345678", "on disk", "". */
static void where(char *buf, size_t size, const struct subkey *s, const struct token *t)
{
	char name[NOTIFY_TOKEN_NAME_MAX];
	const char *cs = s->card_serial;

	if (t) {
		token_display_name(t, name, sizeof(name));
		snprintf(buf, size, " on %s", name);
	} else if (s->secret == SECRET_CARD && !isempty(cs)) {
		/* A stub names its card by the AID (OpenPGP card 3.4, 4.2.1); the serial GnuPG
		 * prints is its 4 bytes after version and manufacturer. */
		if (strlen(cs) == 32 && strncasecmp(cs, "D27600012401", 12) == 0)
			snprintf(buf, size, " on card #%.8s", cs + 20);
		else
			snprintf(buf, size, " on card #%s", cs);
	} else if (s->secret == SECRET_DISK)
		snprintf(buf, size, " on disk");
	else
		buf[0] = 0;
}

static const char *key_name(const struct key *k)
{
	return !isempty(k->uid) ? k->uid : notify_text_short_fpr(k->fingerprint);
}

/* "2026-12-09, in 5 days" or "2026-12-06, expired 3 days ago". */
static void when(char *buf, size_t size, int64_t expires, int64_t now)
{
	char date[EXPIRY_TEXT_MAX], rel[EXPIRY_TEXT_MAX];

	snprintf(buf, size, "%s, %s", expiry_format_date(date, sizeof(date), expires),
	         expiry_format_relative(rel, sizeof(rel), expires, now));
}

void notify_text_expiry(const struct key *k, const struct subkey *s, const struct token *token,
                        const char *renewal_url, bool details, int64_t now, struct notify_text *ret)
{
	char noun[64], use[48], loc[NOTIFY_TOKEN_NAME_MAX + 16], date[96], cmd[200], rel[48];
	char fpr[64], created[EXPIRY_TEXT_MAX];

	memset(ret, 0, sizeof(*ret));
	subkey_noun(noun, sizeof(noun), s);
	notify_text_usage(use, sizeof(use), s->capabilities);
	where(loc, sizeof(loc), s, token);
	when(date, sizeof(date), s->expires, now);
	renew_hint(k, s, "1y", cmd, sizeof(cmd));

	if (s->expires > now)
		snprintf(ret->summary, sizeof(ret->summary), "OpenPGP %s expires %s", noun,
		         expiry_format_relative(rel, sizeof(rel), s->expires, now));
	else
		snprintf(ret->summary, sizeof(ret->summary), "OpenPGP %s %s", noun,
		         s->expires > 0 ? expiry_format_relative(rel, sizeof(rel), s->expires, now)
		                        : "expired");

	append(ret->body, sizeof(ret->body), "%s\n", key_name(k));
	append(ret->body, sizeof(ret->body), "%s %s%s%s%s%s\n", s->is_primary ? "Key" : "Subkey",
	       notify_text_short_fpr(s->fingerprint), use[0] ? " (" : "", use, use[0] ? ")" : "",
	       loc);
	append(ret->body, sizeof(ret->body), "Expiry: %s\n", date);
	if (s->git_signs)
		append(ret->body, sizeof(ret->body), "Git signs your commits with it\n");
	append(ret->body, sizeof(ret->body), "Renew: %s", cmd);
	if (!isempty(renewal_url))
		append(ret->body, sizeof(ret->body), "\nInstructions: %s", renewal_url);
	if (details) {
		notify_text_group_fpr(fpr, sizeof(fpr), s->fingerprint);
		append(ret->body, sizeof(ret->body), "\n\nFingerprint: %s", fpr);
		if (!isempty(s->algorithm) || s->created > 0)
			append(ret->body, sizeof(ret->body), "\nAlgorithm: %s, created %s",
			       isempty(s->algorithm) ? "unknown" : s->algorithm,
			       expiry_format_date(created, sizeof(created), s->created));
		if (!s->is_primary) {
			notify_text_group_fpr(fpr, sizeof(fpr), k->fingerprint);
			append(ret->body, sizeof(ret->body), "\nPrimary key: %s", fpr);
		}
	}
	ret->urgency = notify_text_urgency_for(s->level);
}

static bool warned(const struct subkey *s)
{
	return s->level >= LEVEL_NOTICE && s->level < LEVEL_MAX && !s->revoked && !s->disabled;
}

int notify_text_token_inserted(const struct token *t, const struct key *keys, size_t n_keys,
                               const char *renewal_url, int64_t now, struct notify_text *ret)
{
	char name[NOTIFY_TOKEN_NAME_MAX], noun[64], use[48], date[96], cmd[200], rel[48];
	const struct subkey *first = NULL;
	enum level worst = LEVEL_OK;
	size_t count = 0;

	memset(ret, 0, sizeof(*ret));
	if (isempty(t->id))
		return -ENOENT;
	for (size_t i = 0; i < n_keys; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++) {
			const struct subkey *s = &keys[i].subkeys[j];

			if (!warned(s) || !streq(s->token_id, t->id))
				continue;
			if (count > 0)
				append(ret->body, sizeof(ret->body), "\n\n");
			notify_text_usage(use, sizeof(use), s->capabilities);
			when(date, sizeof(date), s->expires, now);
			renew_hint(&keys[i], s, "1y", cmd, sizeof(cmd));
			append(ret->body, sizeof(ret->body), "%s\n%s %s%s%s%s: %s\nRenew: %s",
			       key_name(&keys[i]), s->is_primary ? "Key" : "Subkey",
			       notify_text_short_fpr(s->fingerprint), use[0] ? " (" : "", use,
			       use[0] ? ")" : "", date, cmd);
			worst = MAX(worst, s->level);
			if (!first)
				first = s;
			count++;
		}
	if (count == 0)
		return -ENOENT;
	if (!isempty(renewal_url))
		append(ret->body, sizeof(ret->body), "\nInstructions: %s", renewal_url);

	token_display_name(t, name, sizeof(name));
	if (count == 1) {
		subkey_noun(noun, sizeof(noun), first);
		if (first->expires > now)
			snprintf(ret->summary, sizeof(ret->summary), "%s: %s expires %s", name,
			         noun,
			         expiry_format_relative(rel, sizeof(rel), first->expires, now));
		else
			snprintf(ret->summary, sizeof(ret->summary), "%s: %s %s", name, noun,
			         first->expires > 0 ? expiry_format_relative(rel, sizeof(rel),
			                                                     first->expires, now)
			                            : "expired");
	} else
		snprintf(ret->summary, sizeof(ret->summary), "%s: %zu subkeys need renewal", name,
		         count);
	ret->urgency = notify_text_urgency_for(worst);
	return 0;
}

void notify_text_finding(const struct finding *f, const struct key *key, const struct token *token,
                         struct notify_text *ret)
{
	char name[NOTIFY_TOKEN_NAME_MAX];

	memset(ret, 0, sizeof(*ret));
	strcpy_trunc(ret->summary, sizeof(ret->summary),
	             isempty(f->message) ? f->rule : f->message);
	if (key)
		append(ret->body, sizeof(ret->body), "Key: %s (%s)\n", key_name(key),
		       notify_text_short_fpr(key->fingerprint));
	else if (strncmp(f->rule, "piv-", 4) == 0)
		/* audit-piv.c: the key field holds the slot ("9a"), or "chuid" */
		append(ret->body, sizeof(ret->body), "PIV %s: %s\n",
		       streq(f->key, "chuid") ? "object" : "slot", f->key);
	else if (!isempty(f->key))
		append(ret->body, sizeof(ret->body), "Key: %s\n", notify_text_short_fpr(f->key));
	if (!isempty(f->subkey) && (!key || !streq(f->subkey, key->fingerprint)))
		append(ret->body, sizeof(ret->body), "Subkey: %s\n",
		       notify_text_short_fpr(f->subkey));
	if (token) {
		token_display_name(token, name, sizeof(name));
		append(ret->body, sizeof(ret->body), "Token: %s\n", name);
	} else if (!isempty(f->token))
		append(ret->body, sizeof(ret->body), "Token: %s\n", f->token);
	if (!isempty(f->hint))
		append(ret->body, sizeof(ret->body), "What to do: %s\n", f->hint);
	append(ret->body, sizeof(ret->body), "Rule: %s", f->rule);
	ret->urgency = notify_text_urgency_for(f->level);
}

int notify_text_touch(const struct token *t, struct notify_text *ret)
{
	char name[NOTIFY_TOKEN_NAME_MAX];

	if (!t->touch_waiting)
		return -ENOENT;
	memset(ret, 0, sizeof(*ret));
	token_display_name(t, name, sizeof(name));
	snprintf(ret->summary, sizeof(ret->summary), "%s waits for a touch", name);
	touch_pending_describe(&t->touch, ret->body, sizeof(ret->body));
	ret->urgency = NOTIFY_TEXT_URGENCY_NORMAL;
	return 0;
}
