/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journal's view of the model: one structured log line per event. Lives beside the server as
 * a second subscriber, so that what clients are told and what the journal records are the same
 * events. Does not: filter or rate-limit (the model only emits real changes).
 */
#include <stdio.h>

#include "events-log.h"
#include "log.h"

#define FIELD_MAX 320

static const char *const message_ids[MODEL_EVENT_MAX] = {
	[MODEL_TOKEN_ADDED] = MESSAGE_ID_TOKEN_ADDED,
	[MODEL_TOKEN_CHANGED] = MESSAGE_ID_TOKEN_CHANGED,
	[MODEL_TOKEN_REMOVED] = MESSAGE_ID_TOKEN_REMOVED,
	[MODEL_KEY_ADDED] = MESSAGE_ID_KEY_ADDED,
	[MODEL_KEY_CHANGED] = MESSAGE_ID_KEY_CHANGED,
	[MODEL_KEY_REMOVED] = MESSAGE_ID_KEY_REMOVED,
	[MODEL_LEVEL_CHANGED] = MESSAGE_ID_LEVEL_CHANGED,
	[MODEL_FINDING_RAISED] = MESSAGE_ID_FINDING_RAISED,
	[MODEL_FINDING_CLEARED] = MESSAGE_ID_FINDING_CLEARED,
	[MODEL_DAEMON_CHANGED] = MESSAGE_ID_DAEMON_CHANGED,
	[MODEL_TOUCH_PENDING] = MESSAGE_ID_TOUCH_PENDING,
	[MODEL_TOUCH_DONE] = MESSAGE_ID_TOUCH_DONE,
};

static const char *slot_usage(unsigned caps)
{
	if (caps & CAP_SIGN)
		return "signing";
	if (caps & CAP_ENCRYPT)
		return "encryption";
	if (caps & CAP_AUTH)
		return "authentication";
	return "certification";
}

static void log_token(enum model_event_type type, const struct token *t)
{
	static const char *const verbs[] = {
		[MODEL_TOKEN_ADDED] = "inserted",
		[MODEL_TOKEN_CHANGED] = "changed",
		[MODEL_TOKEN_REMOVED] = "removed",
	};
	char f[4][FIELD_MAX];
	const char *fields[5];
	char name[TOKEN_ID_MAX + 80];

	snprintf(f[0], FIELD_MAX, "KEYCTL_TOKEN=%s", t->id);
	snprintf(f[1], FIELD_MAX, "KEYCTL_SERIAL=%s", t->serial);
	snprintf(f[2], FIELD_MAX, "KEYCTL_KIND=%s", token_kind_to_string(t->kind));
	snprintf(f[3], FIELD_MAX, "KEYCTL_READER=%s", t->reader);
	for (size_t i = 0; i < 4; i++)
		fields[i] = f[i];
	fields[4] = NULL;
	token_display_name(t, name, sizeof(name));
	log_struct(type == MODEL_TOKEN_CHANGED ? LOG_DEBUG : LOG_INFO, message_ids[type], fields,
	           "Token %s %s%s%s", name, verbs[type], *t->error ? ": " : "", t->error);
}

/* Debug: a wait comes with every signature on a touch-protected slot, news for the user's
 * desktop but not for the journal. */
static void log_touch(const struct model_event *ev)
{
	char f[2][FIELD_MAX], name[128], what[96];
	const char *fields[3] = { f[0], f[1], NULL };

	snprintf(f[0], FIELD_MAX, "KEYCTL_TOKEN=%s", ev->token->id);
	snprintf(f[1], FIELD_MAX, "KEYCTL_TOUCH=%s",
	         ev->type == MODEL_TOUCH_PENDING ? "pending" : touch_end_to_string(ev->touch_end));
	token_display_name(ev->token, name, sizeof(name));
	if (ev->type == MODEL_TOUCH_DONE) {
		log_struct(LOG_DEBUG, message_ids[ev->type], fields,
		           "Token %s no longer waits (%s)", name,
		           touch_end_to_string(ev->touch_end));
		return;
	}
	touch_pending_describe(&ev->token->touch, what, sizeof(what));
	log_struct(LOG_DEBUG, message_ids[ev->type], fields, "Token %s waits for a touch (%s)",
	           name, what);
}

static void on_event(struct model *m, const struct model_event *ev, void *userdata)
{
	char f[4][FIELD_MAX];
	const char *fields[5] = { f[0], f[1], f[2], f[3], NULL };

	switch (ev->type) {
	case MODEL_TOKEN_ADDED:
	case MODEL_TOKEN_CHANGED:
	case MODEL_TOKEN_REMOVED:
		log_token(ev->type, ev->token);
		return;
	case MODEL_KEY_ADDED:
	case MODEL_KEY_CHANGED:
	case MODEL_KEY_REMOVED:
		snprintf(f[0], FIELD_MAX, "KEYCTL_KEY=%s", ev->key->fingerprint);
		snprintf(f[1], FIELD_MAX, "KEYCTL_UID=%s", ev->key->uid);
		fields[2] = NULL;
		log_struct(ev->type == MODEL_KEY_CHANGED ? LOG_DEBUG : LOG_INFO,
		           message_ids[ev->type], fields, "Key %s %s", ev->key->uid,
		           ev->type == MODEL_KEY_ADDED     ? "appeared in the keyring"
		           : ev->type == MODEL_KEY_REMOVED ? "left the keyring"
		                                           : "changed");
		return;
	case MODEL_LEVEL_CHANGED:
		snprintf(f[0], FIELD_MAX, "KEYCTL_KEY=%s", ev->key->fingerprint);
		snprintf(f[1], FIELD_MAX, "KEYCTL_SUBKEY=%s", ev->subkey->fingerprint);
		snprintf(f[2], FIELD_MAX, "KEYCTL_LEVEL=%s", level_to_string(ev->subkey->level));
		snprintf(f[3], FIELD_MAX, "KEYCTL_OLD_LEVEL=%s", level_to_string(ev->old_level));
		log_struct(ev->subkey->level >= LEVEL_WARNING ? LOG_WARNING : LOG_NOTICE,
		           message_ids[ev->type], fields, "The %s subkey %s of %s is now %s",
		           slot_usage(ev->subkey->capabilities), ev->subkey->fingerprint,
		           ev->key->uid, level_to_string(ev->subkey->level));
		return;
	case MODEL_FINDING_RAISED:
	case MODEL_FINDING_CLEARED:
		snprintf(f[0], FIELD_MAX, "KEYCTL_RULE=%s", ev->finding->rule);
		snprintf(f[1], FIELD_MAX, "KEYCTL_LEVEL=%s", level_to_string(ev->finding->level));
		snprintf(f[2], FIELD_MAX, "KEYCTL_KEY=%s", ev->finding->key);
		snprintf(f[3], FIELD_MAX, "KEYCTL_TOKEN=%s", ev->finding->token);
		/* The journal says a problem once; its later rewordings are debug detail. */
		log_struct(ev->type == MODEL_FINDING_CLEARED     ? LOG_INFO
		           : ev->reworded                        ? LOG_DEBUG
		           : ev->finding->level >= LEVEL_WARNING ? LOG_WARNING
		                                                 : LOG_NOTICE,
		           message_ids[ev->type], fields, "%s%s",
		           ev->type == MODEL_FINDING_CLEARED ? "Resolved: " : "",
		           ev->finding->message);
		return;
	case MODEL_DAEMON_CHANGED: {
		const struct daemon_info *i = model_daemon_info(m);

		snprintf(f[0], FIELD_MAX, "KEYCTL_PCSC=%s", i->pcsc_available ? "yes" : "no");
		snprintf(f[1], FIELD_MAX, "KEYCTL_KEYRING_STALE=%s",
		         i->keyring_stale ? "yes" : "no");
		fields[2] = NULL;
		log_struct(LOG_DEBUG, message_ids[ev->type], fields,
		           "Daemon state: pcscd %s, "
		           "keyring %s%s%s",
		           i->pcsc_available ? "available" : "not available",
		           i->keyring_stale ? "stale: " : "current",
		           i->keyring_stale ? i->keyring_error : "", "");
		return;
	}
	case MODEL_TOUCH_PENDING:
	case MODEL_TOUCH_DONE:
		log_touch(ev);
		return;
	case MODEL_EVENT_MAX:
		break;
	}
}

int events_log_attach(struct model *m)
{
	return model_subscribe(m, on_event, NULL);
}
