/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Acknowledged findings applied to an audit's findings (the rule in audit-ack.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "ack-store.h"
#include "audit.h"

/*
 * Lowers each finding that an ack covers to level ok and marks it acked. An ack covers the
 * finding with its id while the finding's level is at most the ack's; a higher level forgets the
 * ack (the finding shows again). With settled (the keyring listed once), an ack whose finding is
 * gone is forgotten too. Pure. Returns the number of acks forgotten (acks and *n_acks updated).
 */
size_t audit_ack_apply(struct ack *acks, size_t *n_acks, struct finding *f, size_t n, bool settled);

/*
 * Lowers to ok each subkey whose own finding (subkey-expiring, subkey-expired-no-replacement or
 * replacement-not-on-card, the rules that report its level) an ack in store covers at its level
 * now, marking it acked with acked_level, and recounts its key's level (expiry_key_level()), so
 * that an ack quiets the exit code, the popup and the metric, not only the finding. After
 * expiry_apply(), before audit_run() (whose rules report acked_level). Nothing without a store.
 */
void audit_ack_subkeys(struct key *keys, size_t n_keys, const struct ack_store *store);

/* audit_ack_apply() with the daemon's store (ack_store_current()), which it marks dirty when an
 * ack was forgotten; nothing without a store. Called at the end of audit_run(). */
void audit_ack_run(struct finding *f, size_t n, const struct audit_daemon *daemon);
