/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctld's Varlink service. One listening socket (ours, or systemd's), one struct client per
 * connection with a bounded input buffer (varlink.c's framing) and a bounded output queue. Calls
 * are answered at once from the model's getters; Watch replies go out as the model's events come
 * in, through the one subscription this file holds. Nothing here blocks: writes that do not go
 * through stay queued and EPOLLOUT is asked for; a client whose queue passes queue_max is dropped
 * rather than slowing anyone else down. A client that breaks the protocol gets one error reply
 * and is closed once it is sent.
 *
 * Crowds: ordinary connections and Watch subscribers are counted apart, each against its own cap.
 * A connection that would pass max-clients evicts the connection idle longest (nothing queued,
 * no call waiting): a client that holds a socket open and says nothing cannot lock the others
 * out. Every non-Watch connection is closed after idle_usec without a call. Only when no one can
 * be evicted is the newcomer refused, and then with a Varlink error (TooManyClients) it can read:
 * we send it, half-close, and drain what it writes until it closes, so that its call never meets
 * a reset. A Watch subscriber may stay silent for ever, but not leave its events unread: one that
 * has not read for idle_usec is closed, and past max-watchers the one that has left them unread
 * longest gives its slot up.
 *
 * Start: until server_release(), io.keyctl calls are parked (the connection stops being read)
 * and answered in order once the daemon has its first true picture; org.varlink.service calls
 * are answered at once, so that a monitor can tell "starting" from "dead".
 *
 * Reload: the answer waits for server_reload_done() (main.c coalesces reloads). Meanwhile more
 * Reload calls on the connection are read and wait too, and any other call is parked behind
 * them, so that replies keep the calls' order.
 *
 * Methods are in server-methods.c, who is admitted (caps, eviction, refusal) in server-admit.c,
 * the listening socket in server-socket.c.
 *
 * Does not: change the model (Reload calls main.c's handler), or talk to any watcher.
 */
#include <errno.h>
#include <malloc.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "codec.h"
#include "config-build.h"
#include "log.h"
#include "server-internal.h"
#include "server.h"
#include "varlink.h"

/* ---- client lifetime ---- */

static struct client *client_free(struct client *c)
{
	if (!c)
		return NULL;
	sd_event_source_disable_unref(c->io);
	sd_event_source_disable_unref(c->idle);
	if (c->fd >= 0)
		close(c->fd);
	varlink_buffer_done(&c->in);
	free(c->out);
	free(c->parked);
	free(c);
	return NULL;
}

static int on_gc(sd_event_source *s, void *userdata)
{
	struct server *srv = userdata;
	struct client *c = srv->clients, *next;
	bool freed = false;

	for (; c; c = next) {
		next = c->next;
		if (!c->dead)
			continue;
		freed = true;
		if (c->prev)
			c->prev->next = c->next;
		else
			srv->clients = c->next;
		if (c->next)
			c->next->prev = c->prev;
		srv->freed_since_trim += c->out_alloc + c->in.alloc;
		client_free(c);
	}
	/* A hundred clients each held a reply's worth of buffers; once they are gone, glibc keeps
	 * that memory in the heap unless asked to give it back. Asked rarely: only after a
	 * megabyte of client buffers was freed, and only when no ordinary client is left. */
	if (srv->n_clients == 0 && srv->freed_since_trim >= SERVER_TRIM_AFTER) {
		(void)malloc_trim(0);
		srv->freed_since_trim = 0;
	}
	/* A file is free again: a socket resting at the file limit takes its newcomer now. */
	if (freed)
		server_accept_resume(srv);
	return 0;
}

/* Closes a client now and frees it later from a defer source, so that a fan-out loop or the
 * client's own handler never touches freed memory. */
void client_kill(struct client *c)
{
	struct server *srv = c->server;

	if (c->dead)
		return;
	c->dead = true;
	sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
	sd_event_source_set_enabled(c->idle, SD_EVENT_OFF);
	/* shutdown() rather than close(): the fd number stays ours until the gc frees it. */
	shutdown(c->fd, SHUT_RDWR);
	if (c->refusing)
		srv->n_refusing--;
	else if (c->watching)
		srv->n_watching--;
	else
		srv->n_clients--;
	sd_event_source_set_enabled(srv->gc, SD_EVENT_ONESHOT);
}

uint64_t server_now(const struct server *srv)
{
	uint64_t t = 0;

	(void)sd_event_now(srv->event, CLOCK_MONOTONIC, &t);
	return t;
}

size_t client_queued(const struct client *c)
{
	return c->out_end - c->out_start;
}

/* Output a Watch client has not read yet: queued here, or in the socket (SIOCOUTQ counts what
 * the peer has not consumed). */
static size_t client_unread(const struct client *c)
{
	int n = 0;

	if (ioctl(c->fd, SIOCOUTQ, &n) < 0 || n < 0)
		n = 0;
	return client_queued(c) + (size_t)n;
}

/* Less unread than after the last write or check (or none): the Watch client has read since.
 * Compared at each write too, so that a check that always falls between an event and its read
 * does not take a reader for a stalled one. */
static void client_note_reading(struct client *c, size_t unread)
{
	if (unread == 0 || unread < c->stall_unread)
		c->stall_since = 0;
	c->stall_unread = unread;
}

/* A call parked (the start, or a call behind a Reload) or an upstream check waited for:
 * nothing more is read until it is answered. */
static bool client_blocked(const struct client *c)
{
	return c->parked || c->upstream_waiting;
}

/* Blocked, or owed Reload replies (further Reloads are still read: they join the same one). */
bool client_waits(const struct client *c)
{
	return client_blocked(c) || c->reload_waiting > 0;
}

static void client_update_events(struct client *c)
{
	uint32_t ev = 0;

	if (c->dead)
		return;
	/* A parked call is answered first: what follows it waits in the socket. */
	if (!c->closing && !client_blocked(c))
		ev |= EPOLLIN;
	if (client_queued(c) > 0)
		ev |= EPOLLOUT;
	(void)sd_event_source_set_io_events(c->io, ev);
}

/* Writes what the socket takes. Returns 0, or -errno when the client is gone. */
static int client_flush(struct client *c)
{
	while (client_queued(c) > 0) {
		ssize_t k = send(c->fd, c->out + c->out_start, client_queued(c),
		                 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			return -errno;
		}
		c->out_start += (size_t)k;
		c->last_active = server_now(c->server);
	}
	if (client_queued(c) == 0) {
		c->out_start = c->out_end = 0;
		if (c->closing)
			return -ECONNRESET; /* all said: close */
		/* The refusal is out: end our side, keep reading theirs until they close. */
		if (c->refusing)
			(void)shutdown(c->fd, SHUT_WR);
	}
	client_update_events(c);
	return 0;
}

/*
 * Queues one message (n bytes, its NUL included) and tries to send it. A message always fits an
 * empty queue, so that one large GetStatus reply goes out whatever queue_max says; on top of
 * queued bytes it must stay within queue_max, else the client is not reading and is dropped.
 * Returns 0, or -ENOBUFS / -errno after which the caller kills the client.
 */
int client_send(struct client *c, const char *msg, size_t n)
{
	size_t q = client_queued(c);
	int r;

	if (c->dead)
		return -ECONNRESET;
	if (c->watching)
		client_note_reading(c, client_unread(c));
	if (q > 0 && n > c->server->queue_max - MIN(q, c->server->queue_max))
		return -ENOBUFS;
	if (c->out_alloc - c->out_end < n) {
		size_t need, a;
		char *d;

		if (c->out_start > 0) {
			memmove(c->out, c->out + c->out_start, q);
			c->out_start = 0;
			c->out_end = q;
		}
		need = c->out_end + n;
		a = MAX(c->out_alloc, (size_t)4096);
		while (a < need)
			a *= 2;
		if (a != c->out_alloc) {
			d = realloc(c->out, a);
			if (!d)
				return -ENOMEM;
			c->out = d;
			c->out_alloc = a;
		}
	}
	memcpy(c->out + c->out_end, msg, n);
	c->out_end += n;
	r = client_flush(c);
	if (r >= 0 && c->watching)
		c->stall_unread = client_unread(c); /* what it has to read from now on */
	return r;
}

int client_reply(struct client *c, json_object *params, bool continues)
{
	_cleanup_(freep) char *m = NULL;
	size_t n;
	int r;

	r = varlink_reply_build(params, continues, &m, &n);
	if (r < 0)
		return r;
	return client_send(c, m, n);
}

/* An error whose one parameter is the limit that was reached. */
int client_error_max(struct client *c, const char *error, unsigned max)
{
	_cleanup_(json_object_putp) json_object *p = json_object_new_object();
	_cleanup_(freep) char *m = NULL;
	size_t n;
	int r;

	if (!p || json_object_object_add(p, "max", json_object_new_int64(max)) < 0)
		return -ENOMEM;
	r = varlink_error_build(error, p, &m, &n);
	if (r < 0)
		return r;
	return client_send(c, m, n);
}

int client_error(struct client *c, const char *error, const char *field, const char *value)
{
	_cleanup_(freep) char *m = NULL;
	size_t n;
	int r;

	if (field)
		r = varlink_error_build_string(error, field, value, &m, &n);
	else
		r = varlink_error_build(error, NULL, &m, &n);
	if (r < 0)
		return r;
	return client_send(c, m, n);
}

/* The peer broke the protocol: tell it why, once, and close after that is sent. */
int client_fail(struct client *c, const char *error, const char *field, const char *value)
{
	int r;

	c->closing = true;
	r = client_error(c, error, field, value);
	if (r < 0)
		return r;
	return client_flush(c);
}

static uint64_t watch_check_usec(const struct server *srv)
{
	return MAX(srv->idle_usec / SERVER_WATCH_CHECKS, (uint64_t)1);
}

bool client_stalled(const struct client *c, uint64_t now)
{
	return c->watching && !c->dead && c->stall_since > 0 &&
	       now - c->stall_since >= watch_check_usec(c->server) && client_unread(c) > 0;
}

static int client_arm_idle(struct client *c, uint64_t usec);

/* A Watch client is idle by design, but one that leaves its events unread for idle_usec is not
 * reading at all: it would hold a Watch slot for ever. Checked SERVER_WATCH_CHECKS times per
 * idle_usec. */
static void client_check_watcher(struct client *c)
{
	struct server *srv = c->server;
	uint64_t now = server_now(srv);
	size_t unread = client_unread(c);

	client_note_reading(c, unread);
	if (unread > 0 && c->stall_since == 0)
		c->stall_since = now;
	if (c->stall_since > 0 && now - c->stall_since >= srv->idle_usec) {
		log_notice("Dropping a Watch client that read none of its events for %" PRIu64
		           " s (%zu bytes unread)",
		           srv->idle_usec / 1000000u, unread);
		client_kill(c);
		return;
	}
	if (client_arm_idle(c, watch_check_usec(srv)) < 0)
		client_kill(c); /* unchecked, it could hold its slot for ever */
}

void client_watch_begin(struct client *c)
{
	struct server *srv = c->server;

	c->watching = true;
	srv->n_clients--;
	srv->n_watching++;
	if (srv->n_watching + 1 < srv->max_watchers)
		srv->told_evict_watcher = false;
	/* sd-event's default slack (250 ms) is as long as a check period in tests. */
	if (sd_event_source_set_time_accuracy(c->idle, watch_check_usec(srv) / 8 + 1) < 0 ||
	    client_arm_idle(c, watch_check_usec(srv)) < 0)
		client_kill(c);
}

static int on_client_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct client *c = userdata;

	if (c->watching) {
		client_check_watcher(c);
		return 0;
	}
	if (c->idle_partial)
		log_debug("Client sent half a message and went quiet, closing");
	else if (!c->refusing)
		log_debug("Closing a client that made no call for %" PRIu64 " s",
		          c->server->idle_usec / 1000000u);
	client_kill(c);
	return 0;
}

static int client_arm_idle(struct client *c, uint64_t usec)
{
	int r;

	if (!c->idle)
		return sd_event_add_time_relative(c->server->event, &c->idle, CLOCK_MONOTONIC, usec,
		                                  0, on_client_idle, c);
	r = sd_event_source_set_time_relative(c->idle, usec);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(c->idle, SD_EVENT_ONESHOT);
}

/* Called after each read and each call: the idle clock restarts, except that half a message
 * keeps the clock of its first byte (a trickle of bytes must not keep a connection forever). */
int client_update_idle(struct client *c)
{
	bool partial = varlink_buffer_pending(&c->in) > 0;
	int on = SD_EVENT_OFF;

	/* A Watch is checked for reading instead (client_check_watcher). */
	if (c->watching)
		return 0;
	/* A call waiting for us: the clock is ours, not the client's. */
	if (client_waits(c))
		return c->idle ? sd_event_source_set_enabled(c->idle, SD_EVENT_OFF) : 0;
	if (c->idle)
		(void)sd_event_source_get_enabled(c->idle, &on);
	if (partial && c->idle_partial && on != SD_EVENT_OFF)
		return 0;
	c->idle_partial = partial;
	return client_arm_idle(c, c->server->idle_usec);
}

/* Handles every complete message buffered, up to a parked one. Returns 0, or -errno to close. */
static int client_drain(struct client *c)
{
	const char *msg;
	size_t len;
	int r;

	while (!c->closing && !c->dead && !client_blocked(c) &&
	       varlink_buffer_next(&c->in, &msg, &len) > 0) {
		c->last_active = server_now(c->server);
		r = client_process(c, msg, len);
		if (r < 0)
			return r;
	}
	if (c->dead)
		return -ECONNRESET;
	client_update_events(c);
	return client_update_idle(c);
}

/* A refused client: what it writes is read and dropped until it closes. */
static int client_read_refusing(struct client *c)
{
	char buf[SERVER_READ_SIZE];
	ssize_t k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (k < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	return k == 0 ? -ECONNRESET : 0;
}

/* Reads once and handles every complete message. Returns 0, or -errno to close. */
static int client_read(struct client *c)
{
	char buf[SERVER_READ_SIZE];
	ssize_t k;
	int r;

	if (c->refusing)
		return client_read_refusing(c);
	k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (k < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (k == 0) {
		/* The peer is done sending; what it asked for is still answered. A parked call
		 * reads nothing more, so this is a hang-up: nobody is left to answer. */
		if (client_queued(c) == 0 || client_waits(c))
			return -ECONNRESET;
		c->closing = true;
		client_update_events(c);
		return 0;
	}
	r = varlink_buffer_feed(&c->in, buf, (size_t)k);
	if (r == -EMSGSIZE) {
		log_debug("Client sent a message over %u bytes, closing", VARLINK_MESSAGE_MAX);
		c->closing = true;
		return client_error_max(c, KEYCTL_ERROR_MESSAGE_TOO_LARGE, VARLINK_MESSAGE_MAX);
	}
	if (r < 0)
		return r;
	return client_drain(c);
}

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct client *c = userdata;
	int r = 0;

	if (c->dead)
		return 0;
	if (revents & EPOLLOUT)
		r = client_flush(c);
	if (r >= 0 && !c->closing && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		r = client_read(c);
	else if (r >= 0 && (revents & (EPOLLHUP | EPOLLERR)))
		r = -ECONNRESET; /* closing, and the peer is gone: nothing left to send to */
	if (r < 0) {
		if (r != -ECONNRESET && r != -EPIPE && r != -ENOBUFS)
			log_debug_errno(r, "Closing client: %m");
		client_kill(c);
	}
	return 0;
}

int client_new(struct server *srv, int fd, bool refusing, struct client **ret)
{
	struct client *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->server = srv;
	c->fd = fd;
	c->refusing = refusing;
	c->last_active = server_now(srv);
	varlink_buffer_init(&c->in, VARLINK_MESSAGE_MAX);
	r = sd_event_add_io(srv->event, &c->io, fd, EPOLLIN, on_client_io, c);
	if (r >= 0)
		r = client_arm_idle(c, refusing ? SERVER_REFUSE_LINGER_USEC : srv->idle_usec);
	if (r < 0) {
		client_free(c);
		return r;
	}
	c->next = srv->clients;
	if (c->next)
		c->next->prev = c;
	srv->clients = c;
	if (refusing)
		srv->n_refusing++;
	else
		srv->n_clients++;
	if (ret)
		*ret = c;
	return 0;
}

/* ---- events ---- */

static void on_model_event(struct model *m, const struct model_event *ev, void *userdata)
{
	struct server *srv = userdata;
	_cleanup_(json_object_putp) json_object *p = NULL;
	_cleanup_(freep) char *msg = NULL;
	int type;
	size_t n;
	int r;

	if (srv->n_watching == 0)
		return;
	type = event_type_from_string(model_event_type_to_string(ev->type));
	if (type < 0)
		return;
	if (ev->type == MODEL_TOUCH_PENDING || ev->type == MODEL_TOUCH_DONE)
		r = codec_event_touch_to_json(type, ev->token, ev->touch_end, &p);
	else
		r = codec_event_to_json(
		        type, ev->token, ev->key, ev->subkey ? ev->subkey->fingerprint : NULL,
		        ev->subkey ? ev->subkey->level : LEVEL_OK, ev->old_level, ev->finding,
		        ev->type == MODEL_DAEMON_CHANGED ? model_daemon_info(m) : NULL, &p);
	if (r >= 0)
		r = varlink_reply_build(p, true, &msg, &n);
	if (r < 0) {
		/* A watcher that misses an event has a wrong picture: make it reconnect. */
		log_warning_errno(r, "Failed to encode a %s event, dropping watchers: %m",
		                  model_event_type_to_string(ev->type));
		for (struct client *c = srv->clients; c; c = c->next)
			if (c->watching && !c->dead)
				client_kill(c);
		return;
	}
	for (struct client *c = srv->clients; c; c = c->next) {
		if (!c->watching || c->dead)
			continue;
		r = client_send(c, msg, n);
		if (r < 0) {
			if (r == -ENOBUFS)
				log_notice("Dropping a Watch client that does not read its events "
				           "(queue over %zu bytes)",
				           srv->queue_max);
			client_kill(c);
		}
	}
}

int server_new(sd_event *e, struct model *m, const struct server_config *cfg, struct server **ret)
{
	_cleanup_(server_freep) struct server *srv = NULL;
	char path[PATH_MAX];
	int r;

	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return -ENOMEM;
	srv->listen_fd = -1;
	srv->event = sd_event_ref(e);
	srv->model = m;
	server_set_limits(srv, cfg);

	if (cfg && !isempty(cfg->socket_path))
		r = server_socket_listen_path(srv, cfg->socket_path);
	else {
		r = server_socket_take_passed(srv);
		if (r == 0) {
			r = server_socket_default_path(path, sizeof(path));
			if (r >= 0)
				r = server_socket_listen_path(srv, path);
		}
	}
	if (r < 0)
		return r;

	r = server_listen_start(srv);
	if (r < 0)
		return r;
	r = sd_event_add_defer(e, &srv->gc, on_gc, srv);
	if (r < 0)
		return r;
	r = sd_event_source_set_enabled(srv->gc, SD_EVENT_OFF);
	if (r < 0)
		return r;
	r = model_subscribe(m, on_model_event, srv);
	if (r < 0)
		return r;
	srv->subscribed = true;
	*ret = TAKE_PTR(srv);
	return 0;
}

struct server *server_free(struct server *s)
{
	struct client *c, *next;

	if (!s)
		return NULL;
	if (s->subscribed)
		model_unsubscribe(s->model, on_model_event, s);
	for (c = s->clients; c; c = next) {
		next = c->next;
		client_free(c);
	}
	sd_event_source_disable_unref(s->listen_src);
	sd_event_source_disable_unref(s->accept_retry);
	sd_event_source_disable_unref(s->gc);
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->own_socket)
		(void)unlink(s->path);
	server_cache_done(&s->cache);
	sd_event_unref(s->event);
	free(s);
	return NULL;
}

void server_set_limits(struct server *s, const struct server_config *cfg)
{
	s->max_clients = cfg && cfg->max_clients ? cfg->max_clients : SERVER_MAX_CLIENTS_DEFAULT;
	s->max_watchers =
	        cfg && cfg->max_watchers ? cfg->max_watchers : SERVER_MAX_WATCHERS_DEFAULT;
	s->queue_max = cfg && cfg->queue_max ? cfg->queue_max : SERVER_QUEUE_MAX_DEFAULT;
	s->idle_usec = cfg && cfg->idle_usec ? cfg->idle_usec : SERVER_IDLE_USEC_DEFAULT;
}

void server_set_reload_handler(struct server *s, server_reload_fn fn, void *userdata)
{
	s->reload = fn;
	s->reload_userdata = userdata;
}

const char *server_socket_path(const struct server *s)
{
	return s->path;
}

unsigned server_n_clients(const struct server *s)
{
	return s->n_clients + s->n_watching;
}

void server_hold(struct server *s)
{
	s->held = true;
}

/* After a waiting call was answered (r: how that went): the connection is read again, what it
 * sent meanwhile handled; a client that broke is closed. */
static void client_resume(struct client *c, int r)
{
	if (r >= 0)
		r = client_drain(c);
	if (r < 0) {
		if (r != -ECONNRESET && r != -EPIPE && r != -ENOBUFS)
			log_debug_errno(r, "Closing client: %m");
		client_kill(c);
	}
}

/* After the call c waited on was answered (r: how that went): the call parked behind it, if
 * any, is handled, then what followed it. */
static void client_continue(struct client *c, int r)
{
	if (r >= 0 && c->parked) {
		_cleanup_(freep) char *msg = TAKE_PTR(c->parked);
		size_t len = c->parked_len;

		c->parked_len = 0;
		c->last_active = server_now(c->server);
		r = client_process(c, msg, len);
	}
	client_resume(c, r);
}

void server_release(struct server *s)
{
	struct client *last = s->clients;

	if (!s->held)
		return;
	s->held = false;
	/* In connection order, oldest first: the list is newest first, so walk it backwards. */
	while (last && last->next)
		last = last->next;
	for (struct client *c = last; c; c = c->prev)
		if (!c->dead && c->parked)
			client_continue(c, 0);
}

void server_reload_done(struct server *s, int error, const char *reason)
{
	_cleanup_(freep) char *m = NULL;
	size_t n = 0;
	int r;

	if (error >= 0)
		r = varlink_reply_build(NULL, false, &m, &n);
	else
		r = varlink_error_build_string(KEYCTL_ERROR_RELOAD_FAILED, "reason",
		                               isempty(reason) ? strerror(-error) : reason, &m, &n);
	for (struct client *c = s->clients; c; c = c->next) {
		unsigned owed = c->reload_waiting;
		int k = r;

		if (c->dead || owed == 0)
			continue;
		/* Each call coalesced into this reload gets its own answer, in order. */
		c->reload_waiting = 0;
		c->last_active = server_now(s);
		for (unsigned i = 0; i < owed && k >= 0; i++)
			k = client_send(c, m, n);
		client_continue(c, k);
	}
}

void server_set_upstream_handler(struct server *s, server_upstream_fn fn, void *userdata)
{
	s->upstream = fn;
	s->upstream_userdata = userdata;
}

void server_upstream_done(struct server *s)
{
	for (struct client *c = s->clients; c; c = c->next) {
		int r;

		if (c->dead || !c->upstream_waiting)
			continue;
		c->upstream_waiting = false;
		c->last_active = server_now(s);
		r = client_reply(c, NULL, false);
		client_resume(c, r);
	}
}
