/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clients' Varlink connection: a non-blocking Unix stream socket, a reply buffer bounded by
 * VARLINK_REPLY_MAX, and poll() for the blocking calls. One call at a time per connection, which
 * is all keyctl-status and keyctl-notify need (Varlink allows pipelining; we do not use it).
 *
 * Trust: only a server running as our uid or as root is spoken to. The socket's path proves
 * nothing where its directory is shared (/tmp as XDG_RUNTIME_DIR, a --socket elsewhere): another
 * user who binds it first could answer "all fine", so the kernel is asked who listens
 * (SO_PEERCRED) before a byte goes either way.
 *
 * Who answers: a path that is not keyctld's socket must not cost a client its whole call timeout
 * or a --watch that waits for ever. connect()'s ECONNREFUSED is told apart (stale socket, file,
 * directory), a first byte that cannot open a JSON object fails at once, and the clients ask
 * GetInfo, bounded by 2 s, before their real call (varlink_client_hello()). One sentence per
 * failure, shared by the clients (varlink_client_error_text()).
 *
 * Does not: decode keyctl's types (codec*.c), reconnect, or log.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "client.h"
#include "varlink.h"

struct varlink_client {
	int fd;
	int timeout_ms;
	bool more_running; /* a call started without waiting wants its last reply */
	bool more; /* ... and was made with "more": it may continue */
	bool broken; /* the stream cannot be trusted any more */
	/* The first bytes the server sent, to name what answered when it was not Varlink. */
	char first[VARLINK_CLIENT_FIRST_MAX];
	size_t n_first;
	struct varlink_buffer in;
	/* The last reply's parameters as they came, inside in's buffer (see
	 * varlink_client_last_parameters()); NULL when that reply had another form. */
	const char *last_params;
	size_t last_params_len;
};

int varlink_client_socket_path(char *buf, size_t size)
{
	const char *e = getenv("KEYCTL_SOCKET");
	struct sockaddr_un sa;
	int n;

	if (!isempty(e))
		n = snprintf(buf, size, "%s", e);
	else {
		e = getenv("XDG_RUNTIME_DIR");
		if (isempty(e))
			return -ENXIO;
		n = snprintf(buf, size, "%s/keyctl/socket", e);
	}
	if (n < 0 || (size_t)n >= size || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	return 0;
}

int varlink_client_new_from_fd(int fd, struct varlink_client **ret)
{
	struct varlink_client *c;
	int fl;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	c->timeout_ms = VARLINK_CLIENT_TIMEOUT_MS_DEFAULT;
	varlink_buffer_init(&c->in, VARLINK_REPLY_MAX);
	*ret = c;
	return 0;
}

/* Who listens on fd: 0 when our uid or root (root can read our files anyway), else -EPERM.
 * *server_uid (when not NULL) is set once the kernel said. */
static int server_trusted(int fd, uid_t *server_uid)
{
	struct ucred cred;
	socklen_t l = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0)
		return -errno;
	if (l != sizeof(cred))
		return -EIO;
	if (server_uid)
		*server_uid = cred.uid;
	return cred.uid == getuid() || cred.uid == 0 ? 0 : -EPERM;
}

/* connect()'s errno as we report it. Linux refuses a path that is no socket with ECONNREFUSED,
 * as it does a socket nobody listens on: stat() tells "not keyctld's socket at all" from "stale".
 * An LSM's refusal may come as EPERM: that is a permission problem, and -EPERM is kept for a
 * server we do not trust. */
static int connect_error(const char *path, int e)
{
	struct stat st;

	if (e == EPERM)
		return -EACCES;
	if (e != ECONNREFUSED || stat(path, &st) < 0 || S_ISSOCK(st.st_mode))
		return -e;
	return S_ISDIR(st.st_mode) ? -EISDIR : -ENOTSOCK;
}

int varlink_client_connect_checked(const char *path, uid_t *server_uid, struct varlink_client **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[sizeof(sa.sun_path)];
	_cleanup_(closep) int fd = -1;
	size_t len;
	int r;

	if (!path) {
		r = varlink_client_socket_path(buf, sizeof(buf));
		if (r < 0)
			return r;
		path = buf;
	}
	len = strlen(path);
	if (len == 0)
		return -ENXIO;
	if (len >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, len + 1);

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* A local connect completes or fails at once; EINTR aside, it does not block for long. */
	if (connect(fd, (struct sockaddr *)&sa, offsetof(struct sockaddr_un, sun_path) + len + 1) <
	    0)
		return connect_error(path, errno);
	r = server_trusted(fd, server_uid);
	if (r < 0)
		return r;
	return varlink_client_new_from_fd(TAKE_FD(fd), ret);
}

int varlink_client_connect(const char *path, struct varlink_client **ret)
{
	return varlink_client_connect_checked(path, NULL, ret);
}

void varlink_client_untrusted_text(char *buf, size_t size, const char *path, uid_t server_uid)
{
	char pw_buf[4096], where[PATH_MAX];
	struct passwd pw, *found = NULL;

	if (!path)
		path = varlink_client_socket_path(where, sizeof(where)) >= 0 ? where
		                                                             : "keyctld's socket";
	/* A name the system does not know is left out: the uid alone says it. */
	if (getpwuid_r(server_uid, &pw, pw_buf, sizeof(pw_buf), &found) != 0)
		found = NULL;
	snprintf(buf, size, "%s is served by uid %u%s%s%s, not you (uid %u): refusing to trust it",
	         path, (unsigned)server_uid, found ? " (" : "", found ? found->pw_name : "",
	         found ? ")" : "", (unsigned)getuid());
}

/* What came first from a server that is not Varlink, as printable text up to its first line's
 * end: "OK Pleased to meet you" names gpg-agent better than any errno. */
static void first_text(char *buf, size_t size, const struct varlink_client *c)
{
	size_t n = 0;

	for (size_t i = 0; c && i < c->n_first && n + 1 < size; i++) {
		unsigned char ch = (unsigned char)c->first[i];

		if (ch == '\n' || ch == '\0')
			break;
		buf[n++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	buf[n] = '\0';
}

/* "a regular file", "a FIFO": what stands at path instead of a socket. */
static const char *file_kind(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return "not a socket";
	if (S_ISREG(st.st_mode))
		return "a regular file";
	if (S_ISDIR(st.st_mode))
		return "a directory";
	if (S_ISFIFO(st.st_mode))
		return "a FIFO";
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		return "a device";
	return "not a socket";
}

void varlink_client_error_text(char *buf, size_t size, const struct varlink_client *c,
                               const char *path, int r)
{
	static const char other[] = "; is it another program's socket?";
	char where[PATH_MAX], said[64];

	if (!path)
		path = varlink_client_socket_path(where, sizeof(where)) >= 0 ? where
		                                                             : "keyctld's socket";
	switch (r) {
	case -ENOENT:
		snprintf(buf, size, "keyctld is not running (no socket at %s)", path);
		break;
	case -ENOTDIR:
		snprintf(buf, size, "no socket at %s: a part of that path is not a directory",
		         path);
		break;
	case -ECONNREFUSED:
		snprintf(buf, size, "stale socket: keyctld is not running (nobody listens on %s)",
		         path);
		break;
	case -EISDIR:
	case -ENOTSOCK:
		snprintf(buf, size, "%s is %s, not keyctld's socket", path, file_kind(path));
		break;
	case -EACCES:
		snprintf(buf, size,
		         "permission denied on %s: keyctld answers only the user who runs it",
		         path);
		break;
	case -ETIMEDOUT:
		snprintf(buf, size,
		         "%s does not answer as keyctld: no Varlink answer within %d s%s", path,
		         VARLINK_CLIENT_HELLO_TIMEOUT_MS / 1000, other);
		break;
	case -EBADMSG:
		first_text(said, sizeof(said), c);
		if (said[0] && said[0] != '{')
			snprintf(buf, size,
			         "%s does not answer as keyctld: it said \"%s\", which is not "
			         "Varlink%s",
			         path, said, other);
		else
			snprintf(buf, size,
			         "%s does not answer as keyctld: its answer is not Varlink%s", path,
			         other);
		break;
	case -ECONNRESET:
		snprintf(
		        buf, size,
		        "%s does not answer as keyctld: it closed the connection without a Varlink "
		        "answer%s",
		        path, other);
		break;
	case -EPROTO:
		snprintf(buf, size,
		         "%s does not answer as keyctld: a Varlink service without io.keyctl%s",
		         path, other);
		break;
	default:
		snprintf(buf, size, "cannot connect to keyctld at %s: %s", path, strerror(-r));
	}
}

struct varlink_client *varlink_client_free(struct varlink_client *c)
{
	if (!c)
		return NULL;
	if (c->fd >= 0)
		close(c->fd);
	varlink_buffer_done(&c->in);
	free(c);
	return NULL;
}

void varlink_client_set_timeout(struct varlink_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
}

int varlink_client_fd(const struct varlink_client *c)
{
	return c->fd;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1: none), for poll(). */
static int left_ms(int64_t deadline)
{
	int64_t l;

	if (deadline < 0)
		return -1;
	l = deadline - now_ms();
	return l < 0 ? 0 : (int)MIN(l, (int64_t)INT32_MAX);
}

static int wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	for (;;) {
		r = poll(&p, 1, left_ms(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		return 0;
	}
}

static int send_all(struct varlink_client *c, const char *buf, size_t n, int64_t deadline)
{
	while (n > 0) {
		ssize_t k = send(c->fd, buf, n, MSG_NOSIGNAL);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				int r = wait_fd(c->fd, POLLOUT, deadline);
				if (r < 0)
					return r;
				continue;
			}
			return errno == EPIPE ? -ECONNRESET : -errno;
		}
		buf += k;
		n -= (size_t)k;
	}
	return 0;
}

static int send_call(struct varlink_client *c, const char *method, json_object *params,
                     unsigned flags, int64_t deadline)
{
	_cleanup_(freep) char *msg = NULL;
	size_t n;
	int r;

	if (c->broken)
		return -ECONNRESET;
	if (c->more_running)
		return -EBUSY;
	if (!varlink_method_name_valid(method))
		return -EINVAL;
	r = varlink_call_build(method, params, flags, &msg, &n);
	if (r < 0)
		return r;
	r = send_all(c, msg, n, deadline);
	if (r < 0)
		c->broken = true;
	return r;
}

/* Keeps the stream's first bytes, and rejects at once a stream that does not open as a JSON
 * object does: a server that greets in another protocol (gpg-agent's "OK Pleased to meet you\n")
 * sends no NUL, and would otherwise be waited for until the timeout. -EBADMSG or 0. */
static int note_first(struct varlink_client *c, const char *p, size_t n)
{
	size_t had = c->n_first, k = MIN(n, sizeof(c->first) - had);

	if (k == 0)
		return 0;
	memcpy(c->first + had, p, k);
	c->n_first += k;
	for (size_t i = 0; i < c->n_first; i++)
		if (!strchr(" \t\r\n", c->first[i]) || c->first[i] == '\0')
			return c->first[i] == '{' ? 0 : -EBADMSG;
	return 0;
}

/* Reads whatever is there into the buffer. 0 when something was read, -EAGAIN when nothing,
 * -ECONNRESET at EOF. */
static int fill(struct varlink_client *c)
{
	char buf[16384];
	ssize_t k;
	int r;

	for (;;) {
		k = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EAGAIN ? -EAGAIN : -errno;
		if (k == 0)
			return -ECONNRESET;
		r = note_first(c, buf, (size_t)k);
		if (r < 0)
			return r;
		return varlink_buffer_feed(&c->in, buf, (size_t)k);
	}
}

/* Takes one reply: 1 continues, 0 last, 2 error; or -errno. */
/* Notes where a reply of the form {"parameters":VALUE} (as keyctld writes them: one field, no
 * blanks) has its VALUE. The whole text parsed already, and the object has that one field, so
 * what lies between the prefix and the last brace is exactly VALUE. */
static void last_params_note(struct varlink_client *c, json_object *msg, const char *m, size_t len)
{
	static const char prefix[] = "{\"parameters\":";
	const size_t k = sizeof(prefix) - 1;

	if (json_object_object_length(msg) != 1 || len < k + 2 || memcmp(m, prefix, k) != 0 ||
	    m[len - 1] != '}')
		return;
	c->last_params = m + k;
	c->last_params_len = len - k - 1;
}

static int next_reply(struct varlink_client *c, int64_t deadline, json_object **ret_params,
                      char **ret_error_name)
{
	_cleanup_(json_object_putp) json_object *msg = NULL;
	struct varlink_reply rep;
	const char *m;
	size_t len;
	int r;

	if (c->broken)
		return -ECONNRESET;
	for (;;) {
		r = varlink_buffer_next(&c->in, &m, &len);
		if (r > 0)
			break;
		r = fill(c);
		if (r == -EAGAIN) {
			if (deadline == 0) /* timeout 0: don't wait */
				return -EAGAIN;
			r = wait_fd(c->fd, POLLIN, deadline);
		}
		if (r < 0) {
			if (r != -ETIMEDOUT)
				c->broken = true;
			return r;
		}
	}

	c->last_params = NULL;
	r = varlink_message_parse(m, len, &msg);
	if (r >= 0)
		r = varlink_reply_parse(msg, &rep);
	if (r < 0) {
		c->broken = true;
		return r;
	}
	last_params_note(c, msg, m, len);

	if (ret_error_name) {
		*ret_error_name = NULL;
		if (rep.error) {
			*ret_error_name = strdup(rep.error);
			if (!*ret_error_name)
				return -ENOMEM;
		}
	}
	if (ret_params)
		*ret_params =
		        rep.parameters ? json_object_get(rep.parameters) : json_object_new_object();
	if (rep.error)
		return 2;
	return rep.continues ? 1 : 0;
}

static int64_t deadline_for(int timeout_ms)
{
	if (timeout_ms < 0)
		return -1;
	if (timeout_ms == 0)
		return 0;
	return now_ms() + timeout_ms;
}

int varlink_client_call(struct varlink_client *c, const char *method, json_object *params,
                        json_object **ret_params, char **ret_error_name)
{
	int64_t deadline = deadline_for(c->timeout_ms);
	json_object *p = NULL;
	char *e = NULL;
	int r;

	if (deadline == 0)
		deadline = now_ms(); /* a timeout of 0 for a call means: fail unless answered now */
	r = send_call(c, method, params, 0, deadline);
	if (r < 0)
		return r;
	r = next_reply(c, deadline, &p, &e);
	if (r < 0)
		return r;
	if (r == 1) {
		/* "continues" on a call without "more" is a protocol violation. */
		json_object_put(p);
		free(e);
		c->broken = true;
		return -EBADMSG;
	}
	if (ret_params)
		*ret_params = p;
	else
		json_object_put(p);
	if (ret_error_name)
		*ret_error_name = e;
	else
		free(e);
	return r == 2 ? 1 : 0;
}

static int call_start(struct varlink_client *c, const char *method, json_object *params, bool more)
{
	int r = send_call(c, method, params, more ? VARLINK_CALL_MORE : 0,
	                  deadline_for(c->timeout_ms));

	if (r < 0)
		return r;
	c->more_running = true;
	c->more = more;
	return 0;
}

int varlink_client_call_more(struct varlink_client *c, const char *method, json_object *params)
{
	return call_start(c, method, params, true);
}

int varlink_client_call_start(struct varlink_client *c, const char *method, json_object *params)
{
	return call_start(c, method, params, false);
}

int varlink_client_next(struct varlink_client *c, int timeout_ms, json_object **ret_params,
                        char **ret_error_name)
{
	int r;

	if (!c->more_running)
		return -ENOTCONN;
	r = next_reply(c, deadline_for(timeout_ms), ret_params, ret_error_name);
	if (r == 1 && !c->more) {
		/* "continues" on a call without "more" is a protocol violation. */
		if (ret_params) {
			json_object_put(*ret_params);
			*ret_params = NULL;
		}
		c->broken = true;
		r = -EBADMSG;
	}
	if (r == 0 || r == 2 || r == -EBADMSG)
		c->more_running = false;
	return r;
}

/* The interfaces a GetInfo reply names include io.keyctl: 0, else -EPROTO. */
int varlink_client_info_check(json_object *info)
{
	json_object *ifaces;

	if (!info || !json_object_object_get_ex(info, "interfaces", &ifaces) ||
	    !json_object_is_type(ifaces, json_type_array))
		return -EPROTO;
	for (size_t i = 0; i < json_object_array_length(ifaces); i++) {
		const char *name = json_object_get_string(json_object_array_get_idx(ifaces, i));

		if (name && streq(name, "io.keyctl"))
			return 0;
	}
	return -EPROTO;
}

/* A server that is not Varlink shows as one of these; what is left is a real error. */
static int hello_error(int r)
{
	return r == -EMSGSIZE ? -EBADMSG : r;
}

int varlink_client_hello(struct varlink_client *c, char **ret_error_name)
{
	_cleanup_(json_object_putp) json_object *info = NULL;
	int saved = c->timeout_ms, r;

	c->timeout_ms = VARLINK_CLIENT_HELLO_TIMEOUT_MS;
	r = varlink_client_call(c, "org.varlink.service.GetInfo", NULL, &info, ret_error_name);
	c->timeout_ms = saved;
	if (r != 0)
		return hello_error(r);
	return varlink_client_info_check(info);
}

const char *varlink_client_last_parameters(const struct varlink_client *c, size_t *ret_len)
{
	*ret_len = c->last_params ? c->last_params_len : 0;
	return c->last_params;
}
