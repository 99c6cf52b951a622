/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's one state (struct app) and what its files call across each other: notify.c
 * (options, settings, start and stop), notify-daemon.c (the connection to keyctld),
 * notify-mirror.c (the daemon's state as Watch tells it), notify-announce.c (what is news, and
 * when to look again), notify-popup.c (libnotify popups, their buttons, and the queue of those
 * not shown yet) and notify-touch.c (the popups of a token waiting for a touch). Everything runs on
 * one GLib main loop: no locking.
 *
 * Does not: declare what notify-state.c and notify-text.c offer (their own headers do), nor
 * serve anything outside keyctl-notify.
 */
#pragma once

#include <glib.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* GLib has its own MIN and MAX; util.h's are the same but must not meet them. */
#undef MIN
#undef MAX
#include "client.h"
#include "codec.h"
#include "path-wait.h"
#include "expiry-math.h"
#include "notify-state.h"
#include "notify-text.h"
#include "types.h"

#define BACKOFF_MAX_S 60u
/* --once gives up this long after its start when it is not connected to keyctld, or when what it
 * has to show has not been shown: within the 10 s a login script or timer may wait. */
#define ONCE_TIMEOUT_S 5u

/* A notification waiting for a server to show it. */
struct pending {
	char id[NOTIFY_STATE_ID_MAX]; /* the record to write once shown; "" for none */
	unsigned threshold;
	int64_t expires;
	bool snoozable;
	struct notify_text text; /* with a Details button */
	struct notify_text details; /* the same with the details in the body */
};

/* A token's touch popup that is up: a NotifyNotification (a GObject), ours until closed. */
struct touch_popup {
	char id[TOKEN_ID_MAX];
	gpointer notification;
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
	int64_t clock_offset; /* the daemon's clock minus ours, so "in N days" agrees with it */

	struct varlink_client *client;
	guint fd_source, reconnect_source, wake_source, bus_watch, insert_source;
	/* CLOCK_REALTIME, absolute, cancelled when the clock is set: it fires on time after a
	 * suspend (a monotonic timeout would not count the sleep) and never in between. */
	int wake_fd;
	unsigned backoff, retries;
	unsigned backoff_max; /* the longest wait between reconnects; KEYCTL_NOTIFY_RETRY_MAX */
	int64_t checked_at; /* the daemon's clock at the last announce_all() */
	struct path_wait wait; /* armed while the daemon is away */
	guint wait_source;
	bool synced; /* the "state" reply of this connection arrived */
	bool hello; /* GetInfo sent on this connection, its answer not yet taken */
	guint hello_source; /* the bound on that answer */
	char link_text[VARLINK_CLIENT_TEXT_MAX]; /* why the daemon is not reached, for --once */
	guint once_source; /* --once's deadline */
	int exit_status;

	bool server_present, caps_actions, caps_markup;
	bool no_bus; /* no session bus to ask for a notification server */
	GQueue pending; /* struct pending * */
	char inserted[TOKENS_MAX][TOKEN_ID_MAX];
	size_t n_inserted;
	struct touch_popup touch_popups[TOKENS_MAX];
	size_t n_touch_popups;

	struct keyctl_status status;
};

/* notify.c */
int64_t app_now(const struct app *a); /* the daemon's clock as last seen */
void app_give_up(struct app *a, const char *why); /* --once: says why, exits 1 */
_printf_(1, 2) void log_msg(const char *fmt, ...);
void app_save(struct app *a); /* the state file; a failure is logged and ignored */

/* notify-popup.c */
void popup_watch_server(struct app *a);
void popup_flush(struct app *a); /* shows what waits; with --once, quits when all is shown */
bool popup_pending_has(struct app *a, const char *id, unsigned threshold);
void popup_pending_drop(struct app *a, const char *id);
void popup_done(struct app *a);
void popup_why_unshown(const struct app *a, char *buf, size_t size); /* "" when none waits */

/* notify-touch.c: never with --once, never in the state file */
void touch_popup_show(struct app *a, const struct token *t); /* shows or updates t's */
void touch_popup_close(struct app *a, const char *token_id);
void touch_popup_close_all(struct app *a);
void touch_popup_sync(struct app *a); /* to the mirror's tokens, after a "state" */

/* notify-announce.c */
int announce_start(struct app *a); /* the wake-up timer; 0 or -errno */
void announce_stop(struct app *a);
bool announce_key(struct app *a, const struct key *k, int64_t now); /* true: state changed */
void announce_finding(struct app *a, const struct finding *f);
void announce_all(struct app *a);
void announce_finding_id(char *buf, size_t size, const struct finding *f);
void announce_wake_snoozes(struct app *a, int64_t now);
void announce_rearm_wake(struct app *a);
void announce_token_inserted(struct app *a, const char *id);

/* notify-mirror.c */
const struct token *mirror_find_token(const struct app *a, const char *id);
struct key *mirror_find_key(const struct app *a, const char *fpr);
void mirror_apply(struct app *a, struct keyctl_event *e);

/* notify-daemon.c */
void daemon_link_start(struct app *a);
void daemon_link_stop(struct app *a);
