/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpgme's process-wide initialisation, once for every user of gpgme in the daemon (keyring.c's
 * listing worker, card-scd.c's scdaemon session). Does not include <gpgme.h>.
 */
#pragma once

#include <stddef.h>

/* Runs gpgme_check_version(NULL) the first time it is called, from whichever thread; later
 * callers, concurrent ones included, return once it has run. Call before any other gpgme call. */
void gpgme_init_once(void);

/* One Assuan command on the server listening at sock (dirmngr, gpg-agent, scdaemon), through
 * gpgme's Assuan engine, on the calling thread: data (may be NULL) gets the bytes of each D line.
 * Returns 0, or the gpgme error (gpg_error_t) of the connection or of the command's ERR. */
typedef unsigned (*gpgme_assuan_data_fn)(void *opaque, const void *p, size_t n);
unsigned gpgme_assuan_command(const char *sock, const char *cmd, gpgme_assuan_data_fn data,
                              void *opaque);
