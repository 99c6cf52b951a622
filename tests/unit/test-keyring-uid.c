/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which user ids are shown (valid UTF-8, no control characters, any length) and how a long one is
 * shown: cut at a character boundary with "…", never dropped (issue 31: a key whose only user id
 * was 1,994 characters long was listed as "(no user id)").
 */
#include <stdio.h>

#include "keyring-uid.h"
#include "test.h"

TEST(acceptable)
{
	char longer[2000];

	ASSERT_TRUE(keyring_uid_acceptable("Alice <alice@example.org>"));
	ASSERT_TRUE(keyring_uid_acceptable("Jürgen Müller <j@example.de>"));
	ASSERT_TRUE(keyring_uid_acceptable("日本 <x@example.jp> 🔑"));
	ASSERT_TRUE(keyring_uid_acceptable(""));
	ASSERT_FALSE(keyring_uid_acceptable("bad\xc3")); /* truncated sequence */
	ASSERT_FALSE(keyring_uid_acceptable("bad\xc0\xaf")); /* overlong */
	ASSERT_FALSE(keyring_uid_acceptable("bad\xed\xa0\x80")); /* surrogate */
	ASSERT_FALSE(keyring_uid_acceptable("bad\xf4\x90\x80\x80")); /* > U+10FFFF */
	ASSERT_FALSE(keyring_uid_acceptable("ISO-8859-1 \xe9t\xe9"));
	ASSERT_FALSE(keyring_uid_acceptable("line\nbreak"));
	ASSERT_FALSE(keyring_uid_acceptable("esc\x1b[31m"));
	ASSERT_FALSE(keyring_uid_acceptable("c1 \xc2\x9b"));
	/* Length is no reason to hide a user id: 1,994 characters, as the tester's key had. */
	memset(longer, 'a', 1994);
	longer[1994] = 0;
	ASSERT_TRUE(keyring_uid_acceptable(longer));
	longer[1000] = '\x1b';
	ASSERT_FALSE(keyring_uid_acceptable(longer));
}

TEST(show)
{
	char uid[2000], buf[UID_MAX], want[UID_MAX];

	keyring_uid_show("Alice <alice@example.org>", buf);
	ASSERT_STREQ(buf, "Alice <alice@example.org>");

	/* The longest shown whole: UID_MAX - 1 bytes. */
	memset(uid, 'a', UID_MAX - 1);
	uid[UID_MAX - 1] = 0;
	keyring_uid_show(uid, buf);
	ASSERT_STREQ(buf, uid);

	/* One more byte, or 1,994: the first KEYRING_UID_CUT bytes and "…". */
	memcpy(uid, "Alice ", 6);
	memset(uid + 6, 'a', 1994 - 6);
	uid[1994] = 0;
	memcpy(want, uid, KEYRING_UID_CUT);
	strcpy(want + KEYRING_UID_CUT, "…");
	keyring_uid_show(uid, buf);
	ASSERT_STREQ(buf, want);
	ASSERT_EQ(strlen(buf), KEYRING_UID_CUT + 3);
	uid[UID_MAX] = 0;
	keyring_uid_show(uid, buf);
	ASSERT_STREQ(buf, want);

	/* A character across the cut is left out whole: "é" (2 bytes) at 251, "🔑" (4) at 250. */
	memset(uid, 'e', 300);
	uid[300] = 0;
	memcpy(uid + KEYRING_UID_CUT - 1, "é", 2);
	keyring_uid_show(uid, buf);
	ASSERT_EQ(strlen(buf), KEYRING_UID_CUT - 1 + 3);
	ASSERT_TRUE(keyring_uid_acceptable(buf));
	memset(uid, 'e', 300);
	memcpy(uid + KEYRING_UID_CUT - 2, "🔑", 4);
	keyring_uid_show(uid, buf);
	ASSERT_EQ(strlen(buf), KEYRING_UID_CUT - 2 + 3);
	ASSERT_TRUE(keyring_uid_acceptable(buf));
	ASSERT_STREQ(buf + KEYRING_UID_CUT - 2, "…");
}

int main(void)
{
	RUN(acceptable);
	RUN(show);
	return 0;
}
