/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches USB tokens through udev (sd-device): a pass over the devices present at start, then
 * the monitor's add/change/remove events, reported to the model as USB sightings keyed by the
 * usb_device's syspath. The only file that uses sd-device.
 *
 * Does not: read the OpenPGP application (watch-pcsc.c), or keep tokens itself beyond what it
 * needs to answer a remove event and a late ykpers result.
 */
#pragma once

#include <systemd/sd-event.h>

#include "model.h"
#include "watch-hooks.h"

struct udev_watch;

/* Starts watching on the event loop e and enumerates present devices into m. */
/* hooks (may be NULL): settled once the start-up enumeration and the serials it asked for are
 * in; token_event on each token plugged in or out afterwards. */
int udev_watch_new(sd_event *e, struct model *m, const struct watch_hooks *hooks,
                   struct udev_watch **ret);
struct udev_watch *udev_watch_free(struct udev_watch *w);
static inline void udev_watch_freep(struct udev_watch **w)
{
	if (*w)
		udev_watch_free(*w);
}
