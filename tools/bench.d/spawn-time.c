/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * spawn-time: wall time of whole command runs, two commands interleaved, for the benchmark's
 * `keyctl-status --json` against `keyctl-status --version` figure. Python's subprocess adds a
 * millisecond or two of its own to every run, and that jitters by as much as the difference
 * being measured; posix_spawn and a pipe read here add microseconds.
 *
 *   spawn-time RUNS -- CMD1 ARGS... -- CMD2 ARGS...
 *
 * Runs both RUNS + 1 times, alternating (the first pair warms up and is not counted), reads each
 * run's stdout to its end (discarded but for its size) and waits for it. Prints one JSON object:
 * {"a": [seconds...], "b": [seconds...], "a_bytes": N, "b_bytes": N, "failed": N}; a run that
 * does not exit 0, 1 or 2 (keyctl-status's codes for a good answer) counts in "failed".
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One run of argv: seconds (negative when it failed); *bytes gets the size of its stdout. */
static double run_once(char **argv, size_t *bytes)
{
	posix_spawn_file_actions_t fa;
	char buf[65536];
	int p[2], status;
	pid_t pid;
	double t0 = now_s();
	ssize_t n;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	*bytes = 0;
	while ((n = read(p[0], buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		*bytes += (size_t)n;
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 2)
		return -1;
	return now_s() - t0;
}

static void print_list(const char *name, const double *x, int n)
{
	printf("\"%s\": [", name);
	for (int i = 0; i < n; i++)
		printf("%s%.9f", i ? ", " : "", x[i]);
	printf("]");
}

int main(int argc, char **argv)
{
	char **a = NULL, **b = NULL;
	double *xa, *xb;
	size_t ba = 0, bb = 0;
	int runs, na = 0, nb = 0, failed = 0;

	if (argc < 6 || strcmp(argv[2], "--") != 0) {
		fprintf(stderr, "usage: spawn-time RUNS -- CMD1 ARGS... -- CMD2 ARGS...\n");
		return 2;
	}
	runs = atoi(argv[1]);
	a = &argv[3];
	for (int i = 3; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			argv[i] = NULL;
			b = &argv[i + 1];
			break;
		}
	if (runs <= 0 || !b || !b[0]) {
		fprintf(stderr, "spawn-time: need RUNS > 0 and two commands\n");
		return 2;
	}
	xa = calloc((size_t)runs, sizeof(double));
	xb = calloc((size_t)runs, sizeof(double));
	if (!xa || !xb)
		return 1;
	for (int r = 0; r <= runs; r++) {
		double ta = run_once(a, &ba), tb = run_once(b, &bb);

		if (ta < 0 || tb < 0) {
			failed++;
			continue;
		}
		if (r == 0)
			continue;
		xa[na++] = ta;
		xb[nb++] = tb;
	}
	printf("{");
	print_list("a", xa, na);
	printf(", ");
	print_list("b", xb, nb);
	printf(", \"a_bytes\": %zu, \"b_bytes\": %zu, \"failed\": %d}\n", ba, bb, failed);
	free(xa);
	free(xb);
	return 0;
}
