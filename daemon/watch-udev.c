/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * udev side of token watching. At start, an enumeration of usb_device devices, allowing
 * uninitialized ones: without udevd (containers, a test bed) no device is ever "initialized" and
 * the default would hide them all. Then the monitor, filtered to usb_device and hidraw; a hidraw
 * node stands for its USB parent (one token per physical device). A usb_device is a token when it
 * carries udev's "security-device" tag or its ids are in the token table.
 *
 * The identification that needs no I/O beyond sysfs happens on the loop and is reported at once;
 * a YubiKey's serial through the OTP interface (libykpers-1, USB control transfers) is read on one
 * worker thread, whose results come back through a loop wake (loop-wake.c) and update the sighting.
 * The first look is complete (hooks.settled) once the enumeration is done and every serial it asked
 * the worker for has come back.
 *
 * Does not: decide what a token is (card-usb.c and the table do), merge sightings (the model).
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-device.h>

#include "log.h"
#include "card-usb-table.h"
#include "card-usb.h"
#include "fileio.h"
#include "loop-wake.h"
#include "watch-udev.h"

#define SYSPATH_MAX 512
#define DEVNODE_MAX 64
#define DEVICES_MAX TOKENS_MAX
#define JOBS_MAX 16
#define DESCRIPTORS_MAX 4096

struct usb_device {
	char syspath[SYSPATH_MAX];
	char devnode[DEVNODE_MAX];
	uint64_t generation; /* tells a late OTP result from a replug at the same syspath */
	struct token token;
};

struct otp_job {
	char syspath[SYSPATH_MAX];
	char devnode[DEVNODE_MAX];
	uint64_t generation;
	uint16_t product;
	int r;
	unsigned serial;
	char firmware[16];
};

struct udev_watch {
	sd_event *event;
	struct model *model;
	sd_device_monitor *monitor;

	struct usb_device devices[DEVICES_MAX];
	size_t n_devices;
	uint64_t generation;

	/* The OTP worker: jobs in, results out, both under lock. */
	pthread_t thread;
	bool thread_started, stop;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct otp_job jobs[JOBS_MAX], results[JOBS_MAX];
	size_t n_jobs, n_results;
	struct loop_wake *wake; /* posted by the worker after each result */

	struct watch_hooks hooks;
	size_t otp_outstanding; /* loop side: jobs queued whose result has not come back */
	bool enumerated, settled;
};

static int64_t now_seconds(void)
{
	return (int64_t)time(NULL);
}

static struct usb_device *device_find(struct udev_watch *w, const char *syspath)
{
	for (size_t i = 0; i < w->n_devices; i++)
		if (streq(w->devices[i].syspath, syspath))
			return &w->devices[i];
	return NULL;
}

static void device_drop(struct udev_watch *w, struct usb_device *d)
{
	size_t i = (size_t)(d - w->devices);

	memmove(&w->devices[i], &w->devices[i + 1], (w->n_devices - i - 1) * sizeof(*d));
	w->n_devices--;
}

/* sysfs ids are 4 hex digits, "1050"; anything else is not a device we know. */
static int parse_id(const char *s, uint16_t *ret)
{
	unsigned v = 0;

	if (!s || strlen(s) != 4)
		return -EINVAL;
	for (const char *c = s; *c; c++) {
		int x = *c >= '0' && *c <= '9'   ? *c - '0'
		        : *c >= 'a' && *c <= 'f' ? *c - 'a' + 10
		        : *c >= 'A' && *c <= 'F' ? *c - 'A' + 10
		                                 : -1;
		if (x < 0)
			return -EINVAL;
		v = v << 4 | (unsigned)x;
	}
	*ret = (uint16_t)v;
	return 0;
}

/* The raw descriptors, binary: read the file, since sysattr values end at the first NUL. */
static int read_descriptors(const char *syspath, struct usb_desc *ret)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	char path[SYSPATH_MAX + 16];
	size_t n = 0;
	int r;

	if ((size_t)snprintf(path, sizeof(path), "%s/descriptors", syspath) >= sizeof(path))
		return -ENAMETOOLONG;
	r = file_read_bounded(path, DESCRIPTORS_MAX, &buf, &n);
	if (r == -EFBIG)
		return -EMSGSIZE;
	if (r < 0)
		return r;
	return usb_desc_parse(buf, n, ret);
}

static void otp_enqueue(struct udev_watch *w, const struct usb_device *d)
{
	struct otp_job *j;

	pthread_mutex_lock(&w->lock);
	if (w->n_jobs >= JOBS_MAX) {
		pthread_mutex_unlock(&w->lock);
		log_debug("OTP read queue full, not reading %s", d->syspath);
		return;
	}
	j = &w->jobs[w->n_jobs++];
	memset(j, 0, sizeof(*j));
	memcpy(j->syspath, d->syspath, sizeof(j->syspath));
	memcpy(j->devnode, d->devnode, sizeof(j->devnode));
	j->generation = d->generation;
	j->product = d->token.usb_product;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	w->otp_outstanding++;
}

static void maybe_settle(struct udev_watch *w)
{
	if (w->settled || !w->enumerated || w->otp_outstanding > 0)
		return;
	w->settled = true;
	if (w->hooks.settled)
		w->hooks.settled(w->hooks.userdata);
}

static bool yubikey_ambiguous(struct udev_watch *w, const struct usb_device *d)
{
	size_t same = 0;

	for (size_t i = 0; i < w->n_devices; i++)
		if (w->devices[i].token.usb_vendor == d->token.usb_vendor &&
		    w->devices[i].token.usb_product == d->token.usb_product)
			same++;
	return same > 1;
}

static int device_report(struct udev_watch *w, struct usb_device *d)
{
	int r = model_sighting_put(w->model, SIGHTING_USB, d->syspath, &d->token, now_seconds());

	if (r < 0)
		return log_debug_errno(r, "Failed to report USB token %s: %m", d->syspath);
	if (w->hooks.usb_device)
		w->hooks.usb_device(d->syspath, true, w->hooks.userdata);
	return 0;
}

/* tagged: a hidraw child carries the tag (60-fido-id.rules tags the node, not its device). */
static int usb_device_added(struct udev_watch *w, sd_device *dev, const char *syspath, bool tagged)
{
	const char *vid = NULL, *pid = NULL, *bcd = NULL, *serial = NULL, *product = NULL;
	const char *node = NULL;
	uint16_t vendor, prod, bcd_device = 0;
	struct usb_desc desc, *descp = NULL;
	struct usb_device *d;
	struct token t;
	bool fresh = false;
	int r;

	if (strlen(syspath) >= SYSPATH_MAX)
		return -ENAMETOOLONG;
	(void)sd_device_get_sysattr_value(dev, "idVendor", &vid);
	(void)sd_device_get_sysattr_value(dev, "idProduct", &pid);
	if (parse_id(vid, &vendor) < 0 || parse_id(pid, &prod) < 0)
		return 0;
	tagged = tagged || sd_device_has_tag(dev, "security-device") > 0;

	if (sd_device_get_sysattr_value(dev, "bcdDevice", &bcd) >= 0)
		(void)parse_id(bcd, &bcd_device);
	(void)sd_device_get_sysattr_value(dev, "serial", &serial);
	(void)sd_device_get_sysattr_value(dev, "product", &product);
	(void)sd_device_get_devname(dev, &node);
	/* Unlisted and untagged (no udevd to run 60-fido-id.rules): a CCID interface in the
	 * descriptors still makes it a token, a smartcard reader that may hold an OpenPGP card. */
	r = read_descriptors(syspath, &desc);
	if (r >= 0)
		descp = &desc;
	else if (tagged || token_table_lookup(vendor, prod))
		log_debug_errno(r, "Cannot read USB descriptors of %s, ignoring: %m", syspath);

	r = usb_ident_token(vendor, prod, bcd_device, descp, serial, tagged, &t);
	if (r < 0)
		return 0;
	if (!*t.model && product)
		strcpy_trunc(t.model, sizeof(t.model), product);

	d = device_find(w, syspath);
	if (!d) {
		if (w->n_devices >= DEVICES_MAX)
			return log_debug_errno(-ENOSPC, "Too many USB tokens, ignoring %s",
			                       syspath);
		d = &w->devices[w->n_devices++];
		memset(d, 0, sizeof(*d));
		memcpy(d->syspath, syspath, strlen(syspath) + 1);
		d->generation = ++w->generation;
		fresh = true;
	} else if (t.kind == TOKEN_KIND_YUBIKEY && *d->token.firmware) {
		/* A change event: keep what the OTP interface told us. */
		memcpy(t.serial, d->token.serial, sizeof(t.serial));
		memcpy(t.firmware, d->token.firmware, sizeof(t.firmware));
		memcpy(t.error, d->token.error, sizeof(t.error));
	}
	memset(d->devnode, 0, sizeof(d->devnode));
	if (node && strlen(node) < sizeof(d->devnode))
		memcpy(d->devnode, node, strlen(node));
	memcpy(&d->token, &t, sizeof(t));

	log_debug("USB token %04x:%04x %s at %s", vendor, prod, t.model, syspath);
	if (fresh && usb_ident_has_otp(vendor, prod) && !yubikey_ambiguous(w, d))
		otp_enqueue(w, d);
	return device_report(w, d);
}

static int usb_device_removed(struct udev_watch *w, const char *syspath)
{
	struct usb_device *d = device_find(w, syspath);
	int r;

	if (!d)
		return 0;
	if (w->hooks.usb_device)
		w->hooks.usb_device(syspath, false, w->hooks.userdata);
	device_drop(w, d);
	r = model_sighting_remove(w->model, SIGHTING_USB, syspath, now_seconds());
	if (r < 0 && r != -ENOENT)
		return log_debug_errno(r, "Failed to remove USB token %s: %m", syspath);
	return 0;
}

static int device_process(struct udev_watch *w, sd_device *dev, sd_device_action_t action)
{
	const char *subsystem = NULL, *devtype = NULL, *syspath = NULL;
	sd_device *parent;

	if (sd_device_get_syspath(dev, &syspath) < 0 ||
	    sd_device_get_subsystem(dev, &subsystem) < 0)
		return 0;
	(void)sd_device_get_devtype(dev, &devtype);

	if (streq(subsystem, "usb")) {
		if (!devtype || !streq(devtype, "usb_device"))
			return 0;
		if (action == SD_DEVICE_REMOVE)
			return usb_device_removed(w, syspath);
		return usb_device_added(w, dev, syspath, false);
	}
	if (streq(subsystem, "hidraw")) {
		/* Its removal comes with its usb_device's; its arrival may carry the tag. */
		if (action == SD_DEVICE_REMOVE)
			return 0;
		if (sd_device_get_parent_with_subsystem_devtype(dev, "usb", "usb_device", &parent) <
		            0 ||
		    sd_device_get_syspath(parent, &syspath) < 0)
			return 0;
		if (device_find(w, syspath))
			return 0;
		return usb_device_added(w, parent, syspath,
		                        sd_device_has_tag(dev, "security-device") > 0);
	}
	return 0;
}

static int on_monitor(sd_device_monitor *m, sd_device *dev, void *userdata)
{
	struct udev_watch *w = userdata;
	sd_device_action_t action = _SD_DEVICE_ACTION_INVALID;
	size_t before = w->n_devices;

	if (sd_device_get_action(dev, &action) < 0)
		return 0;
	if (action != SD_DEVICE_ADD && action != SD_DEVICE_CHANGE && action != SD_DEVICE_REMOVE &&
	    action != SD_DEVICE_BIND)
		return 0;
	(void)device_process(w, dev, action);
	if (w->n_devices != before && w->hooks.token_event)
		w->hooks.token_event(w->hooks.userdata);
	return 0;
}

static void *otp_worker(void *userdata)
{
	struct udev_watch *w = userdata;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct otp_job j;

		while (!w->stop && w->n_jobs == 0)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		j = w->jobs[0];
		memmove(&w->jobs[0], &w->jobs[1], (w->n_jobs - 1) * sizeof(j));
		w->n_jobs--;
		pthread_mutex_unlock(&w->lock);

		j.r = usb_ident_read_otp(j.product, j.devnode, &j.serial, j.firmware,
		                         sizeof(j.firmware));

		pthread_mutex_lock(&w->lock);
		if (w->n_results < JOBS_MAX)
			w->results[w->n_results++] = j;
		/* It cannot fail: the fd is ours and outlives this thread. */
		(void)loop_wake_post(w->wake);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

static void otp_result_apply(struct udev_watch *w, const struct otp_job *j)
{
	struct usb_device *d = device_find(w, j->syspath);

	if (!d || d->generation != j->generation)
		return; /* unplugged meanwhile */
	if (j->r == -EACCES) {
		strcpy_trunc(d->token.error, sizeof(d->token.error), USB_IDENT_EACCES_TEXT);
	} else if (j->r < 0) {
		log_debug_errno(j->r, "Cannot read the OTP interface of %s, ignoring: %m",
		                j->syspath);
		return;
	} else {
		snprintf(d->token.serial, sizeof(d->token.serial), "%u", j->serial);
		memcpy(d->token.firmware, j->firmware, sizeof(d->token.firmware));
		d->token.error[0] = 0;
	}
	(void)device_report(w, d);
}

static int on_results(void *userdata)
{
	struct udev_watch *w = userdata;
	struct otp_job results[JOBS_MAX];
	size_t n;

	pthread_mutex_lock(&w->lock);
	n = w->n_results;
	memcpy(results, w->results, n * sizeof(results[0]));
	w->n_results = 0;
	pthread_mutex_unlock(&w->lock);

	for (size_t i = 0; i < n; i++)
		otp_result_apply(w, &results[i]);
	w->otp_outstanding -= MIN(n, w->otp_outstanding);
	maybe_settle(w);
	return 0;
}

static int enumerate(struct udev_watch *w)
{
	_cleanup_(sd_device_enumerator_unrefp) sd_device_enumerator *e = NULL;
	int r;

	r = sd_device_enumerator_new(&e);
	if (r < 0)
		return r;
	r = sd_device_enumerator_allow_uninitialized(e);
	if (r < 0)
		return r;
	r = sd_device_enumerator_add_match_subsystem(e, "usb", true);
	if (r < 0)
		return r;
	for (sd_device *d = sd_device_enumerator_get_device_first(e); d;
	     d = sd_device_enumerator_get_device_next(e))
		(void)device_process(w, d, SD_DEVICE_ADD);
	return 0;
}

int udev_watch_new(sd_event *e, struct model *m, const struct watch_hooks *hooks,
                   struct udev_watch **ret)
{
	_cleanup_(udev_watch_freep) struct udev_watch *w = NULL;
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->event = sd_event_ref(e);
	w->model = m;
	if (hooks)
		w->hooks = *hooks;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);

	r = loop_wake_new(e, "udev-otp", on_results, w, &w->wake);
	if (r < 0)
		return r;
	r = -pthread_create(&w->thread, NULL, otp_worker, w);
	if (r < 0)
		return r;
	w->thread_started = true;

	r = sd_device_monitor_new(&w->monitor);
	if (r < 0)
		return r;
	r = sd_device_monitor_filter_add_match_subsystem_devtype(w->monitor, "usb", "usb_device");
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

	/* After the monitor started: a device plugged in between is seen twice, never missed. */
	r = enumerate(w);
	if (r < 0)
		return r;
	w->enumerated = true;
	maybe_settle(w);

	*ret = TAKE_PTR(w);
	return 0;
}

struct udev_watch *udev_watch_free(struct udev_watch *w)
{
	if (!w)
		return NULL;
	sd_device_monitor_unref(w->monitor);
	if (w->thread_started) {
		pthread_mutex_lock(&w->lock);
		w->stop = true;
		pthread_cond_signal(&w->cond);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
	}
	loop_wake_detach(w->wake);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}
