/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Who gets a connection: the listening socket's accept loop, the peer's uid, and the caps. A
 * newcomer past max-clients evicts the ordinary connection idle longest (nothing queued, no call
 * waiting); when every one is busy it is refused with TooManyClients, sent in Varlink and
 * drained until the peer closes (a bounded number of such linger; more are closed at once). A
 * Watch past max-watchers takes the slot of the subscriber that has left its events unread
 * longest, when one has.
 *
 * At the open-file limit accept() fails (EMFILE) while the newcomer waits, and the listening
 * source, level-triggered, would call again at once: the socket rests instead, from 100 ms
 * doubling to 5 s, or until a connection is freed; and as past max-clients, the connection idle
 * longest makes room. One log line per episode, not one per try.
 *
 * Does not: read or answer calls (server.c, server-methods.c), or open the socket
 * (server-socket.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/select.h>
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
	client_kill(oldest);
	return true;
}

bool server_evict_watcher(struct server *srv)
{
	struct client *oldest = NULL;
	uint64_t now = server_now(srv);

	for (struct client *c = srv->clients; c; c = c->next)
		if (client_stalled(c, now) && (!oldest || c->stall_since < oldest->stall_since))
			oldest = c;
	if (!oldest)
		return false;
	if (!srv->told_evict_watcher)
		log_notice(
		        "%u Watch clients (max-watchers): closing the one that has left its events "
		        "unread longest to make room, and so on for every newcomer",
		        srv->n_watching);
	srv->told_evict_watcher = true;
	client_kill(oldest);
	return true;
}

/* Past max-clients: the connection idle longest makes room, said once per crowd. */
static bool server_evict_for_newcomer(struct server *srv)
{
	if (!server_evict_one(srv))
		return false;
	if (!srv->told_evict)
		log_notice("%u clients connected (max-clients): closing the one idle longest to "
		           "make room, and so on for every newcomer",
		           srv->n_clients + 1);
	srv->told_evict = true;
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
	if (srv->n_clients >= srv->max_clients && !server_evict_for_newcomer(srv))
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

static unsigned server_n_open(const struct server *srv)
{
	return srv->n_clients + srv->n_watching + srv->n_refusing;
}

static int on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	server_accept_resume(userdata);
	return 0;
}

void server_accept_resume(struct server *srv)
{
	if (!srv->accept_paused)
		return;
	srv->accept_paused = false;
	(void)sd_event_source_set_enabled(srv->accept_retry, SD_EVENT_OFF);
	(void)sd_event_source_set_enabled(srv->listen_src, SD_EVENT_ON);
}

/* accept() failed with error: the listening source rests for the next pause. */
static void accept_pause(struct server *srv, int error)
{
	bool file_limit = error == -EMFILE || error == -ENFILE;
	int r;

	srv->accept_pause_usec = srv->accept_pause_usec == 0 ? SERVER_ACCEPT_PAUSE_MIN_USEC
	                                                     : MIN(2 * srv->accept_pause_usec,
	                                                           SERVER_ACCEPT_PAUSE_MAX_USEC);
	srv->accept_full_at = server_n_open(srv);
	if (!srv->told_accept)
		log_warning_errno(error,
		                  "Failed to accept a connection with %u open, pausing the socket "
		                  "(at most %llu s at a time)%s: %m",
		                  srv->accept_full_at, SERVER_ACCEPT_PAUSE_MAX_USEC / 1000000ull,
		                  file_limit ? " and closing the one idle longest for each newcomer"
		                             : "");
	srv->told_accept = true;
	if (srv->accept_retry)
		r = sd_event_source_set_time_relative(srv->accept_retry, srv->accept_pause_usec);
	else
		r = sd_event_add_time_relative(srv->event, &srv->accept_retry, CLOCK_MONOTONIC,
		                               srv->accept_pause_usec, 0, on_accept_retry, srv);
	if (r >= 0)
		r = sd_event_source_set_enabled(srv->accept_retry, SD_EVENT_ONESHOT);
	if (r < 0) {
		/* Without the timer the socket would stay shut: better to try again at once. */
		log_debug_errno(r, "Failed to arm the accept pause, not pausing: %m");
		return;
	}
	(void)sd_event_source_set_enabled(srv->listen_src, SD_EVENT_OFF);
	srv->accept_paused = true;
	/* Each connection is a file: past the limit, a newcomer is served as past max-clients.
	 * The socket resumes once the gc has freed the evicted one. */
	if (file_limit)
		(void)server_evict_one(srv);
}

/* Connections take the fds from FD_SETSIZE up when the limit allows it (main-config.c raises
 * it): then a crowd cannot push the fds a library opens past what select() takes (libassuan,
 * under gpgme, still calls it). */
static int fd_move_high(int fd)
{
	int h;

	if (fd >= FD_SETSIZE)
		return fd;
	h = fcntl(fd, F_DUPFD_CLOEXEC, FD_SETSIZE);
	if (h < 0)
		return fd;
	close(fd);
	return h;
}

static int on_listen(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct server *srv = userdata;

	/* A few per wakeup: sd-event calls again while more wait, and others get their turn. */
	for (int i = 0; i < 16 && !srv->accept_paused; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				accept_pause(srv, -errno);
			return 0;
		}
		/* The episode ends once fewer are open than when accept() failed. */
		if (srv->told_accept && server_n_open(srv) + 1 < srv->accept_full_at) {
			log_debug("Accepting connections again (%u open)", server_n_open(srv));
			srv->told_accept = false;
			srv->accept_pause_usec = 0;
		}
		(void)server_admit(srv, fd_move_high(cfd));
	}
	return 0;
}

int server_listen_start(struct server *srv)
{
	return sd_event_add_io(srv->event, &srv->listen_src, srv->listen_fd, EPOLLIN, on_listen,
	                       srv);
}
