/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pure judgements over a GetStatus reply: the monitoring-plugin exit code. Days are counted by
 * protocol/expiry-math.c, the one place the daemon and every client share.
 * Does not: print anything, or talk to the daemon.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

/* Monitoring-plugin convention (Nagios, Icinga, Sensu). */
enum status_exit {
	STATUS_EXIT_OK = 0,
	STATUS_EXIT_WARNING = 1,
	STATUS_EXIT_CRITICAL = 2,
	STATUS_EXIT_UNKNOWN = 3,
};

/* True when a subkey can still be used: not revoked, disabled or past its expiry. */
bool status_subkey_usable(const struct subkey *s, int64_t now);

/* The exit code for a reply: 2 for any critical or expired level (key, usable subkey or
 * finding), 1 for any warning or a stale keyring, 0 otherwise; notice counts as 0. With
 * warn_days >= 0, a usable subkey expiring within warn_days days makes it at least 1. */
int status_exit_code(const struct daemon_info *d, const struct key *keys, size_t n_keys,
                     const struct finding *findings, size_t n_findings, int64_t now, int warn_days);
