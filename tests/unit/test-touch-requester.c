/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* touch-requester.c's reading of /proc/<pid>/stat: comm up to the last ')', ppid, starttime. */
#include <errno.h>
#include <string.h>

#include "test.h"
#include "touch-requester.h"

static int parse(const char *s, struct proc_stat_view *st)
{
	return touch_requester_parse_stat((const uint8_t *)s, strlen(s), st);
}

static void test_plain(void)
{
	struct proc_stat_view st;

	/* A gpg started by git (Debian 12's procfs layout, 52 fields). */
	ASSERT_EQ(
	        parse("4242 (gpg) S 4200 4242 4200 34816 4242 4194304 211 0 0 0 1 0 0 0 20 0 1 0 "
	              "123456 10000000 700 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1\n",
	              &st),
	        0);
	ASSERT_STREQ(st.comm, "gpg");
	ASSERT_EQ(st.ppid, 4200);
	ASSERT_EQ(st.start, 123456ull);
}

static void test_odd_comm(void)
{
	struct proc_stat_view st;

	/* comm is up to the last ')': a program may call itself "a (b) c". */
	ASSERT_EQ(parse("77 (a (b) c) R 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 99 0", &st),
	          0);
	ASSERT_STREQ(st.comm, "a (b) c");
	ASSERT_EQ(st.ppid, 1);
	ASSERT_EQ(st.start, 99ull);
	/* Control bytes and bytes past ASCII are not passed on (the wire allows printable only). */
	ASSERT_EQ(parse("9 (\x01git\x7f) S 3 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0", &st), 0);
	ASSERT_STREQ(st.comm, "?git?");
	/* Longer than the kernel's 15 bytes: cut, terminated. */
	ASSERT_EQ(
	        parse("9 (abcdefghijklmnopqrstuvwxyz) S 3 9 9 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5 0",
	              &st),
	        0);
	ASSERT_EQ(strlen(st.comm), sizeof(st.comm) - 1);
}

static void test_bad(void)
{
	struct proc_stat_view st;

	ASSERT_EQ(parse("", &st), -EBADMSG);
	ASSERT_EQ(parse("42 gpg S 1", &st), -EBADMSG);
	ASSERT_EQ(parse("42 (gpg", &st), -EBADMSG);
	ASSERT_EQ(parse("42 )gpg( S 1 2", &st), -EBADMSG);
	/* Cut before starttime. */
	ASSERT_EQ(parse("42 (gpg) S 1 2 3", &st), -EBADMSG);
}

int main(void)
{
	test_plain();
	test_odd_comm();
	test_bad();
	return 0;
}
