/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * card-scd.c, upstream-fetch.c and watch-upstream.c against a fake Assuan peer: the gpgme
 * transaction (gpgme_op_assuan_transact_ext) and gpgconf (gpgconf_run) are wrapped
 * (-Wl,--wrap). The fake answers as gpgme does, status lines to the status callback and D lines
 * to the data callback in pieces, then END as a data callback with (NULL, 0), and records the
 * home each gpgconf run was given. What issue 32 found:
 * - the data callbacks copied from the NULL of END (undefined; this test aborts under UBSan);
 * - a GnuPG home of 256 bytes or more was cut short before gpgconf ran (--launch in the cut
 *   home: a second agent or dirmngr);
 * - a 128-byte DISP-NAME through GETATTR read as malformed, not as too long;
 * and a socket path gpgconf names that no sockaddr_un takes is said to be that, by name.
 */
#include <errno.h>
#include <gpgme.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "card-scd.h"
#include "fileio.h"
#include "gpgconf-run.h"
#include "test.h"
#include "upstream-fetch.h"
#include "util.h"
#include "watch-upstream.h"

#define AID "D2760001240103040006123456780000"
#define FPR "0123456789ABCDEF0123456789ABCDEF01234567"

gpgme_error_t __wrap_gpgme_op_assuan_transact_ext(gpgme_ctx_t ctx, const char *cmd,
                                                  gpgme_assuan_data_cb_t data_cb, void *data_v,
                                                  gpgme_assuan_inquire_cb_t inq_cb, void *inq_v,
                                                  gpgme_assuan_status_cb_t status_cb,
                                                  void *status_v, gpgme_error_t *op_err);
int __wrap_gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size);

/* Written by the job threads, read by the test after the call that waited for them. */
static char socket_named[PATH_MAX]; /* what gpgconf --list-dirs answers */
static char home_seen[PATH_MAX + 1];
static unsigned gpgconf_runs, ends;
static bool refuse_apdu; /* scdaemon will not pass APDUs: the GETATTR path */
static char disp_name[1000];
static gpgme_error_t fetch_err; /* dirmngr's ERR to KS_GET and WKD_GET, 0: an empty answer */

int __wrap_gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size)
{
	gpgconf_runs++;
	strcpy_trunc(home_seen, sizeof(home_seen), home ? home : "");
	if (strcmp(a1, "--list-dirs") != 0)
		return 1; /* --launch: nothing starts here */
	return strcpy_bounded(out, size, socket_named);
}

/* The card's answer to one APDU: a 6E with the mandatory members, 6A88 for anything else. */
static size_t card_answer(const char *apdu_hex, uint8_t *out)
{
	static const uint8_t head[] = {
		0x6e, 0x5b, 0x4f, 0x10, 0xd2, 0x76, 0x00, 0x01, 0x24, 0x01, 0x03,
		0x04, 0x00, 0x06, 0x12, 0x34, 0x56, 0x78, 0x00, 0x00, 0x73, 0x47,
		0xc4, 0x07, 0x00, 0x7f, 0x7f, 0x7f, 0x03, 0x00, 0x03, 0xc5, 0x3c,
	};
	size_t n = sizeof(head);

	if (strcmp(apdu_hex, "00CA006E00") != 0) {
		memcpy(out, (const uint8_t[]){ 0x6a, 0x88 }, 2);
		return 2;
	}
	memcpy(out, head, n);
	for (unsigned i = 0; i < 60; i++)
		out[n++] = (uint8_t)(0x11 * (i / 20 + 1));
	out[n++] = 0x90;
	out[n++] = 0x00;
	return n;
}

gpgme_error_t __wrap_gpgme_op_assuan_transact_ext(gpgme_ctx_t ctx, const char *cmd,
                                                  gpgme_assuan_data_cb_t data_cb, void *data_v,
                                                  gpgme_assuan_inquire_cb_t inq_cb, void *inq_v,
                                                  gpgme_assuan_status_cb_t status_cb,
                                                  void *status_v, gpgme_error_t *op_err)
{
	uint8_t answer[128];
	size_t n;

	*op_err = 0;
	if (strcmp(cmd, "SCD SERIALNO openpgp") == 0)
		status_cb(status_v, "SERIALNO", AID);
	else if (strncmp(cmd, "SCD APDU ", 9) == 0 && refuse_apdu)
		*op_err = gpg_error(GPG_ERR_NOT_SUPPORTED);
	else if (strncmp(cmd, "SCD APDU ", 9) == 0) {
		n = card_answer(cmd + 9, answer);
		data_cb(data_v, answer, n / 2);
		data_cb(data_v, answer + n / 2, n - n / 2);
	} else if (strcmp(cmd, "SCD GETATTR DISP-NAME") == 0)
		status_cb(status_v, "DISP-NAME", disp_name);
	else if (strncmp(cmd, "KS_GET -- 0x", 12) == 0 || strncmp(cmd, "WKD_GET -- ", 11) == 0)
		*op_err = fetch_err;
	else if (strncmp(cmd, "SCD GETATTR ", 12) != 0)
		TEST_FAIL("unexpected command %s", cmd);
	/* END: what gpgme passes after the last D line (engine-assuan.c, llass_status_handler). */
	data_cb(data_v, NULL, 0);
	ends++;
	return 0;
}

/* A listening socket for gpgconf to name; the fake transaction never connects to it. */
static int listen_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ASSERT_TRUE(fd >= 0);
	ASSERT_OK(strcpy_bounded(sa.sun_path, sizeof(sa.sun_path), path));
	ASSERT_EQ(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ASSERT_EQ(listen(fd, 4), 0);
	return fd;
}

/* A home of len bytes: /tmp and then "/h" steps. */
static void long_home(char *buf, size_t len)
{
	memcpy(buf, "/tmp", 4);
	for (size_t i = 4; i < len; i++)
		buf[i] = i % 2 ? 'h' : '/';
	buf[len] = 0;
	ASSERT_EQ(strlen(buf), len);
}

TEST(scd_apdu_data_ends_with_null)
{
	struct openpgp_card c;
	char err[ERROR_TEXT_MAX], home[321];
	unsigned before = ends;

	long_home(home, 320);
	refuse_apdu = false;
	ASSERT_OK(scd_read_card(home, &c, err, sizeof(err)));
	ASSERT_STREQ(err, "");
	ASSERT_STREQ(c.aid, AID);
	ASSERT_STREQ(c.serial, "12345678");
	ASSERT_STREQ(c.slots[0].fingerprint, "1111111111111111111111111111111111111111");
	ASSERT_TRUE(ends - before > 5); /* SERIALNO, 6E, and the DOs not in it */
	/* The whole home reached gpgconf (issue 32: 255 bytes of it). */
	ASSERT_STREQ(home_seen, home);
	ASSERT_EQ(strlen(home_seen), 320);
}

TEST(scd_disp_name_too_long)
{
	struct openpgp_card c;
	char err[ERROR_TEXT_MAX];

	refuse_apdu = true;
	memset(disp_name, 'a', 128);
	disp_name[128] = 0;
	ASSERT_ERR(scd_read_card("/tmp/home", &c, err, sizeof(err)), EMSGSIZE);
	ASSERT_STREQ(err, "scdaemon's DISP-NAME: 65: cardholder name too long (over 63 bytes)");
	ASSERT_STREQ(c.aid, AID); /* what was read is kept, as for a malformed field */
	ASSERT_STREQ(c.cardholder, "");

	memcpy(disp_name, "Doe<<Jane", 10);
	ASSERT_OK(scd_read_card("/tmp/home", &c, err, sizeof(err)));
	ASSERT_STREQ(c.cardholder, "Doe Jane");
	refuse_apdu = false;
	disp_name[0] = 0;
}

TEST(upstream_data_ends_with_null)
{
	struct key k;
	char err[ERROR_TEXT_MAX], home[321];
	unsigned before = ends;

	long_home(home, 320);
	/* An empty answer: END alone, while the buffer is still NULL. */
	ASSERT_ERR(upstream_fetch(home, FPR, false, &k, err, sizeof(err)), ENOENT);
	ASSERT_STREQ(err, "the keyserver has no key " FPR);
	ASSERT_EQ(ends, before + 1);
	ASSERT_STREQ(home_seen, home);
}

/* dirmngr's words for a server out of reach (DNS, routing, connection) are offline, never "no
 * key"; its words for no key are. */
TEST(upstream_unreachable_is_not_unpublished)
{
	static const gpgme_err_code_t offline[] = {
		GPG_ERR_ECONNREFUSED, GPG_ERR_EHOSTUNREACH,  GPG_ERR_ENETUNREACH,
		GPG_ERR_NO_KEYSERVER, GPG_ERR_SERVER_FAILED, GPG_ERR_NO_NAME,
		GPG_ERR_UNKNOWN_HOST, GPG_ERR_EAGAIN,        GPG_ERR_DNS_TIMEOUT,
		GPG_ERR_TRY_LATER,
	};
	struct key k;
	char err[ERROR_TEXT_MAX], home[] = "/tmp/keyctl-seam-home";

	for (size_t i = 0; i < ELEMENTSOF(offline); i++) {
		fetch_err = gpg_error(offline[i]);
		ASSERT_ERR(upstream_fetch(home, FPR, false, &k, err, sizeof(err)), EHOSTUNREACH);
		ASSERT_TRUE(strncmp(err, "could not reach the keyserver (dirmngr: ", 40) == 0);
		ASSERT_ERR(upstream_fetch_wkd(home, "alice@example.org", FPR, false, &k, err,
		                              sizeof(err)),
		           EHOSTUNREACH);
		ASSERT_TRUE(strncmp(err, "could not reach the Web Key Directory of example.org",
		                    52) == 0);
	}
	fetch_err = gpg_error(GPG_ERR_NO_DATA);
	ASSERT_ERR(upstream_fetch(home, FPR, false, &k, err, sizeof(err)), ENOENT);
	ASSERT_ERR(upstream_fetch_wkd(home, "alice@example.org", FPR, false, &k, err, sizeof(err)),
	           ENOENT);
	ASSERT_STREQ(err, "the Web Key Directory of example.org has no key for alice@example.org");
	fetch_err = 0;
}

static void on_done(struct upstream_watch *w, bool full, void *userdata)
{
	*(bool *)userdata = true;
}

/* watch-upstream.c keeps the home twice (the watch, each run's job): both whole. */
TEST(upstream_watch_keeps_the_whole_home)
{
	static const char fprs[1][FPR_HEX_MAX] = { FPR };
	static const bool relied_on[1] = { false };
	const struct upstream_result *res;
	struct upstream_watch *w = NULL;
	sd_event *e = NULL;
	char home[PATH_MAX + 1];
	bool done = false;

	long_home(home, 320);
	home_seen[0] = 0;
	ASSERT_OK(sd_event_new(&e));
	ASSERT_OK(upstream_watch_new(e, home, 0, false, on_done, &done, &w));
	ASSERT_OK(upstream_watch_check(w, fprs, relied_on, NULL, 1, true));
	for (int i = 0; i < 300 && !done; i++)
		ASSERT_OK(sd_event_run(e, 100 * 1000));
	ASSERT_TRUE(done);
	ASSERT_EQ(upstream_watch_results(w, &res), 1);
	ASSERT_EQ(res[0].r, -ENOENT);
	ASSERT_STREQ(home_seen, home);
	upstream_watch_free(w);

	/* PATH_MAX bytes and more: refused, never a shorter home. */
	long_home(home, PATH_MAX);
	ASSERT_ERR(upstream_watch_new(e, home, 0, false, on_done, &done, &w), ENAMETOOLONG);
	sd_event_unref(e);
}

/* A home long enough that gpgconf puts the sockets in it (no /run/user): named as too long for
 * a unix socket, not as an agent that could not be started. */
TEST(socket_too_long_said_so)
{
	struct openpgp_card c;
	struct key k;
	char err[ERROR_TEXT_MAX], saved[PATH_MAX];
	unsigned runs;

	memcpy(saved, socket_named, sizeof(saved));
	memset(socket_named, 's', UNIX_SOCKET_PATH_MAX + 1);
	socket_named[0] = '/';
	socket_named[UNIX_SOCKET_PATH_MAX + 1] = 0;
	runs = gpgconf_runs;
	ASSERT_ERR(scd_read_card("/tmp/home", &c, err, sizeof(err)), ENAMETOOLONG);
	ASSERT_TRUE(strstr(err, "gpg-agent's socket is too long for a unix socket (over 107 "
	                        "bytes): /sss"));
	ASSERT_EQ(gpgconf_runs, runs + 1); /* no --launch */
	ASSERT_ERR(upstream_fetch(NULL, FPR, true, &k, err, sizeof(err)), ENAMETOOLONG);
	ASSERT_TRUE(strstr(err, "dirmngr's socket is too long for a unix socket (over 107 "
	                        "bytes): /sss"));
	ASSERT_EQ(gpgconf_runs, runs + 2);
	memcpy(socket_named, saved, sizeof(saved));
}

int main(void)
{
	char dir[] = "/tmp/test-assuan-seam-XXXXXX";
	int fd;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(socket_named, sizeof(socket_named), "%s/S", dir);
	fd = listen_at(socket_named);
	RUN(scd_apdu_data_ends_with_null);
	RUN(scd_disp_name_too_long);
	RUN(upstream_data_ends_with_null);
	RUN(upstream_unreachable_is_not_unpublished);
	RUN(upstream_watch_keeps_the_whole_home);
	RUN(socket_too_long_said_so);
	close(fd);
	unlink(socket_named);
	rmdir(dir);
	return 0;
}
