/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's popups (libnotify): showing a notification with its Snooze and Details buttons
 * and what they do, the queue of notifications that wait for a server that can show them, and
 * watching org.freedesktop.Notifications come and go (g_bus_watch_name) to show them then. A
 * shown notification is recorded in the state file, so it is announced once.
 *
 * Does not: decide what is news (notify-announce.c) or word it (notify-text.c).
 */
#include <libnotify/notify.h>
#include <stdio.h>

#include "config-build.h"
#include "notify-app.h"

#define SNOOZE_S 86400
#define NOTIFICATIONS_NAME "org.freedesktop.Notifications"

static void refresh_caps(struct app *a)
{
	GList *caps = notify_get_server_caps();

	a->caps_actions = a->caps_markup = false;
	for (GList *l = caps; l; l = l->next) {
		if (streq(l->data, "actions"))
			a->caps_actions = true;
		else if (streq(l->data, "body-markup"))
			a->caps_markup = true;
	}
	g_list_free_full(caps, g_free);
}

struct action_ctx {
	struct app *app;
	struct pending p;
};

static int show(struct app *a, const struct pending *p, bool with_actions);

static void on_closed(NotifyNotification *n, gpointer data)
{
	g_object_unref(n);
}

static void on_snooze(NotifyNotification *n, char *action, gpointer data)
{
	struct action_ctx *c = data;
	int r;

	r = notify_state_put(c->app->state, c->p.id, c->p.threshold, c->p.expires,
	                     app_now(c->app) + SNOOZE_S);
	if (r < 0)
		log_msg("Failed to snooze %s: %s, ignoring", c->p.id, strerror(-r));
	app_save(c->app);
	announce_rearm_wake(c->app);
	notify_notification_close(n, NULL);
}

static void on_details(NotifyNotification *n, char *action, gpointer data)
{
	struct action_ctx *c = data;
	g_autofree char *term = g_find_program_in_path("x-terminal-emulator");
	g_autofree char *status = g_find_program_in_path("keyctl-status");
	g_autoptr(GError) err = NULL;

	if (!status)
		status = g_strdup(BINDIR "/keyctl-status");
	if (term) {
		g_autofree char *script =
		        g_strdup_printf("'%s'; printf '\\nPress Enter to close. '; read _", status);
		char *argv[] = { term, (char *)"-e", (char *)"sh", (char *)"-c", script, NULL };

		if (g_spawn_async(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, NULL, &err))
			return;
		log_msg("Failed to run %s: %s, showing the details instead", term, err->message);
	}
	show(c->app, &c->p, false);
}

/* Shows p; with_actions false shows its details version without buttons. 0 or -EIO. */
static int show(struct app *a, const struct pending *p, bool with_actions)
{
	const struct notify_text *t = with_actions ? &p->text : &p->details;
	g_autofree char *body =
	        a->caps_markup ? g_markup_escape_text(t->body, -1) : g_strdup(t->body);
	NotifyNotification *n = notify_notification_new(t->summary, body, "dialog-password");
	g_autoptr(GError) err = NULL;

	notify_notification_set_urgency(n, (NotifyUrgency)t->urgency);
	notify_notification_set_category(n, "x-keyctl.expiry");
	if (with_actions) {
		if (p->snoozable) {
			struct action_ctx *c = g_new0(struct action_ctx, 1);

			c->app = a;
			c->p = *p;
			notify_notification_add_action(n, "snooze", "Snooze 1 day", on_snooze, c,
			                               g_free);
		}
		struct action_ctx *c = g_new0(struct action_ctx, 1);

		c->app = a;
		c->p = *p;
		notify_notification_add_action(n, "details", "Details", on_details, c, g_free);
	}
	/* The object lives until the server says it was closed, so that its actions can fire. */
	g_signal_connect(n, "closed", G_CALLBACK(on_closed), NULL);
	if (!notify_notification_show(n, &err)) {
		log_msg("Failed to show \"%s\": %s; keeping it until a notification server appears",
		        t->summary, err ? err->message : "unknown error");
		g_object_unref(n);
		return -EIO;
	}
	return 0;
}

static void maybe_quit(struct app *a)
{
	if (a->once && a->synced && g_queue_is_empty(&a->pending))
		g_main_loop_quit(a->loop);
}

/* Oldest first; stops at the first failure and keeps the rest. */
void popup_flush(struct app *a)
{
	struct pending *p;
	bool dirty = false;

	if (!g_queue_is_empty(&a->pending))
		refresh_caps(a);
	while ((p = g_queue_peek_head(&a->pending))) {
		if (show(a, p, a->caps_actions) < 0)
			break;
		if (p->id[0]) {
			if (notify_state_put(a->state, p->id, p->threshold, p->expires, 0) < 0)
				log_msg("Failed to remember %s, ignoring", p->id);
			dirty = true;
		}
		g_free(g_queue_pop_head(&a->pending));
	}
	if (dirty) {
		app_save(a);
		announce_rearm_wake(a);
	}
	maybe_quit(a);
}

bool popup_pending_has(struct app *a, const char *id, unsigned threshold)
{
	for (GList *l = a->pending.head; l; l = l->next) {
		struct pending *p = l->data;

		if (p->threshold == threshold && streq(p->id, id))
			return true;
	}
	return false;
}

void popup_pending_drop(struct app *a, const char *id)
{
	for (GList *l = a->pending.head, *next; l; l = next) {
		struct pending *p = l->data;

		next = l->next;
		if (streq(p->id, id)) {
			g_free(p);
			g_queue_delete_link(&a->pending, l);
		}
	}
}

static void on_name_appeared(GDBusConnection *bus, const char *name, const char *owner,
                             gpointer data)
{
	struct app *a = data;

	a->server_present = true;
	refresh_caps(a);
	popup_flush(a);
}

static void on_name_vanished(GDBusConnection *bus, const char *name, gpointer data)
{
	struct app *a = data;

	/* GLib calls this with no connection when it could not reach the bus at all. */
	if (!bus && !a->no_bus)
		log_msg("No session bus: notifications wait until one can be reached");
	a->no_bus = !bus;

	if (a->server_present)
		log_msg("The notification server went away; waiting for one");
	a->server_present = false;
}

void popup_watch_server(struct app *a)
{
	g_queue_init(&a->pending);
	a->bus_watch = g_bus_watch_name(G_BUS_TYPE_SESSION, NOTIFICATIONS_NAME,
	                                G_BUS_NAME_WATCHER_FLAGS_NONE, on_name_appeared,
	                                on_name_vanished, a, NULL);
}

void popup_why_unshown(const struct app *a, char *buf, size_t size)
{
	unsigned n = g_queue_get_length((GQueue *)&a->pending);
	const char *why;

	if (n == 0) {
		buf[0] = '\0';
		return;
	}
	if (a->no_bus)
		why = "no session bus (is DBUS_SESSION_BUS_ADDRESS set?)";
	else if (!a->server_present)
		why = "no notification server (nobody owns " NOTIFICATIONS_NAME " on the session "
		      "bus)";
	else
		why = "the notification server did not take them";
	snprintf(buf, size, "%u notification%s not shown: %s", n, n == 1 ? "" : "s", why);
}

/* What was never shown is dropped: it is announced again at the next start, not recorded. */
void popup_done(struct app *a)
{
	struct pending *p;

	if (a->bus_watch)
		g_bus_unwatch_name(a->bus_watch);
	a->bus_watch = 0;
	while ((p = g_queue_pop_head(&a->pending)))
		g_free(p);
}
