/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * git's config syntax (daemon/git-config.c): sections and names in any case, quotes, escapes,
 * comments, continuations, the last value winning, subsections kept apart, malformed files
 * refused, and the global files read in git's order with gpg.format honoured; without
 * user.signingkey, the committer identity git signs as when commit.gpgSign or tag.gpgSign is on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "git-config.h"
#include "test.h"

static int get(const char *text, const char *section, const char *name, char *buf, size_t size)
{
	return git_config_get((const uint8_t *)text, strlen(text), section, name, buf, size);
}

static const char *key_of(const char *text)
{
	static char buf[GIT_SIGNING_KEY_MAX];
	int r = get(text, "user", "signingkey", buf, sizeof(buf));

	ASSERT_TRUE(r >= 0);
	return r > 0 ? buf : "(none)";
}

TEST(values)
{
	ASSERT_STREQ(key_of("[user]\n\tsigningkey = 0xB82E9F4BA59A4309\n"), "0xB82E9F4BA59A4309");
	ASSERT_STREQ(key_of("[User]\nSigningKey=ABCD!\n"), "ABCD!");
	ASSERT_STREQ(key_of("[user]\nsigningkey = \"Alice  Example\" # mine\n"), "Alice  Example");
	ASSERT_STREQ(key_of("[user]\nsigningkey = a b\t c ; comment\n"), "a b  c");
	ASSERT_STREQ(key_of("[user]\nsigningkey = \"a;b#c\"\n"), "a;b#c");
	ASSERT_STREQ(key_of("[user]\nsigningkey = a\\\"b\\\\c\\td\n"), "a\"b\\c\td");
	ASSERT_STREQ(key_of("[user]\nsigningkey = AB\\\nCD\n"), "ABCD");
	ASSERT_STREQ(key_of("[user]\r\nsigningkey = AB \r\n"), "AB");
	ASSERT_STREQ(key_of("\xef\xbb\xbf[user] signingkey = AB"), "AB");
	/* The last value wins, across sections of the same name. */
	ASSERT_STREQ(key_of("[user]\nsigningkey = A\n[core]\nx=1\n[user]\nsigningkey = B\n"), "B");
	/* A bare name is boolean true: set, but empty. */
	ASSERT_STREQ(key_of("[user]\nsigningkey\n"), "");
}

TEST(not_ours)
{
	ASSERT_STREQ(key_of(""), "(none)");
	ASSERT_STREQ(key_of("# [user]\n; signingkey = A\n"), "(none)");
	ASSERT_STREQ(key_of("[user \"work\"]\nsigningkey = A\n"), "(none)");
	ASSERT_STREQ(key_of("[user.work]\nsigningkey = A\n"), "(none)");
	ASSERT_STREQ(key_of("[gpg]\nsigningkey = A\n"), "(none)");
	ASSERT_STREQ(key_of("[user]\nsigningkeys = A\nname = \"signingkey = B\"\n"), "(none)");
	ASSERT_STREQ(key_of("[user]\nname = x\n[url \"a\\\"b\"]\n\tinsteadOf = y\n"), "(none)");
}

TEST(malformed)
{
	char buf[8];

	ASSERT_ERR(get("signingkey = A\n", "user", "signingkey", buf, sizeof(buf)), EBADMSG);
	ASSERT_ERR(get("[user\nsigningkey = A\n", "user", "signingkey", buf, sizeof(buf)), EBADMSG);
	ASSERT_ERR(get("[]\n", "user", "signingkey", buf, sizeof(buf)), EBADMSG);
	ASSERT_ERR(get("[user \"a]\n", "user", "signingkey", buf, sizeof(buf)), EBADMSG);
	ASSERT_ERR(get("[user]\nsigningkey = \"A\n", "user", "signingkey", buf, sizeof(buf)),
	           EBADMSG);
	ASSERT_ERR(get("[user]\nsigningkey = A\\q\n", "user", "signingkey", buf, sizeof(buf)),
	           EBADMSG);
	ASSERT_ERR(get("[user]\nsigningkey = A\\", "user", "signingkey", buf, sizeof(buf)),
	           EBADMSG);
	ASSERT_ERR(get("[user]\n1key = A\n", "user", "signingkey", buf, sizeof(buf)), EBADMSG);
	ASSERT_ERR(get("[user]\nsigning key = A\n", "user", "signingkey", buf, sizeof(buf)),
	           EBADMSG);
	ASSERT_ERR(git_config_get((const uint8_t *)"[user]\n\0", 8, "user", "signingkey", buf,
	                          sizeof(buf)),
	           EBADMSG);
	/* A later malformed line spoils what came before, as git refuses the whole file. */
	ASSERT_ERR(get("[user]\nsigningkey = A\n[x\n", "user", "signingkey", buf, sizeof(buf)),
	           EBADMSG);
	ASSERT_STREQ(buf, "");
	/* Overlong: the wanted value is refused, another one is only checked. */
	ASSERT_ERR(get("[user]\nsigningkey = 0123456789\n", "user", "signingkey", buf, sizeof(buf)),
	           EMSGSIZE);
	ASSERT_EQ(get("[user]\nname = 0123456789\nsigningkey = 0123456\n", "user", "signingkey",
	              buf, sizeof(buf)),
	          1);
	ASSERT_STREQ(buf, "0123456");
	/* Truncated input: every prefix parses or is refused, never read past. */
	{
		const char *t = "[user \"x\"]\n[user]\n\tsigningkey = \"A\\\\B\" ; c\n";
		size_t n = strlen(t);

		for (size_t i = 0; i <= n; i++) {
			uint8_t *copy = malloc(i ? i : 1);
			int r;

			memcpy(copy, t, i);
			r = git_config_get(copy, i, "user", "signingkey", buf, sizeof(buf));
			ASSERT_TRUE(r == 0 || r == 1 || r == -EBADMSG);
			free(copy);
		}
	}
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ASSERT_TRUE(f != NULL);
	fputs(text, f);
	fclose(f);
}

TEST(global_files)
{
	char dir[] = "/tmp/test-git-config-XXXXXX", path[640], xdg[128], buf[GIT_SIGNING_KEY_MAX];

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	setenv("HOME", dir, 1);
	unsetenv("GIT_CONFIG_GLOBAL");
	snprintf(xdg, sizeof(xdg), "%s/xdg", dir);
	setenv("XDG_CONFIG_HOME", xdg, 1);
	ASSERT_EQ(git_signing_key(buf, sizeof(buf)), 0);

	snprintf(path, sizeof(path), "%s/git", xdg);
	ASSERT_TRUE(mkdir(xdg, 0700) == 0 && mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/git/config", xdg);
	write_file(path, "[user]\n\tsigningkey = XDGKEY\n[gpg]\n\tformat = ssh\n");
	ASSERT_EQ(git_signing_key(buf, sizeof(buf)), 0);
	write_file(path, "[user]\n\tsigningkey = XDGKEY\n");
	ASSERT_EQ(git_signing_key(buf, sizeof(buf)), 1);
	ASSERT_STREQ(buf, "XDGKEY");
	/* ~/.gitconfig is read last and wins; its gpg.format too. */
	snprintf(path, sizeof(path), "%s/.gitconfig", dir);
	write_file(path, "[user]\n\tsigningkey = HOMEKEY!\n[gpg]\nformat = openpgp\n");
	ASSERT_EQ(git_signing_key(buf, sizeof(buf)), 1);
	ASSERT_STREQ(buf, "HOMEKEY!");
	write_file(path, "[gpg]\n\tformat = x509\n");
	ASSERT_EQ(git_signing_key(buf, sizeof(buf)), 0);
	ASSERT_STREQ(buf, "");
	/* A malformed file is an error, as git fails on it. */
	write_file(path, "[user\n");
	ASSERT_ERR(git_signing_key(buf, sizeof(buf)), EBADMSG);
	/* GIT_CONFIG_GLOBAL replaces both. */
	snprintf(path, sizeof(path), "%s/other", dir);
	write_file(path, "[user]\nsigningkey = OTHER\n");
	setenv("GIT_CONFIG_GLOBAL", path, 1);
	ASSERT_EQ(git_signing_key(buf, sizeof(buf)), 1);
	ASSERT_STREQ(buf, "OTHER");
	unsetenv("GIT_CONFIG_GLOBAL");

	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		ASSERT_EQ(system(cmd), 0);
	}
}

/* What git hands gpg --local-user for the files texts (in git's order). */
static const char *signing_of(const char *a, const char *b)
{
	static char buf[GIT_SIGNING_KEY_MAX];
	char dir[] = "/tmp/test-git-signing-XXXXXX", pa[64], pb[64];
	const char *paths[] = { pa, pb };
	int r;

	ASSERT_TRUE(mkdtemp(dir) != NULL);
	snprintf(pa, sizeof(pa), "%s/a", dir);
	snprintf(pb, sizeof(pb), "%s/b", dir);
	write_file(pa, a);
	write_file(pb, b);
	r = git_config_signing(paths, 2, buf, sizeof(buf));
	unlink(pa);
	unlink(pb);
	rmdir(dir);
	ASSERT_TRUE(r >= 0);
	ASSERT_EQ(r, buf[0] != 0);
	return r > 0 ? buf : "(none)";
}

TEST(committer_identity)
{
	const char *id = "[user]\n\tname = Alice Tester\n\temail = alice@example.org\n";
	char text[256];

	/* Without user.signingkey git signs as "Name <email>" when it signs at all. */
	ASSERT_STREQ(signing_of(id, ""), "(none)");
	snprintf(text, sizeof(text), "%s[commit]\n\tgpgSign = true\n", id);
	ASSERT_STREQ(signing_of(text, ""), "Alice Tester <alice@example.org>");
	ASSERT_STREQ(signing_of(id, "[commit]\ngpgsign = yes\n"),
	             "Alice Tester <alice@example.org>");
	ASSERT_STREQ(signing_of(id, "[tag]\ngpgSign\n"), "Alice Tester <alice@example.org>");
	ASSERT_STREQ(signing_of(id, "[commit]\ngpgsign = 1\n"), "Alice Tester <alice@example.org>");
	/* The later file turns it off; false, no, off, 0 are false. */
	ASSERT_STREQ(signing_of(text, "[commit]\ngpgsign = false\n"), "(none)");
	ASSERT_STREQ(signing_of(text, "[commit]\ngpgsign = 0\n"), "(none)");
	/* committer.* before user.*; no name: the address alone. */
	ASSERT_STREQ(signing_of(text, "[committer]\nemail = a@work.example\n"),
	             "Alice Tester <a@work.example>");
	ASSERT_STREQ(signing_of("[user]\nemail = a@b.example\n", "[commit]\ngpgsign\n"),
	             "<a@b.example>");
	/* No address: git cannot sign as anyone we can name. */
	ASSERT_STREQ(signing_of("[user]\nname = A\n", "[commit]\ngpgsign\n"), "(none)");
	/* user.signingkey wins; gpg.format other than openpgp is no OpenPGP key at all. */
	ASSERT_STREQ(signing_of(text, "[user]\nsigningkey = ABCD!\n"), "ABCD!");
	ASSERT_STREQ(signing_of(text, "[gpg]\nformat = ssh\n"), "(none)");
}

int main(void)
{
	RUN(values);
	RUN(not_ours);
	RUN(malformed);
	RUN(global_files);
	RUN(committer_identity);
	return 0;
}
