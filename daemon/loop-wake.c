/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * See loop-wake.h. The eventfd stays open for as long as anyone holds a reference, so a post is
 * always a write to an fd of our own: after the owner detached it lands in a counter nobody
 * reads, and costs nothing. The io source lives and dies on the loop thread alone (sd-event is
 * not thread-safe); a thread touches only the fd and the count.
 *
 * Does not: carry data, start threads, or log.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop-wake.h"
#include "util.h"

struct loop_wake {
	atomic_uint refs;
	int fd; /* eventfd; set once, read by every thread */
	sd_event_source *source; /* loop thread only; NULL once detached */
	loop_wake_fn fn;
	void *userdata;
};

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop_wake *w = userdata;
	uint64_t v;

	/* Drained before the callback: a post during it wakes us again. */
	if (read(fd, &v, sizeof(v)) < 0) {
		/* EAGAIN (a spurious wake-up) or EINTR: the callback looks at its data anyway, so
		 * nothing a thread handed over is left lying. */
	}
	/* w is not touched after this: the callback may detach its owner's last reference. */
	return w->fn(w->userdata);
}

int loop_wake_new(sd_event *e, const char *description, loop_wake_fn fn, void *userdata,
                  struct loop_wake **ret)
{
	_cleanup_(loop_wake_unrefp) struct loop_wake *w = NULL;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	atomic_init(&w->refs, 1);
	w->fd = -1;
	w->fn = fn;
	w->userdata = userdata;
	w->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->fd < 0)
		return -errno;
	r = sd_event_add_io(e, &w->source, w->fd, EPOLLIN, on_io, w);
	if (r < 0)
		return r;
	(void)sd_event_source_set_description(w->source, description);
	*ret = TAKE_PTR(w);
	return 0;
}

struct loop_wake *loop_wake_ref(struct loop_wake *w)
{
	atomic_fetch_add_explicit(&w->refs, 1, memory_order_relaxed);
	return w;
}

struct loop_wake *loop_wake_unref(struct loop_wake *w)
{
	if (!w)
		return NULL;
	/* acq_rel: whoever frees sees every other holder's last use (the owner's detach). */
	if (atomic_fetch_sub_explicit(&w->refs, 1, memory_order_acq_rel) != 1)
		return NULL;
	/* Still attached only when the owner let go without detaching, on the loop thread. */
	sd_event_source_disable_unref(w->source);
	if (w->fd >= 0)
		close(w->fd);
	free(w);
	return NULL;
}

int loop_wake_post(struct loop_wake *w)
{
	uint64_t one = 1;
	ssize_t k;

	do
		k = write(w->fd, &one, sizeof(one));
	while (k < 0 && errno == EINTR);
	/* EAGAIN: the counter is full, so the loop has a wake-up pending anyway. */
	if (k < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

struct loop_wake *loop_wake_detach(struct loop_wake *w)
{
	if (!w)
		return NULL;
	w->source = sd_event_source_disable_unref(w->source);
	return loop_wake_unref(w);
}
