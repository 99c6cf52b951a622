/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A Varlink load generator for tools/bench: N connections to one AF_UNIX socket, each with one
 * call in flight at all times (closed loop), driven by a single epoll thread so that the client
 * costs little next to the server. Every reply's latency (send to the reply's NUL) is kept; at
 * the end one JSON object is printed: requests, errors, requests per second, p50/p90/p99/max in
 * microseconds and the bytes of one reply.
 *
 *     varlink-load SOCKET CLIENTS SECONDS [METHOD [PARAMETERS]]
 *
 * METHOD is the qualified name to call (default io.keyctl.GetStatus; tools/bench also loads
 * org.varlink.service.GetInfo as the peer of GetStatus), PARAMETERS a JSON object sent as the
 * call's "parameters" verbatim (default: none). The JSON printed names the method.
 *
 * A reply that carries "error" counts as an error; a connection the server closes is counted
 * and not reopened. Does not: parse the JSON beyond looking for "error", or assert anything.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CLIENTS_MAX 4096
#define REPLY_MAX (16u * 1024u * 1024u)

struct conn {
	int fd;
	char *buf;
	size_t len, alloc;
	uint64_t sent_ns;
	unsigned long replies;
	bool open;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int send_call(struct conn *c, const char *req, size_t req_len)
{
	size_t off = 0;

	c->sent_ns = now_ns();
	while (off < req_len) {
		ssize_t k = send(c->fd, req + off, req_len - off, MSG_NOSIGNAL);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				/* A request is tiny; a full socket buffer means the server is
				 * stuck. */
				struct timespec ts = { 0, 100000 };
				nanosleep(&ts, NULL);
				continue;
			}
			return -errno;
		}
		off += (size_t)k;
	}
	return 0;
}

static int conn_open(const char *path, struct conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;
		close(c->fd);
		c->fd = -1;
		return r;
	}
	if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0)
		return -errno;
	c->open = true;
	return 0;
}

int main(int argc, char **argv)
{
	char req[4096];
	const char *method, *params;
	size_t req_len;
	struct conn *conns;
	uint32_t *lat = NULL;
	size_t n_lat = 0, lat_alloc = 0, reply_bytes = 0;
	unsigned long errors = 0, closed = 0, refused = 0;
	uint64_t start, deadline, end;
	long n;
	double secs;
	int ep;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "Usage: %s SOCKET CLIENTS SECONDS [METHOD [PARAMETERS]]\n",
		        argv[0]);
		return 2;
	}
	method = argc > 4 ? argv[4] : "io.keyctl.GetStatus";
	params = argc > 5 ? argv[5] : NULL;
	/* The method is printed back inside a JSON string: letters, digits and dots only. */
	if (!*method || strspn(method, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	                               "0123456789.") != strlen(method)) {
		fprintf(stderr, "METHOD must be a qualified Varlink method name\n");
		return 2;
	}
	if (params && params[0] != '{') {
		fprintf(stderr, "PARAMETERS must be a JSON object\n");
		return 2;
	}
	n = strtol(argv[2], NULL, 10);
	secs = strtod(argv[3], NULL);
	if (n < 1 || n > CLIENTS_MAX || !(secs > 0)) {
		fprintf(stderr, "CLIENTS must be 1..%d and SECONDS > 0\n", CLIENTS_MAX);
		return 2;
	}
	if (params)
		req_len = (size_t)snprintf(req, sizeof(req),
		                           "{\"method\":\"%s\",\"parameters\":%s}", method, params);
	else
		req_len = (size_t)snprintf(req, sizeof(req), "{\"method\":\"%s\"}", method);
	if (req_len >= sizeof(req) - 1) {
		fprintf(stderr, "METHOD and PARAMETERS are too long\n");
		return 2;
	}
	req[req_len++] = 0; /* the NUL that ends a Varlink message */

	conns = calloc((size_t)n, sizeof(*conns));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!conns || ep < 0)
		return 1;
	for (long i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &conns[i] };
		int r = conn_open(argv[1], &conns[i]);
		if (r < 0) {
			fprintf(stderr, "connect %s: %s\n", argv[1], strerror(-r));
			return 1;
		}
		if (epoll_ctl(ep, EPOLL_CTL_ADD, conns[i].fd, &ev) < 0)
			return 1;
	}

	start = now_ns();
	deadline = start + (uint64_t)(secs * 1e9);
	for (long i = 0; i < n; i++)
		if (send_call(&conns[i], req, req_len) < 0)
			conns[i].open = false;

	for (;;) {
		struct epoll_event evs[64];
		uint64_t t = now_ns();
		int k, open = 0;

		for (long i = 0; i < n; i++)
			open += conns[i].open;
		if (t >= deadline || open == 0)
			break;
		k = epoll_wait(ep, evs, 64, (int)((deadline - t) / 1000000u) + 1);
		if (k < 0 && errno != EINTR)
			return 1;
		for (int e = 0; e < k; e++) {
			struct conn *c = evs[e].data.ptr;
			char *nul;

			if (!c->open)
				continue;
			if (c->alloc - c->len < 65536) {
				size_t a = c->alloc ? c->alloc * 2 : 131072;
				char *p;
				if (a > REPLY_MAX)
					return 1;
				p = realloc(c->buf, a);
				if (!p)
					return 1;
				c->buf = p;
				c->alloc = a;
			}
			ssize_t got = recv(c->fd, c->buf + c->len, c->alloc - c->len, 0);
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (got <= 0) {
				/* Closed before any reply: the server refused us (max-clients). */
				if (c->replies == 0 && c->len == 0)
					refused++;
				else
					closed++;
				c->open = false;
				epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
				close(c->fd);
				continue;
			}
			c->len += (size_t)got;
			nul = memchr(c->buf, 0, c->len);
			if (!nul)
				continue;
			{
				uint64_t dt = now_ns() - c->sent_ns;
				size_t mlen = (size_t)(nul - c->buf);
				size_t rest = c->len - mlen - 1;

				if (memmem(c->buf, mlen < 64 ? mlen : 64, "\"error\"", 7))
					errors++;
				reply_bytes = mlen;
				if (n_lat == lat_alloc) {
					size_t a = lat_alloc ? lat_alloc * 2 : 65536;
					uint32_t *p = realloc(lat, a * sizeof(*lat));
					if (!p)
						return 1;
					lat = p;
					lat_alloc = a;
				}
				c->replies++;
				lat[n_lat++] = (uint32_t)(dt / 1000u > UINT32_MAX ? UINT32_MAX
				                                                  : dt / 1000u);
				/* One call in flight per connection: nothing may follow the reply.
				 */
				memmove(c->buf, nul + 1, rest);
				c->len = rest;
			}
			if (now_ns() < deadline && send_call(c, req, req_len) < 0)
				c->open = false;
		}
	}
	end = now_ns();

	qsort(lat, n_lat, sizeof(*lat), cmp_u32);
#define PCT(p) (n_lat ? lat[(size_t)((double)(n_lat - 1) * (p))] : 0u)
	printf("{\"method\": \"%s\", \"clients\": %ld, \"seconds\": %.3f, \"requests\": %zu, "
	       "\"errors\": %lu, \"refused\": %lu, \"closed\": %lu, \"rps\": %.1f, "
	       "\"p50_us\": %u, \"p90_us\": %u, \"p99_us\": %u, \"max_us\": %u, "
	       "\"reply_bytes\": %zu}\n",
	       method, n, (double)(end - start) / 1e9, n_lat, errors, refused, closed,
	       (double)n_lat / ((double)(end - start) / 1e9), PCT(0.50), PCT(0.90), PCT(0.99),
	       PCT(1.0), reply_bytes);
	for (long i = 0; i < n; i++) {
		if (conns[i].open)
			close(conns[i].fd);
		free(conns[i].buf);
	}
	free(conns);
	free(lat);
	close(ep);
	return 0;
}
