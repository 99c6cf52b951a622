/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's popups for a token waiting for a touch (doc/touch.md): one per token, shown at
 * once when touch-pending arrives (urgency normal, transient: kept out of the server's history,
 * no sound), updated in place when the daemon learns more (the requester), closed when
 * touch-done arrives, when the token is removed, and when the daemon connection is lost (no one
 * would say when the wait ends). Every wait gets its popup: nothing here goes to the state file,
 * and a wait that finds no notification server is not queued (once shown late, it would be
 * over).
 *
 * Does not: word the popup (notify-text.c), keep the daemon's state (notify-mirror.c), or show
 * the expiry notifications (notify-popup.c).
 */
#include <libnotify/notify.h>

#include "notify-app.h"

/* A wait outlasts no token's own timeout (15 s for a YubiKey's OpenPGP, 30 s for FIDO): past
 * this the server takes the popup down even if touch-done never came. */
#define TOUCH_POPUP_TIMEOUT_MS 60000

static struct touch_popup *find(struct app *a, const char *id)
{
	for (size_t i = 0; i < a->n_touch_popups; i++)
		if (streq(a->touch_popups[i].id, id))
			return &a->touch_popups[i];
	return NULL;
}

/* Drops the entry and its reference; the NotifyNotification goes with its last one. */
static void forget(struct app *a, struct touch_popup *p)
{
	gpointer n = p->notification;

	*p = a->touch_popups[--a->n_touch_popups];
	memset(&a->touch_popups[a->n_touch_popups], 0, sizeof(*p));
	g_object_unref(n);
}

/* The user dismissed it, or the server timed it out: a later wait of the token gets a new one. */
static void on_closed(NotifyNotification *n, gpointer data)
{
	struct app *a = data;

	for (size_t i = 0; i < a->n_touch_popups; i++)
		if (a->touch_popups[i].notification == n) {
			forget(a, &a->touch_popups[i]);
			return;
		}
}

static NotifyNotification *popup_new(struct app *a, const struct notify_text *t)
{
	NotifyNotification *n = notify_notification_new(t->summary, t->body, "input-tablet");

	notify_notification_set_urgency(n, (NotifyUrgency)t->urgency);
	notify_notification_set_category(n, "x-keyctl.touch");
	notify_notification_set_timeout(n, TOUCH_POPUP_TIMEOUT_MS);
	/* Desktop Notifications 1.2: "transient" skips the history, "suppress-sound" the chime. */
	notify_notification_set_hint(n, "transient", g_variant_new_boolean(TRUE));
	notify_notification_set_hint(n, "suppress-sound", g_variant_new_boolean(TRUE));
	g_signal_connect(n, "closed", G_CALLBACK(on_closed), a);
	return n;
}

void touch_popup_show(struct app *a, const struct token *t)
{
	struct touch_popup *p = find(a, t->id);
	struct notify_text text;
	g_autoptr(GError) err = NULL;
	g_autofree char *body = NULL;

	if (a->once || notify_text_touch(t, &text) < 0)
		return;
	/* The body is our own words and a program's name: escaped for servers that read markup. */
	body = a->caps_markup ? g_markup_escape_text(text.body, -1) : g_strdup(text.body);
	snprintf(text.body, sizeof(text.body), "%s", body);
	if (p)
		notify_notification_update(p->notification, text.summary, text.body,
		                           "input-tablet");
	else {
		if (a->n_touch_popups >= TOKENS_MAX)
			return;
		p = &a->touch_popups[a->n_touch_popups++];
		snprintf(p->id, sizeof(p->id), "%s", t->id);
		p->notification = popup_new(a, &text);
	}
	if (!notify_notification_show(p->notification, &err)) {
		log_msg("Failed to show \"%s\": %s, ignoring", text.summary,
		        err ? err->message : "unknown error");
		forget(a, p);
	}
}

void touch_popup_close(struct app *a, const char *token_id)
{
	struct touch_popup *p = find(a, token_id);

	if (!p)
		return;
	/* The server answers with NotificationClosed, which on_closed() would take: it no longer
	 * finds the entry. A server gone already cannot close it; nothing to add then. */
	(void)notify_notification_close(p->notification, NULL);
	forget(a, p);
}

void touch_popup_close_all(struct app *a)
{
	while (a->n_touch_popups > 0)
		touch_popup_close(a, a->touch_popups[0].id);
}

void touch_popup_sync(struct app *a)
{
	for (size_t i = a->n_touch_popups; i > 0; i--) {
		const struct token *t = mirror_find_token(a, a->touch_popups[i - 1].id);

		if (!t || !t->present || !t->touch_waiting)
			touch_popup_close(a, a->touch_popups[i - 1].id);
	}
	for (size_t i = 0; i < a->status.n_tokens; i++) {
		const struct token *t = &a->status.tokens[i];

		if (t->present && t->touch_waiting && !find(a, t->id))
			touch_popup_show(a, t);
	}
}
