/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Varlink server in-process: a real model, a real sd-event loop, real sockets. Calls get
 * their answers and their errors; broken peers get one error and are closed; a Watch client that
 * does not read is dropped past its queue while another keeps getting every event, gives its
 * slot up to a newcomer and is closed after idle_usec; half a message is not held forever;
 * Reload calls wait for the reload they were coalesced into, each answered in order; a touch
 * wait reaches Watch and GetTokens.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "client.h"
#include "codec.h"
#include "model.h"
#include "server-cache.h"
#include "server.h"
#include "test.h"
#include "varlink.h"

static sd_event *event;
static struct model *model;
static struct server *server;
static char dir[] = "/tmp/test-server-XXXXXX";
static char sock_path[128];

/* Runs the loop until nothing is pending. */
static void pump(void)
{
	for (int i = 0; i < 10000; i++)
		if (sd_event_run(event, 0) == 0)
			return;
}

static void send_raw(int fd, const void *p, size_t n)
{
	ASSERT_EQ(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void send_str(int fd, const char *s)
{
	send_raw(fd, s, strlen(s) + 1);
}

/* Reads one message from fd, pumping the server meanwhile. NULL at EOF. Caller frees. */
static char *recv_msg(int fd, struct varlink_buffer *b)
{
	const char *m;
	size_t len;
	char buf[4096];

	for (int i = 0; i < 2000; i++) {
		ssize_t k;

		if (varlink_buffer_next(b, &m, &len) > 0)
			return strdup(m);
		pump();
		k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (k == 0)
			return NULL;
		if (k < 0) {
			ASSERT_TRUE(errno == EAGAIN);
			usleep(1000);
			continue;
		}
		ASSERT_OK(varlink_buffer_feed(b, buf, (size_t)k));
	}
	TEST_FAIL("no message");
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Sends msg and returns the next message, raw. Caller frees. */
static char *call_raw(int fd, const char *msg, struct varlink_buffer *b)
{
	char *m;

	send_str(fd, msg);
	m = recv_msg(fd, b);
	ASSERT_TRUE(m);
	return m;
}

static int connect_raw(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_TRUE(fd >= 0);
	strcpy(sa.sun_path, sock_path);
	ASSERT_OK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)));
	pump(); /* accept */
	return fd;
}

/* Calls and returns the reply's parsed JSON; the error name (or NULL) in *err. */
static json_object *call(int fd, const char *msg, char **err)
{
	struct varlink_buffer b;
	_cleanup_(freep) char *m = NULL;
	json_object *o;
	struct varlink_reply rep;

	varlink_buffer_init(&b, VARLINK_REPLY_MAX);
	send_str(fd, msg);
	m = recv_msg(fd, &b);
	varlink_buffer_done(&b);
	ASSERT_TRUE(m);
	ASSERT_OK(varlink_message_parse(m, strlen(m), &o));
	ASSERT_OK(varlink_reply_parse(o, &rep));
	*err = rep.error ? strdup(rep.error) : NULL;
	return o;
}

static void expect_error(int fd, const char *msg, const char *error)
{
	char *err = NULL;
	json_object *o = call(fd, msg, &err);

	if (!err || !streq(err, error))
		TEST_FAIL("%s: expected %s, got %s", msg, error, err ? err : "a reply");
	free(err);
	json_object_put(o);
}

static bool at_eof(int fd)
{
	char c[4096];

	for (int i = 0; i < 2000; i++) {
		ssize_t k;

		pump();
		k = recv(fd, c, sizeof(c), MSG_DONTWAIT);
		if (k == 0)
			return true;
		if (k < 0 && errno != EAGAIN)
			return true; /* ECONNRESET */
		if (k > 0)
			continue; /* skip what was still queued */
		usleep(1000);
	}
	return false;
}

static void fill_token(struct token *t, int i)
{
	memset(t, 0, sizeof(*t));
	strcpy(t->id, "yubikey-12345678");
	t->kind = TOKEN_KIND_YUBIKEY;
	snprintf(t->model, sizeof(t->model), "YubiKey 5 NFC rev %d", i);
	strcpy(t->serial, "12345678");
	t->present = true;
	/* Large events, so that the queue fills fast. */
	memset(t->reader, 'r', sizeof(t->reader) - 1);
	memset(t->error, 'e', sizeof(t->error) - 1);
}

/* The server's limits for every test: an idle timeout no busy machine reaches between two steps
 * of a test (with 100 ms, a test descheduled that long saw its connection closed mid-call).
 * The tests of the timeout itself shorten it for themselves. */
static const struct server_config base_cfg = {
	.max_clients = 8,
	.queue_max = 64 * 1024,
	.idle_usec = 10 * 1000 * 1000,
};

static void set_idle_usec(uint64_t usec)
{
	struct server_config c = base_cfg;

	c.idle_usec = usec;
	server_set_limits(server, &c);
}

TEST(calls)
{
	int fd = connect_raw();
	char *err = NULL;
	json_object *o, *p;
	struct keyctl_status s;
	struct daemon_info d = {};

	strcpy(d.version, "0.1.0-test");
	d.started = 1765180000;
	ASSERT_OK(model_daemon_info_put(model, &d));

	o = call(fd, "{\"method\":\"io.keyctl.GetStatus\"}", &err);
	ASSERT_TRUE(err == NULL);
	ASSERT_OK(codec_status_from_json(json_object_object_get(o, "parameters"), &s));
	ASSERT_STREQ(s.daemon.version, "0.1.0-test");
	ASSERT_EQ(s.daemon.started, 1765180000);
	keyctl_status_done(&s);
	json_object_put(o);

	o = call(fd, "{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}", &err);
	ASSERT_TRUE(err == NULL);
	p = json_object_object_get(o, "parameters");
	ASSERT_STREQ(json_object_get_string(json_object_object_get(p, "product")), "keyctld");
	ASSERT_STREQ(json_object_get_string(
	                     json_object_array_get_idx(json_object_object_get(p, "interfaces"), 0)),
	             "io.keyctl");
	json_object_put(o);

	o = call(fd,
	         "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
	         "\"parameters\":{\"interface\":\"io.keyctl\"}}",
	         &err);
	ASSERT_TRUE(err == NULL);
	p = json_object_object_get(o, "parameters");
	ASSERT_STREQ(json_object_get_string(json_object_object_get(p, "description")),
	             varlink_keyctl_interface);
	json_object_put(o);

	/* Oneway: no reply; the next call's reply comes next. */
	send_str(fd, "{\"method\":\"io.keyctl.GetTokens\",\"oneway\":true}");
	o = call(fd, "{\"method\":\"io.keyctl.GetFindings\"}", &err);
	ASSERT_TRUE(json_object_object_get_ex(json_object_object_get(o, "parameters"), "findings",
	                                      NULL));
	json_object_put(o);

	/* Errors that keep the connection. */
	expect_error(fd, "{\"method\":\"io.keyctl.Explode\"}", VARLINK_ERROR_METHOD_NOT_FOUND);
	expect_error(fd, "{\"method\":\"com.example.Get\"}", VARLINK_ERROR_INTERFACE_NOT_FOUND);
	expect_error(fd, "{\"method\":\"io.keyctl.GetStatus\",\"parameters\":{\"x\":1}}",
	             VARLINK_ERROR_INVALID_PARAMETER);
	expect_error(fd, "{\"method\":\"io.keyctl.Watch\"}", VARLINK_ERROR_EXPECTED_MORE);
	expect_error(fd, "{\"method\":\"io.keyctl.Reload\"}", KEYCTL_ERROR_NOT_AVAILABLE);
	expect_error(fd,
	             "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
	             "\"parameters\":{\"interface\":\"io.nothing\"}}",
	             VARLINK_ERROR_INTERFACE_NOT_FOUND);
	expect_error(fd,
	             "{\"method\":\"org.varlink.service.GetInterfaceDescription\","
	             "\"parameters\":{\"interface\":7}}",
	             VARLINK_ERROR_INVALID_PARAMETER);
	/* Still served. */
	o = call(fd, "{\"method\":\"io.keyctl.GetKeys\"}", &err);
	ASSERT_TRUE(err == NULL);
	json_object_put(o);
	close(fd);
}

static int reload_calls, reload_full_calls, reload_fail;
static int on_reload(void *userdata, bool full)
{
	reload_calls++;
	reload_full_calls += full;
	return reload_fail;
}

/* The next message's error name ("" for a reply), or NULL at EOF; *ret_o the parsed message. */
static char *next_reply(int fd, struct varlink_buffer *b, json_object **ret_o)
{
	_cleanup_(freep) char *m = recv_msg(fd, b);
	struct varlink_reply rep;

	if (!m)
		return NULL;
	ASSERT_OK(varlink_message_parse(m, strlen(m), ret_o));
	ASSERT_OK(varlink_reply_parse(*ret_o, &rep));
	return strdup(rep.error ? rep.error : "");
}

static bool nothing_to_read(int fd)
{
	char c;

	pump();
	return recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) < 0 && errno == EAGAIN;
}

/* Reload calls wait for the reload main.c coalesces them into: each gets its own answer once
 * server_reload_done() says it ended, a call behind them is answered after them, and a failed
 * reload's reason reaches every caller. */
TEST(reload)
{
	static const char three[] = "{\"method\":\"io.keyctl.Reload\"}\0"
	                            "{\"method\":\"io.keyctl.Reload\",\"oneway\":true}\0"
	                            "{\"method\":\"io.keyctl.Reload\"}\0"
	                            "{\"method\":\"io.keyctl.GetTokens\"}";
	int fd = connect_raw();
	struct varlink_buffer b;
	json_object *o;
	char *err;

	varlink_buffer_init(&b, VARLINK_REPLY_MAX);
	server_set_reload_handler(server, on_reload, NULL);
	send_raw(fd, three, sizeof(three));
	ASSERT_TRUE(nothing_to_read(fd));
	ASSERT_EQ(reload_calls, 3);
	server_reload_done(server, 0, "");
	for (int i = 0; i < 2; i++) {
		err = next_reply(fd, &b, &o);
		ASSERT_STREQ(err, "");
		free(err);
		json_object_put(o);
	}
	err = next_reply(fd, &b, &o);
	ASSERT_STREQ(err, "");
	ASSERT_TRUE(
	        json_object_object_get_ex(json_object_object_get(o, "parameters"), "tokens", NULL));
	free(err);
	json_object_put(o);

	/* A reload that failed: every caller hears why. */
	send_str(fd, "{\"method\":\"io.keyctl.Reload\"}");
	ASSERT_TRUE(nothing_to_read(fd));
	server_reload_done(server, -EINVAL, "keyctl.conf:3: [expiry] warning-days: not a number");
	err = next_reply(fd, &b, &o);
	ASSERT_STREQ(err, KEYCTL_ERROR_RELOAD_FAILED);
	ASSERT_STREQ(json_object_get_string(json_object_object_get(
	                     json_object_object_get(o, "parameters"), "reason")),
	             "keyctl.conf:3: [expiry] warning-days: not a number");
	free(err);
	json_object_put(o);
	ASSERT_EQ(reload_full_calls, 0);

	/* full: true reaches the handler; a full that is not a boolean, or another parameter, is
	 * refused before it; a handler that cannot ask for a reload fails the call at once. */
	send_str(fd, "{\"method\":\"io.keyctl.Reload\",\"parameters\":{\"full\":true}}");
	ASSERT_TRUE(nothing_to_read(fd));
	server_reload_done(server, 0, "");
	err = next_reply(fd, &b, &o);
	ASSERT_STREQ(err, "");
	free(err);
	json_object_put(o);
	ASSERT_EQ(reload_full_calls, 1);
	expect_error(fd, "{\"method\":\"io.keyctl.Reload\",\"parameters\":{\"full\":1}}",
	             VARLINK_ERROR_INVALID_PARAMETER);
	expect_error(fd, "{\"method\":\"io.keyctl.Reload\",\"parameters\":{\"fast\":true}}",
	             VARLINK_ERROR_INVALID_PARAMETER);
	ASSERT_EQ(reload_calls, 5);
	reload_fail = -ENOMEM;
	expect_error(fd, "{\"method\":\"io.keyctl.Reload\"}", KEYCTL_ERROR_RELOAD_FAILED);
	reload_fail = 0;
	server_set_reload_handler(server, NULL, NULL);
	varlink_buffer_done(&b);
	close(fd);
}

/* Runs the loop for usec, timers included. */
static void pump_for(uint64_t usec)
{
	uint64_t end = now_usec() + usec;

	while (now_usec() < end)
		(void)sd_event_run(event, 1000);
	pump();
}

/* A Watch client that never reads: a newcomer's Watch takes its slot once it has left its
 * events unread for a check (idle_usec / 4), and it is closed after idle_usec anyway; one that
 * reads keeps its slot, and a Watch past it is refused. */
TEST(stalled_watcher)
{
	/* 1 s, not less: an ordinary connection of this test idle that long between two of its
	 * steps is closed, which a busy machine did at 100 ms. */
	const uint64_t idle = 1000 * 1000;
	struct server_config cfg = {
		.max_clients = 8, .max_watchers = 1, .queue_max = 64 * 1024, .idle_usec = idle
	};
	int stalled = connect_raw(), reader, late = connect_raw();
	struct varlink_buffer b;
	char *m;

	server_set_limits(server, &cfg);
	varlink_buffer_init(&b, VARLINK_REPLY_MAX);
	send_str(stalled, "{\"method\":\"io.keyctl.Watch\",\"more\":true}");
	pump();
	/* Its state is unread, but not for long yet: the slot is still its own. */
	expect_error(late, "{\"method\":\"io.keyctl.Watch\",\"more\":true}",
	             KEYCTL_ERROR_TOO_MANY_WATCHERS);
	for (int i = 0; i < 300; i++) {
		pump_for(10 * 1000);
		m = call_raw(late, "{\"method\":\"io.keyctl.Watch\",\"more\":true}", &b);
		if (strstr(m, "\"type\":\"state\""))
			break;
		ASSERT_TRUE(strstr(m, KEYCTL_ERROR_TOO_MANY_WATCHERS));
		free(m);
		m = NULL;
	}
	ASSERT_TRUE(m);
	free(m);
	ASSERT_TRUE(at_eof(stalled));
	close(stalled);

	/* late reads everything: it keeps its slot past idle_usec, and the next Watch is refused.
	 */
	pump_for(idle * 3 / 2);
	reader = connect_raw();
	expect_error(reader, "{\"method\":\"io.keyctl.Watch\",\"more\":true}",
	             KEYCTL_ERROR_TOO_MANY_WATCHERS);
	close(late);
	pump();

	/* Alone and never reading, a watcher is closed after idle_usec. */
	send_str(reader, "{\"method\":\"io.keyctl.Watch\",\"more\":true}");
	for (int i = 0; i < 300 && server_n_clients(server) > 0; i++)
		pump_for(10 * 1000);
	ASSERT_EQ(server_n_clients(server), 0);
	ASSERT_TRUE(at_eof(reader));
	close(reader);
	varlink_buffer_done(&b);
	server_set_limits(server, &base_cfg);
}

TEST(garbage_closes)
{
	const char *bad[] = {
		"not json",
		"[1,2,3]",
		"{\"parameters\":{}}",
		"{\"method\":17}",
		"{\"method\":\"io.keyctl.GetStatus\",\"more\":\"yes\"}",
		"{\"method\":\"io.keyctl.GetStatus\",\"parameters\":[]}",
		"{\"method\":\"io.keyctl.GetStatus\",\"bogus\":true}",
	};

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int fd = connect_raw();

		expect_error(fd, bad[i], VARLINK_ERROR_INVALID_PARAMETER);
		ASSERT_TRUE(at_eof(fd));
		close(fd);
	}
	pump();
	ASSERT_EQ(server_n_clients(server), 0);
}

TEST(too_large_closes)
{
	int fd = connect_raw();
	size_t n = VARLINK_MESSAGE_MAX + 100;
	char *big = malloc(n);
	struct varlink_buffer b;
	char *m;

	memset(big, ' ', n);
	/* Send in pieces, pumping, as a real peer would; the server refuses past 64 KiB. */
	for (size_t off = 0; off < n; off += 4096) {
		ssize_t k = send(fd, big + off, MIN((size_t)4096, n - off), MSG_NOSIGNAL);
		if (k < 0)
			break;
		pump();
	}
	varlink_buffer_init(&b, VARLINK_REPLY_MAX);
	m = recv_msg(fd, &b);
	ASSERT_TRUE(m);
	ASSERT_TRUE(strstr(m, KEYCTL_ERROR_MESSAGE_TOO_LARGE) != NULL);
	ASSERT_TRUE(strstr(m, "\"max\":65536") != NULL);
	free(m);
	varlink_buffer_done(&b);
	ASSERT_TRUE(at_eof(fd));
	close(fd);
	free(big);
}

TEST(half_message_times_out)
{
	int fd;

	set_idle_usec(100 * 1000);
	fd = connect_raw();
	send_raw(fd, "{\"method\":\"io.keyc", 18);
	pump();
	ASSERT_EQ(server_n_clients(server), 1);
	usleep(150 * 1000); /* idle_usec is 100 ms here */
	ASSERT_TRUE(at_eof(fd));
	pump();
	ASSERT_EQ(server_n_clients(server), 0);
	close(fd);
	server_set_limits(server, &base_cfg);
}

TEST(slow_watcher_dropped)
{
	int sp[2], reader, slow, small = 4096;
	struct varlink_buffer b;
	char *m;
	unsigned events = 0;
	struct token t;
	const int N = 400;

	/* The slow client over a socketpair with small kernel buffers, so its queue fills. */
	ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp));
	ASSERT_OK(setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)));
	ASSERT_OK(setsockopt(sp[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)));
	ASSERT_OK(server_add_connection(server, sp[0]));
	slow = sp[1];
	reader = connect_raw();
	ASSERT_EQ(server_n_clients(server), 2);

	varlink_buffer_init(&b, VARLINK_REPLY_MAX);
	send_str(reader, "{\"method\":\"io.keyctl.Watch\",\"more\":true}");
	send_str(slow, "{\"method\":\"io.keyctl.Watch\",\"more\":true}");
	m = recv_msg(reader, &b);
	ASSERT_TRUE(m && strstr(m, "\"type\":\"state\"") && strstr(m, "\"continues\":true"));
	free(m);

	for (int i = 0; i < N; i++) {
		fill_token(&t, i);
		ASSERT_OK(model_token_put(model, &t));
		m = recv_msg(reader, &b);
		ASSERT_TRUE(m);
		{
			struct keyctl_event e;
			json_object *o;
			struct varlink_reply rep;

			ASSERT_OK(varlink_message_parse(m, strlen(m), &o));
			ASSERT_OK(varlink_reply_parse(o, &rep));
			ASSERT_TRUE(rep.continues);
			ASSERT_OK(codec_event_from_json(rep.parameters, &e));
			ASSERT_EQ(e.type, i == 0 ? EVENT_TOKEN_ADDED : EVENT_TOKEN_CHANGED);
			ASSERT_STREQ(e.token.model, t.model);
			keyctl_event_done(&e);
			json_object_put(o);
		}
		free(m);
		events++;
	}
	ASSERT_EQ(events, (unsigned)N);
	pump();
	/* 400 events of ~1 KiB against a 64 KiB queue: the slow one is gone, the reader is not. */
	ASSERT_EQ(server_n_clients(server), 1);
	ASSERT_TRUE(at_eof(slow));
	varlink_buffer_done(&b);
	close(slow);
	close(reader);
	pump();
	ASSERT_EQ(server_n_clients(server), 0);
}

/* model_touch_set() as the detectors call it: Watch gets touch-pending, then touch-done saying
 * how the wait ended; GetTokens, built once per generation, shows the wait. */
TEST(touch_events)
{
	struct touch_pending tp = { .application = TOUCH_APP_OPENPGP, .slot = "sig", .since = 9 };
	int watcher = connect_raw(), caller = connect_raw();
	struct varlink_buffer b;
	struct keyctl_event e;
	struct token t;
	char *err = NULL;
	json_object *o;

	fill_token(&t, 0);
	ASSERT_OK(model_token_put(model, &t));
	varlink_buffer_init(&b, VARLINK_REPLY_MAX);
	free(call_raw(watcher, "{\"method\":\"io.keyctl.Watch\",\"more\":true}", &b));
	for (int i = 0; i < 2; i++) {
		_cleanup_(freep) char *m = NULL;
		struct varlink_reply rep;

		ASSERT_EQ(model_touch_set(model, "yubikey-12345678", i == 0 ? &tp : NULL), 1);
		m = recv_msg(watcher, &b);
		ASSERT_TRUE(m);
		ASSERT_OK(varlink_message_parse(m, strlen(m), &o));
		ASSERT_OK(varlink_reply_parse(o, &rep));
		ASSERT_OK(codec_event_from_json(rep.parameters, &e));
		json_object_put(o);
		ASSERT_EQ(e.type, i == 0 ? EVENT_TOUCH_PENDING : EVENT_TOUCH_DONE);
		ASSERT_EQ(e.token.touch_waiting, i == 0);
		ASSERT_EQ(e.has_touch_end, i == 1);
		keyctl_event_done(&e);
		if (i == 0) {
			o = call(caller, "{\"method\":\"io.keyctl.GetTokens\"}", &err);
			ASSERT_TRUE(!err &&
			            strstr(json_object_to_json_string(o), "\"touch_pending\""));
			json_object_put(o);
		}
	}
	varlink_buffer_done(&b);
	close(watcher);
	close(caller);
	pump();
}

TEST(client_library)
{
	/* protocol/client.c against the server. Its blocking calls would need the loop on another
	 * thread; the event-loop style (timeout 0 until -EAGAIN) lets one thread pump both. */
	_cleanup_(varlink_client_freep) struct varlink_client *c = NULL;
	json_object *p = NULL;
	char *err = NULL;
	int r;

	setenv("KEYCTL_SOCKET", sock_path, 1);
	ASSERT_OK(varlink_client_connect(NULL, &c));
	pump();
	ASSERT_OK(varlink_client_call_more(c, "io.keyctl.Watch", NULL));
	for (int i = 0; i < 1000; i++) {
		pump();
		r = varlink_client_next(c, 0, &p, &err);
		if (r != -EAGAIN)
			break;
		usleep(1000);
	}
	ASSERT_EQ(r, 1);
	ASSERT_TRUE(err == NULL);
	{
		struct keyctl_event e;

		ASSERT_OK(codec_event_from_json(p, &e));
		ASSERT_EQ(e.type, EVENT_STATE);
		ASSERT_EQ(e.status.n_tokens, 1);
		keyctl_event_done(&e);
	}
	json_object_put(p);
	/* A second call on a watching connection is refused locally. */
	ASSERT_ERR(varlink_client_call(c, "io.keyctl.GetStatus", NULL, NULL, NULL), EBUSY);
	ASSERT_ERR(varlink_client_connect("/nonexistent/keyctl/socket", &c), ENOENT);
}

static atomic_bool thread_stop;

static void *serve(void *userdata)
{
	sd_event *e = userdata;

	while (!atomic_load(&thread_stop))
		(void)sd_event_run(e, 20 * 1000);
	return NULL;
}

TEST(blocking_calls)
{
	/* The blocking API against a server loop on another thread, with its own event, model and
	 * socket: nothing is shared between the threads but the socket. */
	sd_event *e = NULL;
	struct model *m = NULL;
	struct server *s = NULL;
	struct server_config cfg = {};
	char path[160];
	pthread_t th;
	_cleanup_(varlink_client_freep) struct varlink_client *c = NULL;
	json_object *p = NULL;
	char *err = NULL;
	struct keyctl_status st;

	snprintf(path, sizeof(path), "%s/socket2", dir);
	cfg.socket_path = path;
	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(model_new(&m));
	ASSERT_OK(server_new(e, m, &cfg, &s));
	atomic_store(&thread_stop, false);
	ASSERT_EQ(pthread_create(&th, NULL, serve, e), 0);

	ASSERT_OK(varlink_client_connect(path, &c));
	varlink_client_set_timeout(c, 5000);
	ASSERT_EQ(varlink_client_call(c, "io.keyctl.GetStatus", NULL, &p, &err), 0);
	ASSERT_TRUE(err == NULL);
	ASSERT_OK(codec_status_from_json(p, &st));
	ASSERT_EQ(st.n_tokens, 0);
	keyctl_status_done(&st);
	json_object_put(p);

	ASSERT_EQ(varlink_client_call(c, "io.keyctl.Nope", NULL, &p, &err), 1);
	ASSERT_STREQ(err, VARLINK_ERROR_METHOD_NOT_FOUND);
	ASSERT_STREQ(json_object_get_string(json_object_object_get(p, "method")), "io.keyctl.Nope");
	free(err);
	json_object_put(p);
	ASSERT_ERR(varlink_client_call(c, "not a method", NULL, NULL, NULL), EINVAL);

	/* The daemon goes away: the client hears it, not a hang. */
	atomic_store(&thread_stop, true);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	s = server_free(s);
	ASSERT_ERR(varlink_client_call(c, "io.keyctl.GetStatus", NULL, &p, &err), ECONNRESET);
	model_free(m);
	sd_event_unref(e);
	ASSERT_ERR(varlink_client_connect(path, &c), ENOENT);
}

static int64_t fake_now = 1765180000;
static int64_t fake_clock(void *userdata)
{
	return fake_now;
}

/* The cached GetStatus reply is byte for byte what building it afresh at this `now` gives. */
static void assert_status_fresh(const char *msg, size_t n_msg)
{
	const struct token *t;
	const struct key *k;
	const struct finding *f;
	size_t nt = model_tokens(model, &t), nk = model_keys(model, &k),
	       nf = model_findings(model, &f);
	_cleanup_(freep) char *fresh = NULL;
	_cleanup_(json_object_putp) json_object *p = NULL;
	size_t n;

	ASSERT_OK(codec_status_to_json(model_daemon_info(model), t, nt, k, nk, f, nf, &p));
	ASSERT_OK(varlink_reply_build(p, false, &fresh, &n));
	ASSERT_TRUE(n == n_msg && memcmp(fresh, msg, n) == 0);
}

/* The reply cache: built once per model generation, byte for byte what building it afresh
 * gives (GetStatus's `now` written over in place when a second passes), and rebuilt after any
 * change. */
TEST(reply_cache)
{
	struct server_cache cache = {};
	const char *a, *b;
	size_t na, nb;
	struct token t;

	model_set_clock(model, fake_clock, NULL);
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &a, &na));
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &b, &nb));
	ASSERT_TRUE(a == b && na == nb);
	ASSERT_EQ(cache.builds, 1u);
	ASSERT_EQ(cache.hits, 1u);

	fill_token(&t, 77);
	strcpy(t.id, "yubikey-cache-test");
	ASSERT_OK(model_token_put(model, &t));
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &a, &na));
	ASSERT_EQ(cache.builds, 2u);
	ASSERT_TRUE(strstr(a, "yubikey-cache-test") != NULL);
	assert_status_fresh(a, na);

	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_TOKENS, &b, &nb));
	ASSERT_EQ(cache.builds, 3u);
	fake_now += 3601; /* a new second, minute and hour: written over the old, not rebuilt */
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &a, &na));
	ASSERT_EQ(cache.builds, 3u);
	ASSERT_EQ(cache.patches, 1u);
	assert_status_fresh(a, na);
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_TOKENS, &b, &nb));
	ASSERT_EQ(cache.builds, 3u); /* GetTokens has no clock */

	/* The epoch grows a digit: the reply is built again, not patched with a short field. */
	fake_now = 999999998;
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &a, &na));
	ASSERT_EQ(cache.builds, 4u);
	fake_now++;
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &a, &na));
	ASSERT_EQ(cache.patches, 2u);
	assert_status_fresh(a, na);
	fake_now++;
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_STATUS, &a, &na));
	ASSERT_EQ(cache.builds, 5u);
	ASSERT_EQ(cache.patches, 2u);
	assert_status_fresh(a, na);
	fake_now = 1765180000;

	ASSERT_OK(model_token_remove(model, "yubikey-cache-test"));
	ASSERT_OK(server_cache_get(&cache, model, SERVER_REPLY_TOKENS, &b, &nb));
	ASSERT_EQ(cache.builds, 6u);
	ASSERT_TRUE(strstr(b, "yubikey-cache-test") == NULL);
	server_cache_done(&cache);
	model_set_clock(model, NULL, NULL);
}

int main(void)
{
	struct server_config cfg = base_cfg;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/socket", dir);
	cfg.socket_path = sock_path;
	ASSERT_OK(sd_event_new(&event));
	ASSERT_OK(model_new(&model));
	ASSERT_OK(server_new(event, model, &cfg, &server));
	{
		struct stat st;

		ASSERT_OK(stat(sock_path, &st));
		ASSERT_EQ(st.st_mode & 0777, 0600);
	}
	/* A second server on the same path is refused: the socket answers. */
	{
		struct server *s2 = NULL;

		ASSERT_ERR(server_new(event, model, &cfg, &s2), EADDRINUSE);
	}

	RUN(calls);
	RUN(reply_cache);
	RUN(reload);
	RUN(garbage_closes);
	RUN(too_large_closes);
	RUN(half_message_times_out);
	RUN(slow_watcher_dropped);
	RUN(stalled_watcher);
	RUN(touch_events);
	RUN(client_library);
	RUN(blocking_calls);

	server = server_free(server);
	ASSERT_TRUE(access(sock_path, F_OK) < 0);
	model_free(model);
	sd_event_unref(event);
	rmdir(dir);
	return 0;
}
