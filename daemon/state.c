/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Remembered tokens: load at start, save after token events. The file is our own but lives in
 * the user's home, so it is read like any other input: bounded, parsed strictly by the wire codec,
 * and a bad file costs the memory, never the daemon. Saving is temp file, fsync, rename, fsync of
 * the directory, deferred to the end of the loop iteration so that a burst of events (a card
 * inserted: USB and PC/SC sightings) is one write.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "fileio.h"
#include "log.h"
#include "state.h"
#include "varlink.h"

#define STATE_FORMAT_VERSION 1

struct state {
	sd_event *event;
	struct model *model;
	char path[PATH_MAX];
	sd_event_source *defer;
};

int state_parse(const uint8_t *p, size_t n, struct token *ret, size_t max)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *v, *tokens;
	size_t k;
	int r;

	if (n > STATE_FILE_MAX)
		return -EMSGSIZE;
	if (memchr(p, 0, n))
		return -EBADMSG;
	r = varlink_message_parse((const char *)p, n, &o);
	if (r < 0)
		return r;
	if (!json_object_object_get_ex(o, "version", &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) != STATE_FORMAT_VERSION)
		return -EBADMSG;
	if (!json_object_object_get_ex(o, "tokens", &tokens) ||
	    !json_object_is_type(tokens, json_type_array))
		return -EBADMSG;
	k = json_object_array_length(tokens);
	if (k > max || k > TOKENS_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < k; i++) {
		r = codec_token_from_json(json_object_array_get_idx(tokens, i), &ret[i]);
		if (r < 0)
			return r;
		/* Only tokens with a serial are written; anything else was not written by us. */
		if (!*ret[i].serial || !*ret[i].id)
			return -EBADMSG;
		ret[i].present = false;
		memset(ret[i].error, 0, sizeof(ret[i].error));
	}
	return (int)k;
}

int state_format(const struct token *tokens, size_t n, char **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();
	char *s;

	if (!o || !a ||
	    json_object_object_add(o, "version", json_object_new_int(STATE_FORMAT_VERSION)) < 0 ||
	    json_object_object_add(o, "tokens", a) < 0) {
		json_object_put(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *t;

		if (!*tokens[i].serial)
			continue;
		if (codec_token_to_json(&tokens[i], &t) < 0 || json_object_array_add(a, t) < 0)
			return -ENOMEM;
	}
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int state_default_dir(char *buf, size_t size)
{
	const char *sd = getenv("STATE_DIRECTORY"), *xdg = getenv("XDG_STATE_HOME"),
	           *home = getenv("HOME");
	int k;

	/* systemd may pass several, colon-separated; ours is the first. */
	if (sd && *sd == '/')
		k = snprintf(buf, size, "%.*s", (int)strcspn(sd, ":"), sd);
	else if (xdg && *xdg == '/')
		k = snprintf(buf, size, "%s/keyctl", xdg);
	else if (home && *home == '/')
		k = snprintf(buf, size, "%s/.local/state/keyctl", home);
	else
		return -ENOENT;
	return k < 0 || (size_t)k >= size ? -ENAMETOOLONG : 0;
}

static int state_save(struct state *s)
{
	_cleanup_(freep) char *text = NULL;
	const struct token *tokens;
	size_t n = model_tokens(s->model, &tokens);
	int r;

	r = state_format(tokens, n, &text);
	if (r < 0)
		return r;
	return file_write_atomic(s->path, text, strlen(text));
}

static int on_defer(sd_event_source *src, void *userdata)
{
	struct state *s = userdata;
	int r = state_save(s);

	/* A full disk costs the memory of this change, not the daemon; the next event retries. */
	if (r < 0)
		log_warning_errno(r, "Failed to save %s, ignoring: %m", s->path);
	return sd_event_source_set_enabled(src, SD_EVENT_OFF);
}

static void on_event(struct model *m, const struct model_event *ev, void *userdata)
{
	struct state *s = userdata;

	if (ev->type != MODEL_TOKEN_ADDED && ev->type != MODEL_TOKEN_CHANGED &&
	    ev->type != MODEL_TOKEN_REMOVED)
		return;
	if (s->defer)
		(void)sd_event_source_set_enabled(s->defer, SD_EVENT_ONESHOT);
}

int state_new(sd_event *e, struct model *m, const char *dir, char *ret_error, size_t errsize,
              struct state **ret)
{
	_cleanup_(freep) struct state *s = calloc(1, sizeof(*s));
	_cleanup_(freep) uint8_t *buf = NULL;
	_cleanup_(freep) struct token *tokens = NULL;
	size_t n = 0;
	int r, k;

	if (!s)
		return -ENOMEM;
	ret_error[0] = 0;
	s->event = e;
	s->model = m;
	if (snprintf(s->path, sizeof(s->path), "%s/tokens.json", dir) >= (int)sizeof(s->path))
		return -ENAMETOOLONG;

	r = file_read_bounded(s->path, STATE_FILE_MAX, &buf, &n);
	if (r < 0 && r != -ENOENT)
		snprintf(ret_error, errsize, "%s: %s", s->path, strerror(-r));
	if (r >= 0) {
		tokens = calloc(TOKENS_MAX, sizeof(struct token));
		if (!tokens)
			return -ENOMEM;
		k = state_parse(buf, n, tokens, TOKENS_MAX);
		if (k < 0)
			snprintf(ret_error, errsize, "%s: not a keyctl state file (%s)", s->path,
			         strerror(-k));
		for (int i = 0; i < k; i++)
			(void)model_token_put(m, &tokens[i]);
	}

	r = sd_event_add_defer(e, &s->defer, on_defer, s);
	if (r < 0)
		return r;
	(void)sd_event_source_set_enabled(s->defer, SD_EVENT_OFF);
	r = model_subscribe(m, on_event, s);
	if (r < 0) {
		sd_event_source_unref(s->defer);
		return r;
	}
	*ret = TAKE_PTR(s);
	return 0;
}

struct state *state_free(struct state *s)
{
	if (!s)
		return NULL;
	model_unsubscribe(s->model, on_event, s);
	/* A change still waiting for the end of its loop iteration is written now. */
	if (s->defer && sd_event_source_get_enabled(s->defer, NULL) > 0)
		(void)state_save(s);
	sd_event_source_unref(s->defer);
	free(s);
	return NULL;
}
