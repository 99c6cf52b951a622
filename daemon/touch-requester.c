/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which program most likely asked for the operation a token waits on (doc/touch.md, section 7):
 * the user's youngest gpg, gpgsm or ssh client process, named by its first ancestor that is
 * neither GnuPG nor a shell ("git" for `git commit -S`, "pass", "emacs"), else by itself ("gpg"
 * run from a shell, "ssh"). A guess, shown as "likely": gpg-agent knows its clients and tells
 * nobody, and a client that keeps its connection open (a mail program) is missed when a newer
 * client runs. Read from /proc once per wait, never while idle.
 *
 * Does not: follow gpg-agent's sockets (sock_diag), or name processes of other users.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "touch-requester.h"
#include "util.h"

#define ANCESTORS_MAX 8

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

int touch_requester_parse_stat(const uint8_t *p, size_t n, struct proc_stat_view *ret)
{
	const uint8_t *open_paren = memchr(p, '(', n), *close_paren = NULL;
	char tail[256];
	size_t len;

	/* "pid (comm) S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
	 * stime cutime cstime priority nice threads itrealvalue starttime ...": comm may hold
	 * spaces and parentheses, so it ends at the last ')'. */
	for (size_t i = n; i > 0; i--)
		if (p[i - 1] == ')') {
			close_paren = p + i - 1;
			break;
		}
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -EBADMSG;
	len = (size_t)(close_paren - open_paren - 1);
	if (len >= sizeof(ret->comm))
		len = sizeof(ret->comm) - 1;
	/* comm is whatever the program set (prctl PR_SET_NAME): printable ASCII only goes on. */
	for (size_t i = 0; i < len; i++)
		ret->comm[i] = open_paren[1 + i] >= 0x20 && open_paren[1 + i] < 0x7f
		                       ? (char)open_paren[1 + i]
		                       : '?';
	ret->comm[len] = 0;
	len = MIN((size_t)(p + n - close_paren - 1), sizeof(tail) - 1);
	memcpy(tail, close_paren + 1, len);
	tail[len] = 0;
	if (sscanf(tail,
	           " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
	           "%*d %llu",
	           &ret->ppid, &ret->start) != 2)
		return -EBADMSG;
	return 0;
}

static int read_stat(int pid, struct proc_stat_view *ret)
{
	char path[64];
	uint8_t buf[512];
	_cleanup_(closep) int fd = -1;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	if (n <= 0)
		return n < 0 ? -errno : -EBADMSG;
	return touch_requester_parse_stat(buf, (size_t)n, ret);
}

static bool in_list(const char *comm, const char *const *list)
{
	for (; *list; list++)
		if (streq(comm, *list))
			return true;
	return false;
}

static const char *const clients[] = { "gpg",     "gpg2", "gpgsm", "ssh", "ssh-keygen",
	                               "ssh-add", "scp",  "sftp",  NULL };
static const char *const gnupg[] = { "gpg", "gpg2", "gpgsm", NULL };
static const char *const shells[] = { "sh",  "bash",    "dash", "zsh",  "fish",  "ksh", "tcsh",
	                              "csh", "systemd", "init", "sshd", "login", NULL };

/* Reads /proc/<pid>/<what> (NUL-separated strings) into buf; returns its length, 0 on failure. */
static size_t read_proc(int pid, const char *what, uint8_t *buf, size_t size)
{
	char path[64];
	_cleanup_(closep) int fd = -1;
	ssize_t n;

	(void)snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return (size_t)n;
}

/* The value of name= among NUL-separated strings, or NULL. */
static const char *env_get(const uint8_t *p, size_t n, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < n;) {
		const char *s = (const char *)p + i;
		size_t l = strnlen(s, n - i);

		if (l > len && memcmp(s, name, len) == 0 && s[len] == '=')
			return s + len + 1;
		i += l + 1;
	}
	return NULL;
}

/* Whether a GnuPG process pid works in home and asks the card something: a listing (gpgme's
 * --with-colons runs: keyctld's own, a mail program's lookups) never does, a process of another
 * home (another test, another agent) is no client of ours, and a zombie has no arguments. */
static bool gnupg_client_of(int pid, const char *home)
{
	uint8_t args[4096], env[32768];
	size_t n = read_proc(pid, "cmdline", args, sizeof(args)), m;
	const char *h = NULL, *user_home;
	char dflt[4096];

	if (n == 0)
		return false;
	for (size_t i = 0; i < n;) {
		const char *a = (const char *)args + i;
		size_t l = strnlen(a, n - i);

		if (streq(a, "--with-colons") || strncmp(a, "--list-", 7) == 0)
			return false;
		if (streq(a, "--homedir") && i + l + 1 < n)
			h = a + l + 1;
		else if (strncmp(a, "--homedir=", 10) == 0)
			h = a + 10;
		i += l + 1;
	}
	if (!h) {
		m = read_proc(pid, "environ", env, sizeof(env));
		h = env_get(env, m, "GNUPGHOME");
		user_home = env_get(env, m, "HOME");
		if (!h && user_home &&
		    snprintf(dflt, sizeof(dflt), "%s/.gnupg", user_home) < (int)sizeof(dflt))
			h = dflt;
	}
	return h && streq(h, home);
}

/* The user's youngest client of gpg-agent; 0 when none runs. */
static int youngest_client(const char *home, struct proc_stat_view *ret)
{
	_cleanup_(closedirp) DIR *d = opendir("/proc");
	uid_t uid = getuid();
	struct dirent *de;
	int best = 0;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		struct proc_stat_view st;
		struct stat sb;
		char path[64];
		int pid;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = atoi(de->d_name);
		(void)snprintf(path, sizeof(path), "/proc/%d", pid);
		if (stat(path, &sb) < 0 || sb.st_uid != uid || read_stat(pid, &st) < 0 ||
		    !in_list(st.comm, clients) ||
		    (in_list(st.comm, gnupg) && !gnupg_client_of(pid, home)))
			continue;
		if (!best || st.start > ret->start) {
			*ret = st;
			best = pid;
		}
	}
	return best;
}

void touch_requester_guess(const char *home, char *buf, size_t size)
{
	struct proc_stat_view st;
	int pid;

	if (size == 0)
		return;
	buf[0] = 0;
	pid = youngest_client(home, &st);
	if (!pid)
		return;
	strcpy_trunc(buf, size, st.comm);
	/* gpg's parent is who asked: git, pass, an editor; a shell means the user ran it. */
	for (unsigned i = 0; i < ANCESTORS_MAX && st.ppid > 1; i++) {
		if (read_stat(st.ppid, &st) < 0 || in_list(st.comm, shells))
			return;
		if (!in_list(st.comm, gnupg)) {
			strcpy_trunc(buf, size, st.comm);
			return;
		}
	}
}
