/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * __attribute__((cleanup)) helpers for gpgme's contexts and data objects, for every file that
 * runs gpg through gpgme (the listings, the owner trust, the certification scan).
 */
#pragma once

#include <gpgme.h>

static inline void ctx_releasep(gpgme_ctx_t *ctx)
{
	if (*ctx)
		gpgme_release(*ctx);
}

static inline void data_releasep(gpgme_data_t *d)
{
	if (*d)
		gpgme_data_release(*d);
}
