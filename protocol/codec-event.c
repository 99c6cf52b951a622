/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watch's events <-> JSON: {"event": {"type": ..., ...}}, where "state" carries the whole status
 * beside its type and every other event the one token, key, finding or daemon info it concerns
 * (a level change also the subkey and both levels). Also the event types' names.
 *
 * Does not: decide when an event is sent (daemon/server.c), or encode the objects it carries
 * (codec-token.c, codec-key.c, codec-status.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "codec-internal.h"
#include "util.h"

static const char *const event_type_table[EVENT_MAX] = {
	[EVENT_STATE] = "state",
	[EVENT_TOKEN_ADDED] = "token-added",
	[EVENT_TOKEN_CHANGED] = "token-changed",
	[EVENT_TOKEN_REMOVED] = "token-removed",
	[EVENT_KEY_ADDED] = "key-added",
	[EVENT_KEY_CHANGED] = "key-changed",
	[EVENT_KEY_REMOVED] = "key-removed",
	[EVENT_LEVEL_CHANGED] = "level-changed",
	[EVENT_FINDING_RAISED] = "finding-raised",
	[EVENT_FINDING_CLEARED] = "finding-cleared",
	[EVENT_DAEMON_CHANGED] = "daemon-changed",
	[EVENT_TOUCH_PENDING] = "touch-pending",
	[EVENT_TOUCH_DONE] = "touch-done",
};

const char *event_type_to_string(enum event_type t)
{
	return (unsigned)t < EVENT_MAX ? event_type_table[t] : NULL;
}

int event_type_from_string(const char *s)
{
	for (int i = 0; i < EVENT_MAX; i++)
		if (streq(event_type_table[i], s))
			return i;
	return -EINVAL;
}

void keyctl_event_done(struct keyctl_event *e)
{
	keyctl_status_done(&e->status);
	key_done(&e->key);
	memset(e, 0, sizeof(*e));
}

static int wrap_event(json_object **ev, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || put(o, "event", TAKE_PTR(*ev)) < 0)
		return -ENOMEM;
	*ret = TAKE_PTR(o);
	return 0;
}

int codec_event_state_to_json(const struct daemon_info *d, const struct token *tokens,
                              size_t n_tokens, const struct key *keys, size_t n_keys,
                              const struct finding *findings, size_t n_findings, json_object **ret)
{
	_cleanup_(json_object_putp) json_object *ev = json_object_new_object();

	if (!ev || put_str(ev, "type", "state") < 0 ||
	    codec_put_status(ev, d, tokens, n_tokens, keys, n_keys, findings, n_findings) < 0)
		return -ENOMEM;
	return wrap_event(&ev, ret);
}

int codec_event_to_json(enum event_type type, const struct token *token, const struct key *key,
                        const char *subkey_fpr, enum level level, enum level old_level,
                        const struct finding *finding, const struct daemon_info *daemon,
                        json_object **ret)
{
	_cleanup_(json_object_putp) json_object *ev = json_object_new_object();
	json_object *x;

	if (!ev || !event_type_to_string(type) || type == EVENT_STATE)
		return ev ? -EINVAL : -ENOMEM;
	if (put_str(ev, "type", event_type_to_string(type)) < 0)
		return -ENOMEM;
	if (daemon && (codec_daemon_info_to_json(daemon, &x) < 0 || put(ev, "daemon", x) < 0))
		return -ENOMEM;
	if (token && (codec_token_to_json(token, &x) < 0 || put(ev, "token", x) < 0))
		return -ENOMEM;
	if (key && (codec_key_to_json(key, &x) < 0 || put(ev, "key", x) < 0))
		return -ENOMEM;
	if (type == EVENT_LEVEL_CHANGED &&
	    (put_str(ev, "subkey", subkey_fpr ? subkey_fpr : "") < 0 ||
	     put_str(ev, "level", level_to_string(level)) < 0 ||
	     put_str(ev, "old_level", level_to_string(old_level)) < 0))
		return -ENOMEM;
	if (finding && (codec_finding_to_json(finding, &x) < 0 || put(ev, "finding", x) < 0))
		return -ENOMEM;
	return wrap_event(&ev, ret);
}

int codec_event_touch_to_json(enum event_type type, const struct token *token, enum touch_end end,
                              json_object **ret)
{
	_cleanup_(json_object_putp) json_object *ev = json_object_new_object();
	json_object *x;

	if (!ev)
		return -ENOMEM;
	if ((type != EVENT_TOUCH_PENDING && type != EVENT_TOUCH_DONE) || !token ||
	    !touch_end_to_string(end))
		return -EINVAL;
	if (put_str(ev, "type", event_type_to_string(type)) < 0 ||
	    codec_token_to_json(token, &x) < 0 || put(ev, "token", x) < 0)
		return -ENOMEM;
	if (type == EVENT_TOUCH_DONE && put_str(ev, "touch_end", touch_end_to_string(end)) < 0)
		return -ENOMEM;
	return wrap_event(&ev, ret);
}

static int dispatch_ev_status(json_object *v, void *field, void *userdata)
{
	struct keyctl_event *e = field;
	/* The status arrays sit beside "type" in the event object: decode it once, as a whole. */
	return codec_status_arrays_from_json(v, &e->status);
}

static int dispatch_ev_daemon(json_object *v, void *field, void *userdata)
{
	struct keyctl_event *e = field;
	int r = codec_daemon_info_from_json(v, &e->daemon);

	if (r >= 0)
		e->has_daemon = true;
	return r;
}

static int dispatch_ev_token(json_object *v, void *field, void *userdata)
{
	return codec_token_from_json(v, field);
}

static int dispatch_ev_key(json_object *v, void *field, void *userdata)
{
	return codec_key_from_json(v, field);
}

static int dispatch_ev_finding(json_object *v, void *field, void *userdata)
{
	return codec_finding_from_json(v, field);
}

static int dispatch_ev_touch_end(json_object *v, void *field, void *userdata)
{
	struct keyctl_event *e = field;
	int r = codec_dispatch_touch_end(v, &e->touch_end, NULL);

	if (r >= 0)
		e->has_touch_end = true;
	return r;
}

static const struct varlink_field event_table[] = {
	F_CB("type", struct keyctl_event, type, M, codec_dispatch_event_type),
	{ "daemon", VARLINK_CUSTOM, N, 0, 0, dispatch_ev_daemon },
	F_CB("token", struct keyctl_event, token, N, dispatch_ev_token),
	F_CB("key", struct keyctl_event, key, N, dispatch_ev_key),
	F_STR(struct keyctl_event, subkey, N),
	F_CB("level", struct keyctl_event, level, N, codec_dispatch_level),
	F_CB("old_level", struct keyctl_event, old_level, N, codec_dispatch_level),
	F_CB("finding", struct keyctl_event, finding, N, dispatch_ev_finding),
	{ "touch_end", VARLINK_CUSTOM, N, 0, 0, dispatch_ev_touch_end },
	{},
};

static void event_done_cb(void *p)
{
	keyctl_event_done(p);
}

int codec_event_from_json(json_object *params, struct keyctl_event *ret)
{
	json_object *ev;
	int r;

	if (!params || !json_object_is_type(params, json_type_object) ||
	    !json_object_object_get_ex(params, "event", &ev))
		return -EBADMSG;
	r = codec_decode(ev, event_table, ret, sizeof(*ret), NULL, event_done_cb);
	if (r < 0)
		return r;
	/* The arrays of a "state" event; other events carry none. */
	r = dispatch_ev_status(ev, ret, NULL);
	if (r < 0) {
		keyctl_event_done(ret);
		return r;
	}
	/* A touch event is about one token: without it a client could not tell whose wait, and
	 * a touch-pending without touch_pending would not say what waits. */
	if ((ret->type == EVENT_TOUCH_PENDING || ret->type == EVENT_TOUCH_DONE) &&
	    (isempty(ret->token.id) ||
	     (ret->type == EVENT_TOUCH_PENDING) != ret->token.touch_waiting)) {
		keyctl_event_done(ret);
		return -EBADMSG;
	}
	if (ret->type == EVENT_STATE) {
		ret->status.daemon = ret->daemon;
		/* A state without its arrays is no state. */
		if (!json_object_object_get_ex(ev, "tokens", NULL) ||
		    !json_object_object_get_ex(ev, "keys", NULL) ||
		    !json_object_object_get_ex(ev, "findings", NULL) || !ret->has_daemon) {
			keyctl_event_done(ret);
			return -EBADMSG;
		}
	}
	return 0;
}
