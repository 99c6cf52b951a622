/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a watcher tells main.c besides the model: that its first look is complete (every token
 * present at start has been read, so an answer now would be true), and, for udev, that a token
 * came or went (news that may end another watcher's wait), and which USB device it was (lock on
 * removal: main-lock.c). Called on the loop thread.
 */
#pragma once

#include <stdbool.h>

struct watch_hooks {
	void (*settled)(void *userdata); /* once per watcher's life; may be NULL */
	void (*token_event)(void *userdata); /* may be NULL */
	void (*rescanned)(void *userdata); /* PC/SC: a rescan's reads may be done; may be NULL */
	/* udev: a token's usb_device (never an interface) was reported to the model (present: its
	 * sighting is put) or is about to go (its sighting still there, so its token can be
	 * found by model_token_id_by_sighting()); may be NULL */
	void (*usb_device)(const char *syspath, bool present, void *userdata);
	void *userdata;
};
