/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs a fuzz harness over every file of its corpus directory, once each, so that the corpus is a
 * regression test even where libFuzzer is not available (gcc builds). Exits non-zero on an empty
 * corpus: a harness with no seeds tests nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(int dirfd, const char *name)
{
	struct stat st;
	uint8_t *buf;
	ssize_t k;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return fd < 0 ? -errno : 0;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	k = read(fd, buf, (size_t)st.st_size);
	close(fd);
	if (k != st.st_size) {
		free(buf);
		return -EIO;
	}
	LLVMFuzzerTestOneInput(buf, (size_t)k);
	free(buf);
	return 1;
}

int main(int argc, char **argv)
{
	unsigned n = 0;
	struct dirent *de;
	DIR *d;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS-DIR\n", argv[0]);
		return 2;
	}
	d = opendir(argv[1]);
	if (!d) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		int r;

		if (de->d_name[0] == '.')
			continue;
		r = run_file(dirfd(d), de->d_name);
		if (r < 0) {
			fprintf(stderr, "%s/%s: %s\n", argv[1], de->d_name, strerror(-r));
			closedir(d);
			return 1;
		}
		n += (unsigned)r;
	}
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "%s: empty corpus\n", argv[1]);
		return 1;
	}
	printf("replayed %u inputs from %s\n", n, argv[1]);
	return 0;
}
