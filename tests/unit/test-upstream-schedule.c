/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The upstream schedule's decisions, without its timer: which failed fetches count as offline,
 * and the pause before the next query through a run of offline ticks (5 min, doubling, never
 * beyond the interval) and back online (interval / keys again).
 */
#include <errno.h>

#include "test.h"
#include "watch-upstream-schedule.h"

#define MIN_USEC (60ull * 1000000ull)
#define DAY_USEC (1440ull * MIN_USEC)

static struct upstream_result result(int r, const char *error)
{
	struct upstream_result u = {};

	u.r = r;
	strcpy_trunc(u.error, sizeof(u.error), error);
	return u;
}

TEST(offline)
{
	struct upstream_result u;

	ASSERT_FALSE(upstream_result_offline(NULL));
	u = result(0, "");
	ASSERT_FALSE(upstream_result_offline(&u));
	u = result(-EHOSTDOWN, "dirmngr is not running");
	ASSERT_TRUE(upstream_result_offline(&u));
	u = result(-EHOSTUNREACH, "No route to host");
	ASSERT_TRUE(upstream_result_offline(&u));
	u = result(-ETIMEDOUT, "not reached within the bound");
	ASSERT_TRUE(upstream_result_offline(&u));
	/* A fetch that failed where the copy from before was kept. */
	u = result(0, "Connection refused");
	ASSERT_TRUE(upstream_result_offline(&u));
	/* Answers: trying sooner would not change them. */
	u = result(-ENOENT, "not on the keyserver");
	ASSERT_FALSE(upstream_result_offline(&u));
	u = result(-EBADMSG, "the answer is not an OpenPGP key");
	ASSERT_FALSE(upstream_result_offline(&u));
	u = result(-EFBIG, "the answer is over 1 MiB");
	ASSERT_FALSE(upstream_result_offline(&u));
}

TEST(backoff)
{
	uint64_t backoff = 0;
	/* 5, 10, 20, ... minutes until the interval caps it. */
	static const uint64_t minutes[] = { 5, 10, 20, 40, 80, 160, 320, 640, 1280, 1440, 1440 };

	/* Online: each of 8 keys about once a day. */
	ASSERT_EQ(upstream_schedule_pause(&backoff, false, DAY_USEC, 8), DAY_USEC / 8);
	ASSERT_EQ(backoff, 0u);
	for (size_t i = 0; i < ELEMENTSOF(minutes); i++) {
		ASSERT_EQ(upstream_schedule_pause(&backoff, true, DAY_USEC, 8),
		          minutes[i] * MIN_USEC);
		ASSERT_EQ(backoff, minutes[i] * MIN_USEC);
	}
	/* One answer ends it: back to the even spread. */
	ASSERT_EQ(upstream_schedule_pause(&backoff, false, DAY_USEC, 8), DAY_USEC / 8);
	ASSERT_EQ(backoff, 0u);
	ASSERT_EQ(upstream_schedule_pause(&backoff, true, DAY_USEC, 8), 5 * MIN_USEC);

	/* An interval shorter than the first pause caps that too; no keys count as one. */
	backoff = 0;
	ASSERT_EQ(upstream_schedule_pause(&backoff, true, 2 * MIN_USEC, 0), 2 * MIN_USEC);
	ASSERT_EQ(upstream_schedule_pause(&backoff, true, 2 * MIN_USEC, 0), 2 * MIN_USEC);
	backoff = 0;
	ASSERT_EQ(upstream_schedule_pause(&backoff, false, 2 * MIN_USEC, 0), 2 * MIN_USEC);
}

int main(void)
{
	RUN(offline);
	RUN(backoff);
	return 0;
}
