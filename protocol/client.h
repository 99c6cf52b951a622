/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clients' side of Varlink: connect to keyctld's socket, make a call and wait for its reply
 * (blocking, with a timeout), or start a call with "more" (Watch) and take its replies one by one,
 * blocking or from an event loop that polls varlink_client_fd().
 *
 * Does not: decode keyctl's types (codec*.c) or retry: a lost connection is the caller's to report.
 */
#pragma once

#include <json-c/json.h>
#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

#include "util.h"

#define VARLINK_CLIENT_TIMEOUT_MS_DEFAULT 25000 /* D-Bus's default; Reload waits for gpg */
/* GetInfo is answered at once, even by a keyctld still starting: a server silent for this long
 * is not keyctld. */
#define VARLINK_CLIENT_HELLO_TIMEOUT_MS 2000
/* How much of a server's first bytes is kept to name it when it is not Varlink. */
#define VARLINK_CLIENT_FIRST_MAX 48
/* Room for varlink_client_error_text() and varlink_client_untrusted_text(). */
#define VARLINK_CLIENT_TEXT_MAX (PATH_MAX + 256)

struct varlink_client;

/* The socket path: $KEYCTL_SOCKET, else $XDG_RUNTIME_DIR/keyctl/socket. -ENXIO when neither
 * variable is set; -ENAMETOOLONG when it does not fit sun_path (or size). */
int varlink_client_socket_path(char *buf, size_t size);

/* Connects (SOCK_CLOEXEC, blocking connect on a local socket) and, before a byte is sent or
 * read, asks the kernel who serves it: only our own uid or root is trusted. path NULL: the
 * default above. Returns -ENOENT (no socket: daemon not running), -ENOTDIR, -ECONNREFUSED (a
 * stale socket), -EISDIR (a directory), -ENOTSOCK (another kind of file), -EACCES, -EPERM
 * (served by another uid), -ENXIO (no path known), -ENAMETOOLONG, or another -errno.
 * *server_uid (when not NULL) is the server's uid, set on success and on -EPERM. */
int varlink_client_connect_checked(const char *path, uid_t *server_uid,
                                   struct varlink_client **ret);
/* The same, for callers that need not name the server. */
int varlink_client_connect(const char *path, struct varlink_client **ret);
/* The sentence for -EPERM: "PATH is served by uid N (NAME), not you (uid M): refusing to trust
 * it", the same in every client. path NULL: the default above. Cut to size when too long; the
 * path of a socket that answered fits sun_path, so _MAX leaves room for the rest. */
#define VARLINK_UNTRUSTED_TEXT_MAX 512
void varlink_client_untrusted_text(char *buf, size_t size, const char *path, uid_t server_uid);
/*
 * Asks the server who it is (org.varlink.service.GetInfo, bounded by
 * VARLINK_CLIENT_HELLO_TIMEOUT_MS) before the real call, which a starting keyctld may hold for
 * longer. 0 when it is keyctld (names io.keyctl); 1 when it answered a Varlink error (name in
 * *ret_error_name, e.g. TooManyClients); not keyctld: -ETIMEDOUT (silent), -EBADMSG (not
 * Varlink), -ECONNRESET (closed unanswered), -EPROTO (Varlink without io.keyctl).
 */
int varlink_client_hello(struct varlink_client *c, char **ret_error_name);
/* The same check on a GetInfo reply's parameters taken by the caller: 0 or -EPROTO. */
int varlink_client_info_check(json_object *info);
/* The sentence for a failure of connect or hello at path (NULL: the default), the same in every
 * client: "stale socket: keyctld is not running (nobody listens on PATH)", "PATH does not answer
 * as keyctld: ...; is it another program's socket?". c (may be NULL) names what a server that is
 * not Varlink said. Not for -EPERM (varlink_client_untrusted_text()). */
void varlink_client_error_text(char *buf, size_t size, const struct varlink_client *c,
                               const char *path, int r);
/* Takes over a connected stream socket fd (tests; socket activation by a caller). It is not
 * checked: whoever hands it over vouches for the peer. */
int varlink_client_new_from_fd(int fd, struct varlink_client **ret);
struct varlink_client *varlink_client_free(struct varlink_client *c);
static inline void varlink_client_freep(struct varlink_client **c)
{
	if (*c)
		varlink_client_free(*c);
}

/* Timeout for varlink_client_call() in milliseconds; -1 waits forever. */
void varlink_client_set_timeout(struct varlink_client *c, int timeout_ms);
/* The socket, for poll()/GLib: readable means varlink_client_next(c, 0, ...) has work. The fd
 * is non-blocking and stays owned by c. */
int varlink_client_fd(const struct varlink_client *c);

/*
 * Calls method (e.g. "io.keyctl.GetStatus") with params (borrowed; NULL for none) and waits for
 * the reply. Returns 0 with the reply's parameters in *ret_params (an object, {} when the reply
 * had none), or 1 when the service answered with an error: its name in *ret_error_name (free())
 * and its parameters in *ret_params. Either out pointer may be NULL. Transport failures:
 * -ETIMEDOUT, -ECONNRESET (the daemon went away), -EBADMSG (not Varlink), -EMSGSIZE, -EBUSY (a
 * "more" call is still running on this connection).
 */
int varlink_client_call(struct varlink_client *c, const char *method, json_object *params,
                        json_object **ret_params, char **ret_error_name);

/* Sends method with "more": true and returns without waiting; take the replies with
 * varlink_client_next(). Returns 0 or -errno. */
int varlink_client_call_more(struct varlink_client *c, const char *method, json_object *params);
/* The same without "more": its one reply comes through varlink_client_next() (0 or 2; a reply
 * that says it continues is -EBADMSG). For an event loop that must not block on the call. */
int varlink_client_call_start(struct varlink_client *c, const char *method, json_object *params);

/*
 * Takes the next reply of a "more" call, waiting up to timeout_ms (0: don't wait, -1: forever).
 * Returns 1 when this reply says more will follow ("continues"), 0 for the last reply (after
 * which the call is over), 2 for an error reply (name in *ret_error_name; the call is over), or
 * -EAGAIN (nothing yet with timeout 0), -ETIMEDOUT, -ECONNRESET, -EBADMSG, -EMSGSIZE, -ENOTCONN (no
 * call running). *ret_params as for varlink_client_call(). From an event loop: on readable, call
 * with timeout 0 until it returns -EAGAIN, since one read may bring several replies.
 */
int varlink_client_next(struct varlink_client *c, int timeout_ms, json_object **ret_params,
                        char **ret_error_name);

/* The parameters of the last reply taken, as the text that came (not NUL-terminated), valid until
 * the next call on c; NULL when that reply was not of the plain {"parameters":VALUE} form. Lets
 * a client print what the daemon said without serialising it again. */
const char *varlink_client_last_parameters(const struct varlink_client *c, size_t *ret_len);
