/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What an acknowledgement does to the audit's findings. An ack names a finding by its id (rule
 * and subject, finding_id()) and remembers the level it had: while the finding stays at that
 * level or below, it is shown at level ok, marked acked, and counts for no exit code, popup or
 * metric. When its level rises (warning to critical) or it goes away (fixed), the ack is
 * forgotten: the user acknowledged that problem as it was, not a worse one or a later one.
 *
 * A subkey's expiry is told twice, as its level (the exit code, the popup, the metric read it)
 * and as the finding that words it; acking the finding lowers the level too, on the same terms.
 *
 * Does not: read or write the acks' file (ack-store.c, saved by state.c), or run the rules.
 */
#include "audit-ack.h"
#include "expiry.h"

/* The worst level of the findings with id (two tokens holding one subkey make two findings of
 * one id), or -1 when there is none; with mark, those findings are acknowledged. */
static int covered_level(struct finding *f, size_t n, const char *id, bool mark)
{
	char fid[FINDING_ID_MAX];
	int worst = -1;

	for (size_t i = 0; i < n; i++) {
		finding_id(&f[i], fid, sizeof(fid));
		if (!streq(fid, id))
			continue;
		worst = MAX(worst, (int)f[i].level);
		if (mark) {
			f[i].acked = true;
			f[i].level = LEVEL_OK;
		}
	}
	return worst;
}

size_t audit_ack_apply(struct ack *acks, size_t *n_acks, struct finding *f, size_t n, bool settled)
{
	size_t kept = 0, forgotten = 0;

	for (size_t i = 0; i < *n_acks; i++) {
		int level = covered_level(f, n, acks[i].id, false);
		bool keep = level < 0 ? !settled : level <= (int)acks[i].level;

		if (!keep) {
			forgotten++;
			continue;
		}
		(void)covered_level(f, n, acks[i].id, true);
		if (kept != i)
			acks[kept] = acks[i];
		kept++;
	}
	*n_acks = kept;
	return forgotten;
}

/* The finding that reports s's own level, as audit.c's expiry rules make it: its id and level. */
static enum level own_finding(const struct subkey *s, char *id, size_t size)
{
	struct finding f = { .level = s->level };

	if (!isempty(s->replaced_by))
		strcpy_trunc(f.rule, sizeof(f.rule), "replacement-not-on-card");
	else if (s->level == LEVEL_EXPIRED) {
		strcpy_trunc(f.rule, sizeof(f.rule), "subkey-expired-no-replacement");
		f.level = LEVEL_CRITICAL;
	} else
		strcpy_trunc(f.rule, sizeof(f.rule), "subkey-expiring");
	strcpy_trunc(f.subkey, sizeof(f.subkey), s->fingerprint);
	finding_id(&f, id, size);
	return f.level;
}

void audit_ack_subkeys(struct key *keys, size_t n_keys, const struct ack_store *store)
{
	char id[FINDING_ID_MAX];

	for (size_t i = 0; i < n_keys; i++) {
		struct key *k = &keys[i];
		bool changed = false;

		for (size_t j = 0; j < k->n_subkeys; j++) {
			struct subkey *s = &k->subkeys[j];
			const struct ack *a;
			enum level level;

			s->acked = false;
			s->acked_level = LEVEL_OK;
			if (!store || s->level < LEVEL_NOTICE || subkey_superseded(k, s))
				continue;
			level = own_finding(s, id, sizeof(id));
			a = ack_store_find(store, id);
			if (!a || a->level < level)
				continue;
			s->acked = true;
			s->acked_level = s->level;
			s->level = LEVEL_OK;
			changed = true;
		}
		if (changed)
			k->level = expiry_key_level(k);
	}
}

void audit_ack_run(struct finding *f, size_t n, const struct audit_daemon *daemon)
{
	struct ack_store *s = ack_store_current();

	/* Before the first keyring listing every key's finding is missing: not gone. */
	if (s && audit_ack_apply(s->acks, &s->n, f, n, !daemon || daemon->keys_listed) > 0)
		s->dirty = true;
}
