/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FIDO touch watching (watch-fido.h). At start an enumeration of hidraw nodes (allowing
 * uninitialized ones, as watch-udev.c does: no udevd, no "initialized"), then a device monitor of
 * its own filtered to hidraw in the kernel (BPF), so it wakes only when a hidraw node comes or
 * goes. A node is read only when its hid device's report_descriptor (sysfs, read as a file: it
 * holds NULs) declares FIDO's usage page; everything else is never opened.
 *
 * Why a second monitor rather than watch-udev.c's: uevents are rare (plugging), the kernel copies
 * each to every listening socket, and an idle socket costs no wake-up; sharing would make either
 * watcher's lifetime and filter the other's business, and main.c owns both independently.
 *
 * Reading is passive: Linux queues every input report to each open file of a hidraw node
 * (drivers/hid/hidraw.c, hidraw_report_event(): list_for_each_entry over dev->list, a kmemdup per
 * reader, a reader whose queue is full is skipped, never the others), so our copy takes nothing
 * from the client's. We open O_RDONLY and never flock(): libfido2 takes LOCK_EX|LOCK_NB and gives
 * up when it cannot (src/hid_linux.c, fido_hid_open()).
 *
 * Does not: decide what a frame means (fido-hid.c), or report anything but touch changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-device.h>

#include "fido-hid.h"
#include "fileio.h"
#include "log.h"
#include "watch-fido.h"

#define SYSPATH_MAX 512
#define SERIAL_MAX 128
#define NODES_MAX 16
/* Reads per wake-up and node: a token that floods us yields to the rest of the loop. */
#define READS_MAX 16
/* How late the silence timer may fire, for the loop to coalesce wake-ups (CTAP has no use for
 * a sharper end than this). */
#define TIMER_ACCURACY_USEC (50 * UINT64_C(1000))

struct fido_node {
	struct watch_fido *watch;
	char syspath[SYSPATH_MAX]; /* the hidraw device: what a remove event names */
	char usb_syspath[SYSPATH_MAX]; /* the token: what the callback names */
	char serial[SERIAL_MAX];
	int fd; /* -1 while refused or after the node failed */
	bool refused_logged;
	sd_event_source *io;
	struct fido_touch touch;
};

struct watch_fido {
	sd_event *event;
	sd_device_monitor *monitor;
	sd_event_source *timer; /* enabled only while some node waits */
	watch_fido_fn fn;
	void *userdata;
	struct fido_node *nodes[NODES_MAX];
	size_t n_nodes;
};

static void node_report(struct watch_fido *w, struct fido_node *n, enum fido_touch_change c)
{
	if (c == FIDO_TOUCH_UNCHANGED || !w->fn)
		return;
	log_debug("FIDO token %s %s", n->usb_syspath,
	          c == FIDO_TOUCH_STARTED ? "waits for a touch" : "no longer waits");
	w->fn(n->usb_syspath, n->serial, c == FIDO_TOUCH_STARTED, n->touch.since_realtime,
	      w->userdata);
}

static void node_close(struct fido_node *n)
{
	n->io = sd_event_source_disable_unref(n->io);
	if (n->fd >= 0)
		close(n->fd);
	n->fd = -1;
}

static struct fido_node *node_free(struct fido_node *n)
{
	if (!n)
		return NULL;
	node_close(n);
	free(n);
	return NULL;
}

static void node_freep(struct fido_node **n)
{
	node_free(*n);
}

static size_t node_index(struct watch_fido *w, const char *syspath)
{
	for (size_t i = 0; i < w->n_nodes; i++)
		if (streq(w->nodes[i]->syspath, syspath))
			return i;
	return SIZE_MAX;
}

/* Arms the one timer for the earliest deadline, or turns it off: no wake-up while none waits. */
static int timer_update(struct watch_fido *w);

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct watch_fido *w = userdata;
	uint64_t now = usec;

	(void)sd_event_now(w->event, CLOCK_MONOTONIC, &now);
	for (size_t i = 0; i < w->n_nodes; i++)
		node_report(w, w->nodes[i], fido_touch_tick(&w->nodes[i]->touch, now));
	return timer_update(w);
}

static int timer_update(struct watch_fido *w)
{
	uint64_t next = UINT64_MAX;
	int r;

	for (size_t i = 0; i < w->n_nodes; i++)
		next = MIN(next, fido_touch_deadline(&w->nodes[i]->touch));
	if (next == UINT64_MAX)
		return w->timer ? sd_event_source_set_enabled(w->timer, SD_EVENT_OFF) : 0;
	if (!w->timer)
		return sd_event_add_time(w->event, &w->timer, CLOCK_MONOTONIC, next,
		                         TIMER_ACCURACY_USEC, on_timer, w);
	r = sd_event_source_set_time(w->timer, next);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
}

static void node_frame(struct watch_fido *w, struct fido_node *n, const uint8_t *buf, size_t len)
{
	uint64_t mono = 0, real = 0;
	struct fido_frame f;
	int r;

	r = fido_hid_frame_parse(buf, len, &f);
	if (r < 0) {
		log_debug_errno(r, "Unreadable report of %zu bytes from %s, ignoring: %m", len,
		                n->syspath);
		return;
	}
	(void)sd_event_now(w->event, CLOCK_MONOTONIC, &mono);
	(void)sd_event_now(w->event, CLOCK_REALTIME, &real);
	node_report(w, n, fido_touch_feed(&n->touch, &f, mono, real));
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct fido_node *n = userdata;
	struct watch_fido *w = n->watch;
	uint8_t buf[FIDO_HID_REPORT_MAX];

	for (unsigned i = 0; i < READS_MAX; i++) {
		/* hidraw returns one report per read, cut to the buffer: 64 is FIDO's largest. */
		ssize_t k = read(fd, buf, sizeof(buf));

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			break;
		if (k <= 0) {
			/* ENODEV: unplugged (its remove event follows) or revoked. */
			log_debug_errno(k < 0 ? -errno : -EPIPE, "Stopped reading %s: %m",
			                n->syspath);
			node_close(n);
			node_report(w, n, fido_touch_abort(&n->touch));
			break;
		}
		node_frame(w, n, buf, (size_t)k);
	}
	return timer_update(w);
}

static int node_open(struct watch_fido *w, struct fido_node *n, sd_device *dev)
{
	const char *devname = NULL;
	int r;

	r = sd_device_get_devname(dev, &devname);
	if (r < 0)
		return r;
	/* O_NOCTTY: a device node is never our terminal (umockdev's nodes are ptys). */
	n->fd = open(devname, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (n->fd < 0) {
		r = -errno;
		if (!n->refused_logged)
			log_info_errno(r, "Cannot read FIDO token %s at %s, ignoring: %m",
			               n->usb_syspath, devname);
		n->refused_logged = true;
		return 0;
	}
	r = sd_event_add_io(w->event, &n->io, n->fd, EPOLLIN, on_readable, n);
	if (r < 0) {
		node_close(n);
		return r;
	}
	(void)sd_event_source_set_description(n->io, "fido-hidraw");
	log_debug("Reading FIDO token %s at %s", n->usb_syspath, devname);
	return 0;
}

/* Returns 1 when the node's hid device describes a FIDO interface, 0 when not, -errno. */
static int node_is_fido(sd_device *dev)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	const char *hid_syspath;
	char path[SYSPATH_MAX + 32];
	sd_device *hid;
	size_t len = 0;
	int r;

	r = sd_device_get_parent_with_subsystem_devtype(dev, "hid", NULL, &hid);
	if (r < 0)
		return r;
	r = sd_device_get_syspath(hid, &hid_syspath);
	if (r < 0)
		return r;
	if ((size_t)snprintf(path, sizeof(path), "%s/report_descriptor", hid_syspath) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	r = file_read_bounded(path, FIDO_HID_DESCRIPTOR_MAX, &buf, &len);
	if (r == -EFBIG)
		return -EMSGSIZE;
	if (r < 0)
		return r;
	return fido_hid_descriptor_is_fido(buf, len);
}

/* The token a node belongs to: its usb_device (and USB serial), so that two keys stay two
 * whatever their hidraw numbers; a token not on USB (uhid, Bluetooth) is its hid device. */
static int node_identify(struct fido_node *n, sd_device *dev)
{
	const char *syspath = NULL, *serial = NULL;
	sd_device *parent;
	int r;

	if (sd_device_get_parent_with_subsystem_devtype(dev, "usb", "usb_device", &parent) >= 0)
		(void)sd_device_get_sysattr_value(parent, "serial", &serial);
	else if (sd_device_get_parent_with_subsystem_devtype(dev, "hid", NULL, &parent) < 0)
		return -ENODEV;
	r = sd_device_get_syspath(parent, &syspath);
	if (r < 0)
		return r;
	r = strcpy_bounded(n->usb_syspath, sizeof(n->usb_syspath), syspath);
	if (r < 0)
		return r;
	if (serial && strcpy_bounded(n->serial, sizeof(n->serial), serial) < 0)
		log_debug("USB serial of %s too long, left out", syspath);
	return 0;
}

static int node_added(struct watch_fido *w, sd_device *dev, const char *syspath)
{
	_cleanup_(node_freep) struct fido_node *n = NULL;
	size_t i = node_index(w, syspath);
	int r;

	/* A change event: a node refused before may be ours now (udev set its ACL). */
	if (i != SIZE_MAX)
		return w->nodes[i]->fd >= 0 ? 0 : node_open(w, w->nodes[i], dev);

	r = node_is_fido(dev);
	if (r < 0)
		return log_debug_errno(r, "Cannot read the report descriptor of %s, ignoring: %m",
		                       syspath);
	if (r == 0)
		return 0;
	if (w->n_nodes >= NODES_MAX)
		return log_debug_errno(-ENOSPC, "Too many FIDO nodes, ignoring %s", syspath);

	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->watch = w;
	n->fd = -1;
	r = strcpy_bounded(n->syspath, sizeof(n->syspath), syspath);
	if (r < 0)
		return r;
	r = node_identify(n, dev);
	if (r < 0)
		return log_debug_errno(r, "Cannot tell which token %s belongs to, ignoring: %m",
		                       syspath);
	r = node_open(w, n, dev);
	if (r < 0)
		return r;
	w->nodes[w->n_nodes++] = TAKE_PTR(n);
	return 0;
}

static void node_removed(struct watch_fido *w, const char *syspath)
{
	size_t i = node_index(w, syspath);
	struct fido_node *n;

	if (i == SIZE_MAX)
		return;
	n = w->nodes[i];
	memmove(&w->nodes[i], &w->nodes[i + 1], (w->n_nodes - i - 1) * sizeof(w->nodes[0]));
	w->n_nodes--;
	node_close(n);
	node_report(w, n, fido_touch_abort(&n->touch));
	node_free(n);
	(void)timer_update(w);
}

static int on_monitor(sd_device_monitor *m, sd_device *dev, void *userdata)
{
	struct watch_fido *w = userdata;
	sd_device_action_t action = _SD_DEVICE_ACTION_INVALID;
	const char *syspath = NULL;

	if (sd_device_get_action(dev, &action) < 0 || sd_device_get_syspath(dev, &syspath) < 0)
		return 0;
	if (action == SD_DEVICE_REMOVE)
		node_removed(w, syspath);
	else if (action == SD_DEVICE_ADD || action == SD_DEVICE_CHANGE || action == SD_DEVICE_BIND)
		(void)node_added(w, dev, syspath);
	return 0;
}

static int enumerate(struct watch_fido *w)
{
	_cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
	int r;

	r = sd_device_enumerator_new(&e);
	if (r < 0)
		return r;
	r = sd_device_enumerator_allow_uninitialized(e);
	if (r < 0)
		return r;
	r = sd_device_enumerator_add_match_subsystem(e, "hidraw", true);
	if (r < 0)
		return r;
	for (sd_device *d = sd_device_enumerator_get_device_first(e); d;
	     d = sd_device_enumerator_get_device_next(e)) {
		const char *syspath;

		if (sd_device_get_syspath(d, &syspath) >= 0)
			(void)node_added(w, d, syspath);
	}
	return 0;
}

int watch_fido_new(sd_event *e, watch_fido_fn fn, void *userdata, struct watch_fido **ret)
{
	_cleanup_(watch_fido_freep) struct watch_fido *w = NULL;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->event = sd_event_ref(e);
	w->fn = fn;
	w->userdata = userdata;

	r = sd_device_monitor_new(&w->monitor);
	if (r < 0)
		return r;
	r = sd_device_monitor_filter_add_match_subsystem_devtype(w->monitor, "hidraw", NULL);
	if (r < 0)
		return r;
	r = sd_device_monitor_attach_event(w->monitor, e);
	if (r < 0)
		return r;
	r = sd_device_monitor_start(w->monitor, on_monitor, w);
	if (r < 0)
		return r;
	(void)sd_event_source_set_description(sd_device_monitor_get_event_source(w->monitor),
	                                      "fido-monitor");

	/* After the monitor started: a node plugged in between is seen twice, never missed. */
	r = enumerate(w);
	if (r < 0)
		return r;

	*ret = TAKE_PTR(w);
	return 0;
}

struct watch_fido *watch_fido_free(struct watch_fido *w)
{
	if (!w)
		return NULL;
	for (size_t i = 0; i < w->n_nodes; i++)
		node_free(w->nodes[i]);
	sd_event_source_disable_unref(w->timer);
	sd_device_monitor_unref(w->monitor);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}
