/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keyctl-notify announces, and when it looks again: a subkey that crossed an expiry
 * threshold (once per subkey and threshold, as notify-state.c remembers), an audit finding at
 * warning or worse, a token plugged in that holds a warned subkey (after a settling delay), and
 * snoozes that ended. One wall-clock timer is armed for the next such moment.
 *
 * Does not: compute levels (the daemon does), word the texts (notify-text.c) or show them
 * (notify-popup.c).
 */
#include <glib-unix.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "notify-app.h"

#define INSERT_SETTLE_MS 1500 /* let the daemon match a plugged-in card to its keys */

static int subkey_threshold(const struct app *a, const struct subkey *s, int64_t now)
{
	if (s->level == LEVEL_EXPIRED)
		return 0;
	return expiry_threshold_crossed(&a->policy, s->expires, now);
}

static void queue_subkey(struct app *a, const struct key *k, const struct subkey *s,
                         unsigned threshold, int64_t now)
{
	struct pending *p = g_new0(struct pending, 1);
	const struct token *t = mirror_find_token(a, s->token_id);

	strcpy_trunc(p->id, sizeof(p->id), s->fingerprint);
	p->threshold = threshold;
	p->expires = s->expires;
	p->snoozable = true;
	notify_text_expiry(k, s, t, a->renewal_url, false, now, &p->text);
	notify_text_expiry(k, s, t, a->renewal_url, true, now, &p->details);
	g_queue_push_tail(&a->pending, p);
}

bool announce_key(struct app *a, const struct key *k, int64_t now)
{
	bool dirty = false;

	if (key_relied_only(k))
		return false;
	for (size_t j = 0; j < k->n_subkeys; j++) {
		const struct subkey *s = &k->subkeys[j];
		bool changed = false;
		int t, r;

		/* Superseded and acknowledged ones are not announced; a replaced one still counted
		 * (its replacement is not on its card) is the replacement-not-on-card finding's
		 * popup, with the way to move it. */
		if (s->disabled || s->acked || subkey_superseded(k, s) ||
		    !isempty(s->replaced_by) || !notify_state_id_valid(s->fingerprint))
			continue;
		t = subkey_threshold(a, s, now);
		r = notify_state_check_subkey(a->state, s->fingerprint, s->expires, s->level, t,
		                              &changed);
		if (changed) {
			popup_pending_drop(a, s->fingerprint);
			dirty = true;
		}
		if (r > 0 && !popup_pending_has(a, s->fingerprint, (unsigned)t))
			queue_subkey(a, k, s, (unsigned)t, now);
	}
	return dirty;
}

/* Expiry has its own notifications; these findings would repeat them. */
static bool finding_is_expiry(const struct finding *f)
{
	return streq(f->rule, "subkey-expiring") ||
	       streq(f->rule, "subkey-expired-no-replacement") ||
	       streq(f->rule, "expired-key-on-card");
}

/* A finding that names no subkey but a key field and a token (token-advisory's advisory,
 * piv-cert-expiring's slot) is about that token: "finding/piv-cert-expiring/9a@yubikey-12345678",
 * or the same slot of two tokens would be announced once. */
void announce_finding_id(char *buf, size_t size, const struct finding *f)
{
	const char *subject = !isempty(f->subkey)  ? f->subkey
	                      : !isempty(f->key)   ? f->key
	                      : !isempty(f->token) ? f->token
	                                           : "-";
	bool at_token = isempty(f->subkey) && !isempty(f->key) && !isempty(f->token);

	snprintf(buf, size, "finding/%s/%s%s%s", f->rule, subject, at_token ? "@" : "",
	         at_token ? f->token : "");
	for (char *c = buf; *c; c++)
		if (!notify_state_id_valid((char[]){ *c, 0 }))
			*c = '_';
}

void announce_finding(struct app *a, const struct finding *f)
{
	char id[NOTIFY_STATE_ID_MAX];
	struct pending *p;

	/* An acknowledged one has level ok already; a daemon of another version might not. */
	if (f->acked || f->level < LEVEL_WARNING || f->level >= LEVEL_MAX || finding_is_expiry(f))
		return;
	announce_finding_id(id, sizeof(id), f);
	if (notify_state_find(a->state, id, f->level) || popup_pending_has(a, id, f->level))
		return;
	p = g_new0(struct pending, 1);
	strcpy_trunc(p->id, sizeof(p->id), id);
	p->threshold = f->level;
	p->snoozable = true;
	notify_text_finding(f, mirror_find_key(a, f->key), mirror_find_token(a, f->token),
	                    &p->text);
	p->details = p->text;
	g_queue_push_tail(&a->pending, p);
}

/* Against the whole of the daemon's state, as a "state" reply or the clock brings it. */
void announce_all(struct app *a)
{
	int64_t now = app_now(a);
	bool dirty = false;

	a->checked_at = now;
	for (size_t i = 0; i < a->status.n_keys; i++)
		dirty |= announce_key(a, &a->status.keys[i], now);
	for (size_t i = 0; i < a->status.n_findings; i++)
		announce_finding(a, &a->status.findings[i]);
	if (dirty)
		app_save(a);
}

/*
 * Snoozes that ended: the announcement is forgotten, so the usual checks (check_all after this,
 * or the key's own event when the daemon has not listed it yet) show it again if it still
 * holds. Deciding here, against a daemon state that may not list the key yet, would drop it
 * for good.
 */
void announce_wake_snoozes(struct app *a, int64_t now)
{
	if (notify_state_end_snoozes(a->state, now) > 0)
		app_save(a);
}

static gboolean on_wake(gint fd, GIOCondition cond, gpointer data)
{
	struct app *a = data;
	uint64_t expirations;

	/* ECANCELED: the clock was set; EAGAIN: already handled. Either way, look now. */
	(void)!read(fd, &expirations, sizeof(expirations));
	announce_wake_snoozes(a, app_now(a));
	announce_all(a);
	popup_flush(a);
	announce_rearm_wake(a);
	return G_SOURCE_CONTINUE;
}

/* One timer for the next known moment: a threshold crossed by the clock or a snooze's end. */
void announce_rearm_wake(struct app *a)
{
	/* From the last check, not from now: a crossing between the two (the clock ticked while we
	 * worked) is then still ahead of it, and is handled at once rather than skipped. */
	int64_t now = a->checked_at ? MIN(app_now(a), a->checked_at) : app_now(a);
	int64_t next = notify_state_next_snooze(a->state, now);
	struct itimerspec its = { 0 };

	for (size_t i = 0; i < a->status.n_keys; i++)
		for (size_t j = 0; j < a->status.keys[i].n_subkeys; j++) {
			int64_t t = expiry_next_change(&a->policy,
			                               a->status.keys[i].subkeys[j].expires, now);

			if (t > 0 && (next == 0 || t < next))
				next = t;
		}
	if (next == 0) {
		/* Nothing ahead: disarmed until the daemon tells us something new. */
		(void)timerfd_settime(a->wake_fd, 0, &its, NULL);
		return;
	}
	/* Our own clock's moment for the daemon's "next" (see app.clock_offset). */
	its.it_value.tv_sec = (time_t)MAX(next - a->clock_offset, 1);
	if (timerfd_settime(a->wake_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) <
	    0)
		log_msg("Failed to arm the wake-up timer: %s", strerror(errno));
}

static gboolean on_insert_settled(gpointer data)
{
	struct app *a = data;
	int64_t now = app_now(a);

	a->insert_source = 0;
	for (size_t i = 0; i < a->n_inserted; i++) {
		const struct token *t = mirror_find_token(a, a->inserted[i]);
		struct pending *p;

		if (!t || !t->present)
			continue;
		p = g_new0(struct pending, 1);
		if (notify_text_token_inserted(t, a->status.keys, a->status.n_keys, a->renewal_url,
		                               now, &p->text) < 0) {
			g_free(p);
			continue;
		}
		p->details = p->text;
		g_queue_push_tail(&a->pending, p);
	}
	a->n_inserted = 0;
	popup_flush(a);
	return G_SOURCE_REMOVE;
}

/* Announced once the daemon has had time to match the token to its keys. */
void announce_token_inserted(struct app *a, const char *id)
{
	for (size_t i = 0; i < a->n_inserted; i++)
		if (streq(a->inserted[i], id))
			return;
	if (a->n_inserted < TOKENS_MAX)
		strcpy_trunc(a->inserted[a->n_inserted++], TOKEN_ID_MAX, id);
	if (a->insert_source)
		g_source_remove(a->insert_source);
	a->insert_source = g_timeout_add(INSERT_SETTLE_MS, on_insert_settled, a);
}

int announce_start(struct app *a)
{
	a->wake_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (a->wake_fd < 0)
		return -errno;
	a->wake_source = g_unix_fd_add(a->wake_fd, G_IO_IN, on_wake, a);
	return 0;
}

void announce_stop(struct app *a)
{
	if (a->wake_source)
		g_source_remove(a->wake_source);
	a->wake_source = 0;
	if (a->wake_fd >= 0)
		close(a->wake_fd);
	a->wake_fd = -1;
	if (a->insert_source)
		g_source_remove(a->insert_source);
	a->insert_source = 0;
}
