/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify's state file: parse and format round-trip, strict rejection of malformed,
 * truncated and overlong input, the bounds, atomic save and load (a corrupt file is an error the
 * caller survives), and the announce-once rule: a subkey's records go when it is renewed.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "notify-state.h"
#include "test.h"

#define FPR "AAAABBBBCCCCDDDDEEEEFFFF0000111122223333"
#define HDR NOTIFY_STATE_MAGIC "\n"

static int parse_str(const char *s, struct notify_state **ret)
{
	return notify_state_parse((const uint8_t *)s, strlen(s), ret);
}

static void expect_bad(const char *s, int err)
{
	struct notify_state *st = NULL;

	ASSERT_ERR(parse_str(s, &st), err);
	ASSERT_TRUE(st == NULL);
}

TEST(parse_valid)
{
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;
	_cleanup_(freep) char *text = NULL;
	const char *in = HDR FPR " 7 1767657600 0\n"
	                         "finding/pin-retries-low/yubikey-12345678 2 0 1767312000\n";

	ASSERT_OK(parse_str(in, &s));
	ASSERT_EQ(s->n, 2);
	ASSERT_STREQ(s->records[0].id, FPR);
	ASSERT_EQ(s->records[0].threshold, 7);
	ASSERT_EQ(s->records[0].expires, 1767657600);
	ASSERT_EQ(s->records[0].snooze_until, 0);
	ASSERT_EQ(s->records[1].threshold, 2);
	ASSERT_EQ(s->records[1].snooze_until, 1767312000);
	ASSERT_EQ(notify_state_format(s, &text), (int)strlen(in));
	ASSERT_STREQ(text, in);
	notify_state_free(TAKE_PTR(s));

	/* Empty input and a bare header are empty states. */
	ASSERT_OK(parse_str("", &s));
	ASSERT_EQ(s->n, 0);
	notify_state_free(TAKE_PTR(s));
	ASSERT_OK(parse_str(HDR, &s));
	ASSERT_EQ(s->n, 0);
}

TEST(parse_malformed)
{
	expect_bad("garbage\n", EBADMSG);
	expect_bad("# keyctl-notify state 2\n", EBADMSG);
	expect_bad(NOTIFY_STATE_MAGIC, EBADMSG); /* no newline: truncated */
	expect_bad(HDR FPR " 7 1767657600 0", EBADMSG); /* last line cut */
	expect_bad(HDR FPR " 7 1767657600\n", EBADMSG); /* three fields */
	expect_bad(HDR FPR " 7 1767657600 0 9\n", EBADMSG); /* five */
	expect_bad(HDR FPR "  7 1767657600 0\n", EBADMSG); /* two spaces */
	expect_bad(HDR " " FPR " 7 1767657600 0\n", EBADMSG); /* leading space */
	expect_bad(HDR FPR " 7 1767657600 0 \n", EBADMSG); /* trailing space */
	expect_bad(HDR FPR " 07 1767657600 0\n", EBADMSG); /* leading zero */
	expect_bad(HDR FPR " -7 1767657600 0\n", EBADMSG); /* sign */
	expect_bad(HDR FPR " +7 1767657600 0\n", EBADMSG);
	expect_bad(HDR FPR " 7x 1767657600 0\n", EBADMSG);
	expect_bad(HDR FPR " 36501 1767657600 0\n", EBADMSG); /* threshold over 100 years */
	expect_bad(HDR FPR " 7 9223372036854775808 0\n", EBADMSG); /* INT64_MAX + 1 */
	expect_bad(HDR FPR " 7 99999999999999999999 0\n", EBADMSG);
	expect_bad(HDR "bad\tid 7 1 0\n", EBADMSG);
	expect_bad(HDR "bad\"id 7 1 0\n", EBADMSG);
	expect_bad(HDR FPR " 7 1767657600 0\r\n", EBADMSG);
	expect_bad(HDR "\n", EBADMSG); /* empty line */
	{
		static const uint8_t nul[] = NOTIFY_STATE_MAGIC "\nAB\0C 1 1 0\n";
		struct notify_state *st = NULL;

		ASSERT_ERR(notify_state_parse(nul, sizeof(nul) - 1, &st), EBADMSG);
	}
	/* INT64_MAX itself is fine. */
	{
		_cleanup_(notify_state_freep) struct notify_state *s = NULL;

		ASSERT_OK(parse_str(HDR FPR " 0 9223372036854775807 0\n", &s));
		ASSERT_EQ(s->records[0].expires, INT64_MAX);
	}
}

TEST(parse_bounds)
{
	char line[NOTIFY_STATE_LINE_MAX + 64], id[NOTIFY_STATE_ID_MAX + 1];
	_cleanup_(freep) char *big = NULL;
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;
	size_t off;

	/* An id of 127 characters fits, 128 does not. */
	memset(id, 'a', sizeof(id));
	id[NOTIFY_STATE_ID_MAX - 1] = 0;
	snprintf(line, sizeof(line), HDR "%s 1 1 0\n", id);
	ASSERT_OK(parse_str(line, &s));
	notify_state_free(TAKE_PTR(s));
	id[NOTIFY_STATE_ID_MAX - 1] = 'a';
	id[NOTIFY_STATE_ID_MAX] = 0;
	snprintf(line, sizeof(line), HDR "%s 1 1 0\n", id);
	expect_bad(line, EMSGSIZE);

	/* A line longer than NOTIFY_STATE_LINE_MAX is refused before it is looked at. */
	big = malloc(2 * NOTIFY_STATE_LINE_MAX);
	ASSERT_TRUE(big);
	off = (size_t)sprintf(big, HDR);
	memset(big + off, 'x', NOTIFY_STATE_LINE_MAX + 10);
	big[off + NOTIFY_STATE_LINE_MAX + 10] = 0;
	expect_bad(big, EMSGSIZE);
	free(TAKE_PTR(big));

	/* RECORDS_MAX records parse, one more does not. */
	big = malloc((NOTIFY_STATE_RECORDS_MAX + 2) * 32 + 64);
	ASSERT_TRUE(big);
	off = (size_t)sprintf(big, HDR);
	for (unsigned i = 0; i < NOTIFY_STATE_RECORDS_MAX; i++)
		off += (size_t)sprintf(big + off, "k%u 1 1 0\n", i);
	ASSERT_OK(parse_str(big, &s));
	ASSERT_EQ(s->n, NOTIFY_STATE_RECORDS_MAX);
	ASSERT_ERR(notify_state_put(s, "one-more", 1, 1, 0), EMSGSIZE);
	ASSERT_OK(notify_state_put(s, "k7", 1, 5, 0)); /* an update still fits */
	notify_state_free(TAKE_PTR(s));
	sprintf(big + off, "k-extra 1 1 0\n");
	expect_bad(big, EMSGSIZE);

	/* More than the file bound at all. */
	ASSERT_ERR(notify_state_parse((const uint8_t *)"", NOTIFY_STATE_FILE_MAX + 1, &s),
	           EMSGSIZE);
}

TEST(put_find_clear)
{
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;

	ASSERT_OK(notify_state_new(&s));
	ASSERT_OK(notify_state_put(s, FPR, 30, 1000, 0));
	ASSERT_OK(notify_state_put(s, FPR, 14, 1000, 0));
	ASSERT_OK(notify_state_put(s, "other", 7, 2000, 500));
	ASSERT_OK(notify_state_put(s, FPR, 14, 1000, 300)); /* update, not a new record */
	ASSERT_EQ(s->n, 3);
	ASSERT_EQ(notify_state_find(s, FPR, 14)->snooze_until, 300);
	ASSERT_TRUE(notify_state_find(s, FPR, 7) == NULL);
	ASSERT_EQ(notify_state_next_snooze(s, 0), 300);
	ASSERT_EQ(notify_state_next_snooze(s, 300), 500);
	ASSERT_EQ(notify_state_next_snooze(s, 500), 0);
	ASSERT_ERR(notify_state_put(s, "with space", 1, 1, 0), EINVAL);
	ASSERT_ERR(notify_state_put(s, "", 1, 1, 0), EINVAL);
	ASSERT_ERR(notify_state_put(s, "x", NOTIFY_STATE_THRESHOLD_MAX + 1, 1, 0), EINVAL);
	ASSERT_ERR(notify_state_put(s, "x", 1, -1, 0), EINVAL);
	ASSERT_EQ(notify_state_clear(s, FPR), 2);
	ASSERT_EQ(s->n, 1);
	ASSERT_STREQ(s->records[0].id, "other");
	ASSERT_EQ(notify_state_clear(s, FPR), 0);
}

TEST(end_snoozes)
{
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;

	ASSERT_OK(notify_state_new(&s));
	ASSERT_OK(notify_state_put(s, FPR, 30, 1000, 0));
	ASSERT_OK(notify_state_put(s, FPR, 14, 1000, 300));
	ASSERT_OK(notify_state_put(s, "other", 7, 2000, 500));
	ASSERT_EQ(notify_state_end_snoozes(s, 299), 0);
	ASSERT_EQ(s->n, 3);
	/* Only the record whose snooze ended goes; the other threshold of that subkey stays. */
	ASSERT_EQ(notify_state_end_snoozes(s, 300), 1);
	ASSERT_EQ(s->n, 2);
	ASSERT_TRUE(notify_state_find(s, FPR, 14) == NULL);
	ASSERT_TRUE(notify_state_find(s, FPR, 30) != NULL);
	ASSERT_TRUE(notify_state_find(s, "other", 7) != NULL);
	ASSERT_EQ(notify_state_end_snoozes(s, 10000), 1);
	ASSERT_EQ(s->n, 1);
	ASSERT_STREQ(s->records[0].id, FPR);
}

TEST(check_subkey)
{
	_cleanup_(notify_state_freep) struct notify_state *s = NULL;
	bool changed;

	ASSERT_OK(notify_state_new(&s));
	/* First crossing: announce; once recorded, not again. */
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 1000, LEVEL_WARNING, 7, &changed), 1);
	ASSERT_FALSE(changed);
	ASSERT_OK(notify_state_put(s, FPR, 7, 1000, 0));
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 1000, LEVEL_WARNING, 7, &changed), 0);
	ASSERT_FALSE(changed);
	/* The next threshold is news. */
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 1000, LEVEL_CRITICAL, 3, &changed), 1);
	/* No threshold crossed (level from the daemon, thresholds from us): nothing. */
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 1000, LEVEL_NOTICE, -1, &changed), 0);
	ASSERT_EQ(s->n, 1);
	/* Renewed: a new expiry clears the records, and the old threshold is news again later. */
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 5000, LEVEL_WARNING, 7, &changed), 1);
	ASSERT_TRUE(changed);
	ASSERT_EQ(s->n, 0);
	/* Back to ok, or never expiring: cleared, nothing announced. */
	ASSERT_OK(notify_state_put(s, FPR, 7, 5000, 0));
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 5000, LEVEL_OK, -1, &changed), 0);
	ASSERT_TRUE(changed);
	ASSERT_OK(notify_state_put(s, FPR, 7, 5000, 0));
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 0, LEVEL_WARNING, 7, &changed), 0);
	ASSERT_TRUE(changed);
	ASSERT_EQ(s->n, 0);
	/* Expired is threshold 0. */
	ASSERT_EQ(notify_state_check_subkey(s, FPR, 900, LEVEL_EXPIRED, 0, NULL), 1);
}

TEST(save_load)
{
	char dir[] = "/tmp/test-notify-state-XXXXXX", path[256], cmd[300];
	_cleanup_(notify_state_freep) struct notify_state *s = NULL, *l = NULL;
	struct stat st;
	FILE *f;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/dir/notified", dir);

	/* Missing file: empty state. */
	ASSERT_OK(notify_state_load(path, &l));
	ASSERT_EQ(l->n, 0);
	notify_state_free(TAKE_PTR(l));

	ASSERT_OK(notify_state_new(&s));
	ASSERT_OK(notify_state_put(s, FPR, 7, 1767657600, 0));
	ASSERT_OK(notify_state_put(s, "finding/x/y", 3, 0, 42));
	ASSERT_OK(notify_state_save(s, path)); /* creates sub/dir */
	ASSERT_OK(stat(path, &st));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_OK(notify_state_load(path, &l));
	ASSERT_EQ(l->n, 2);
	ASSERT_TRUE(memcmp(l->records, s->records, 2 * sizeof(s->records[0])) == 0);
	notify_state_free(TAKE_PTR(l));

	/* Overwrite: no temporary file is left beside it. */
	ASSERT_EQ(notify_state_clear(s, FPR), 1);
	ASSERT_OK(notify_state_save(s, path));
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s/sub/dir | wc -l) = 1", dir);
	ASSERT_EQ(system(cmd), 0);
	ASSERT_OK(notify_state_load(path, &l));
	ASSERT_EQ(l->n, 1);
	notify_state_free(TAKE_PTR(l));

	/* Corrupt: an error for the caller to report, no crash. */
	f = fopen(path, "we");
	ASSERT_TRUE(f);
	fputs(NOTIFY_STATE_MAGIC "\n" FPR " seven 1 0\n", f);
	fclose(f);
	ASSERT_ERR(notify_state_load(path, &l), EBADMSG);
	ASSERT_TRUE(l == NULL);

	/* A directory where the file should be. */
	snprintf(path, sizeof(path), "%s/sub", dir);
	ASSERT_ERR(notify_state_load(path, &l), EBADMSG);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ASSERT_EQ(system(cmd), 0);
}

TEST(default_path)
{
	char buf[256];

	setenv("HOME", "/home/alice", 1);
	setenv("XDG_STATE_HOME", "/x/state", 1);
	ASSERT_OK(notify_state_default_path(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/x/state/keyctl/notified");
	setenv("XDG_STATE_HOME", "relative", 1);
	ASSERT_OK(notify_state_default_path(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/home/alice/.local/state/keyctl/notified");
	unsetenv("XDG_STATE_HOME");
	ASSERT_OK(notify_state_default_path(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/home/alice/.local/state/keyctl/notified");
	ASSERT_ERR(notify_state_default_path(buf, 10), ENAMETOOLONG);
	unsetenv("HOME");
	ASSERT_ERR(notify_state_default_path(buf, sizeof(buf)), ENXIO);
}

int main(void)
{
	RUN(parse_valid);
	RUN(parse_malformed);
	RUN(parse_bounds);
	RUN(put_find_clear);
	RUN(end_snoozes);
	RUN(check_subkey);
	RUN(save_load);
	RUN(default_path);
	return 0;
}
