/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See keyring-gpg-run.h. */
#include <errno.h>
#include <gpgme.h>
#include <stdlib.h>

#include "gpgme-cleanup.h"
#include "gpgme-init.h"
#include "keyring-gpg-run.h"
#include "keyring-list.h"

int keyring_gpg_colons(const char *home, const char *gpg_path, struct keyring_cancel *cancel,
                       const char *const *args, size_t n_args, const char *const *names,
                       size_t n_names, keyring_gpg_write_fn write, void *handle)
{
	_cleanup_(ctx_releasep) gpgme_ctx_t ctx = NULL;
	_cleanup_(data_releasep) gpgme_data_t out = NULL;
	_cleanup_(freep) const char **argv = NULL;
	struct gpgme_data_cbs cbs = { .write = write };
	size_t a = 0;
	gpgme_error_t e;

	if (n_args > KEYRING_GPG_ARGS_MAX || n_names > KEYS_MAX)
		return -E2BIG;
	argv = calloc(8 + n_args + n_names, sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	gpgme_init_once();
	if (gpgme_new(&ctx) || gpgme_set_protocol(ctx, GPGME_PROTOCOL_SPAWN) ||
	    gpgme_data_new_from_cbs(&out, &cbs, handle))
		return -ENOMEM;
	argv[a++] = "gpg";
	if (home) {
		argv[a++] = "--homedir";
		argv[a++] = home;
	}
	argv[a++] = "--batch";
	argv[a++] = "--no-tty";
	argv[a++] = "--with-colons";
	argv[a++] = "--trust-model=always";
	for (size_t i = 0; i < n_args; i++)
		argv[a++] = args[i];
	for (size_t i = 0; i < n_names; i++)
		argv[a++] = names[i];
	keyring_cancel_set(cancel, ctx);
	e = gpgme_op_spawn(ctx, gpg_path, argv, NULL, out, NULL, 0);
	keyring_cancel_set(cancel, NULL);
	if (gpgme_err_code(e) == GPG_ERR_CANCELED)
		return -ECANCELED;
	return e ? -EIO : 0;
}
