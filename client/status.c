/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The exit code of keyctl-status, kept apart from the renderers so that every output format
 * (table, JSON, Prometheus, --quiet) exits the same way for the same reply.
 * Does not: print, allocate, or look at the clock (now is a parameter).
 */
#include "expiry-math.h"
#include "status.h"

bool status_subkey_usable(const struct subkey *s, int64_t now)
{
	if (s->revoked || s->disabled || s->expired)
		return false;
	return s->expires == 0 || s->expires > now;
}

static int level_exit(enum level l)
{
	switch (l) {
	case LEVEL_WARNING:
		return STATUS_EXIT_WARNING;
	case LEVEL_CRITICAL:
	case LEVEL_EXPIRED:
		return STATUS_EXIT_CRITICAL;
	default:
		return STATUS_EXIT_OK; /* ok and notice: nothing to do yet */
	}
}

int status_exit_code(const struct daemon_info *d, const struct key *keys, size_t n_keys,
                     const struct finding *findings, size_t n_findings, int64_t now, int warn_days)
{
	int r = STATUS_EXIT_OK;

	if (d && d->keyring_stale)
		r = STATUS_EXIT_WARNING;

	for (size_t i = 0; i < n_keys; i++) {
		const struct key *k = &keys[i];

		/* A retired key counts as ok (the daemon set its levels so); superseded subkeys
		 * are shown, not counted. */
		if (k->revoked || k->retired || key_relied_only(k))
			continue;
		r = MAX(r, level_exit(k->level));
		for (size_t j = 0; j < k->n_subkeys; j++) {
			const struct subkey *s = &k->subkeys[j];

			if (subkey_superseded(k, s) || s->acked)
				continue;
			r = MAX(r, level_exit(s->level));
			/* A replaced one still counted is at most a warning: --warn-days too. */
			if (warn_days >= 0 && s->expires != 0 && status_subkey_usable(s, now) &&
			    expiry_days_left(s->expires, now) <= warn_days)
				r = MAX(r, STATUS_EXIT_WARNING);
		}
	}

	for (size_t i = 0; i < n_findings; i++)
		r = MAX(r, level_exit(findings[i].level));

	/* A keyring the daemon never managed to list: its keys' state is unknown, not merely old.
	 * What is known to be critical (a card's finding) still says so. */
	if (d && d->keyring_stale && d->keyring_refreshed == 0 && r < STATUS_EXIT_CRITICAL)
		r = STATUS_EXIT_UNKNOWN;
	return r;
}
