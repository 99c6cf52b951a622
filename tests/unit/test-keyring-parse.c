/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parts of keyring.c: gpg.conf's default-key, the keybox header check and which user
 * ids are shown. (The gpgme mapping runs against real keyrings in tests/integration.)
 */
#include <stdio.h>

#include "keyring-list.h"
#include "test.h"

static int parse(const char *text, char *buf, size_t size)
{
	return keyring_parse_default_key((const uint8_t *)text, strlen(text), buf, size);
}

TEST(default_key)
{
	char buf[KEYRING_DEFAULT_KEY_MAX], small[8];

	ASSERT_EQ(parse("", buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "");
	ASSERT_EQ(parse("keyid-format long\n# default-key 0xDEAD\n", buf, sizeof(buf)), 0);
	ASSERT_EQ(parse("keyid-format long\ndefault-key 0xB82E9F4BA59A4309\n", buf, sizeof(buf)),
	          1);
	ASSERT_STREQ(buf, "0xB82E9F4BA59A4309");
	/* Indented, tabs, CRLF, trailing blanks; the first one counts. */
	ASSERT_EQ(
	        parse("  default-key\t alice@example.org \r\ndefault-key bob\n", buf, sizeof(buf)),
	        1);
	ASSERT_STREQ(buf, "alice@example.org");
	ASSERT_EQ(parse("default-key \"Alice Example\"", buf, sizeof(buf)), 1);
	ASSERT_STREQ(buf, "Alice Example");
	/* Not the option: another name with the same prefix, or no value. */
	ASSERT_EQ(parse("default-keyserver-url x\ndefault-key\n", buf, sizeof(buf)), 0);
	ASSERT_EQ(parse("default-key   \n", buf, sizeof(buf)), 0);
	/* Overlong is rejected, not cut; a NUL byte is malformed. */
	ASSERT_ERR(parse("default-key 0123456789\n", small, sizeof(small)), EMSGSIZE);
	ASSERT_ERR(keyring_parse_default_key((const uint8_t *)"default-key a\0b", 15, buf,
	                                     sizeof(buf)),
	           EBADMSG);
	/* No newline at the end. */
	ASSERT_EQ(parse("default-key ABCDEF01", buf, sizeof(buf)), 1);
	ASSERT_STREQ(buf, "ABCDEF01");
}

TEST(keybox_header)
{
	static const uint8_t good[] = { 0, 0, 0, 0x20, 1, 1, 0, 2, 'K', 'B', 'X', 'f', 0 };
	uint8_t bad[sizeof(good)];

	ASSERT_OK(keyring_check_keybox_header(good, sizeof(good)));
	ASSERT_OK(keyring_check_keybox_header(good, 0));
	ASSERT_ERR(keyring_check_keybox_header(good, 11), EBADMSG);
	memcpy(bad, good, sizeof(bad));
	bad[4] = 2;
	ASSERT_ERR(keyring_check_keybox_header(bad, sizeof(bad)), EBADMSG);
	memcpy(bad, good, sizeof(bad));
	bad[11] = 'g';
	ASSERT_ERR(keyring_check_keybox_header(bad, sizeof(bad)), EBADMSG);
}

TEST(uid)
{
	char longer[UID_MAX + 8];

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
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	ASSERT_FALSE(keyring_uid_acceptable(longer));
	longer[UID_MAX - 1] = 0;
	ASSERT_TRUE(keyring_uid_acceptable(longer));
}

int main(void)
{
	RUN(default_key);
	RUN(keybox_header);
	RUN(uid);
	return 0;
}
