/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a watcher tells main.c besides the model: that its first look is complete (every token
 * present at start has been read, so an answer now would be true), and, for udev, that a token
 * came or went (news that may end another watcher's wait). Called on the loop thread.
 */
#pragma once

struct watch_hooks {
	void (*settled)(void *userdata); /* once per watcher's life; may be NULL */
	void (*token_event)(void *userdata); /* may be NULL */
	void (*rescanned)(void *userdata); /* PC/SC: a rescan's reads may be done; may be NULL */
	void *userdata;
};
