/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Lock on removal's decision (daemon/session-lock.c): sequences of removals, returns, sleeps and
 * resumes, each ending in a lock or not, on an injected clock (CLOCK_MONOTONIC microseconds).
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "session-lock.h"
#include "test.h"

#define MS UINT64_C(1000)
#define T0 (UINT64_C(1000) * 1000 * 1000)

static struct lock_device dev(const char *id, const char *syspath, uint16_t vendor)
{
	struct lock_device d;

	memset(&d, 0, sizeof(d));
	snprintf(d.token_id, sizeof(d.token_id), "%s", id);
	snprintf(d.syspath, sizeof(d.syspath), "%s", syspath);
	d.usb_vendor = vendor;
	return d;
}

#define YK dev("yubikey-12345678", "/sys/devices/usb1/1-2", 0x1050)

TEST(wanted)
{
	ASSERT_FALSE(session_lock_wanted("", "yubikey-12345678", true));
	ASSERT_TRUE(session_lock_wanted("yubikey-12345678", "yubikey-12345678", false));
	ASSERT_FALSE(session_lock_wanted("yubikey-12345678", "yubikey-87654321", true));
	ASSERT_TRUE(session_lock_wanted(CONFIG_LOCK_ANY_KNOWN, "yubikey-12345678", true));
	ASSERT_FALSE(session_lock_wanted(CONFIG_LOCK_ANY_KNOWN, "nitrokey-A1B2", false));
	ASSERT_FALSE(session_lock_wanted(CONFIG_LOCK_ANY_KNOWN, "", true));
}

TEST(removal_locks_after_grace)
{
	struct session_lock s;
	struct lock_device d = YK, out;

	session_lock_init(&s);
	ASSERT_EQ(session_lock_next(&s), UINT64_MAX);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_next(&s), T0 + 1500 * MS);
	ASSERT_EQ(session_lock_due(&s, T0 + 1499 * MS, &out), 0);
	ASSERT_EQ(session_lock_due(&s, T0 + 1500 * MS, &out), 1);
	ASSERT_STREQ(out.token_id, "yubikey-12345678");
	ASSERT_EQ(session_lock_due(&s, T0 + 9000 * MS, &out), 0);
	ASSERT_EQ(session_lock_next(&s), UINT64_MAX);
}

TEST(not_wanted)
{
	struct session_lock s;
	struct lock_device d = YK;

	session_lock_init(&s);
	ASSERT_EQ(session_lock_removed(&s, &d, false, T0), LOCK_REMOVAL_NOT_WANTED);
	ASSERT_EQ(session_lock_next(&s), UINT64_MAX);
}

TEST(replug_in_time)
{
	struct session_lock s;
	struct lock_device d = YK, other_port = dev("yubikey-12345678", "/sys/x/1-3", 0x1050), out;

	session_lock_init(&s);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_arrived(&s, &other_port), 1u);
	ASSERT_EQ(session_lock_due(&s, T0 + 2000 * MS, &out), 0);
}

/* ykman config mode: 1050:0407 goes, 1050:0405 at the same port, its serial not read yet. */
TEST(reenumeration)
{
	struct session_lock s;
	struct lock_device d = YK, back = dev("yubikey-u1", "/sys/devices/usb1/1-2", 0x1050), out;
	struct lock_device stranger = dev("", "/sys/devices/usb1/1-2", 0x20a0);

	session_lock_init(&s);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_arrived(&s, &stranger), 0u); /* another maker's device there */
	ASSERT_EQ(session_lock_arrived(&s, &back), 1u);
	ASSERT_EQ(session_lock_due(&s, T0 + 2000 * MS, &out), 0);
}

TEST(back_too_late)
{
	struct session_lock s;
	struct lock_device d = YK, out;

	session_lock_init(&s);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_due(&s, T0 + 1500 * MS, &out), 1);
	ASSERT_EQ(session_lock_arrived(&s, &d), 0u);
}

TEST(sleep)
{
	struct session_lock s;
	struct lock_device d = YK, out;

	session_lock_init(&s);
	/* Held when the system goes to sleep: forgotten. */
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0), LOCK_REMOVAL_HELD);
	session_lock_sleep(&s, true, T0 + 100 * MS);
	ASSERT_EQ(session_lock_next(&s), UINT64_MAX);
	/* While asleep: not held. */
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0 + 200 * MS), LOCK_REMOVAL_ASLEEP);
	/* Within the grace after the resume: not held; after it: held. */
	session_lock_sleep(&s, false, T0 + 60000 * MS);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0 + 64999 * MS), LOCK_REMOVAL_RESUMING);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0 + 65000 * MS), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_due(&s, T0 + 66500 * MS, &out), 1);
	/* A second "resumed" without a sleep (the bus came back) starts no grace. */
	session_lock_sleep(&s, false, T0 + 70000 * MS);
	ASSERT_EQ(session_lock_removed(&s, &d, true, T0 + 70001 * MS), LOCK_REMOVAL_HELD);
}

TEST(two_tokens_and_full)
{
	struct session_lock s;
	struct lock_device a = YK, b = dev("nitrokey-A1B2", "/sys/devices/usb1/1-3", 0x20a0), out;

	session_lock_init(&s);
	ASSERT_EQ(session_lock_removed(&s, &a, true, T0), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_removed(&s, &b, true, T0 + 500 * MS), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_arrived(&s, &a), 1u);
	ASSERT_EQ(session_lock_next(&s), T0 + 2000 * MS);
	ASSERT_EQ(session_lock_due(&s, T0 + 2000 * MS, &out), 1);
	ASSERT_STREQ(out.token_id, "nitrokey-A1B2");
	for (size_t i = 0; i < SESSION_LOCK_PENDING_MAX; i++)
		ASSERT_EQ(session_lock_removed(&s, &a, true, T0), LOCK_REMOVAL_HELD);
	ASSERT_EQ(session_lock_removed(&s, &a, true, T0), LOCK_REMOVAL_FULL);
	session_lock_clear(&s);
	ASSERT_EQ(session_lock_next(&s), UINT64_MAX);
	ASSERT_STREQ(lock_removal_to_string(LOCK_REMOVAL_ASLEEP), "the system sleeps");
}

int main(void)
{
	RUN(wanted);
	RUN(removal_locks_after_grace);
	RUN(not_wanted);
	RUN(replug_in_time);
	RUN(reenumeration);
	RUN(back_too_late);
	RUN(sleep);
	RUN(two_tokens_and_full);
	return 0;
}
