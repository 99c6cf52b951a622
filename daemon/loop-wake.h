/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one way a thread hands work to the sd-event loop: struct loop_wake holds an eventfd, its
 * io source and a callback run on the loop thread. A thread puts its result into its own
 * mutex-guarded data, then calls loop_wake_post(); the loop drains the eventfd and runs the
 * callback, which takes the data. Posts that come close together may run the callback once.
 *
 * Refcounted, because a thread may outlive its owner (a listing left running after a timeout):
 * such a thread holds a reference, and its post after the owner detached goes nowhere.
 *
 * Does not: carry data, start threads (worker-job.c does, for bounded jobs), or lock anything.
 */
#pragma once

#include <systemd/sd-event.h>

struct loop_wake;

/* On the loop thread, after one or more posts. Returns what an sd-event callback returns: a
 * negative errno disables the wake (sd-event's rule). */
typedef int (*loop_wake_fn)(void *userdata);

/* On the loop thread. description names the io source. The caller holds the one reference.
 * Returns 0 or -errno. */
int loop_wake_new(sd_event *e, const char *description, loop_wake_fn fn, void *userdata,
                  struct loop_wake **ret);

/* Any thread: a reference for a thread that may outlive the owner. */
struct loop_wake *loop_wake_ref(struct loop_wake *w);
/* Any thread: drops a reference taken with loop_wake_ref() (the owner detaches instead). The last
 * one closes the eventfd. Takes NULL; returns NULL. */
struct loop_wake *loop_wake_unref(struct loop_wake *w);
static inline void loop_wake_unrefp(struct loop_wake **w)
{
	loop_wake_unref(*w);
}

/* Any thread: the callback runs soon on the loop, unless the wake was detached. Returns 0 or
 * -errno. */
int loop_wake_post(struct loop_wake *w);

/* On the loop thread, by the owner: the callback never runs again, and the owner's reference is
 * dropped. Takes NULL; returns NULL. */
struct loop_wake *loop_wake_detach(struct loop_wake *w);
