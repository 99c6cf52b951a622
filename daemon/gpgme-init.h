/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpgme's process-wide initialisation, once for every user of gpgme in the daemon (keyring.c's
 * listing worker, card-scd.c's scdaemon session). Does not include <gpgme.h>.
 */
#pragma once

/* Runs gpgme_check_version(NULL) the first time it is called, from whichever thread; later
 * callers, concurrent ones included, return once it has run. Call before any other gpgme call. */
void gpgme_init_once(void);
