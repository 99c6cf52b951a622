/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What server.c, server-admit.c, server-methods.c and server-socket.c share: the client and server
 * structs, the bounds, and the calls between the three. Private to them.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "model.h"
#include "server-cache.h"
#include "server.h"
#include "varlink.h"

#define SERVER_MAX_CLIENTS_DEFAULT 64u
#define SERVER_QUEUE_MAX_DEFAULT (1024u * 1024u)
#define SERVER_READ_SIZE 16384u
#define SERVER_MAX_WATCHERS_DEFAULT 32u
/* How often per idle_usec a Watch client is checked for reading its events. */
#define SERVER_WATCH_CHECKS 4u
#define SERVER_REFUSE_LINGER_USEC (2ull * 1000000ull)
#define SERVER_TRIM_AFTER (1024u * 1024u)
/* accept() failing (the file limit): the socket rests this long, doubling each time. */
#define SERVER_ACCEPT_PAUSE_MIN_USEC (100ull * 1000ull)
#define SERVER_ACCEPT_PAUSE_MAX_USEC (5ull * 1000000ull)
#define SERVER_URL "https://github.com/keyctl/keyctl"

struct client {
	struct server *server;
	struct client *next, *prev;
	int fd;
	sd_event_source *io;
	/* Closes a connection without a call for idle_usec; a Watch client's check instead. */
	sd_event_source *idle;
	struct varlink_buffer in;
	char *out; /* queued output: bytes [out_start, out_end) */
	size_t out_start, out_end, out_alloc;
	uint64_t last_active; /* CLOCK_MONOTONIC usec of the last call or the last bytes out */
	char *parked; /* an io.keyctl call waiting for the daemon's start, NUL included */
	size_t parked_len;
	/* A CheckUpstream call waits for the check's end: the connection is not read further and
	 * not closed for idling until it is answered. */
	bool upstream_waiting;
	/* Reload calls waiting for the one reload they were coalesced into; further Reloads are
	 * read and join it, any other call is parked behind them. */
	unsigned reload_waiting;
	/* A Watch client with output it has not read: since when (0: it reads), and how much at
	 * the last check. */
	uint64_t stall_since;
	size_t stall_unread;
	bool idle_partial; /* the idle timer counts from the first byte of an unfinished message */
	bool watching; /* a Watch call is running: events go out as replies */
	bool refusing; /* told TooManyClients: its input is drained until it closes */
	bool closing; /* protocol broken or peer done: close once the queue is sent */
	bool dead; /* closed; freed by the server's gc */
};

struct server {
	sd_event *event;
	struct model *model;
	int listen_fd;
	sd_event_source *listen_src;
	sd_event_source *gc;
	char path[PATH_MAX]; /* "" when systemd passed the socket */
	bool own_socket; /* we bound path, so we unlink it */
	unsigned max_clients, max_watchers;
	size_t queue_max;
	uint64_t idle_usec;
	struct client *clients;
	unsigned n_clients; /* live ones, neither watching nor refused */
	unsigned n_watching;
	unsigned n_refusing;
	server_reload_fn reload;
	void *reload_userdata;
	server_upstream_fn upstream;
	void *upstream_userdata;
	bool subscribed;
	bool held; /* io.keyctl calls wait for server_release() */
	/* accept() failed: listen_src is off until accept_retry fires after accept_pause_usec or
	 * a connection is freed; accept_full_at were open then (the episode ends below that). */
	sd_event_source *accept_retry;
	uint64_t accept_pause_usec;
	unsigned accept_full_at;
	bool accept_paused;
	/* log such news once, not once per connection */
	bool told_full, told_evict, told_uid, told_accept, told_evict_watcher;
	struct server_cache cache;
	size_t freed_since_trim; /* bytes of client buffers freed since the last malloc_trim() */
};

/* server.c: a client's life, for server-admit.c. client_new() takes fd in all cases;
 * client_kill() closes now and frees later (from a defer source). */
int client_new(struct server *srv, int fd, bool refusing, struct client **ret);
void client_kill(struct client *c);
size_t client_queued(const struct client *c);
/* A call waits for the daemon (its start, an upstream check, a reload): the connection is
 * busy. */
bool client_waits(const struct client *c);
/* A Watch client that has left output unread for at least one check (a slot to evict first). */
bool client_stalled(const struct client *c, uint64_t now);
/* c's Watch starts: counted as a watcher, checked for reading its events from now on. */
void client_watch_begin(struct client *c);

/* server.c: the output side, for the methods. Each returns 0 or -errno (the client is then
 * closing). */
uint64_t server_now(const struct server *srv);
int client_send(struct client *c, const char *msg, size_t n);
int client_reply(struct client *c, json_object *params, bool continues);
int client_error_max(struct client *c, const char *error, unsigned max);
int client_error(struct client *c, const char *error, const char *field, const char *value);
int client_fail(struct client *c, const char *error, const char *field, const char *value);
int client_update_idle(struct client *c);

/* server-methods.c: answers one complete message (len bytes, no NUL) from c. */
int client_process(struct client *c, const char *msg, size_t len);

/* server-admit.c: accepts on listen_fd from now on; after a pause, at once (a connection was
 * freed). */
int server_listen_start(struct server *srv);
void server_accept_resume(struct server *srv);
/* Past max-watchers: closes the Watch client stalled longest. false when none is stalled. */
bool server_evict_watcher(struct server *srv);

/* server-socket.c */
int server_socket_take_passed(struct server *srv);
int server_socket_listen_path(struct server *srv, const char *path);
int server_socket_default_path(char *buf, size_t size);
