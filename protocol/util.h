/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers every part of keyctl uses: cleanup attributes, TAKE_PTR, bounded string copies.
 * Header-only on purpose; nothing here allocates behind the caller's back.
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define TAKE_PTR(p)                     \
	({                              \
		__typeof__(p) _t = (p); \
		(p) = NULL;             \
		_t;                     \
	})
#define TAKE_FD(fd)            \
	({                     \
		int _t = (fd); \
		(fd) = -1;     \
		_t;            \
	})

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The largest time_t (time_t is signed; systemd's time-util.h has the same definition). */
#define TIME_T_MAX ((time_t)((UINTMAX_C(1) << ((sizeof(time_t) << 3) - 1)) - 1))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline bool isempty(const char *s)
{
	return !s || !*s;
}

/* Copies into a fixed buffer. Returns -EMSGSIZE (and copies nothing) when src does not fit:
 * the house rule is to reject, never to truncate, what came from outside. */
static inline int strcpy_bounded(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		return -EMSGSIZE;
	memcpy(dst, src, n + 1);
	return 0;
}

/* For text we produce ourselves, where cutting is acceptable (log lines, error texts). */
static inline void strcpy_trunc(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	/* A loop, not strnlen(src, size - 1): src may be a smaller array than dst. */
	for (; n + 1 < size && src[n]; n++)
		dst[n] = src[n];
	dst[n] = 0;
}
