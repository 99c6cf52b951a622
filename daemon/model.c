/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The model: tokens merged from per-source sightings, the keyring's keys with their derived
 * levels, the audit's findings, the daemon's own info, and which token waits for a touch; plus
 * the events when any of it changes. Every change goes through one of the *_put/_replace/_remove
 * calls here, which diff the new state against what subscribers were last told, so an event is
 * emitted once per real change.
 *
 * Does not: read devices or keyrings, compute levels (the deriver does), log or keep time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "model-merge.h"
#include "model.h"

#define SUBSCRIBERS_MAX 16

struct subscriber {
	model_event_fn fn;
	void *userdata;
};

struct model {
	struct token *tokens; /* present ones and remembered absent ones */
	uint32_t *max_counter; /* parallel to tokens: highest signature counter seen */
	size_t n_tokens;

	struct sighting *sightings;
	size_t n_sightings;
	/* Parallel to sightings, refreshed by every rebuild: the id of the token each is part
	 * of (model_token_id_by_sighting()). */
	char (*sighting_token)[TOKEN_ID_MAX];

	struct key *keys; /* current, annotated by the deriver */
	size_t n_keys;
	struct key *told; /* what subscribers were last told */
	size_t n_told;

	struct finding *findings;
	size_t n_findings;
	struct finding *told_findings;
	size_t n_told_findings;

	/* Behind a pointer: model_daemon_info() refreshes `now` through a const model. */
	struct daemon_info *info;
	model_clock_fn clock;
	void *clock_userdata;

	struct subscriber subscribers[SUBSCRIBERS_MAX];
	size_t n_subscribers;

	model_derive_fn derive;
	void *derive_userdata;

	/* Moves with every call that may change what a client reads (model_generation()). */
	uint64_t generation;
};

static const char *const event_names[MODEL_EVENT_MAX] = {
	[MODEL_TOKEN_ADDED] = "token-added",         [MODEL_TOKEN_CHANGED] = "token-changed",
	[MODEL_TOKEN_REMOVED] = "token-removed",     [MODEL_KEY_ADDED] = "key-added",
	[MODEL_KEY_CHANGED] = "key-changed",         [MODEL_KEY_REMOVED] = "key-removed",
	[MODEL_LEVEL_CHANGED] = "level-changed",     [MODEL_FINDING_RAISED] = "finding-raised",
	[MODEL_FINDING_CLEARED] = "finding-cleared", [MODEL_DAEMON_CHANGED] = "daemon-changed",
	[MODEL_TOUCH_PENDING] = "touch-pending",     [MODEL_TOUCH_DONE] = "touch-done",
};

const char *model_event_type_to_string(enum model_event_type t)
{
	return (unsigned)t < MODEL_EVENT_MAX ? event_names[t] : NULL;
}

int model_new(struct model **ret)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->tokens = calloc(TOKENS_MAX, sizeof(struct token));
	m->max_counter = calloc(TOKENS_MAX, sizeof(uint32_t));
	m->sightings = calloc(SIGHTINGS_MAX, sizeof(struct sighting));
	m->sighting_token = calloc(SIGHTINGS_MAX, sizeof(*m->sighting_token));
	m->info = calloc(1, sizeof(struct daemon_info));
	if (!m->tokens || !m->max_counter || !m->sightings || !m->sighting_token || !m->info) {
		model_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

static void keys_free(struct key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		key_done(&keys[i]);
	free(keys);
}

struct model *model_free(struct model *m)
{
	if (!m)
		return NULL;
	free(m->tokens);
	free(m->max_counter);
	free(m->sightings);
	free(m->sighting_token);
	keys_free(m->keys, m->n_keys);
	keys_free(m->told, m->n_told);
	free(m->findings);
	free(m->told_findings);
	free(m->info);
	free(m);
	return NULL;
}

int model_subscribe(struct model *m, model_event_fn fn, void *userdata)
{
	if (m->n_subscribers >= SUBSCRIBERS_MAX)
		return -ENOSPC;
	m->subscribers[m->n_subscribers++] = (struct subscriber){ fn, userdata };
	return 0;
}

void model_unsubscribe(struct model *m, model_event_fn fn, void *userdata)
{
	for (size_t i = 0; i < m->n_subscribers; i++) {
		if (m->subscribers[i].fn != fn || m->subscribers[i].userdata != userdata)
			continue;
		memmove(&m->subscribers[i], &m->subscribers[i + 1],
		        (m->n_subscribers - i - 1) * sizeof(struct subscriber));
		m->n_subscribers--;
		return;
	}
}

uint64_t model_generation(const struct model *m)
{
	return m->generation;
}

static void emit(struct model *m, const struct model_event *ev)
{
	/* Copy: a subscriber may unsubscribe itself from inside its callback. */
	struct subscriber subs[SUBSCRIBERS_MAX];
	size_t n = m->n_subscribers;

	m->generation++;
	memcpy(subs, m->subscribers, n * sizeof(struct subscriber));
	for (size_t i = 0; i < n; i++)
		subs[i].fn(m, ev, subs[i].userdata);
}

static void emit_token(struct model *m, enum model_event_type type, const struct token *t)
{
	emit(m, &(struct model_event){ .type = type, .token = t });
}

/* Ends t's wait for a touch, if it waits, and says so. */
static int touch_end(struct model *m, struct token *t, enum touch_end how)
{
	if (!t->touch_waiting)
		return 0;
	t->touch_waiting = false;
	memset(&t->touch, 0, sizeof(t->touch));
	emit(m, &(struct model_event){ .type = MODEL_TOUCH_DONE, .token = t, .touch_end = how });
	return 1;
}

/* ---- tokens ---------------------------------------------------------------------------- */

static ssize_t token_index(const struct model *m, const char *id)
{
	for (size_t i = 0; i < m->n_tokens; i++)
		if (streq(m->tokens[i].id, id))
			return (ssize_t)i;
	return -1;
}

const struct token *model_token_get(const struct model *m, const char *id)
{
	ssize_t i = token_index(m, id);

	return i < 0 ? NULL : &m->tokens[i];
}

size_t model_tokens(const struct model *m, const struct token **ret)
{
	*ret = m->tokens;
	return m->n_tokens;
}

static void token_drop(struct model *m, size_t i)
{
	memmove(&m->tokens[i], &m->tokens[i + 1], (m->n_tokens - i - 1) * sizeof(struct token));
	memmove(&m->max_counter[i], &m->max_counter[i + 1],
	        (m->n_tokens - i - 1) * sizeof(uint32_t));
	m->n_tokens--;
	memset(&m->tokens[m->n_tokens], 0, sizeof(struct token));
}

/* Room for one more token: forget the absent token seen longest ago. */
static int token_make_room(struct model *m)
{
	ssize_t oldest = -1;

	if (m->n_tokens < TOKENS_MAX)
		return 0;
	for (size_t i = 0; i < m->n_tokens; i++)
		if (!m->tokens[i].present &&
		    (oldest < 0 || m->tokens[i].last_seen < m->tokens[oldest].last_seen))
			oldest = (ssize_t)i;
	if (oldest < 0)
		return -ENOSPC;
	token_drop(m, (size_t)oldest);
	return 0;
}

/* Equal except for the bookkeeping that changes on every sighting. */
static bool token_same(const struct token *a, const struct token *b)
{
	struct token x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	x.last_seen = y.last_seen = 0;
	return memcmp(&x, &y, sizeof(x)) == 0;
}

/* Stores a token built from sightings under its id, emitting ADDED or CHANGED. */
static int token_store(struct model *m, struct token *t, int64_t now)
{
	ssize_t i = token_index(m, t->id);
	bool was_present = false;
	int r;

	if (i >= 0) {
		struct token *old = &m->tokens[i];

		was_present = old->present;
		t->first_seen = old->first_seen;
		t->counter_went_down = old->counter_went_down;
		/* Only model_touch_set() changes a wait; a sighting knows nothing of it. */
		t->touch_waiting = old->touch_waiting;
		memcpy(&t->touch, &old->touch, sizeof(t->touch));
	} else {
		r = token_make_room(m);
		if (r < 0)
			return r;
		i = (ssize_t)m->n_tokens++;
		memset(&m->tokens[i], 0, sizeof(struct token));
		m->max_counter[i] = 0;
		t->first_seen = now;
	}

	t->present = true;
	t->last_seen = now;
	if (t->has_openpgp && !*t->error) {
		uint32_t c = t->openpgp.signature_counter;

		/* A counter below one seen before for the same serial: the card was reset, or
		 * another card claims this serial. Sticky until the token is forgotten. */
		if (c < m->max_counter[i])
			t->counter_went_down = true;
		if (c > m->max_counter[i])
			m->max_counter[i] = c;
	}

	if (was_present && token_same(&m->tokens[i], t)) {
		m->tokens[i].last_seen = now;
		return 0;
	}
	memcpy(&m->tokens[i], t, sizeof(*t));
	emit_token(m, was_present ? MODEL_TOKEN_CHANGED : MODEL_TOKEN_ADDED, &m->tokens[i]);
	return 1;
}

static ssize_t sighting_index(const struct model *m, enum sighting_source src, const char *handle)
{
	for (size_t i = 0; i < m->n_sightings; i++)
		if (m->sightings[i].src == src && streq(m->sightings[i].handle, handle))
			return (ssize_t)i;
	return -1;
}

static bool id_listed(const char (*ids)[TOKEN_ID_MAX], size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (streq(ids[i], id))
			return true;
	return false;
}

/*
 * Rebuilds the present tokens from all sightings. Pairs a USB sighting with a PC/SC sighting of
 * the same kind and serial; then, per kind, the single unpaired USB sighting with the single
 * unpaired PC/SC sighting when a serial is missing on one side (a YubiKey whose OTP interface we
 * may not read still shows its reader), or whatever the serials for kinds other than YubiKey:
 * a Nitrokey's USB serial is not its card's serial, so equal serials never pair them. A USB
 * sighting merged with a card loses the id it had alone (its provisional name: no serial, or a
 * USB serial); that token is removed and forgotten. Tokens no longer seen become absent.
 */
/* The ids one rebuild stored, and the provisional ids (a device's name before its card named
 * it) that those replace. */
struct rebuild_ids {
	char seen[SIGHTINGS_MAX][TOKEN_ID_MAX];
	char provisional[SIGHTINGS_MAX][TOKEN_ID_MAX];
	size_t n_seen, n_provisional;
};

static int tokens_store(struct model *m, const ssize_t *partner, int64_t now,
                        struct rebuild_ids *ids)
{
	int r = 0;

	for (size_t i = 0; i < m->n_sightings; i++) {
		const struct sighting *usb, *pcsc;
		struct token t;
		int q;

		if (partner[i] >= 0 && m->sightings[i].src == SIGHTING_PCSC)
			continue; /* built with its USB partner */
		usb = m->sightings[i].src == SIGHTING_USB ? &m->sightings[i] : NULL;
		pcsc = usb ? (partner[i] >= 0 ? &m->sightings[partner[i]] : NULL)
		           : &m->sightings[i];
		token_merge(usb, pcsc, &t);
		q = token_store(m, &t, now);
		if (q < 0)
			r = q;
		memcpy(ids->seen[ids->n_seen++], t.id, TOKEN_ID_MAX);
		memcpy(m->sighting_token[i], t.id, TOKEN_ID_MAX);
		if (usb && pcsc)
			memcpy(m->sighting_token[partner[i]], t.id, TOKEN_ID_MAX);
		if (usb && pcsc) {
			struct sighting raw;
			struct token alone;

			/* The name the device had alone, before its card named it. */
			memcpy(&raw, usb, sizeof(raw));
			raw.card_serial[0] = 0;
			token_merge(&raw, NULL, &alone);
			if (!streq(alone.id, t.id))
				memcpy(ids->provisional[ids->n_provisional++], alone.id,
				       TOKEN_ID_MAX);
		}
	}
	return r;
}

/* Tokens no sighting stands for any more: removed (kept as not present), or dropped. */
static void tokens_retire(struct model *m, const struct rebuild_ids *ids, int64_t now)
{
	for (size_t i = 0; i < m->n_tokens; i++) {
		struct token *t = &m->tokens[i];
		bool renamed;

		if (id_listed(ids->seen, ids->n_seen, t->id))
			continue;
		renamed = id_listed(ids->provisional, ids->n_provisional, t->id);
		if (!t->present && !renamed)
			continue;
		if (t->present) {
			(void)touch_end(m, t, TOUCH_END_REMOVED);
			t->present = false;
			t->last_seen = now;
			emit_token(m, MODEL_TOKEN_REMOVED, t);
		}
		/* Nothing to remember of a token we never learned a serial for, or of a device's
		 * provisional name now that its card named it. */
		if (!*t->serial || renamed) {
			token_drop(m, i);
			i--;
		}
	}
}

static int tokens_rebuild(struct model *m, int64_t now)
{
	ssize_t partner[SIGHTINGS_MAX];
	struct rebuild_ids ids = { .n_seen = 0 };
	int r;

	sightings_pair(m->sightings, m->n_sightings, partner);
	r = tokens_store(m, partner, now, &ids);
	tokens_retire(m, &ids, now);
	return r;
}

int model_sighting_put(struct model *m, enum sighting_source src, const char *handle,
                       const struct token *t, int64_t now)
{
	ssize_t i = sighting_index(m, src, handle);
	char card_serial[SERIAL_MAX] = "";
	_cleanup_(freep) struct piv_app *piv = NULL;
	int r;

	m->generation++;

	if (i < 0) {
		if (m->n_sightings >= SIGHTINGS_MAX)
			return -ENOSPC;
		i = (ssize_t)m->n_sightings++;
	} else if (streq(m->sightings[i].t.serial, t->serial)) {
		/* The same device (a change event): it still holds the same card. */
		memcpy(card_serial, m->sightings[i].card_serial, sizeof(card_serial));
		piv = malloc(sizeof(*piv));
		if (piv)
			memcpy(piv, &m->sightings[i].t.piv, sizeof(*piv));
	}
	memset(&m->sightings[i], 0, sizeof(struct sighting));
	memcpy(m->sightings[i].card_serial, card_serial, sizeof(card_serial));
	m->sightings[i].src = src;
	r = strcpy_bounded(m->sightings[i].handle, sizeof(m->sightings[i].handle), handle);
	if (r < 0) {
		m->n_sightings--;
		return r;
	}
	memcpy(&m->sightings[i].t, t, sizeof(*t));
	if (piv)
		piv_keep(piv, &m->sightings[i].t.piv);

	r = tokens_rebuild(m, now);
	if (r < 0)
		return r;
	return model_update(m);
}

int model_sighting_remove(struct model *m, enum sighting_source src, const char *handle,
                          int64_t now)
{
	ssize_t i = sighting_index(m, src, handle);
	int r;

	m->generation++;

	if (i < 0)
		return -ENOENT;
	memmove(&m->sightings[i], &m->sightings[i + 1],
	        (m->n_sightings - (size_t)i - 1) * sizeof(struct sighting));
	m->n_sightings--;
	r = tokens_rebuild(m, now);
	if (r < 0)
		return r;
	return model_update(m);
}

int model_token_put(struct model *m, const struct token *t)
{
	ssize_t i = token_index(m, t->id);
	struct token c;
	int r;

	m->generation++;

	/* A wait is the model's own (model_touch_set()): a put (state.c's remembered tokens)
	 * neither starts nor ends one, and an absent token has none. */
	memcpy(&c, t, sizeof(c));
	c.touch_waiting = i >= 0 && c.present && m->tokens[i].touch_waiting;
	memset(&c.touch, 0, sizeof(c.touch));
	if (c.touch_waiting)
		memcpy(&c.touch, &m->tokens[i].touch, sizeof(c.touch));
	else if (i >= 0)
		(void)touch_end(m, &m->tokens[i], TOUCH_END_REMOVED);
	t = &c;

	if (i >= 0) {
		if (memcmp(&m->tokens[i], t, sizeof(*t)) == 0)
			return 0;
		memcpy(&m->tokens[i], t, sizeof(*t));
		emit_token(m, MODEL_TOKEN_CHANGED, &m->tokens[i]);
		return model_update(m);
	}
	r = token_make_room(m);
	if (r < 0)
		return r;
	i = (ssize_t)m->n_tokens++;
	memcpy(&m->tokens[i], t, sizeof(*t));
	m->max_counter[i] = t->openpgp.signature_counter;
	emit_token(m, MODEL_TOKEN_ADDED, &m->tokens[i]);
	return model_update(m);
}

int model_token_remove(struct model *m, const char *id)
{
	ssize_t i = token_index(m, id);
	struct token last;

	m->generation++;

	if (i < 0)
		return -ENOENT;
	(void)touch_end(m, &m->tokens[i], TOUCH_END_REMOVED);
	memcpy(&last, &m->tokens[i], sizeof(last));
	last.present = false;
	token_drop(m, (size_t)i);
	emit_token(m, MODEL_TOKEN_REMOVED, &last);
	return model_update(m);
}

int model_token_id_by_sighting(struct model *m, enum sighting_source src, const char *handle,
                               char *buf, size_t size)
{
	ssize_t i = sighting_index(m, src, handle);

	if (i < 0)
		return -ENOENT;
	return strcpy_bounded(buf, size, m->sighting_token[i]) < 0 ? -ENOBUFS : 0;
}

/* ---- touch waits ----------------------------------------------------------------------- */

int model_touch_set(struct model *m, const char *token_id, const struct touch_pending *tp)
{
	ssize_t i = token_index(m, token_id);
	struct token *t;

	m->generation++;

	if (!tp)
		return model_touch_done(m, token_id, TOUCH_END_TOUCHED);
	if (touch_pending_check(tp) < 0)
		return -EINVAL;
	if (i < 0 || !m->tokens[i].present)
		return -ENOENT;
	t = &m->tokens[i];
	/* Field by field, and copied so: a detector's struct may hold bytes past a string's NUL,
	 * which must not reach the token (token_same() compares bytes). */
	if (t->touch_waiting && t->touch.application == tp->application &&
	    streq(t->touch.slot, tp->slot) && t->touch.since == tp->since &&
	    t->touch.since_usec == tp->since_usec && streq(t->touch.requester, tp->requester))
		return 0;
	t->touch_waiting = true;
	memset(&t->touch, 0, sizeof(t->touch));
	t->touch.application = tp->application;
	memcpy(t->touch.slot, tp->slot, strlen(tp->slot) + 1);
	t->touch.since = tp->since;
	t->touch.since_usec = tp->since_usec;
	memcpy(t->touch.requester, tp->requester, strlen(tp->requester) + 1);
	emit_token(m, MODEL_TOUCH_PENDING, t);
	return 1;
}

int model_touch_done(struct model *m, const char *token_id, enum touch_end how)
{
	ssize_t i = token_index(m, token_id);

	m->generation++;

	if ((unsigned)how >= TOUCH_END_MAX)
		return -EINVAL;
	if (i < 0 || !m->tokens[i].present)
		return -ENOENT;
	return touch_end(m, &m->tokens[i], how);
}

/* ---- keys ------------------------------------------------------------------------------ */

size_t model_keys(const struct model *m, const struct key **ret)
{
	*ret = m->keys;
	return m->n_keys;
}

size_t model_keys_mutable(struct model *m, struct key **ret)
{
	*ret = m->keys;
	return m->n_keys;
}

int model_keys_replace(struct model *m, struct key *keys, size_t n)
{
	struct key *copy = NULL;

	m->generation++;

	if (n > KEYS_MAX) {
		for (size_t i = 0; i < n; i++)
			key_done(&keys[i]);
		return -E2BIG;
	}
	if (n > 0) {
		copy = calloc(n, sizeof(struct key));
		if (!copy) {
			for (size_t i = 0; i < n; i++)
				key_done(&keys[i]);
			return -ENOMEM;
		}
		/* Takes over the subkeys arrays. */
		memcpy(copy, keys, n * sizeof(struct key));
		for (size_t i = 0; i < n; i++) {
			keys[i].subkeys = NULL;
			keys[i].n_subkeys = 0;
		}
	}
	keys_free(m->keys, m->n_keys);
	m->keys = copy;
	m->n_keys = n;
	return model_update(m);
}

static const struct key *key_find(const struct key *keys, size_t n, const char *fpr)
{
	for (size_t i = 0; i < n; i++)
		if (streq(keys[i].fingerprint, fpr))
			return &keys[i];
	return NULL;
}

static const struct subkey *subkey_find(const struct key *k, const char *fpr)
{
	for (size_t i = 0; i < k->n_subkeys; i++)
		if (streq(k->subkeys[i].fingerprint, fpr))
			return &k->subkeys[i];
	return NULL;
}

static int keys_diff_and_tell(struct model *m)
{
	struct key *told;

	for (size_t i = 0; i < m->n_told; i++)
		if (!key_find(m->keys, m->n_keys, m->told[i].fingerprint))
			emit(m, &(struct model_event){ .type = MODEL_KEY_REMOVED,
			                               .key = &m->told[i] });

	for (size_t i = 0; i < m->n_keys; i++) {
		const struct key *k = &m->keys[i];
		const struct key *old = key_find(m->told, m->n_told, k->fingerprint);

		if (!old) {
			emit(m, &(struct model_event){ .type = MODEL_KEY_ADDED, .key = k });
			continue;
		}
		if (key_equal(old, k))
			continue;
		for (size_t j = 0; j < k->n_subkeys; j++) {
			const struct subkey *was = subkey_find(old, k->subkeys[j].fingerprint);

			if (was && was->level != k->subkeys[j].level)
				emit(m, &(struct model_event){ .type = MODEL_LEVEL_CHANGED,
				                               .key = k,
				                               .subkey = &k->subkeys[j],
				                               .old_level = was->level });
		}
		emit(m, &(struct model_event){ .type = MODEL_KEY_CHANGED, .key = k });
	}

	told = m->n_keys > 0 ? calloc(m->n_keys, sizeof(struct key)) : NULL;
	if (m->n_keys > 0 && !told)
		return -ENOMEM;
	for (size_t i = 0; i < m->n_keys; i++)
		if (key_copy(&m->keys[i], &told[i]) < 0) {
			keys_free(told, i);
			return -ENOMEM;
		}
	keys_free(m->told, m->n_told);
	m->told = told;
	m->n_told = m->n_keys;
	return 0;
}

/* ---- findings -------------------------------------------------------------------------- */

int model_findings_replace(struct model *m, const struct finding *f, size_t n)
{
	struct finding *copy = NULL;

	m->generation++;

	if (n > FINDINGS_MAX)
		return -E2BIG;
	if (n > 0) {
		copy = malloc(n * sizeof(struct finding));
		if (!copy)
			return -ENOMEM;
		memcpy(copy, f, n * sizeof(struct finding));
	}
	free(m->findings);
	m->findings = copy;
	m->n_findings = n;
	return 0;
}

size_t model_findings(const struct model *m, const struct finding **ret)
{
	*ret = m->findings;
	return m->n_findings;
}

static bool finding_same_subject(const struct finding *a, const struct finding *b)
{
	if (!streq(a->rule, b->rule) || !streq(a->key, b->key) || !streq(a->subkey, b->subkey))
		return false;
	/* A subkey's finding learns its token when the card is read after the keyring: that is
	 * the same finding, reworded. Two tokens holding the same subkey stay two findings. */
	if (*a->subkey && (!*a->token || !*b->token))
		return true;
	return streq(a->token, b->token);
}

static const struct finding *finding_find(const struct finding *list, size_t n,
                                          const struct finding *f)
{
	for (size_t i = 0; i < n; i++)
		if (finding_same_subject(&list[i], f))
			return &list[i];
	return NULL;
}

static int findings_diff_and_tell(struct model *m)
{
	struct finding *told = NULL;

	for (size_t i = 0; i < m->n_told_findings; i++)
		if (!finding_find(m->findings, m->n_findings, &m->told_findings[i]))
			emit(m, &(struct model_event){ .type = MODEL_FINDING_CLEARED,
			                               .finding = &m->told_findings[i] });
	for (size_t i = 0; i < m->n_findings; i++) {
		const struct finding *old =
		        finding_find(m->told_findings, m->n_told_findings, &m->findings[i]);

		/* A finding whose level or text moved is raised again, with the new words. */
		if (!old || old->level != m->findings[i].level ||
		    !streq(old->message, m->findings[i].message))
			emit(m, &(struct model_event){
			                .type = MODEL_FINDING_RAISED,
			                .finding = &m->findings[i],
			                .reworded = old && old->level == m->findings[i].level });
	}
	if (m->n_findings > 0) {
		told = malloc(m->n_findings * sizeof(struct finding));
		if (!told)
			return -ENOMEM;
		memcpy(told, m->findings, m->n_findings * sizeof(struct finding));
	}
	free(m->told_findings);
	m->told_findings = told;
	m->n_told_findings = m->n_findings;
	return 0;
}

/* ---- derivation and daemon info -------------------------------------------------------- */

void model_set_deriver(struct model *m, model_derive_fn fn, void *userdata)
{
	m->derive = fn;
	m->derive_userdata = userdata;
}

int model_update(struct model *m)
{
	int r = 0, q;

	m->generation++;

	if (m->derive)
		r = m->derive(m, m->derive_userdata);
	q = keys_diff_and_tell(m);
	if (q < 0 && r >= 0)
		r = q;
	q = findings_diff_and_tell(m);
	if (q < 0 && r >= 0)
		r = q;
	return r;
}

void model_set_clock(struct model *m, model_clock_fn fn, void *userdata)
{
	m->clock = fn;
	m->clock_userdata = userdata;
}

int64_t model_now(const struct model *m)
{
	return m->clock ? m->clock(m->clock_userdata) : (int64_t)time(NULL);
}

const struct daemon_info *model_daemon_info(const struct model *m)
{
	m->info->now = model_now(m);
	return m->info;
}

int model_daemon_info_put(struct model *m, const struct daemon_info *info)
{
	struct daemon_info a, b;

	/* `now` moves on every call and is not news. */
	memcpy(&a, m->info, sizeof(a));
	memcpy(&b, info, sizeof(b));
	a.now = b.now = 0;
	if (memcmp(&a, &b, sizeof(a)) == 0)
		return 0;
	memcpy(m->info, info, sizeof(*info));
	emit(m, &(struct model_event){ .type = MODEL_DAEMON_CHANGED });
	return 1;
}
