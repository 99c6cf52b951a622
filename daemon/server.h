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

struct server_config {
	/* NULL or "": a socket passed by systemd (LISTEN_FDS), else $XDG_RUNTIME_DIR/keyctl/socket
	 * (its directory created 0700; -ENXIO when XDG_RUNTIME_DIR is unset). */
	const char *socket_path;
	unsigned max_clients; /* connections beyond it are closed at once; 0: 64 */
	size_t queue_max; /* bytes of output queued per client before it is dropped; 0: 1 MiB */
	uint64_t idle_usec; /* how long half a message may wait for its end; 0: 30 s */
};

/* Returns 0 and the reason "" on success; -errno and a reason for the client on failure. */
typedef int (*server_reload_fn)(void *userdata, char *reason, size_t reason_size);

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

/* Applies max_clients, queue_max and idle_usec of cfg (socket_path is taken at start only).
 * Clients already connected stay when max_clients goes down; only new ones are refused. A
 * queue or idle limit counts from the next message. */
void server_set_limits(struct server *s, const struct server_config *cfg);

void server_set_reload_handler(struct server *s, server_reload_fn fn, void *userdata);

/* Serves an already connected socket as a client (tests, socketpair()); takes fd in all cases. */
int server_add_connection(struct server *s, int fd);

/* The path we listen on ("" when systemd passed the socket). */
const char *server_socket_path(const struct server *s);
unsigned server_n_clients(const struct server *s);
