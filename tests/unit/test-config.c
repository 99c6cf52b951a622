/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl.conf: defaults, every key's good and bad values, and the error text a user sees
 * (file, line, key), plus the loader's refusals (missing, too large, not a file), the lenient
 * mode keyctl-notify reads with, and the threshold list's syntax it shares with --thresholds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <syslog.h>

#include "config.h"
#include "test.h"

static int parse(const char *text, struct config *c, char *err)
{
	config_init(c);
	err[0] = 0;
	return config_parse((const uint8_t *)text, strlen(text), "keyctl.conf", 0, c, err,
	                    CONFIG_ERROR_MAX);
}

TEST(lock_on_removal)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	config_init(&c);
	ASSERT_STREQ(c.lock_on_removal, "");
	ASSERT_OK(parse("[session]\nlock-on-removal = any-known\n", &c, err));
	ASSERT_STREQ(c.lock_on_removal, CONFIG_LOCK_ANY_KNOWN);
	ASSERT_OK(parse("[session]\nlock-on-removal = yubikey-12345678 # mine\n", &c, err));
	ASSERT_STREQ(c.lock_on_removal, "yubikey-12345678");
	ASSERT_OK(parse("[session]\nlock-on-removal =\n", &c, err));
	ASSERT_STREQ(c.lock_on_removal, "");
	ASSERT_EQ(c.n_warnings, 0u);
}

TEST(defaults)
{
	struct config c;

	config_init(&c);
	ASSERT_EQ(c.n_thresholds, 5);
	ASSERT_EQ(c.thresholds[0], 30);
	ASSERT_EQ(c.thresholds[4], 1);
	ASSERT_EQ(c.max_clients, 64);
	ASSERT_EQ(c.max_validity_days, 730);
	ASSERT_EQ(c.warning_days, 14);
	ASSERT_EQ(c.critical_days, 3);
	ASSERT_STREQ(c.socket_path, "");
}

TEST(good_file)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_OK(parse("# comment\n"
	                "[daemon]\n"
	                "socket = /run/user/1000/k.sock\n"
	                "max-clients = 8\n"
	                "log-level = debug\n"
	                "[keyring]\n"
	                "gnupghome = /home/a/.gnupg\n"
	                "track = 0123456789abcdef0123456789ABCDEF01234567, "
	                "FEDCBA9876543210FEDCBA9876543210FEDCBA98\n"
	                "[expiry]\n"
	                "thresholds = 60, 10,2\n"
	                "warning-days = 10\n"
	                "critical-days = 2\n"
	                "max-validity-days = 365\n"
	                "[audit]\n"
	                "card-unseen-days = 7\n"
	                "[notify]\n"
	                "renewal-url = https://wiki.example.org/renew-keys\n",
	                &c, err));
	ASSERT_STREQ(c.socket_path, "/run/user/1000/k.sock");
	ASSERT_EQ(c.max_clients, 8);
	ASSERT_EQ(c.log_level, LOG_DEBUG);
	ASSERT_STREQ(c.gnupghome, "/home/a/.gnupg");
	ASSERT_EQ(c.n_track, 2);
	ASSERT_STREQ(c.track[0], "0123456789ABCDEF0123456789ABCDEF01234567");
	ASSERT_STREQ(c.track[1], "FEDCBA9876543210FEDCBA9876543210FEDCBA98");
	ASSERT_EQ(c.n_thresholds, 3);
	ASSERT_EQ(c.thresholds[1], 10);
	ASSERT_EQ(c.thresholds[2], 2);
	ASSERT_EQ(c.max_validity_days, 365);
	ASSERT_EQ(c.card_unseen_days, 7);
	ASSERT_STREQ(c.renewal_url, "https://wiki.example.org/renew-keys");
	ASSERT_EQ(c.n_warnings, 0);
	/* Repeated track lines add up. */
	ASSERT_OK(parse("[keyring]\ntrack = 0123456789abcdef0123456789ABCDEF01234567\n"
	                "track = FEDCBA9876543210FEDCBA9876543210FEDCBA98\n",
	                &c, err));
	ASSERT_EQ(c.n_track, 2);
	ASSERT_STREQ(c.track[1], "FEDCBA9876543210FEDCBA9876543210FEDCBA98");
}

TEST(bad_values_name_file_line_and_key)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "[daemon]\nmax-clients = 0\n",
		  "keyctl.conf:2: [daemon] max-clients: '0' is not a whole number from 1 to 4096" },
		{ "[daemon]\nmax-clients = 12abc\n",
		  "keyctl.conf:2: [daemon] max-clients: '12abc' is not a whole number from 1 to "
		  "4096" },
		{ "[daemon]\n\nmax-clients = -1\n", "keyctl.conf:3: [daemon] max-clients: '-1' is "
		                                    "not a whole number from 1 to 4096" },
		{ "[daemon]\nmax-clients = 99999999999999999999\n",
		  "keyctl.conf:2: [daemon] max-clients: '99999999999999999999' is not a whole "
		  "number from 1 to 4096" },
		{ "[daemon]\nlog-level = loud\n",
		  "keyctl.conf:2: [daemon] log-level: 'loud' is not one of err, warning, notice, "
		  "info, debug" },
		{ "[daemon]\nsocket = relative/path\n",
		  "keyctl.conf:2: [daemon] socket: 'relative/path' is not an absolute path" },
		{ "[keyring]\ntrack = 1234\n", "keyctl.conf:2: [keyring] track: '1234' is not a 40 "
		                               "or 64 digit hex fingerprint" },
		{ "[expiry]\nthresholds = 7, 14\n",
		  "keyctl.conf:2: [expiry] thresholds: must be strictly descending (14 after 7)" },
		{ "[expiry]\nthresholds = 30, x\n", "keyctl.conf:2: [expiry] thresholds: 'x' is "
		                                    "not a number of days from 1 to 3650" },
		{ "[expiry]\nthresholds = ,\n",
		  "keyctl.conf:2: [expiry] thresholds: at least one number of days is needed" },
		{ "[notify]\nrenewal-url = ftp://x\n",
		  "keyctl.conf:2: [notify] renewal-url: 'ftp://x' is not an http(s) URL" },
		{ "[session]\nlock-on-removal = yubi key\n",
		  "keyctl.conf:2: [session] lock-on-removal: 'yubi key' is neither any-known nor a "
		  "token id" },
		{ "[expiry]\nwarning-days = 2\ncritical-days = 5\n",
		  "keyctl.conf:3: [expiry] critical-days (5, line 3) is above warning-days (2, "
		  "line "
		  "2)" },
		{ "[expiry]\ncritical-days = 5\n\nwarning-days = 2\n",
		  "keyctl.conf:4: [expiry] critical-days (5, line 2) is above warning-days (2, "
		  "line "
		  "4)" },
		{ "# levels\n[expiry]\ncritical-days = 20\n",
		  "keyctl.conf:3: [expiry] critical-days (20, line 3) is above warning-days (14, "
		  "the "
		  "default)" },
		{ "[expiry]\nwarning-days = 2 # too low\n",
		  "keyctl.conf:2: [expiry] critical-days (3, the default) is above warning-days "
		  "(2, "
		  "line 2)" },
		{ "; about\n\n[expiry]\nthresholds = 30, x   # days\n",
		  "keyctl.conf:4: [expiry] thresholds: 'x' is not a number of days from 1 to "
		  "3650" },
		{ "[keyring]\ntrack = 0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 456\n",
		  "keyctl.conf:2: [keyring] track: '0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 "
		  "456' is not a 40 or 64 digit hex fingerprint" },
		{ "[upstream]\nrelied-on = 0123456789ABCDEF0123456789ABCDEF01234567 0x12\n",
		  "keyctl.conf:2: [upstream] relied-on: '0x12' is not a 40 or 64 digit hex "
		  "fingerprint" },
		{ "[keyring]\nretired = 0x\n", "keyctl.conf:2: [keyring] retired: '0x' is not a 40 "
		                               "or 64 digit hex fingerprint" },
		{ "[daemon]\nthis line has no equals sign\n",
		  "keyctl.conf:2: syntax error (expected [section] or key = value)" },
		{ "[daemon\n", "keyctl.conf:1: syntax error (expected [section] or key = value)" },
	};
	struct config c;
	char err[CONFIG_ERROR_MAX];

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		ASSERT_ERR(parse(cases[i].text, &c, err), EINVAL);
		ASSERT_STREQ(err, cases[i].err);
	}
}

TEST(first_error_wins)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_ERR(parse("[daemon]\nmax-clients = x\nlog-level = y\n", &c, err), EINVAL);
	ASSERT_STREQ(
	        err,
	        "keyctl.conf:2: [daemon] max-clients: 'x' is not a whole number from 1 to 4096");
}

TEST(unknown_keys_warn)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_OK(parse("[daemon]\nmax-clients = 3\ncolour = blue\n[nosuch]\nk = v\n", &c, err));
	ASSERT_EQ(c.max_clients, 3);
	ASSERT_EQ(c.n_warnings, 2);
	ASSERT_STREQ(c.warnings[0].text, "keyctl.conf:3: unknown key [daemon] colour, ignoring");
	ASSERT_STREQ(c.warnings[1].text, "keyctl.conf:5: unknown key [nosuch] k, ignoring");
}

TEST(hostile_bytes)
{
	struct config c;
	char err[CONFIG_ERROR_MAX], line[400];
	static const uint8_t nul[] = "[daemon]\nmax-clients = 1\0 2\n";

	config_init(&c);
	ASSERT_ERR(config_parse(nul, sizeof(nul) - 1, "k.conf", 0, &c, err, sizeof(err)), EBADMSG);
	ASSERT_STREQ(err, "k.conf:2: NUL byte in configuration");

	memset(line, 'a', sizeof(line));
	memcpy(line, "[daemon]\nsocket = /", 19);
	line[sizeof(line) - 1] = 0;
	ASSERT_ERR(parse(line, &c, err), EBADMSG);
	ASSERT_STREQ(err, "keyctl.conf:2: line longer than 196 characters");

	/* An empty file and a file of only comments are the defaults. */
	ASSERT_OK(parse("", &c, err));
	ASSERT_OK(parse("; only\n# comments\n", &c, err));
	ASSERT_EQ(c.max_clients, 64);
}

/* keyctl-notify's reading: other keys' mistakes are warnings, its own keys still taken. */
TEST(lenient)
{
	static const char text[] =
	        "[daemon]\nmax-clients = lots\nthis line has no equals sign\n"
	        "[expiry]\nthresholds = 7, 14\nwarning-days = 2\n"
	        "critical-days = 5\n[notify]\nrenewal-url = https://x.example/r\n";
	static const char head[] = "[notify]\nrenewal-url = https://";
	struct config c;
	char err[CONFIG_ERROR_MAX] = "", line[400];

	config_init(&c);
	ASSERT_OK(config_parse((const uint8_t *)text, strlen(text), "k.conf", CONFIG_LENIENT, &c,
	                       err, sizeof(err)));
	ASSERT_STREQ(c.renewal_url, "https://x.example/r");
	ASSERT_EQ(c.max_clients, 64);
	ASSERT_EQ(c.n_thresholds, 5);
	ASSERT_EQ(c.thresholds[0], 30);
	ASSERT_EQ(c.warning_days, 14);
	ASSERT_EQ(c.critical_days, 3);
	ASSERT_EQ(c.n_warnings, 4);
	ASSERT_STREQ(c.warnings[0].key, "daemon/max-clients");
	ASSERT_STREQ(c.warnings[0].text, "k.conf:2: [daemon] max-clients: 'lots' is not a whole "
	                                 "number from 1 to 4096, ignoring");
	ASSERT_STREQ(c.warnings[1].key, "expiry/thresholds");
	ASSERT_STREQ(c.warnings[2].key, "");
	ASSERT_STREQ(c.warnings[2].text, "k.conf:3: syntax error (expected [section] or key = "
	                                 "value), ignoring");
	ASSERT_STREQ(c.warnings[3].key, "expiry/critical-days");

	/* An overlong line is skipped whole; the next line is read. */
	memset(line, 'a', sizeof(line));
	memcpy(line, head, sizeof(head) - 1);
	strcpy(line + sizeof(line) - 40, "\nrenewal-url = http://y.example/\n");
	config_init(&c);
	ASSERT_OK(config_parse((const uint8_t *)line, strlen(line), "k.conf", CONFIG_LENIENT, &c,
	                       err, sizeof(err)));
	ASSERT_STREQ(c.renewal_url, "http://y.example/");
	ASSERT_EQ(c.n_warnings, 1);
	ASSERT_STREQ(c.warnings[0].text, "k.conf:2: line longer than 196 characters, ignoring");

	/* A NUL byte still refuses the file. */
	config_init(&c);
	ASSERT_ERR(config_parse((const uint8_t *)"[notify]\0", 9, "k.conf", CONFIG_LENIENT, &c, err,
	                        sizeof(err)),
	           EBADMSG);
}

/* Issue 31: the README's example, as printed, with comments after the values. inih (as Debian
 * builds it) strips only " ;" itself; " #" is stripped here, and a '#' or ';' inside a word stays.
 */
TEST(inline_comments)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_OK(parse(
	        "[expiry]\n"
	        "thresholds = 60, 30, 14, 7, 1     # days before expiry at which you are "
	        "told\n"
	        "warning-days = 14\t# tab before\n"
	        "critical-days = 3 ; semicolon\n"
	        "\n"
	        "[keyring]\n"
	        "track = 0123456789ABCDEF0123456789ABCDEF01234567   # a key with no secret "
	        "part here\n"
	        "[notify]\n"
	        "renewal-url = https://wiki.example.org/gpg-renewal#renew # the anchor stays\n",
	        &c, err));
	ASSERT_EQ(c.n_thresholds, 5);
	ASSERT_EQ(c.thresholds[0], 60);
	ASSERT_EQ(c.thresholds[4], 1);
	ASSERT_EQ(c.warning_days, 14);
	ASSERT_EQ(c.critical_days, 3);
	ASSERT_EQ(c.n_track, 1);
	ASSERT_STREQ(c.track[0], "0123456789ABCDEF0123456789ABCDEF01234567");
	ASSERT_STREQ(c.renewal_url, "https://wiki.example.org/gpg-renewal#renew");
	ASSERT_EQ(c.n_warnings, 0);

	ASSERT_OK(parse("[notify]\nrenewal-url = https://x/#a;b\n", &c, err));
	ASSERT_STREQ(c.renewal_url, "https://x/#a;b");
	/* A value that is only a comment is empty. */
	ASSERT_OK(
	        parse("[notify]\nrenewal-url = # none yet\n[keyring]\ntrack = ; later\n", &c, err));
	ASSERT_STREQ(c.renewal_url, "");
	ASSERT_EQ(c.n_track, 0);
	/* The comment is not part of what a refusal quotes. */
	ASSERT_ERR(parse("[daemon]\nmax-clients = lots # of them\n", &c, err), EINVAL);
	ASSERT_STREQ(err,
	             "keyctl.conf:2: [daemon] max-clients: 'lots' is not a whole number from 1 "
	             "to 4096");
}

/* Issue 31: fingerprints as gpg --fingerprint prints them, and with 0x, for every key that takes
 * them; whole fingerprints separated by blanks as before. */
TEST(fingerprint_forms)
{
	static const char *const keys[] = { "[keyring]\ntrack", "[keyring]\nretired",
		                            "[upstream]\nrelied-on" };
	static const char *const forms[] = {
		"0123 4567 89AB CDEF 0123  4567 89AB CDEF 0123 4567",
		"0x0123456789abcdef0123456789ABCDEF01234567",
		"0X0123456789ABCDEF0123456789ABCDEF01234567",
		"  0123456789ABCDEF 0123456789ABCDEF\t01234567  ",
	};
	static const char v5[] = "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF";
	struct config c;
	char err[CONFIG_ERROR_MAX], text[256];

	for (size_t k = 0; k < ELEMENTSOF(keys); k++)
		for (size_t f = 0; f < ELEMENTSOF(forms); f++) {
			unsigned n;
			const char(*list)[FPR_HEX_MAX];

			snprintf(text, sizeof(text), "%s = %s, 0x%s\n", keys[k], forms[f], v5);
			ASSERT_OK(parse(text, &c, err));
			n = k == 0 ? c.n_track : k == 1 ? c.n_retired : c.n_relied_on;
			list = k == 0 ? c.track : k == 1 ? c.retired : c.relied_on;
			ASSERT_EQ(n, 2);
			ASSERT_STREQ(list[0], "0123456789ABCDEF0123456789ABCDEF01234567");
			ASSERT_STREQ(list[1], v5);
		}
	/* Blanks between whole fingerprints still separate them. */
	ASSERT_OK(parse("[keyring]\ntrack = 0123456789ABCDEF0123456789ABCDEF01234567 "
	                "0xFEDCBA9876543210FEDCBA9876543210FEDCBA98,,\n",
	                &c, err));
	ASSERT_EQ(c.n_track, 2);
	ASSERT_STREQ(c.track[1], "FEDCBA9876543210FEDCBA9876543210FEDCBA98");
}

/* Issue 31: a key set twice is a warning naming both lines, the last value used; keys whose lines
 * add up (the fingerprint lists) and inih's continuation lines are no repetition. */
TEST(duplicate_key_warns)
{
	static const char twice[] = "[notify]\nrenewal-url = https://a/\n"
	                            "renewal-url = https://b/\nrenewal-url = ftp://c/\n";
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_OK(parse("[expiry]\nwarning-days = 10\ncritical-days = 2\n\n[daemon]\n"
	                "max-clients = 3\n[expiry]\nwarning-days = 7\n"
	                "warning-days = 6\n",
	                &c, err));
	ASSERT_EQ(c.warning_days, 6);
	ASSERT_EQ(c.n_warnings, 2);
	ASSERT_STREQ(c.warnings[0].key, "expiry/warning-days");
	ASSERT_STREQ(c.warnings[0].text, "keyctl.conf:8: [expiry] warning-days set again (first on "
	                                 "line 2); line 8 is used");
	ASSERT_STREQ(c.warnings[1].text, "keyctl.conf:9: [expiry] warning-days set again (first on "
	                                 "line 8); line 9 is used");

	ASSERT_OK(parse("[keyring]\ntrack = 0123456789ABCDEF0123456789ABCDEF01234567\n"
	                "track = FEDCBA9876543210FEDCBA9876543210FEDCBA98\n"
	                "  0xAAAABBBBCCCCDDDDEEEEFFFF0000111122223333\n"
	                "[notify]\nrenewal-url = https://a.example/\n",
	                &c, err));
	ASSERT_EQ(c.n_track, 3);
	ASSERT_EQ(c.n_warnings, 0);

	/* Lenient: the same warning; a refused repetition leaves the first value. */
	config_init(&c);
	ASSERT_OK(config_parse((const uint8_t *)twice, strlen(twice), "k.conf", CONFIG_LENIENT, &c,
	                       err, sizeof(err)));
	ASSERT_STREQ(c.renewal_url, "https://b/");
	ASSERT_EQ(c.n_warnings, 2);
	ASSERT_STREQ(c.warnings[0].text, "k.conf:3: [notify] renewal-url set again (first on line "
	                                 "2); line 3 is used");
	ASSERT_STREQ(c.warnings[1].text, "k.conf:4: [notify] renewal-url: 'ftp://c/' is not an "
	                                 "http(s) URL, ignoring");
}

/* inih (built with INI_ALLOW_MULTILINE, as Debian's is) reads an indented line after a key as
 * more of that key's value: fine for a fingerprint list, refused with a reason for any other key
 * rather than taken as its value. */
TEST(indented_line)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_ERR(parse("[expiry]\nwarning-days = 7\n  critical-days = 2  # two\n", &c, err),
	           EINVAL);
	ASSERT_STREQ(err, "keyctl.conf:3: [expiry] warning-days: 'critical-days = 2' is indented, "
	                  "which continues the line before; remove the blanks before it");
	ASSERT_ERR(parse("[expiry]\nwarning-days = 7\n\t8\n", &c, err), EINVAL);
	/* The first key after a section may be indented; so may a comment. */
	ASSERT_OK(parse("[expiry]\n  warning-days = 7\n  # note\ncritical-days = 2\n", &c, err));
	ASSERT_EQ(c.warning_days, 7);
	ASSERT_EQ(c.critical_days, 2);
	ASSERT_EQ(c.n_warnings, 0);
}

/* Issue 31: a key above the first [section] said so, not "unknown key []". */
TEST(key_before_section)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_OK(parse("# keyctl\nmax-clients = 3\n[daemon]\nmax-clients = 4\n", &c, err));
	ASSERT_EQ(c.max_clients, 4);
	ASSERT_EQ(c.n_warnings, 1);
	ASSERT_STREQ(c.warnings[0].text,
	             "keyctl.conf:2: key 'max-clients' before any [section], ignoring");
}

static int thresholds(const char *s, unsigned *v, unsigned *n, char *err)
{
	return config_parse_thresholds((const uint8_t *)s, strlen(s), v, n, err, CONFIG_ERROR_MAX);
}

TEST(thresholds)
{
	unsigned v[CONFIG_THRESHOLDS_MAX] = { 99 }, n = 0;
	char err[CONFIG_ERROR_MAX];
	static const char *const bad[] = {
		"", /* no number */
		",", /* no number either */
		"30 14", /* no comma */
		"30,,14", /* an empty item */
		"30,14,", /* a trailing comma */
		"0", /* below 1 */
		"3651", /* above 3650 */
		"+3", /* a sign */
		"14,30", /* ascending */
		"1,2,3", /* ascending */
		"5\n", /* not a blank */
		"-1,x", /* a sign, a word */
	};

	ASSERT_OK(thresholds("30, 14,7 ,\t3,1", v, &n, err));
	ASSERT_EQ(n, 5);
	ASSERT_EQ(v[0], 30);
	ASSERT_EQ(v[3], 3);
	ASSERT_EQ(v[4], 1);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		ASSERT_ERR(thresholds(bad[i], v, &n, err), EINVAL);
	ASSERT_EQ(n, 5); /* untouched by the refusals */
	ASSERT_ERR(thresholds("17,16,15,14,13,12,11,10,9,8,7,6,5,4,3,2,1", v, &n, err), E2BIG);
	ASSERT_STREQ(err, "more than 16 values");
	ASSERT_ERR(thresholds("30,,14", v, &n, err), EINVAL);
	ASSERT_STREQ(err, "'' is not a number of days from 1 to 3650");
}

static void write_file(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "w");

	ASSERT_TRUE(f);
	ASSERT_EQ(fwrite(text, 1, n, f), n);
	fclose(f);
}

TEST(load)
{
	char dir[] = "/tmp/test-config-XXXXXX", path[256], err[CONFIG_ERROR_MAX];
	struct config c;
	char *big;

	ASSERT_TRUE(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/keyctl.conf", dir);

	/* Missing: defaults when allowed (the default path), an error when named. */
	ASSERT_OK(config_load(path, CONFIG_MISSING_OK, &c, err, sizeof(err)));
	ASSERT_EQ(c.max_clients, 64);
	ASSERT_ERR(config_load(path, 0, &c, err, sizeof(err)), ENOENT);
	ASSERT_TRUE(strstr(err, "No such file or directory"));

	write_file(path, "[daemon]\nmax-clients = 5\n", 25);
	ASSERT_OK(config_load(path, 0, &c, err, sizeof(err)));
	ASSERT_EQ(c.max_clients, 5);

	big = malloc(CONFIG_FILE_MAX + 2);
	ASSERT_TRUE(big);
	memset(big, '#', CONFIG_FILE_MAX + 1);
	big[CONFIG_FILE_MAX] = '\n';
	write_file(path, big, CONFIG_FILE_MAX + 1);
	free(big);
	ASSERT_ERR(config_load(path, 0, &c, err, sizeof(err)), EFBIG);
	ASSERT_TRUE(strstr(err, "larger than 65536 bytes"));

	/* Unreadable (root reads anything, so only check where permissions apply). */
	if (geteuid() != 0) {
		write_file(path, "", 0);
		chmod(path, 0);
		ASSERT_ERR(config_load(path, 0, &c, err, sizeof(err)), EACCES);
	}
	unlink(path);

	ASSERT_ERR(config_load(dir, 0, &c, err, sizeof(err)), EINVAL);
	ASSERT_TRUE(strstr(err, "not a regular file"));
	rmdir(dir);
}

TEST(default_path)
{
	char buf[256];

	setenv("XDG_CONFIG_HOME", "/x/cfg", 1);
	ASSERT_OK(config_default_path(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/x/cfg/keyctl/keyctl.conf");
	unsetenv("XDG_CONFIG_HOME");
	setenv("HOME", "/home/u", 1);
	ASSERT_OK(config_default_path(buf, sizeof(buf)));
	ASSERT_STREQ(buf, "/home/u/.config/keyctl/keyctl.conf");
	ASSERT_ERR(config_default_path(buf, 10), ENAMETOOLONG);
}

TEST(upstream)
{
	struct config c;
	char err[CONFIG_ERROR_MAX];

	ASSERT_OK(parse("", &c, err));
	ASSERT_TRUE(c.upstream_check);
	ASSERT_EQ(c.upstream_interval_sec, 86400);
	ASSERT_EQ(c.n_relied_on, 0);
	ASSERT_TRUE(c.upstream_relied_trusted);
	ASSERT_OK(parse("[upstream]\nrelied-on-trusted = no\n", &c, err));
	ASSERT_FALSE(c.upstream_relied_trusted);
	ASSERT_ERR(parse("[upstream]\nrelied-on-trusted = off\n", &c, err), EINVAL);
	ASSERT_TRUE(strstr(err, "[upstream] relied-on-trusted") != NULL);
	ASSERT_OK(parse("", &c, err));
	ASSERT_TRUE(c.upstream_wkd);
	ASSERT_OK(parse("[upstream]\nwkd = no\n", &c, err));
	ASSERT_FALSE(c.upstream_wkd);
	ASSERT_ERR(parse("[upstream]\nwkd = off\n", &c, err), EINVAL);
	ASSERT_TRUE(strstr(err, "[upstream] wkd") != NULL);
	ASSERT_OK(parse("[upstream]\n"
	                "check = off\n"
	                "interval = 12h\n"
	                "relied-on = 0123456789abcdef0123456789ABCDEF01234567\n"
	                "relied-on = FEDCBA9876543210FEDCBA9876543210FEDCBA98\n",
	                &c, err));
	ASSERT_FALSE(c.upstream_check);
	ASSERT_EQ(c.upstream_interval_sec, 12 * 3600);
	ASSERT_EQ(c.n_relied_on, 2);
	ASSERT_STREQ(c.relied_on[0], "0123456789ABCDEF0123456789ABCDEF01234567");
	ASSERT_STREQ(c.relied_on[1], "FEDCBA9876543210FEDCBA9876543210FEDCBA98");
	ASSERT_ERR(parse("[upstream]\ncheck = maybe\n", &c, err), EINVAL);
	ASSERT_TRUE(strstr(err, "[upstream] check") != NULL);
	ASSERT_ERR(parse("[upstream]\ninterval = 30s\n", &c, err), EINVAL);
	ASSERT_ERR(parse("[upstream]\ninterval = 1y\n", &c, err), EINVAL);
	ASSERT_ERR(parse("[upstream]\ninterval = d\n", &c, err), EINVAL);
	ASSERT_ERR(parse("[upstream]\ninterval = 400d\n", &c, err), EINVAL);
	ASSERT_ERR(parse("[upstream]\nrelied-on = 0123\n", &c, err), EINVAL);
	ASSERT_TRUE(strstr(err, "[upstream] relied-on") != NULL);
	ASSERT_OK(parse("[upstream]\ninterval = 2w\n", &c, err));
	ASSERT_EQ(c.upstream_interval_sec, 14 * 86400);
}

/* The interval at its edges: for each unit the largest value accepted (366 days, or the whole
 * units below it) and one past it, and numbers whose product with the unit wraps around 2^64 to
 * a short interval (issue 32: 4611686018427387905m was taken as 60 s, the most frequent keyserver
 * querying there is). Each refusal names the file, the line and the key. */
TEST(interval_edges)
{
	static const struct {
		const char *value;
		unsigned sec; /* 0: refused */
	} cases[] = {
		{ "60s", 60 },
		{ "59s", 0 },
		{ "1m", 60 },
		{ "31622400s", 31622400 },
		{ "31622401s", 0 },
		{ "527040m", 31622400 },
		{ "527041m", 0 },
		{ "8784h", 31622400 },
		{ "8785h", 0 },
		{ "366d", 31622400 },
		{ "367d", 0 },
		{ "52w", 52 * 604800 },
		{ "53w", 0 },
		{ "4611686018427387905m", 0 }, /* times 60: 2^64 + 60 */
		{ "307445734561825862m", 0 }, /* times 60: 2^64 + 104 */
		{ "5124095576030432h", 0 }, /* times 3600: 2^64 + 3584 */
		{ "213503982334602d", 0 }, /* times 86400: 2^64 + 61184 */
		{ "30500568904944w", 0 }, /* times 604800: 2^64 + 579584 */
		{ "18446744073709551615s", 0 },
		{ "18446744073709551616s", 0 },
	};
	struct config c;
	char text[128], want[CONFIG_ERROR_MAX], err[CONFIG_ERROR_MAX];

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		snprintf(text, sizeof(text), "[upstream]\ninterval = %s\n", cases[i].value);
		if (cases[i].sec) {
			ASSERT_OK(parse(text, &c, err));
			ASSERT_EQ(c.upstream_interval_sec, cases[i].sec);
			continue;
		}
		ASSERT_ERR(parse(text, &c, err), EINVAL);
		snprintf(want, sizeof(want),
		         "keyctl.conf:2: [upstream] interval: '%s' is not a duration from 1m to "
		         "366d (90m, 12h, 1d, 2w)",
		         cases[i].value);
		ASSERT_STREQ(err, want);
	}
}

int main(void)
{
	RUN(upstream);
	RUN(interval_edges);
	RUN(defaults);
	RUN(lock_on_removal);
	RUN(good_file);
	RUN(bad_values_name_file_line_and_key);
	RUN(first_error_wins);
	RUN(unknown_keys_warn);
	RUN(hostile_bytes);
	RUN(lenient);
	RUN(inline_comments);
	RUN(fingerprint_forms);
	RUN(duplicate_key_warns);
	RUN(key_before_section);
	RUN(indented_line);
	RUN(thresholds);
	RUN(load);
	RUN(default_path);
	return 0;
}
