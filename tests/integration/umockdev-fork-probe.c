/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What keyctld does under umockdev-wrapper, at its worst: two threads in umockdev's wrapped path
 * calls while a third forks children that open() before they exit, as gpgme's children do before
 * exec. Exits 0 after 500 forks, 1 as soon as a child is stuck for 3 s (killed). test-umockdev-
 * fork.py runs it with and without umockdev-fork.c's preload.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *stat_forever(void *arg)
{
	struct stat st;

	for (;;)
		(void)stat("/sys/bus/usb", &st);
	return arg;
}

static int child_ends(pid_t pid)
{
	struct timespec pause = { 0, 100000 };
	time_t start = time(NULL);
	int status;

	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (time(NULL) - start > 3) {
			kill(pid, SIGKILL);
			(void)waitpid(pid, &status, 0);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	return 0;
}

int main(void)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, stat_forever, NULL);
	for (int i = 0; i < 500; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			(void)open("/dev/null", O_RDWR | O_CLOEXEC);
			_exit(0);
		}
		if (pid < 0 || child_ends(pid) < 0) {
			printf("fork %d: the child is stuck\n", i);
			return 1;
		}
	}
	printf("500 forks, no child stuck\n");
	return 0;
}
