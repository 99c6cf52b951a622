/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctld's Varlink service on sd-event: the listening socket (our own, or the one systemd
 * passes), one struct client per connection, io.keyctl's methods answered from the model, and
 * Watch fanned out from one model subscription. Only peers with our own uid are served.
 *
 * Does not: change the model (Reload is a callback into main.c), call any watcher, or block.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "model.h"

#define SERVER_IDLE_USEC_DEFAULT (30ull * 1000000ull)
/* Refused clients lingering for their error to be read (more are closed at once): files the
 * server may hold beyond max_clients + max_watchers. */
#define SERVER_REFUSING_MAX 16u

struct server_config {
	/* NULL or "": a socket passed by systemd (LISTEN_FDS), else $XDG_RUNTIME_DIR/keyctl/socket
	 * (its directory created 0700; -ENXIO when XDG_RUNTIME_DIR is unset). */
	const char *socket_path;
	/* Ordinary connections at once; a newcomer beyond it evicts the one idle longest, or is
	 * refused with io.keyctl.TooManyClients when every one is busy; 0: 64. */
	unsigned max_clients;
	/* Watch subscribers at once, counted apart; one more closes the one that has left its
	 * events unread longest, or when all read, gets io.keyctl.TooManyWatchers; 0: 32. */
	unsigned max_watchers;
	size_t queue_max; /* bytes of output queued per client before it is dropped; 0: 1 MiB */
	/* A connection without a call for this long is closed; so is half a message not finished
	 * this long after its first byte, and a Watch client that read nothing of what was sent
	 * to it for this long; 0: 30 s. */
	uint64_t idle_usec;
};

/* io.keyctl.Reload: asks for a reload (full: every secret key listed again, see
 * keyring_watch_refresh_full); its end is told with server_reload_done(), which answers every
 * Reload call waiting. Returns 0, or -errno when no reload can be asked for. */
typedef int (*server_reload_fn)(void *userdata, bool full);
/* CheckUpstream: starts an upstream check (or lets the caller join the one running); its end is
 * told with server_upstream_done(). Returns 0, or -errno and a reason for the client. */
typedef int (*server_upstream_fn)(void *userdata, char *reason, size_t reason_size);

struct server;

/* Listens and starts serving on e. Returns -errno, logged by the caller. */
int server_new(sd_event *e, struct model *m, const struct server_config *cfg, struct server **ret);
/* Closes every connection and the socket; unlinks the socket file when we created it. */
struct server *server_free(struct server *s);
static inline void server_freep(struct server **s)
{
	if (*s)
		server_free(*s);
}

/* Applies the limits of cfg (socket_path is taken at start only). Clients already connected
 * stay when a cap goes down; newcomers evict or are refused. A queue or idle limit counts from
 * the next message. */
void server_set_limits(struct server *s, const struct server_config *cfg);

/* Until server_release(), io.keyctl calls wait (parked, in order; their connections are not
 * read further) while org.varlink.service calls are answered: the daemon is still starting
 * and its answers would not be true yet. server_release() answers the parked calls at once. */
void server_hold(struct server *s);
void server_release(struct server *s);

void server_set_reload_handler(struct server *s, server_reload_fn fn, void *userdata);
void server_set_upstream_handler(struct server *s, server_upstream_fn fn, void *userdata);
/* The upstream check ended: every CheckUpstream call waiting for it is answered, and those
 * connections are read again. */
void server_upstream_done(struct server *s);
/* A reload ended (error: 0, or -errno and a reason for the clients): every Reload call waiting
 * is answered, each with its own reply, and what those connections sent since is handled. */
void server_reload_done(struct server *s, int error, const char *reason);

/* Serves an already connected socket as a client (tests, socketpair()); takes fd in all cases. */
int server_add_connection(struct server *s, int fd);

/* The path we listen on ("" when systemd passed the socket). */
const char *server_socket_path(const struct server *s);
/* Live connections, Watch subscribers included. */
unsigned server_n_clients(const struct server *s);
