/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs GnuPG's gpgconf for what it alone knows: where a daemon's socket is (--list-dirs) and how
 * GnuPG starts one (--launch). card-scd.c asks it about gpg-agent, upstream-fetch.c about
 * dirmngr.
 *
 * Does not: parse GnuPG's option files (gpg-conf.c), or log.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpgconf-run.h"
#include "util.h"

extern char **environ;

/* Runs gpgconf with args (and --homedir when home is set); stdout into out (NUL-terminated,
 * first line only). Returns the exit status or -errno; -EMSGSIZE when the first line does not
 * fit (a socket path cut short would be another socket). */
int gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size)
{
	const char *argv[8];
	posix_spawn_file_actions_t fa;
	int pipefd[2], status, r;
	size_t k = 0, n = 0;
	bool line_done = false, cut = false;
	pid_t pid;

	argv[k++] = "gpgconf";
	if (!isempty(home)) {
		argv[k++] = "--homedir";
		argv[k++] = home;
	}
	argv[k++] = a1;
	argv[k++] = a2;
	argv[k] = NULL;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	r = -posix_spawnp(&pid, "gpgconf", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r < 0) {
		close(pipefd[0]);
		return r;
	}
	for (;;) {
		char tmp[256];
		ssize_t got = read(pipefd[0], tmp, sizeof(tmp));

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		/* The rest is read and dropped: gpgconf must not block on a full pipe. */
		for (ssize_t i = 0; out && !line_done && i < got; i++) {
			if (tmp[i] == '\n')
				line_done = true;
			else if (n + 1 < size)
				out[n++] = tmp[i];
			else
				cut = true;
		}
	}
	close(pipefd[0]);
	if (out && size > 0)
		out[n] = 0;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (cut)
		return -EMSGSIZE;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -EIO;
}
