/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The program most likely behind a token's wait for a touch (touch-requester.c says how).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct proc_stat_view {
	char comm[16]; /* printable ASCII; others as '?' */
	int ppid;
	unsigned long long start; /* clock ticks after boot */
};

/* One /proc/<pid>/stat line of n bytes (not NUL-terminated). Returns 0 or -EBADMSG. */
int touch_requester_parse_stat(const uint8_t *p, size_t n, struct proc_stat_view *ret);

/* The guess into buf ("" when no client of gpg-agent runs): "git", "gpg", "ssh", ... GnuPG
 * processes count only when they work in home (GNUPGHOME's path, as keyctld was given it). */
void touch_requester_guess(const char *home, char *buf, size_t size);
