/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify: follows keyctld's Watch inside a GLib main loop and raises desktop notifications
 * (libnotify) when a subkey crosses an expiry threshold, when a token holding a warned subkey is
 * plugged in, and for audit findings at warning or worse. Each (subject, threshold) is announced
 * once, remembered in notify-state.c's file across restarts and logins. It outlives both of its
 * peers: a daemon whose socket goes away is waited for (inotify on its socket's directory,
 * daemon-wait.c, after a few retries 1 s to 16 s apart); a connection that ends or is refused
 * while the socket is there (the daemon full, restarting, or not answering) is retried with a
 * backoff from 1 s doubling to 60 s, for as long as it takes; either way it is resynced from
 * Watch's "state" reply; notifications made while no notification server owns
 * org.freedesktop.Notifications wait and are shown when one appears (g_bus_watch_name).
 *
 * Does not: compute levels (the daemon does), compose texts (notify-text.c), or poll: every wait
 * is a GLib fd watch or a timer armed for a known moment (a threshold, a snooze's end).
 */
#include <getopt.h>
#include <glib-unix.h>
#include <ini.h>
#include <inttypes.h>
#include <libnotify/notify.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* GLib has its own MIN and MAX; util.h's are the same but must not meet them. */
#undef MIN
#undef MAX
#include "client.h"
#include "codec.h"
#include "daemon-wait.h"
#include "config-build.h"
#include "expiry-math.h"
#include "fileio.h"
#include "notify-state.h"
#include "notify-text.h"

#define BACKOFF_MAX_S 60u
/* Socket missing: 1, 2, 4, 8, 16 s; then only its appearance. */
#define RETRIES_WHILE_WATCHING 5u
#define CONF_FILE_MAX (64u * 1024u) /* keyctld refuses larger ones too */
#define SNOOZE_S 86400
#define INSERT_SETTLE_MS 1500 /* let the daemon match a plugged-in card to its keys */
#define THRESHOLDS_MAX 16
#define NOTIFICATIONS_NAME "org.freedesktop.Notifications"

struct pending {
	char id[NOTIFY_STATE_ID_MAX]; /* the record to write once shown; "" for none */
	unsigned threshold;
	int64_t expires;
	bool snoozable;
	struct notify_text text; /* with a Details button */
	struct notify_text details; /* the same with the details in the body */
};

struct app {
	GMainLoop *loop;
	const char *socket; /* NULL: the default path */
	char state_path[PATH_MAX];
	char renewal_url[URL_MAX];
	unsigned thresholds[THRESHOLDS_MAX];
	struct expiry_policy policy;
	bool once;
	bool own_thresholds, own_url; /* set on the command line: the daemon's do not override */
	struct notify_state *state;

	struct varlink_client *client;
	guint fd_source, reconnect_source, wake_source, bus_watch, insert_source;
	/* CLOCK_REALTIME, absolute, cancelled when the clock is set: it fires on time after a
	 * suspend (a monotonic timeout would not count the sleep) and never in between. */
	int wake_fd;
	unsigned backoff, retries;
	int64_t checked_at; /* the daemon's clock at the last check_all() */
	struct daemon_wait wait; /* armed while the daemon is away */
	guint wait_source;
	bool synced; /* the "state" reply of this connection arrived */

	bool server_present, caps_actions, caps_markup;
	GQueue pending; /* struct pending * */
	char inserted[TOKENS_MAX][TOKEN_ID_MAX];
	size_t n_inserted;

	struct keyctl_status status;
};

static int64_t clock_offset;
/* The longest wait between reconnects; KEYCTL_NOTIFY_RETRY_MAX lowers it for tests. */
static unsigned backoff_max = BACKOFF_MAX_S;

/* The daemon's clock as last seen, so that "in N days" agrees with keyctl-status. */
static int64_t now_s(void)
{
	struct timespec ts;

	/* Not time(): it is the coarse clock, a tick behind the moment our timerfd fires at. */
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec + clock_offset;
}

_printf_(1, 2) static void log_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("keyctl-notify: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void app_save(struct app *a)
{
	int r = notify_state_save(a->state, a->state_path);

	if (r < 0)
		log_msg("Failed to save %s: %s, ignoring", a->state_path, strerror(-r));
}

/* ---- Notifications ---------------------------------------------------------------------- */

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

static void rearm_wake(struct app *a);
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
	                     now_s() + SNOOZE_S);
	if (r < 0)
		log_msg("Failed to snooze %s: %s, ignoring", c->p.id, strerror(-r));
	app_save(c->app);
	rearm_wake(c->app);
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

/* Shows what waits, oldest first; stops at the first failure and keeps the rest. */
static void flush(struct app *a)
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
		rearm_wake(a);
	}
	maybe_quit(a);
}

static bool pending_has(struct app *a, const char *id, unsigned threshold)
{
	for (GList *l = a->pending.head; l; l = l->next) {
		struct pending *p = l->data;

		if (p->threshold == threshold && streq(p->id, id))
			return true;
	}
	return false;
}

static void pending_drop(struct app *a, const char *id)
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
	flush(a);
}

static void on_name_vanished(GDBusConnection *bus, const char *name, gpointer data)
{
	struct app *a = data;

	if (a->server_present)
		log_msg("The notification server went away; waiting for one");
	a->server_present = false;
}

/* ---- What is announced ------------------------------------------------------------------ */

static const struct token *find_token(const struct app *a, const char *id)
{
	for (size_t i = 0; !isempty(id) && i < a->status.n_tokens; i++)
		if (streq(a->status.tokens[i].id, id))
			return &a->status.tokens[i];
	return NULL;
}

static struct key *find_key(const struct app *a, const char *fpr)
{
	for (size_t i = 0; !isempty(fpr) && i < a->status.n_keys; i++)
		if (streq(a->status.keys[i].fingerprint, fpr))
			return &a->status.keys[i];
	return NULL;
}

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
	const struct token *t = find_token(a, s->token_id);

	strcpy_trunc(p->id, sizeof(p->id), s->fingerprint);
	p->threshold = threshold;
	p->expires = s->expires;
	p->snoozable = true;
	notify_text_expiry(k, s, t, a->renewal_url, false, now, &p->text);
	notify_text_expiry(k, s, t, a->renewal_url, true, now, &p->details);
	g_queue_push_tail(&a->pending, p);
}

/* Returns true when the state file changed. */
static bool check_key(struct app *a, const struct key *k, int64_t now)
{
	bool dirty = false;

	for (size_t j = 0; j < k->n_subkeys; j++) {
		const struct subkey *s = &k->subkeys[j];
		bool changed = false;
		int t, r;

		if (s->revoked || s->disabled || !notify_state_id_valid(s->fingerprint))
			continue;
		t = subkey_threshold(a, s, now);
		r = notify_state_check_subkey(a->state, s->fingerprint, s->expires, s->level, t,
		                              &changed);
		if (changed) {
			pending_drop(a, s->fingerprint);
			dirty = true;
		}
		if (r > 0 && !pending_has(a, s->fingerprint, (unsigned)t))
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

static void finding_id(char *buf, size_t size, const struct finding *f)
{
	const char *subject = !isempty(f->subkey)  ? f->subkey
	                      : !isempty(f->key)   ? f->key
	                      : !isempty(f->token) ? f->token
	                                           : "-";

	snprintf(buf, size, "finding/%s/%s", f->rule, subject);
	for (char *c = buf; *c; c++)
		if (!notify_state_id_valid((char[]){ *c, 0 }))
			*c = '_';
}

static void check_finding(struct app *a, const struct finding *f)
{
	char id[NOTIFY_STATE_ID_MAX];
	struct pending *p;

	if (f->level < LEVEL_WARNING || f->level >= LEVEL_MAX || finding_is_expiry(f))
		return;
	finding_id(id, sizeof(id), f);
	if (notify_state_find(a->state, id, f->level) || pending_has(a, id, f->level))
		return;
	p = g_new0(struct pending, 1);
	strcpy_trunc(p->id, sizeof(p->id), id);
	p->threshold = f->level;
	p->snoozable = true;
	notify_text_finding(f, find_key(a, f->key), find_token(a, f->token), &p->text);
	p->details = p->text;
	g_queue_push_tail(&a->pending, p);
}

static void check_all(struct app *a)
{
	int64_t now = now_s();
	bool dirty = false;

	a->checked_at = now;
	for (size_t i = 0; i < a->status.n_keys; i++)
		dirty |= check_key(a, &a->status.keys[i], now);
	for (size_t i = 0; i < a->status.n_findings; i++)
		check_finding(a, &a->status.findings[i]);
	if (dirty)
		app_save(a);
}

/*
 * Snoozes that ended: the announcement is forgotten, so the usual checks (check_all after this,
 * or the key's own event when the daemon has not listed it yet) show it again if it still
 * holds. Deciding here, against a daemon state that may not list the key yet, would drop it
 * for good.
 */
static void wake_snoozes(struct app *a, int64_t now)
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
	wake_snoozes(a, now_s());
	check_all(a);
	flush(a);
	rearm_wake(a);
	return G_SOURCE_CONTINUE;
}

/* One timer for the next known moment: a threshold crossed by the clock or a snooze's end. */
static void rearm_wake(struct app *a)
{
	/* From the last check, not from now: a crossing between the two (the clock ticked while we
	 * worked) is then still ahead of it, and is handled at once rather than skipped. */
	int64_t now = a->checked_at ? MIN(now_s(), a->checked_at) : now_s();
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
	/* Our own clock's moment for the daemon's "next" (see clock_offset). */
	its.it_value.tv_sec = (time_t)MAX(next - clock_offset, 1);
	if (timerfd_settime(a->wake_fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET, &its, NULL) <
	    0)
		log_msg("Failed to arm the wake-up timer: %s", strerror(errno));
}

static gboolean on_insert_settled(gpointer data)
{
	struct app *a = data;
	int64_t now = now_s();

	a->insert_source = 0;
	for (size_t i = 0; i < a->n_inserted; i++) {
		const struct token *t = find_token(a, a->inserted[i]);
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
	flush(a);
	return G_SOURCE_REMOVE;
}

static void token_inserted(struct app *a, const char *id)
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

/* ---- The daemon's state ----------------------------------------------------------------- */

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
	struct key *old = find_key(a, k->fingerprint), *n;

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
	struct key *k = find_key(a, fpr);

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
	finding_id(id, sizeof(id), f);
	for (size_t i = 0; i < a->status.n_findings; i++) {
		finding_id(other, sizeof(other), &a->status.findings[i]);
		if (streq(id, other)) {
			a->status.findings[i] = *f;
			check_finding(a, f);
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
	check_finding(a, f);
}

static void finding_cleared(struct app *a, const struct finding *f)
{
	char id[NOTIFY_STATE_ID_MAX], other[NOTIFY_STATE_ID_MAX];

	finding_id(id, sizeof(id), f);
	for (size_t i = 0; i < a->status.n_findings; i++) {
		finding_id(other, sizeof(other), &a->status.findings[i]);
		if (streq(id, other)) {
			a->status.findings[i] = a->status.findings[--a->status.n_findings];
			break;
		}
	}
	/* Raised again later, it is news again. */
	pending_drop(a, id);
	if (notify_state_clear(a->state, id) > 0)
		app_save(a);
}

/* The daemon's [expiry] and [notify] settings win over our reading of keyctl.conf, which may
 * not be the file the daemon runs with; the command line wins over both. */
static void adopt_daemon_info(struct app *a, const struct daemon_info *d)
{
	if (d->now > 0)
		clock_offset = d->now - (now_s() - clock_offset);
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

static void handle_event(struct app *a, struct keyctl_event *e)
{
	bool was_present = false;
	int64_t now;

	if (e->has_daemon && e->type != EVENT_STATE)
		adopt_daemon_info(a, &e->daemon);
	now = now_s();
	switch (e->type) {
	case EVENT_STATE:
		adopt_daemon_info(a, &e->status.daemon);
		now = now_s();
		keyctl_status_done(&a->status);
		a->status = e->status;
		memset(&e->status, 0, sizeof(e->status));
		a->synced = true;
		a->backoff = 1;
		a->retries = 0;
		a->n_inserted = 0;
		/* Snoozes that ended while we were not running or the daemon was away. */
		wake_snoozes(a, now);
		check_all(a);
		break;
	case EVENT_TOKEN_ADDED:
	case EVENT_TOKEN_CHANGED:
		if (upsert_token(a, &e->token, &was_present) < 0)
			break;
		if (e->token.present && !was_present)
			token_inserted(a, e->token.id);
		break;
	case EVENT_TOKEN_REMOVED:
		e->token.present = false;
		(void)upsert_token(a, &e->token, &was_present);
		break;
	case EVENT_KEY_ADDED:
	case EVENT_KEY_CHANGED:
	case EVENT_LEVEL_CHANGED: {
		char fpr[FPR_HEX_MAX];
		struct key *k;

		memcpy(fpr, e->key.fingerprint, sizeof(fpr)); /* upsert_key() takes e->key over */
		if (upsert_key(a, &e->key) < 0)
			break;
		k = find_key(a, fpr);
		if (k && check_key(a, k, now))
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
	flush(a);
	rearm_wake(a);
}

/* ---- The connection --------------------------------------------------------------------- */

static gboolean on_reconnect(gpointer data);

static void disconnect(struct app *a, bool from_fd_callback)
{
	if (a->fd_source && !from_fd_callback)
		g_source_remove(a->fd_source);
	a->fd_source = 0;
	a->client = varlink_client_free(a->client);
	a->synced = false;
}

static gboolean on_socket_event(gint fd, GIOCondition cond, gpointer data);

static void stop_waiting(struct app *a)
{
	if (a->wait_source)
		g_source_remove(a->wait_source);
	a->wait_source = 0;
	daemon_wait_done(&a->wait);
}

/* Watches for the daemon's socket to appear; false when that cannot be done here. */
static bool start_waiting(struct app *a)
{
	char path[PATH_MAX];
	int r;

	if (a->wait_source)
		return true;
	r = a->socket ? strcpy_bounded(path, sizeof(path), a->socket)
	              : varlink_client_socket_path(path, sizeof(path));
	if (r >= 0)
		r = daemon_wait_arm(&a->wait, path);
	if (r < 0) {
		log_msg("Cannot watch for the daemon's socket (%s); retrying up to every %u s",
		        strerror(-r), backoff_max);
		daemon_wait_done(&a->wait);
		return false;
	}
	a->wait_source = g_unix_fd_add(daemon_wait_fd(&a->wait), G_IO_IN, on_socket_event, a);
	return true;
}

/*
 * The connection ended or could not be made; why: -ENOENT when the socket is missing, else
 * another -errno. A missing socket's appearing is the news (the daemon, or systemd's socket
 * unit, creates it when it starts): after a few retries we only wait for it, without polling.
 * A socket that is there but refuses, closes or ends our Watch (a daemon that is full, busy or
 * restarting) creates no news, so that is retried with backoff, without end.
 */
static void schedule_reconnect(struct app *a, int why)
{
	bool watching = start_waiting(a);

	if (a->reconnect_source)
		return;
	if (watching && why == -ENOENT && a->retries >= RETRIES_WHILE_WATCHING)
		return;
	a->retries++;
	a->reconnect_source = g_timeout_add_seconds(a->backoff, on_reconnect, a);
	a->backoff = MIN(a->backoff * 2, backoff_max);
}

static gboolean on_readable(gint fd, GIOCondition cond, gpointer data)
{
	struct app *a = data;

	for (;;) {
		json_object *params = NULL;
		_cleanup_(freep) char *error = NULL;
		struct keyctl_event e;
		int r;

		r = varlink_client_next(a->client, 0, &params, &error);
		if (r == -EAGAIN)
			return G_SOURCE_CONTINUE;
		if (r < 0 || r == 0 || r == 2) {
			if (r == 2)
				log_msg("Watch failed: %s; retrying in %u s",
				        error ? error : "unknown error", a->backoff);
			else if (r == 0)
				log_msg("The daemon ended Watch; reconnecting in %u s", a->backoff);
			else
				log_msg("Lost the daemon: %s; reconnecting", strerror(-r));
			json_object_put(params);
			disconnect(a, true);
			schedule_reconnect(a, r < 0 ? r : -ECONNRESET);
			return G_SOURCE_REMOVE;
		}
		r = codec_event_from_json(params, &e);
		json_object_put(params);
		if (r < 0) {
			/* One event we cannot read: skip it rather than lose the connection. */
			log_msg("Failed to decode a Watch event: %s, ignoring", strerror(-r));
			continue;
		}
		handle_event(a, &e);
		keyctl_event_done(&e);
		if (!a->client) /* --once may have quit; the loop ends after this callback */
			return G_SOURCE_REMOVE;
	}
}

static int app_connect(struct app *a)
{
	int r;

	r = varlink_client_connect(a->socket, &a->client);
	if (r < 0)
		return r;
	r = varlink_client_call_more(a->client, "io.keyctl.Watch", NULL);
	if (r < 0) {
		a->client = varlink_client_free(a->client);
		return r;
	}
	a->fd_source = g_unix_fd_add(varlink_client_fd(a->client), G_IO_IN | G_IO_HUP | G_IO_ERR,
	                             on_readable, a);
	return 0;
}

static void try_connect(struct app *a)
{
	int r = app_connect(a);

	if (r >= 0) {
		stop_waiting(a);
		return;
	}
	if (r != -ENOENT || a->retries < RETRIES_WHILE_WATCHING || !a->wait_source)
		log_msg("Daemon not reachable (%s); retrying in %u s", strerror(-r), a->backoff);
	else if (a->retries == RETRIES_WHILE_WATCHING)
		log_msg("Daemon not reachable (%s); waiting for its socket", strerror(-r));
	schedule_reconnect(a, r);
}

static gboolean on_reconnect(gpointer data)
{
	struct app *a = data;

	a->reconnect_source = 0;
	try_connect(a);
	return G_SOURCE_REMOVE;
}

static gboolean on_socket_event(gint fd, GIOCondition cond, gpointer data)
{
	struct app *a = data;
	int r = daemon_wait_process(&a->wait);

	if (r < 0) {
		/* The watch broke: fall back to retrying, so we still find the daemon. */
		log_msg("Watching for the daemon's socket failed: %s", strerror(-r));
		a->wait_source = 0;
		daemon_wait_done(&a->wait);
		a->retries = 0;
		schedule_reconnect(a, r);
		return G_SOURCE_REMOVE;
	}
	if (r == 1 && !a->client) {
		/* Appeared: connect now, with a fresh series of retries should it not answer yet.
		 */
		if (a->reconnect_source)
			g_source_remove(a->reconnect_source);
		a->reconnect_source = 0;
		a->backoff = 1;
		a->retries = 0;
		try_connect(a);
	}
	return G_SOURCE_CONTINUE;
}

static gboolean on_signal(gpointer data)
{
	struct app *a = data;

	g_main_loop_quit(a->loop);
	return G_SOURCE_CONTINUE;
}

/* ---- Configuration ---------------------------------------------------------------------- */

/* "30, 14, 7, 3, 1": strictly descending days, as keyctl.conf's [expiry] thresholds. */
static int parse_thresholds(const char *s, unsigned *ret, size_t *ret_n)
{
	unsigned v[THRESHOLDS_MAX];
	size_t n = 0;
	const char *p = s;

	for (;;) {
		char *end;
		unsigned long x;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		x = strtoul(p, &end, 10);
		if (errno != 0 || x > NOTIFY_STATE_THRESHOLD_MAX || x == 0)
			return -EINVAL;
		if (n >= THRESHOLDS_MAX)
			return -E2BIG;
		if (n > 0 && x >= v[n - 1])
			return -EINVAL;
		v[n++] = (unsigned)x;
		p = end;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == 0)
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	memcpy(ret, v, n * sizeof(v[0]));
	*ret_n = n;
	return 0;
}

struct conf_ctx {
	struct app *app;
	const char *path;
};

static int on_conf(void *data, const char *section, const char *name, const char *value)
{
	struct conf_ctx *c = data;
	struct app *a = c->app;
	size_t n;

	if (streq(section, "notify") && streq(name, "renewal-url")) {
		if (strcpy_bounded(a->renewal_url, sizeof(a->renewal_url), value) < 0)
			log_msg("%s: [notify] renewal-url too long, ignoring", c->path);
	} else if (streq(section, "expiry") && streq(name, "thresholds")) {
		if (parse_thresholds(value, a->thresholds, &n) < 0)
			log_msg("%s: [expiry] thresholds: bad list, ignoring", c->path);
		else
			a->policy.n_thresholds = n;
	}
	return 1; /* the daemon judges the rest of the file */
}

static void read_config(struct app *a)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char path[PATH_MAX];
	struct conf_ctx c = { a, path };
	_cleanup_(freep) uint8_t *buf = NULL;
	size_t n;
	int k, r;

	if (!isempty(xdg) && xdg[0] == '/')
		k = snprintf(path, sizeof(path), "%s/keyctl/keyctl.conf", xdg);
	else if (!isempty(home))
		k = snprintf(path, sizeof(path), "%s/.config/keyctl/keyctl.conf", home);
	else
		return;
	if (k < 0 || (size_t)k >= sizeof(path))
		return;
	/* Bounded like the daemon's read of the same file: a FIFO or /dev/zero there must not
	 * hang us or fill memory. */
	r = file_read_bounded(path, CONF_FILE_MAX, &buf, &n);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		log_msg("%s: %s, using the defaults", path,
		        r == -EINVAL ? "not a regular file" : strerror(-r));
		return;
	}
	if (memchr(buf, 0, n) || ini_parse_string((const char *)buf, on_conf, &c) != 0)
		log_msg("%s: not fully readable, using what was read", path);
}

static void help(void)
{
	printf("Usage: keyctl-notify [OPTION...]\n"
	       "Desktop notifications before OpenPGP subkeys on hardware tokens expire.\n\n"
	       "  -h --help               show this help\n"
	       "     --version            show the version\n"
	       "     --socket=PATH        keyctld's socket (default $KEYCTL_SOCKET,\n"
	       "                          else $XDG_RUNTIME_DIR/keyctl/socket)\n"
	       "     --state-file=PATH    what was announced (default\n"
	       "                          $XDG_STATE_HOME/keyctl/notified)\n"
	       "     --thresholds=DAYS    e.g. 30,14,7,3,1 (default: keyctl.conf's [expiry])\n"
	       "     --renewal-url=URL    renewal instructions (default $KEYCTL_RENEWAL_URL,\n"
	       "                          else keyctl.conf's [notify] renewal-url)\n"
	       "     --once               exit once the current state is announced\n");
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = { 30, 14, 7, 3, 1 };
	enum { ARG_VERSION = 0x100, ARG_SOCKET, ARG_STATE, ARG_THRESHOLDS, ARG_URL, ARG_ONCE };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "socket", required_argument, NULL, ARG_SOCKET },
		{ "state-file", required_argument, NULL, ARG_STATE },
		{ "thresholds", required_argument, NULL, ARG_THRESHOLDS },
		{ "renewal-url", required_argument, NULL, ARG_URL },
		{ "once", no_argument, NULL, ARG_ONCE },
		{}
	};
	struct app a = { .backoff = 1 };
	const char *opt_thresholds = NULL, *opt_url = NULL, *env_url, *env_retry;
	struct pending *p;
	size_t n;
	int c, r;

	memcpy(a.thresholds, defaults, sizeof(defaults));
	daemon_wait_init(&a.wait);
	a.policy = (struct expiry_policy){ .thresholds = a.thresholds,
		                           .n_thresholds = ELEMENTSOF(defaults),
		                           .warning_days = 14,
		                           .critical_days = 3 };

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("keyctl-notify %s\n", PACKAGE_VERSION);
			return 0;
		case ARG_SOCKET:
			a.socket = optarg;
			break;
		case ARG_STATE:
			if (strcpy_bounded(a.state_path, sizeof(a.state_path), optarg) < 0) {
				log_msg("--state-file: path too long");
				return 2;
			}
			break;
		case ARG_THRESHOLDS:
			opt_thresholds = optarg;
			break;
		case ARG_URL:
			opt_url = optarg;
			break;
		case ARG_ONCE:
			a.once = true;
			break;
		default:
			return 2;
		}
	if (optind < argc) {
		log_msg("Unexpected argument: %s", argv[optind]);
		return 2;
	}

	read_config(&a);
	if (opt_thresholds) {
		if (parse_thresholds(opt_thresholds, a.thresholds, &n) < 0) {
			log_msg("--thresholds: want strictly descending days, e.g. 30,14,7,3,1");
			return 2;
		}
		a.policy.n_thresholds = n;
		a.own_thresholds = true;
	}
	env_retry = getenv("KEYCTL_NOTIFY_RETRY_MAX");
	if (env_retry && *env_retry) {
		char *end;
		unsigned long v = strtoul(env_retry, &end, 10);

		if (*end || v < 1 || v > BACKOFF_MAX_S) {
			log_msg("KEYCTL_NOTIFY_RETRY_MAX: want seconds from 1 to %u",
			        BACKOFF_MAX_S);
			return 2;
		}
		backoff_max = (unsigned)v;
	}
	env_url = getenv("KEYCTL_RENEWAL_URL");
	if (opt_url || env_url) {
		a.own_url = true;
		if (strcpy_bounded(a.renewal_url, sizeof(a.renewal_url),
		                   opt_url ? opt_url : env_url) < 0) {
			log_msg("Renewal URL too long (max %d bytes)", URL_MAX - 1);
			return 2;
		}
	}
	if (!a.state_path[0]) {
		r = notify_state_default_path(a.state_path, sizeof(a.state_path));
		if (r < 0) {
			log_msg("No place for the state file: %s", strerror(-r));
			return 1;
		}
	}
	r = notify_state_load(a.state_path, &a.state);
	if (r < 0) {
		log_msg("Failed to read %s: %s; starting afresh", a.state_path, strerror(-r));
		r = notify_state_new(&a.state);
		if (r < 0)
			return 1;
	}

	if (!notify_init("keyctl-notify")) {
		log_msg("Failed to initialize libnotify");
		return 1;
	}
	a.loop = g_main_loop_new(NULL, FALSE);
	g_queue_init(&a.pending);
	a.wake_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (a.wake_fd < 0) {
		log_msg("Failed to create a timer: %s", strerror(errno));
		return 1;
	}
	a.wake_source = g_unix_fd_add(a.wake_fd, G_IO_IN, on_wake, &a);
	g_unix_signal_add(SIGTERM, on_signal, &a);
	g_unix_signal_add(SIGINT, on_signal, &a);
	a.bus_watch = g_bus_watch_name(G_BUS_TYPE_SESSION, NOTIFICATIONS_NAME,
	                               G_BUS_NAME_WATCHER_FLAGS_NONE, on_name_appeared,
	                               on_name_vanished, &a, NULL);

	try_connect(&a);
	g_main_loop_run(a.loop);

	g_bus_unwatch_name(a.bus_watch);
	disconnect(&a, false);
	if (a.reconnect_source)
		g_source_remove(a.reconnect_source);
	stop_waiting(&a);
	g_source_remove(a.wake_source);
	close(a.wake_fd);
	if (a.insert_source)
		g_source_remove(a.insert_source);
	while ((p = g_queue_pop_head(&a.pending)))
		g_free(p);
	keyctl_status_done(&a.status);
	notify_state_free(a.state);
	g_main_loop_unref(a.loop);
	notify_uninit();
	return 0;
}
