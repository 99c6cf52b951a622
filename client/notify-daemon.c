/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's link to keyctld: connects, asks GetInfo (answered within 2 s, naming io.keyctl,
 * or the socket is another program's) and calls io.keyctl.Watch, reads its replies into
 * notify-mirror.c, and outlives the daemon. A daemon whose socket goes away is waited for
 * (inotify on its socket's directory, path-wait.c, after a few retries 1 s to 16 s apart); a
 * connection that ends or is refused while the socket is there (the daemon full, restarting, or
 * not answering; or another uid serving it, which is not trusted and sent nothing) is retried
 * with a backoff from 1 s doubling to 60 s, for as long as it takes; either way it is resynced
 * from Watch's "state" reply. With --once, a path that cannot be keyctld's socket ends it at
 * once, anything else at notify.c's deadline; the reason is kept in link_text for that.
 *
 * Does not: interpret the events (notify-mirror.c) or poll: every wait is a GLib fd watch or a
 * timer.
 */
#include <glib-unix.h>
#include <stdio.h>
#include <string.h>

#include "notify-app.h"

/* Socket missing: 1, 2, 4, 8, 16 s; then only its appearance. */
#define RETRIES_WHILE_WATCHING 5u

static gboolean on_reconnect(gpointer data);
static gboolean on_socket_event(gint fd, GIOCondition cond, gpointer data);

static void disconnect(struct app *a, bool from_fd_callback)
{
	if (a->fd_source && !from_fd_callback)
		g_source_remove(a->fd_source);
	a->fd_source = 0;
	if (a->hello_source)
		g_source_remove(a->hello_source);
	a->hello_source = 0;
	a->hello = false;
	a->client = varlink_client_free(a->client);
	a->synced = false;
	/* Nobody would say when those waits end; a new "state" shows those still waiting. */
	touch_popup_close_all(a);
}

static void stop_waiting(struct app *a)
{
	if (a->wait_source)
		g_source_remove(a->wait_source);
	a->wait_source = 0;
	path_wait_done(&a->wait);
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
		r = path_wait_arm(&a->wait, path);
	if (r < 0) {
		log_msg("Cannot watch for the daemon's socket (%s); retrying up to every %u s",
		        strerror(-r), a->backoff_max);
		path_wait_done(&a->wait);
		return false;
	}
	a->wait_source = g_unix_fd_add(path_wait_fd(&a->wait), G_IO_IN, on_socket_event, a);
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
	a->backoff = MIN(a->backoff * 2, a->backoff_max);
}

/* Not keyctld, or not reachable in a way waiting cannot mend (a file that is no socket, a
 * path we may not use): --once says so at once rather than at its deadline. */
static bool hopeless(int r)
{
	switch (r) {
	case -ETIMEDOUT:
	case -EBADMSG:
	case -EPROTO:
	case -ECONNRESET:
	case -EISDIR:
	case -ENOTSOCK:
	case -ENOTDIR:
	case -EACCES:
	case -ENXIO:
	case -ENAMETOOLONG:
		return true;
	default:
		return false;
	}
}

/* The daemon could not be reached, did not answer as keyctld, or was lost (r), said in text:
 * --once gives up when r is hopeless or its deadline passed; otherwise we retry. */
static void link_failed(struct app *a, int r, const char *text)
{
	strcpy_trunc(a->link_text, sizeof(a->link_text), text);
	if (a->once && (hopeless(r) || !a->once_source)) {
		app_give_up(a, text);
		return;
	}
	if (r != -ENOENT || a->retries < RETRIES_WHILE_WATCHING || !a->wait_source)
		log_msg("%s; retrying in %u s", text, a->backoff);
	else if (a->retries == RETRIES_WHILE_WATCHING)
		log_msg("%s; waiting for its socket", text);
	schedule_reconnect(a, r);
}

/* The hello answered, or failed: on success, Watch is called on the same connection. */
static int hello_done(struct app *a, int r, json_object *params, const char *error)
{
	char text[VARLINK_CLIENT_TEXT_MAX + 64];

	if (a->hello_source)
		g_source_remove(a->hello_source);
	a->hello_source = 0;
	a->hello = false;
	if (r == 0)
		r = varlink_client_info_check(params);
	if (r == 0)
		r = varlink_client_call_more(a->client, "io.keyctl.Watch", NULL);
	if (r == 0)
		return 0;
	if (r == 2)
		snprintf(text, sizeof(text), "keyctld refused us: %s",
		         error ? error : "unknown error");
	else
		varlink_client_error_text(text, sizeof(text), a->client, a->socket, r);
	disconnect(a, true);
	link_failed(a, r == 2 ? -EBUSY : r, text);
	return -1;
}

/* Watch refused (2), ended (0) or its connection lost (-errno): retried with backoff, as a
 * daemon that is there but busy or restarting. */
static void watch_failed(struct app *a, int r, const char *error)
{
	char text[256];

	if (r == 2)
		snprintf(text, sizeof(text), "Watch failed: %s", error ? error : "unknown error");
	else if (r == 0)
		snprintf(text, sizeof(text), "The daemon ended Watch");
	else
		snprintf(text, sizeof(text), "Lost the daemon: %s", strerror(-r));
	disconnect(a, true);
	link_failed(a, r == 2 ? -EBUSY : -ECONNABORTED, text);
}

static gboolean on_hello_timeout(gpointer data)
{
	struct app *a = data;

	a->hello_source = 0;
	if (a->fd_source)
		g_source_remove(a->fd_source);
	a->fd_source = 0;
	hello_done(a, -ETIMEDOUT, NULL, NULL);
	return G_SOURCE_REMOVE;
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
		if (a->hello) {
			r = hello_done(a, r, params, error);
			json_object_put(params);
			if (r < 0)
				return G_SOURCE_REMOVE;
			continue;
		}
		if (r < 0 || r == 0 || r == 2) {
			watch_failed(a, r, error);
			json_object_put(params);
			return G_SOURCE_REMOVE;
		}
		r = codec_event_from_json(params, &e);
		json_object_put(params);
		if (r < 0) {
			/* One event we cannot read: skip it rather than lose the connection. */
			log_msg("Failed to decode a Watch event: %s, ignoring", strerror(-r));
			continue;
		}
		mirror_apply(a, &e);
		keyctl_event_done(&e);
		if (!a->client) /* --once may have quit; the loop ends after this callback */
			return G_SOURCE_REMOVE;
	}
}

/* Connects and asks GetInfo without waiting for it: its answer (bounded by
 * VARLINK_CLIENT_HELLO_TIMEOUT_MS) comes through on_readable(), then Watch is called. */
static int app_connect(struct app *a, uid_t *server_uid)
{
	int r;

	r = varlink_client_connect_checked(a->socket, server_uid, &a->client);
	if (r < 0)
		return r;
	r = varlink_client_call_start(a->client, "org.varlink.service.GetInfo", NULL);
	if (r < 0) {
		a->client = varlink_client_free(a->client);
		return r;
	}
	a->hello = true;
	a->hello_source = g_timeout_add(VARLINK_CLIENT_HELLO_TIMEOUT_MS, on_hello_timeout, a);
	a->fd_source = g_unix_fd_add(varlink_client_fd(a->client), G_IO_IN | G_IO_HUP | G_IO_ERR,
	                             on_readable, a);
	return 0;
}

void daemon_link_start(struct app *a)
{
	char text[VARLINK_CLIENT_TEXT_MAX];
	uid_t server_uid = 0;
	int r = app_connect(a, &server_uid);

	if (r >= 0) {
		stop_waiting(a);
		return;
	}
	/* Another uid holding the socket is a keyctld that is not there (it cannot bind it). */
	if (r == -EPERM)
		varlink_client_untrusted_text(text, sizeof(text), a->socket, server_uid);
	else
		varlink_client_error_text(text, sizeof(text), NULL, a->socket, r);
	link_failed(a, r, text);
}

static gboolean on_reconnect(gpointer data)
{
	struct app *a = data;

	a->reconnect_source = 0;
	daemon_link_start(a);
	return G_SOURCE_REMOVE;
}

static gboolean on_socket_event(gint fd, GIOCondition cond, gpointer data)
{
	struct app *a = data;
	int r = path_wait_process(&a->wait);

	if (r < 0) {
		/* The watch broke: fall back to retrying, so we still find the daemon. */
		log_msg("Watching for the daemon's socket failed: %s", strerror(-r));
		a->wait_source = 0;
		path_wait_done(&a->wait);
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
		daemon_link_start(a);
	}
	return G_SOURCE_CONTINUE;
}

void daemon_link_stop(struct app *a)
{
	disconnect(a, false);
	if (a->reconnect_source)
		g_source_remove(a->reconnect_source);
	a->reconnect_source = 0;
	stop_waiting(a);
}
