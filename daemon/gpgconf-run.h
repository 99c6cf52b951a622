/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpgconf, run once and waited for (see gpgconf-run.c).
 */
#pragma once

#include <stddef.h>

/* Runs gpgconf with a1 a2 (and --homedir home when home is set); its stdout's first line into
 * out (NUL-terminated; out may be NULL). Returns gpgconf's exit status or -errno. */
int gpgconf_run(const char *home, const char *a1, const char *a2, char *out, size_t size);
