/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * GnuPG's option files (common.conf, scdaemon.conf, gpg.conf) as gpg reads them: one option per
 * line, "name" or "name value", leading blanks skipped, '#' starting a comment line. Used for the
 * switches that change where keyctl must look: `use-keyboxd` (common.conf) moves the keys into
 * public-keys.d/pubring.db, `disable-ccid` (scdaemon.conf) keeps scdaemon off USB readers.
 *
 * Does not: interpret values, follow gpgrt's [meta] lines, or write anything.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define GPG_CONF_MAX (256u * 1024u)

/* The next line at *p (n bytes left) that names option: 1 with its value (blanks around it
 * removed; "" when the line has none) pointing into the input, and *p, *n moved past that line;
 * 0 at the end; -EBADMSG on a NUL byte. Pure; never reads past *n. */
int gpg_conf_next(const uint8_t **p, size_t *n, const char *option, const char **ret_value,
                  size_t *ret_len);

/* 1 when a line of p names option (alone or followed by a blank and a value), 0 when none does,
 * -EBADMSG on a NUL byte. Pure; never reads past n. */
int gpg_conf_has_option(const uint8_t *p, size_t n, const char *option);

/* Reads dir/name bounded (GPG_CONF_MAX) into *ret (malloc'd): 1, or 0 when it does not exist
 * (*ret NULL), or -errno. */
int gpg_conf_file_read(const char *dir, const char *name, uint8_t **ret, size_t *ret_n);

/* gpg_conf_has_option() for the file dir/name: a missing file is 0. */
int gpg_conf_file_has_option(const char *dir, const char *name, const char *option);
