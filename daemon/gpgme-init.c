/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One guard for gpgme's initialisation. gpgme_check_version() sets up the library's global state
 * and must run once before threads create contexts (gpgme manual, 2.8 Multi-Threading); with a
 * guard in each file that uses gpgme, the keyring worker and the scdaemon session could each run
 * it, concurrently. gpgme_set_locale() is not called: keyctl lets gpg and pinentry use their
 * defaults (no pinentry is ever asked for).
 *
 * Does not: check for a minimum gpgme version or for gpg itself (keyring.c reports a missing gpg).
 */
#include <gpgme.h>
#include <pthread.h>

#include "gpgme-init.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init(void)
{
	(void)gpgme_check_version(NULL);
}

void gpgme_init_once(void)
{
	(void)pthread_once(&once, init);
}

unsigned gpgme_assuan_command(const char *sock, const char *cmd, gpgme_assuan_data_fn data,
                              void *opaque)
{
	gpgme_ctx_t ctx = NULL;
	gpgme_error_t e, op = 0;

	gpgme_init_once();
	e = gpgme_new(&ctx);
	if (!e)
		e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_ASSUAN);
	if (!e)
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_ASSUAN, sock, NULL);
	if (!e)
		e = gpgme_op_assuan_transact_ext(ctx, cmd, data, opaque, NULL, NULL, NULL, NULL,
		                                 &op);
	gpgme_release(ctx);
	return e ? e : op;
}
