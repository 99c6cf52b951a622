/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who gets a connection: the listening socket's accept loop, the peer's uid, and the caps. A
 * newcomer past max-clients evicts the ordinary connection idle longest (nothing queued, no call
 * waiting); when every one is busy it is refused with TooManyClients, sent in Varlink and
 * drained until the peer closes (a bounded number of such linger; more are closed at once).
 *
 * Does not: read or answer calls (server.c, server-methods.c), or open the socket
 * (server-socket.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "server-internal.h"
#include "server.h"

/* Closes the ordinary connection idle longest: no call parked, nothing queued for it. */
static bool server_evict_one(struct server *srv)
{
	struct client *oldest = NULL;

	for (struct client *c = srv->clients; c; c = c->next) {
		if (c->dead || c->watching || c->refusing || client_waits(c) ||
		    client_queued(c) > 0)
			continue;
		if (!oldest || c->last_active <= oldest->last_active)
			oldest = c;
	}
	if (!oldest)
		return false;
	if (!srv->told_evict)
		log_notice("%u clients connected (max-clients): closing the one idle longest to "
		           "make room, and so on for every newcomer",
		           srv->n_clients);
	srv->told_evict = true;
	client_kill(oldest);
	return true;
}

/* Every connection is busy: tell the newcomer so in Varlink, never with a bare reset. */
static int server_refuse(struct server *srv, int fd)
{
	struct client *c;
	int r;

	if (!srv->told_full)
		log_warning("Refusing a connection: %u clients connected, each with a call in "
		            "progress (max-clients)",
		            srv->n_clients);
	srv->told_full = true;
	if (srv->n_refusing >= SERVER_REFUSING_MAX) {
		close(fd);
		return 0;
	}
	r = client_new(srv, fd, true, &c);
	if (r < 0)
		return r;
	r = client_error_max(c, KEYCTL_ERROR_TOO_MANY_CLIENTS, srv->max_clients);
	if (r < 0)
		client_kill(c);
	return 0;
}

/* Checks the peer and the limit, then serves fd. Takes fd in all cases. */
static int server_admit(struct server *srv, int fd)
{
	struct ucred cred;
	socklen_t l = sizeof(cred);

	int r = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0 ? -errno
	        : l != sizeof(cred)                                    ? -EIO
	                                                               : 0;

	if (r < 0) {
		close(fd);
		return log_debug_errno(r, "Failed to get the peer's credentials, closing: %m");
	}
	/* The socket is 0600 in a 0700 directory; this also covers a socket systemd made. */
	if (cred.uid != getuid()) {
		close(fd);
		if (!srv->told_uid)
			log_notice(
			        "Refusing a connection from uid %u (pid %d): keyctld serves only "
			        "uid %u",
			        (unsigned)cred.uid, (int)cred.pid, (unsigned)getuid());
		srv->told_uid = true;
		return 0;
	}
	if (srv->n_clients >= srv->max_clients && !server_evict_one(srv))
		return server_refuse(srv, fd);
	if (srv->n_clients + 1 < srv->max_clients)
		srv->told_full = srv->told_evict = false;
	return client_new(srv, fd, false, NULL);
}

int server_add_connection(struct server *s, int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	return server_admit(s, fd);
}

static int on_listen(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct server *srv = userdata;

	/* A few per wakeup: sd-event calls again while more wait, and others get their turn. */
	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_warning_errno(-errno,
				                  "Failed to accept a connection, ignoring: %m");
			return 0;
		}
		(void)server_admit(srv, cfd);
	}
	return 0;
}

int server_listen_start(struct server *srv)
{
	return sd_event_add_io(srv->event, &srv->listen_src, srv->listen_fd, EPOLLIN, on_listen,
	                       srv);
}
