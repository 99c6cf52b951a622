/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The renewal command, shared by keyctld's findings and keyctl-notify's popups (see the header).
 */
#include <stdio.h>
#include <string.h>

#include "renew-hint.h"

void renew_hint(const struct key *k, const struct subkey *s, const char *period, char *buf,
                size_t size)
{
	const char *place = k->n_subkeys > 0 && k->subkeys[0].secret == SECRET_NONE
	                            ? "On the machine that holds the primary key: "
	                            : "";

	if (!k->has_secret)
		(void)snprintf(buf, size, "gpg --refresh-keys %s", k->fingerprint);
	else if (s->is_primary || strcmp(s->fingerprint, k->fingerprint) == 0)
		(void)snprintf(buf, size, "%sgpg --quick-set-expire %s %s", place, k->fingerprint,
		               period);
	else
		(void)snprintf(buf, size, "%sgpg --quick-set-expire %s %s %s", place,
		               k->fingerprint, period, s->fingerprint);
}
