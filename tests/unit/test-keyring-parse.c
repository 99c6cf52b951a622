/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The pure parts of keyring-list.c: gpg.conf's default-key and the keybox header check (which
 * user ids are shown: test-keyring-uid.c); and keyring-ownertrust.c's reading of gpg
 * --export-ownertrust. (The gpgme mapping runs against real keyrings in tests/integration.)
 */
#include <stdio.h>

#include "keyring-list.h"
#include "keyring-ownertrust.h"
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
	/* Indented, tabs, CRLF, trailing blanks; every one, in order (gpg uses the last usable). */
	ASSERT_EQ(
	        parse("  default-key\t alice@example.org \r\ndefault-key bob\n", buf, sizeof(buf)),
	        1);
	ASSERT_STREQ(buf, "alice@example.org\nbob");
	/* All of them must fit, or none is given. */
	ASSERT_ERR(parse("default-key abc\ndefault-key defg\n", small, sizeof(small)), EMSGSIZE);
	ASSERT_STREQ(small, "");
	ASSERT_EQ(parse("default-key abc\ndefault-key def\n", small, sizeof(small)), 1);
	ASSERT_STREQ(small, "abc\ndef");
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

static int trust(const char *text, unsigned min, struct ownertrust **fprs, size_t *n)
{
	free(*fprs);
	*fprs = NULL;
	return ownertrust_parse((const uint8_t *)text, strlen(text), min, fprs, n);
}

TEST(ownertrust)
{
	static const char gpg_out[] =
	        "# List of assigned trustvalues, created Sun Dec  6 02:28:47 2026 UTC\n"
	        "# (Use \"gpg --import-ownertrust\" to restore them)\n"
	        "66685D0A7804530DEBBD3C7743108B614CF9256C:6:\n"
	        "3ECF7D3F64A5086004014C5407AFB6E134ED485B:5:\n"
	        "9EF08EE8392C265110352456E6E46FC379B1480A:4:\n"
	        "0D81F6A3A4A71A63C1C0B8B1D6F4C3E34F2C8A11:134:\n";
	struct ownertrust *f = NULL;
	size_t n = 99;

	ASSERT_EQ(trust(gpg_out, OWNERTRUST_ULTIMATE, &f, &n), 0);
	/* 134 is ultimate (6) with the disabled flag (128). */
	ASSERT_EQ(n, 2u);
	ASSERT_STREQ(f[0].fpr, "66685D0A7804530DEBBD3C7743108B614CF9256C");
	ASSERT_STREQ(f[1].fpr, "0D81F6A3A4A71A63C1C0B8B1D6F4C3E34F2C8A11");
	ASSERT_EQ(f[1].level, (unsigned)OWNERTRUST_ULTIMATE);
	ASSERT_EQ(trust(gpg_out, OWNERTRUST_FULLY, &f, &n), 0);
	ASSERT_EQ(n, 3u);
	ASSERT_STREQ(f[1].fpr, "3ECF7D3F64A5086004014C5407AFB6E134ED485B");
	ASSERT_EQ(f[1].level, (unsigned)OWNERTRUST_FULLY);
	/* Empty output, comments only: none. Lower case is taken, in upper case. */
	ASSERT_EQ(trust("", 0, &f, &n), 0);
	ASSERT_EQ(n, 0u);
	ASSERT_TRUE(f == NULL);
	ASSERT_EQ(trust("# nothing\n\n", 0, &f, &n), 0);
	ASSERT_EQ(n, 0u);
	ASSERT_EQ(trust("66685d0a7804530debbd3c7743108b614cf9256c:6:", 6, &f, &n), 0);
	ASSERT_EQ(n, 1u);
	ASSERT_STREQ(f[0].fpr, "66685D0A7804530DEBBD3C7743108B614CF9256C");
	/* A v5 fingerprint (64 digits). */
	ASSERT_EQ(trust("66685D0A7804530DEBBD3C7743108B614CF9256C66685D0A7804530DEBBD3C77:6:\n", 6,
	                &f, &n),
	          0);
	ASSERT_EQ(n, 1u);
	/* Anything else refuses the whole output: a short or long fingerprint, no level, junk
	 * after it, CRLF, a NUL in a comment, a level that overflows. */
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256:6:\n", 0, &f, &n), EBADMSG);
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256C0:6:\n", 0, &f, &n), EBADMSG);
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256C::\n", 0, &f, &n), EBADMSG);
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256C:6\n", 0, &f, &n), EBADMSG);
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256C:6:x\n", 0, &f, &n), EBADMSG);
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256C:6:\r\n", 0, &f, &n), EBADMSG);
	ASSERT_ERR(trust("66685D0A7804530DEBBD3C7743108B614CF9256C:99999999999:\n", 0, &f, &n),
	           EBADMSG);
	ASSERT_ERR(ownertrust_parse((const uint8_t *)"# a\0b\n", 6, 0, &f, &n), EBADMSG);
	free(f);
}

int main(void)
{
	RUN(default_key);
	RUN(ownertrust);
	RUN(keybox_header);
	return 0;
}
