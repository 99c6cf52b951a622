/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * protocol/client.c's answers for a socket that is not keyctld's: connect()'s errors told apart
 * (no file, a part not a directory, a regular file, a directory, a stale socket), a first byte
 * that cannot be Varlink rejected at once and quoted, the GetInfo hello (io.keyctl named, another
 * service, an error reply), a call started without "more", and the sentence for each. The peer
 * is the other end of a socketpair, its replies written before the call.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "client.h"
#include "test.h"

static char dir[] = "/tmp/keyctl-test-client-XXXXXX";

/* A client whose peer already said text (len bytes, NULs included); *peer stays open. */
static struct varlink_client *pair_said(const char *text, size_t len, int *peer)
{
	struct varlink_client *c;
	int sv[2];

	ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ASSERT_EQ(write(sv[1], text, len), (ssize_t)len);
	ASSERT_OK(varlink_client_new_from_fd(sv[0], &c));
	*peer = sv[1];
	return c;
}

static void path_in_dir(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", dir, name);
}

static int connect_at(const char *path)
{
	_cleanup_(varlink_client_freep) struct varlink_client *c = NULL;

	return varlink_client_connect_checked(path, NULL, &c);
}

TEST(connect_errors)
{
	char missing[256], regular[256], notdir[256], stale[256], text[VARLINK_CLIENT_TEXT_MAX];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	path_in_dir(missing, sizeof(missing), "missing");
	path_in_dir(regular, sizeof(regular), "regular");
	path_in_dir(notdir, sizeof(notdir), "regular/socket");
	path_in_dir(stale, sizeof(stale), "stale");
	fd = open(regular, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	ASSERT_OK(fd);
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy_trunc(sa.sun_path, sizeof(sa.sun_path), stale);
	ASSERT_OK(bind(fd, (struct sockaddr *)&sa, sizeof(sa)));
	close(fd);

	ASSERT_ERR(connect_at(missing), ENOENT);
	ASSERT_ERR(connect_at(notdir), ENOTDIR);
	ASSERT_ERR(connect_at(regular), ENOTSOCK);
	ASSERT_ERR(connect_at(dir), EISDIR);
	ASSERT_ERR(connect_at(stale), ECONNREFUSED);

	varlink_client_error_text(text, sizeof(text), NULL, regular, -ENOTSOCK);
	ASSERT_TRUE(strstr(text, "is a regular file, not keyctld's socket"));
	varlink_client_error_text(text, sizeof(text), NULL, dir, -EISDIR);
	ASSERT_TRUE(strstr(text, "is a directory, not keyctld's socket"));
	varlink_client_error_text(text, sizeof(text), NULL, stale, -ECONNREFUSED);
	ASSERT_TRUE(strstr(text, "stale socket: keyctld is not running (nobody listens on "));
	unlink(stale);
	unlink(regular);
}

TEST(not_varlink)
{
	static const char greeting[] = "OK Pleased to meet you\n";
	char text[VARLINK_CLIENT_TEXT_MAX];
	_cleanup_(closep) int peer = -1;
	struct varlink_client *c = pair_said(greeting, sizeof(greeting) - 1, &peer);
	char *error = NULL;

	/* No NUL will come: without the first-byte check this would wait the full 2 s. */
	ASSERT_ERR(varlink_client_hello(c, &error), EBADMSG);
	ASSERT_TRUE(!error);
	varlink_client_error_text(text, sizeof(text), c, "/run/S.gpg-agent", -EBADMSG);
	ASSERT_STREQ(text, "/run/S.gpg-agent does not answer as keyctld: it said \"OK Pleased to "
	                   "meet you\", which is not Varlink; is it another program's socket?");
	varlink_client_free(c);
}

TEST(hello)
{
	static const char keyctld[] =
	        "{\"parameters\":{\"interfaces\":[\"org.varlink.service\",\"io.keyctl\"]}}";
	static const char other[] = "{\"parameters\":{\"interfaces\":[\"io.example.Hostname\"]}}";
	static const char full[] = "{\"error\":\"io.keyctl.TooManyClients\"}";
	_cleanup_(closep) int p1 = -1, p2 = -1, p3 = -1;
	struct varlink_client *c;
	char *error = NULL;

	c = pair_said(keyctld, sizeof(keyctld), &p1);
	ASSERT_EQ(varlink_client_hello(c, &error), 0);
	varlink_client_free(c);

	c = pair_said(other, sizeof(other), &p2);
	ASSERT_ERR(varlink_client_hello(c, &error), EPROTO);
	varlink_client_free(c);

	c = pair_said(full, sizeof(full), &p3);
	ASSERT_EQ(varlink_client_hello(c, &error), 1);
	ASSERT_STREQ(error, "io.keyctl.TooManyClients");
	free(error);
	varlink_client_free(c);
}

TEST(info_check)
{
	json_object *o = json_tokener_parse("{\"interfaces\":[\"io.keyctl\"]}");

	ASSERT_EQ(varlink_client_info_check(o), 0);
	json_object_put(o);
	o = json_tokener_parse("{\"interfaces\":\"io.keyctl\"}");
	ASSERT_ERR(varlink_client_info_check(o), EPROTO);
	json_object_put(o);
	o = json_tokener_parse("{}");
	ASSERT_ERR(varlink_client_info_check(o), EPROTO);
	json_object_put(o);
	ASSERT_ERR(varlink_client_info_check(NULL), EPROTO);
}

TEST(call_start)
{
	static const char one[] = "{\"parameters\":{}}";
	static const char more[] = "{\"parameters\":{},\"continues\":true}";
	_cleanup_(closep) int p1 = -1, p2 = -1;
	json_object *params = NULL;
	struct varlink_client *c;

	c = pair_said(one, sizeof(one), &p1);
	ASSERT_OK(varlink_client_call_start(c, "org.varlink.service.GetInfo", NULL));
	ASSERT_ERR(varlink_client_call_start(c, "org.varlink.service.GetInfo", NULL), EBUSY);
	ASSERT_EQ(varlink_client_next(c, 1000, &params, NULL), 0);
	json_object_put(params);
	ASSERT_ERR(varlink_client_next(c, 0, NULL, NULL), ENOTCONN);
	varlink_client_free(c);

	/* "continues" on a call made without "more" breaks the connection. */
	c = pair_said(more, sizeof(more), &p2);
	ASSERT_OK(varlink_client_call_start(c, "org.varlink.service.GetInfo", NULL));
	ASSERT_ERR(varlink_client_next(c, 1000, &params, NULL), EBADMSG);
	ASSERT_ERR(varlink_client_next(c, 0, NULL, NULL), ENOTCONN);
	varlink_client_free(c);
}

int main(void)
{
	ASSERT_TRUE(mkdtemp(dir));
	RUN(connect_errors);
	RUN(not_varlink);
	RUN(hello);
	RUN(info_check);
	RUN(call_start);
	rmdir(dir);
	return 0;
}
