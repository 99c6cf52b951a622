/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's copy of the daemon's state (a struct keyctl_status): set whole from Watch's
 * "state" reply, then kept current by its events (tokens, keys, findings, the daemon's settings
 * and clock), each of which is then handed to notify-announce.c, or, for a touch wait, to
 * notify-touch.c.
 *
 * Does not: talk to the daemon (notify-daemon.c) or decide what is news (notify-announce.c).
 */
#include <stdlib.h>
#include <string.h>

#include "notify-app.h"

const struct token *mirror_find_token(const struct app *a, const char *id)
{
	for (size_t i = 0; !isempty(id) && i < a->status.n_tokens; i++)
		if (streq(a->status.tokens[i].id, id))
			return &a->status.tokens[i];
	return NULL;
}

struct key *mirror_find_key(const struct app *a, const char *fpr)
{
	for (size_t i = 0; !isempty(fpr) && i < a->status.n_keys; i++)
		if (streq(a->status.keys[i].fingerprint, fpr))
			return &a->status.keys[i];
	return NULL;
}

static int upsert_token(struct app *a, const struct token *t, bool *ret_was_present)
{
	struct token *n;

	for (size_t i = 0; i < a->status.n_tokens; i++)
		if (streq(a->status.tokens[i].id, t->id)) {
			*ret_was_present = a->status.tokens[i].present;
			memcpy(&a->status.tokens[i], t, sizeof(*t));
			return 0;
		}
	*ret_was_present = false;
	if (a->status.n_tokens >= TOKENS_MAX)
		return -EMSGSIZE;
	n = realloc(a->status.tokens, (a->status.n_tokens + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	a->status.tokens = n;
	memcpy(&n[a->status.n_tokens++], t, sizeof(*t));
	return 0;
}

/* Takes over *k's subkeys. */
static int upsert_key(struct app *a, struct key *k)
{
	struct key *old = mirror_find_key(a, k->fingerprint), *n;

	if (old) {
		key_done(old);
		*old = *k;
		memset(k, 0, sizeof(*k));
		return 0;
	}
	if (a->status.n_keys >= KEYS_MAX)
		return -EMSGSIZE;
	n = realloc(a->status.keys, (a->status.n_keys + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	a->status.keys = n;
	n[a->status.n_keys++] = *k;
	memset(k, 0, sizeof(*k));
	return 0;
}

static void remove_key(struct app *a, const char *fpr)
{
	struct key *k = mirror_find_key(a, fpr);

	if (!k)
		return;
	key_done(k);
	*k = a->status.keys[--a->status.n_keys];
}

static void finding_raised(struct app *a, const struct finding *f)
{
	char id[NOTIFY_STATE_ID_MAX], other[NOTIFY_STATE_ID_MAX];
	struct finding *n;

	/* Raised again (new level or words): it replaces the one we hold. */
	announce_finding_id(id, sizeof(id), f);
	for (size_t i = 0; i < a->status.n_findings; i++) {
		announce_finding_id(other, sizeof(other), &a->status.findings[i]);
		if (streq(id, other)) {
			a->status.findings[i] = *f;
			announce_finding(a, f);
			return;
		}
	}
	if (a->status.n_findings >= FINDINGS_MAX)
		return;
	n = realloc(a->status.findings, (a->status.n_findings + 1) * sizeof(*n));
	if (!n)
		return;
	a->status.findings = n;
	memcpy(&n[a->status.n_findings++], f, sizeof(*f));
	announce_finding(a, f);
}

static void finding_cleared(struct app *a, const struct finding *f)
{
	char id[NOTIFY_STATE_ID_MAX], other[NOTIFY_STATE_ID_MAX];

	announce_finding_id(id, sizeof(id), f);
	for (size_t i = 0; i < a->status.n_findings; i++) {
		announce_finding_id(other, sizeof(other), &a->status.findings[i]);
		if (streq(id, other)) {
			a->status.findings[i] = a->status.findings[--a->status.n_findings];
			break;
		}
	}
	/* Raised again later, it is news again. */
	popup_pending_drop(a, id);
	if (notify_state_clear(a->state, id) > 0)
		app_save(a);
}

/* The daemon's [expiry] and [notify] settings win over our reading of keyctl.conf, which may
 * not be the file the daemon runs with; the command line wins over both. */
static void adopt_daemon_info(struct app *a, const struct daemon_info *d)
{
	if (d->now > 0)
		a->clock_offset = d->now - (app_now(a) - a->clock_offset);
	if (!a->own_thresholds && d->n_thresholds > 0 && d->n_thresholds <= THRESHOLDS_MAX) {
		memcpy(a->thresholds, d->thresholds, d->n_thresholds * sizeof(unsigned));
		a->policy.n_thresholds = d->n_thresholds;
		if (d->warning_days >= d->critical_days) {
			a->policy.warning_days = d->warning_days;
			a->policy.critical_days = d->critical_days;
		}
	}
	if (!a->own_url && d->renewal_url[0])
		memcpy(a->renewal_url, d->renewal_url, sizeof(a->renewal_url));
}

void mirror_apply(struct app *a, struct keyctl_event *e)
{
	bool was_present = false;
	int64_t now;

	if (e->has_daemon && e->type != EVENT_STATE)
		adopt_daemon_info(a, &e->daemon);
	now = app_now(a);
	switch (e->type) {
	case EVENT_STATE:
		adopt_daemon_info(a, &e->status.daemon);
		now = app_now(a);
		keyctl_status_done(&a->status);
		a->status = e->status;
		memset(&e->status, 0, sizeof(e->status));
		a->synced = true;
		a->backoff = 1;
		a->retries = 0;
		a->n_inserted = 0;
		/* Snoozes that ended while we were not running or the daemon was away. */
		announce_wake_snoozes(a, now);
		announce_all(a);
		touch_popup_sync(a);
		break;
	case EVENT_TOKEN_ADDED:
	case EVENT_TOKEN_CHANGED:
		if (upsert_token(a, &e->token, &was_present) < 0)
			break;
		if (e->token.present && !was_present)
			announce_token_inserted(a, e->token.id);
		break;
	case EVENT_TOKEN_REMOVED:
		e->token.present = false;
		(void)upsert_token(a, &e->token, &was_present);
		touch_popup_close(a, e->token.id);
		break;
	case EVENT_TOUCH_PENDING:
		(void)upsert_token(a, &e->token, &was_present);
		touch_popup_show(a, &e->token);
		break;
	case EVENT_TOUCH_DONE:
		(void)upsert_token(a, &e->token, &was_present);
		touch_popup_close(a, e->token.id);
		break;
	case EVENT_KEY_ADDED:
	case EVENT_KEY_CHANGED:
	case EVENT_LEVEL_CHANGED: {
		char fpr[FPR_HEX_MAX];
		struct key *k;

		memcpy(fpr, e->key.fingerprint, sizeof(fpr)); /* upsert_key() takes e->key over */
		if (upsert_key(a, &e->key) < 0)
			break;
		k = mirror_find_key(a, fpr);
		if (k && announce_key(a, k, now))
			app_save(a);
		break;
	}
	case EVENT_KEY_REMOVED:
		remove_key(a, e->key.fingerprint);
		break;
	case EVENT_FINDING_RAISED:
		finding_raised(a, &e->finding);
		break;
	case EVENT_FINDING_CLEARED:
		finding_cleared(a, &e->finding);
		break;
	default:
		break;
	}
	popup_flush(a);
	announce_rearm_wake(a);
}
