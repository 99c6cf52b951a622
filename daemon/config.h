/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl.conf: the daemon's settings, their defaults, and the parser (inih underneath). Parsing is
 * pure: bytes in, a struct config or an error naming file, line and key out. Loading adds the
 * file's size and readability checks. Does not: log (the caller logs what comes back).
 */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define CONFIG_FILE_MAX (64u * 1024u)
#define CONFIG_THRESHOLDS_MAX THRESHOLDS_MAX
#define CONFIG_TRACK_MAX 32
#define CONFIG_WARNINGS_MAX 8
#define CONFIG_ERROR_MAX 512

struct config {
	/* [daemon] */
	char socket_path[PATH_MAX]; /* "" means $XDG_RUNTIME_DIR/keyctl/socket */
	unsigned max_clients;
	unsigned max_watchers; /* Watch subscribers, counted apart from max_clients */
	unsigned client_queue_kib; /* output queue bound per client */
	unsigned client_idle_sec; /* how long a connection may go without a call */
	int log_level; /* LOG_ERR .. LOG_DEBUG */

	/* [keyring] */
	char gnupghome[PATH_MAX]; /* "" means $GNUPGHOME or ~/.gnupg */
	unsigned n_track;
	char track[CONFIG_TRACK_MAX][FPR_HEX_MAX]; /* fingerprints tracked without a secret part */

	/* [expiry] thresholds in days, strictly descending */
	unsigned n_thresholds;
	unsigned thresholds[CONFIG_THRESHOLDS_MAX];
	unsigned warning_days; /* at or below: level warning */
	unsigned critical_days; /* at or below: level critical */
	unsigned max_validity_days;

	/* [audit] */
	unsigned card_unseen_days;
	unsigned pin_retries_low;

	/* [notify] */
	char renewal_url[URL_MAX];

	/* What the parse had to say but did not refuse (unknown keys). */
	unsigned n_warnings;
	char warnings[CONFIG_WARNINGS_MAX][160];
};

void config_init(struct config *c);

/* Parses an ini text of n bytes over the defaults already in *c. On failure returns -EINVAL
 * (bad value, syntax) or -EBADMSG (NUL byte, overlong line), with "FILE:LINE: [section] key:
 * reason" in err, and leaves *c unspecified. */
int config_parse(const uint8_t *p, size_t n, const char *filename, struct config *c, char *err,
                 size_t errsize);

/* Reads and parses path into *ret (defaults first). A missing file is fine when missing_ok:
 * defaults then. -EFBIG over CONFIG_FILE_MAX; -errno when unreadable; err says which. */
int config_load(const char *path, bool missing_ok, struct config *ret, char *err, size_t errsize);

/* $XDG_CONFIG_HOME/keyctl/keyctl.conf, or ~/.config/keyctl/keyctl.conf. */
int config_default_path(char *buf, size_t size);
