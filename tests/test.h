/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The unit tests' assertions: each prints both sides (or strerror of a negative errno) and the
 * place, then aborts, so a failure in CI's log says what was expected without a debugger.
 */
#pragma once

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_FAIL(...)                                                        \
	do {                                                                  \
		fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, __func__); \
		fprintf(stderr, __VA_ARGS__);                                 \
		fputc('\n', stderr);                                          \
		abort();                                                      \
	} while (0)

#define ASSERT_TRUE(e)                                      \
	do {                                                \
		if (!(e))                                   \
			TEST_FAIL("expected true: %s", #e); \
	} while (0)

#define ASSERT_FALSE(e) ASSERT_TRUE(!(e))

#define ASSERT_EQ(a, b)                                                    \
	do {                                                               \
		intmax_t _a = (intmax_t)(a), _b = (intmax_t)(b);           \
		if (_a != _b)                                              \
			TEST_FAIL("%s == %s: %jd != %jd", #a, #b, _a, _b); \
	} while (0)

#define ASSERT_STREQ(a, b)                                                                  \
	do {                                                                                \
		const char *_a = (a), *_b = (b);                                            \
		if (!_a || !_b || strcmp(_a, _b) != 0)                                      \
			TEST_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, _a ? _a : "(null)", \
			          _b ? _b : "(null)");                                      \
	} while (0)

#define ASSERT_OK(expr)                                                                  \
	do {                                                                             \
		intmax_t _r = (intmax_t)(expr);                                          \
		if (_r < 0)                                                              \
			TEST_FAIL("%s failed: %s (%jd)", #expr, strerror((int)-_r), _r); \
	} while (0)

#define ASSERT_ERR(expr, err)                                                        \
	do {                                                                         \
		intmax_t _r = (intmax_t)(expr);                                      \
		if (_r != -(intmax_t)(err))                                          \
			TEST_FAIL("%s: expected -%s, got %jd (%s)", #expr, #err, _r, \
			          _r < 0 ? strerror((int)-_r) : "not an error");     \
	} while (0)

#define TEST(name) static void test_##name(void)
#define RUN(name)                                 \
	do {                                      \
		fprintf(stderr, "  %s\n", #name); \
		test_##name();                    \
	} while (0)

/* A file of the source tree (KEYCTL_SRCDIR, set by meson) opened for reading; fails the test
 * when it cannot be. */
static inline FILE *test_open_src(const char *rel)
{
	const char *srcdir = getenv("KEYCTL_SRCDIR");
	char path[4096];
	FILE *f;

	if (!srcdir)
		TEST_FAIL("KEYCTL_SRCDIR is not set");
	snprintf(path, sizeof(path), "%s/%s", srcdir, rel);
	f = fopen(path, "re");
	if (!f)
		TEST_FAIL("cannot open %s", path);
	return f;
}
