/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches FIDO2/U2F tokens for a touch they wait for, by reading their hidraw input reports
 * passively (doc/touch.md, 5): hidraw nodes whose report descriptor is FIDO's, found by sd-device
 * at start and followed through a device monitor, each opened read-only; the frames go through
 * fido-hid.c's state machine; a change is reported per USB device.
 *
 * Does not: write to a token, flock its node (libfido2 would then give up on it), read non-FIDO
 * nodes, or open anything while no FIDO token is plugged. No wake-up while no frame comes: the one
 * timer is armed only while a device waits.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <systemd/sd-event.h>

struct watch_fido;

/* Called on each change: pending true when usb_syspath's token starts waiting for a touch, false
 * when the wait ends (the answer came, 2 s of silence, or the token left while waiting).
 * usb_syspath is the parent usb_device's syspath (the hid device's for a token not on USB);
 * serial its USB serial, "" when it has none. since_realtime_usec: the wait's first sign,
 * CLOCK_REALTIME, the same on the "done" call. Runs on the loop; must not free the watcher. */
typedef void (*watch_fido_fn)(const char *usb_syspath, const char *serial, bool pending,
                              uint64_t since_realtime_usec, void *userdata);

/* Starts watching on the loop e: enumerates hidraw nodes present and follows add/remove. A node
 * that cannot be opened (no permission) is logged once and skipped. Returns 0 or -errno. */
int watch_fido_new(sd_event *e, watch_fido_fn fn, void *userdata, struct watch_fido **ret);
/* Closes every node; calls fn no more, not even for a wait still pending. */
struct watch_fido *watch_fido_free(struct watch_fido *w);
static inline void watch_fido_freep(struct watch_fido **w)
{
	if (*w)
		watch_fido_free(*w);
}
