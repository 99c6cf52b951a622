/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl.conf: every setting, its default, and the one parser of the file (inih underneath), for
 * keyctld (strict: a bad file is refused) and keyctl-notify (lenient: it takes [notify] and
 * [expiry] from a file the daemon judges). Parsing is pure: bytes in, a struct config or an error
 * naming file, line and key out. Loading adds the file's size and readability checks. Also the
 * syntax of a threshold list, which keyctl-notify's --thresholds shares with the file.
 * Does not: log (the caller logs what comes back), or act on a setting.
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define CONFIG_FILE_MAX (64u * 1024u)
#define CONFIG_THRESHOLDS_MAX THRESHOLDS_MAX
#define CONFIG_TRACK_MAX 32
#define CONFIG_WARNINGS_MAX 8
#define CONFIG_ERROR_MAX 512
#define CONFIG_THRESHOLD_DAYS_MAX 3650
#define CONFIG_LOCK_ANY_KNOWN "any-known"

/* config_load(): a missing file is the defaults. */
#define CONFIG_MISSING_OK (1u << 0)
/* config_parse(), config_load(): a refused value, an overlong line, a syntax error or a
 * critical-days above warning-days is a warning, not a failure; the key keeps the value it had
 * and the parse goes on. For a reader of the few keys it needs in a file that keyctld judges:
 * another key's mistake must not cost it its own. A NUL byte or an oversized file still fails. */
#define CONFIG_LENIENT (1u << 1)

struct config_warning {
	char key[32]; /* "section/name" it is about; "" for the file (syntax, overlong line) */
	char text[160];
};

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
	unsigned n_retired;
	char retired[CONFIG_TRACK_MAX][FPR_HEX_MAX]; /* keys the user retired: shown, not counted */

	/* [expiry] thresholds in days, strictly descending */
	unsigned n_thresholds;
	unsigned thresholds[CONFIG_THRESHOLDS_MAX];
	unsigned warning_days; /* at or below: level warning */
	unsigned critical_days; /* at or below: level critical */
	unsigned max_validity_days;

	/* [audit] */
	unsigned card_unseen_days;
	unsigned pin_retries_low;

	/* [upstream] */
	bool upstream_check; /* CheckUpstream and the schedule may ask dirmngr */
	unsigned upstream_interval_sec;
	unsigned n_relied_on;
	char relied_on[CONFIG_TRACK_MAX][FPR_HEX_MAX]; /* others' keys whose revocation matters */
	bool upstream_relied_trusted; /* and the keys with full or ultimate owner trust */
	bool upstream_wkd; /* also ask the Web Key Directory of each key's mail domain */

	/* [notify] */
	char renewal_url[URL_MAX];

	/* [piv] raise-self-signed: a self-signed certificate's expiry counts as a CA-issued one's
	 * (default: information only, audit-piv.c) */
	bool piv_raise_self_signed;

	/* [session] lock-on-removal: "" (off), CONFIG_LOCK_ANY_KNOWN, or one token's id */
	char lock_on_removal[TOKEN_ID_MAX];

	/* What the parse had to say but did not refuse (unknown keys; with CONFIG_LENIENT also
	 * what it refused), in file order; those beyond CONFIG_WARNINGS_MAX are dropped. */
	unsigned n_warnings;
	struct config_warning warnings[CONFIG_WARNINGS_MAX];
};

void config_init(struct config *c);

/* Parses an ini text of n bytes over the defaults already in *c; flags: CONFIG_LENIENT or 0. On
 * failure returns -EINVAL (bad value, syntax) or -EBADMSG (NUL byte, overlong line), with
 * "FILE:LINE: [section] key: reason" in err, and leaves *c unspecified. */
int config_parse(const uint8_t *p, size_t n, const char *filename, unsigned flags, struct config *c,
                 char *err, size_t errsize);

/* Reads and parses path into *ret (defaults first); flags: CONFIG_MISSING_OK, CONFIG_LENIENT.
 * -EFBIG over CONFIG_FILE_MAX; -EINVAL when not a regular file; -errno when unreadable; err says
 * which. */
int config_load(const char *path, unsigned flags, struct config *ret, char *err, size_t errsize);

/* "30, 14, 7, 3, 1": days from 1 to CONFIG_THRESHOLD_DAYS_MAX, strictly descending, at most
 * CONFIG_THRESHOLDS_MAX, separated by commas with blanks around them allowed. -EINVAL (-E2BIG:
 * too many) with the reason in err, ret untouched; else 0 and *ret_n values in ret. */
int config_parse_thresholds(const uint8_t *p, size_t n, unsigned ret[CONFIG_THRESHOLDS_MAX],
                            unsigned *ret_n, char *err, size_t errsize);

/* Whether d days may come after the k values in v in a threshold list: the one rule that
 * keyctl.conf, --thresholds and a daemon's DaemonInfo are held to. */
bool config_threshold_may_follow(const unsigned *v, size_t k, int64_t d);

/* "err", "warning", "notice", "info", "debug" (and "error"): LOG_ERR..LOG_DEBUG, or -EINVAL. */
int config_log_level_from_string(const char *s);

/* $XDG_CONFIG_HOME/keyctl/keyctl.conf, or ~/.config/keyctl/keyctl.conf. */
int config_default_path(char *buf, size_t size);
