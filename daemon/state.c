/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Remembered tokens: load at start, save after token events. The file is our own but lives in
 * the user's home, so it is read like any other input: bounded, parsed strictly by the wire codec,
 * and a bad file costs the memory, never the daemon. Saving is deferred to the end of the loop
 * iteration so that a burst of events (a card inserted: USB and PC/SC sightings) is one text; the
 * loop formats it (cheap, and the model stays a loop-thread object) and hands it to one writer
 * thread, which does the temp file, fsync, rename, fsync of the directory. Those can take seconds
 * on a slow or busy disk, and on the loop they would stall every client. A text the writer has
 * not taken yet is replaced by the newer one, so bursts still coalesce into one write.
 *
 * Does not: read the model from the writer thread, or retry a failed write (the next token event
 * writes again).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ack-store.h"
#include "codec.h"
#include "fileio.h"
#include "log.h"
#include "state.h"
#include "varlink.h"

#define STATE_FORMAT_VERSION 1

struct state {
	sd_event *event;
	struct model *model;
	char path[PATH_MAX]; /* set before the writer starts, read-only after */
	sd_event_source *defer;
	bool subscribed;

	pthread_t writer;
	bool writer_running, lock_ready;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* signalled when pending or stopping changes */
	char *pending; /* under lock: the newest text, not yet taken by the writer */
	bool stopping; /* under lock: write what is pending, then end */

	struct ack_store *acks; /* the daemon's (ack_store_current()) */
};

int state_parse(const uint8_t *p, size_t n, struct token *ret, size_t max)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *tokens;
	size_t k;
	int r;

	r = codec_state_file(p, n, STATE_FILE_MAX, STATE_FORMAT_VERSION, "tokens", &o, &tokens);
	if (r < 0)
		return r;
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
		struct token c;

		if (!*tokens[i].serial)
			continue;
		/* A wait for a touch is over by the time anyone reads this: not remembered. */
		memcpy(&c, &tokens[i], sizeof(c));
		c.touch_waiting = false;
		memset(&c.touch, 0, sizeof(c.touch));
		if (codec_token_to_json(&c, &t) < 0 || json_object_array_add(a, t) < 0)
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

static void *writer_main(void *userdata)
{
	struct state *s = userdata;
	bool failing = false;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		char *text;
		int r;

		while (!s->pending && !s->stopping)
			pthread_cond_wait(&s->cond, &s->lock);
		if (!s->pending)
			break; /* stopping, and everything handed over is written */
		text = TAKE_PTR(s->pending);
		pthread_mutex_unlock(&s->lock);

		r = file_write_atomic(s->path, text, strlen(text));
		free(text);
		/* A full disk costs the memory of this change, not the daemon; the next event
		 * retries. Said once per spell of failures, not at every token event. */
		if (r < 0 && !failing)
			log_warning_errno(r, "Failed to save %s, ignoring: %m", s->path);
		else if (r >= 0 && failing)
			log_info("Saved %s again", s->path);
		failing = r < 0;

		pthread_mutex_lock(&s->lock);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Formats the model's tokens on the loop thread and gives the text to the writer. */
static int state_save(struct state *s)
{
	const struct token *tokens;
	size_t n = model_tokens(s->model, &tokens);
	char *text = NULL;
	int r;

	r = state_format(tokens, n, &text);
	if (r < 0)
		return r;
	pthread_mutex_lock(&s->lock);
	free(s->pending);
	s->pending = text;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static int on_defer(sd_event_source *src, void *userdata)
{
	struct state *s = userdata;
	int r = state_save(s);

	if (r < 0)
		log_warning_errno(r, "Failed to save %s, ignoring: %m", s->path);
	return sd_event_source_set_enabled(src, SD_EVENT_OFF);
}

/* With every signal blocked: the loop takes signals through a signalfd, which needs them blocked
 * in every thread, or one could be delivered here and lost. */
static int writer_start(struct state *s)
{
	sigset_t all, old;
	int r;

	sigfillset(&all);
	r = pthread_sigmask(SIG_SETMASK, &all, &old);
	if (r != 0)
		return -r;
	r = pthread_create(&s->writer, NULL, writer_main, s);
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0)
		return -r;
	s->writer_running = true;
	return 0;
}

static void on_event(struct model *m, const struct model_event *ev, void *userdata)
{
	struct state *s = userdata;

	/* An ack forgotten by the audit (its finding went away or got worse) goes with a finding
	 * event. A few kilobytes, rarely: written here rather than by the tokens' writer. */
	if ((ev->type == MODEL_FINDING_RAISED || ev->type == MODEL_FINDING_CLEARED) && s->acks &&
	    s->acks->dirty) {
		int r = ack_store_save(s->acks);

		if (r < 0)
			log_warning_errno(r, "Failed to save %s, ignoring: %m", s->acks->path);
	}
	if (ev->type != MODEL_TOKEN_ADDED && ev->type != MODEL_TOKEN_CHANGED &&
	    ev->type != MODEL_TOKEN_REMOVED)
		return;
	if (s->defer)
		(void)sd_event_source_set_enabled(s->defer, SD_EVENT_ONESHOT);
}

int state_new(sd_event *e, struct model *m, const char *dir, char *ret_error, size_t errsize,
              struct state **ret)
{
	_cleanup_(state_freep) struct state *s = calloc(1, sizeof(*s));
	_cleanup_(freep) uint8_t *buf = NULL;
	_cleanup_(freep) struct token *tokens = NULL;
	char ack_error[ERROR_TEXT_MAX + PATH_MAX];
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

	r = ack_store_new(dir, ack_error, sizeof(ack_error), &s->acks);
	if (r < 0)
		return r;
	if (*ack_error)
		log_warning("Ignoring acknowledged findings: %s", ack_error);
	ack_store_set_current(s->acks);

	r = pthread_mutex_init(&s->lock, NULL);
	if (r != 0)
		return -r;
	r = pthread_cond_init(&s->cond, NULL);
	if (r != 0) {
		pthread_mutex_destroy(&s->lock);
		return -r;
	}
	s->lock_ready = true;
	r = writer_start(s);
	if (r < 0)
		return r;

	r = sd_event_add_defer(e, &s->defer, on_defer, s);
	if (r < 0)
		return r;
	(void)sd_event_source_set_enabled(s->defer, SD_EVENT_OFF);
	r = model_subscribe(m, on_event, s);
	if (r < 0)
		return r;
	s->subscribed = true;
	*ret = TAKE_PTR(s);
	return 0;
}

struct state *state_free(struct state *s)
{
	if (!s)
		return NULL;
	if (s->subscribed)
		model_unsubscribe(s->model, on_event, s);
	/* A change still waiting for the end of its loop iteration is handed over now. */
	if (s->defer && sd_event_source_get_enabled(s->defer, NULL) > 0 && s->writer_running) {
		int r = state_save(s);

		if (r < 0)
			log_warning_errno(r, "Failed to save %s: %m", s->path);
	}
	s->defer = sd_event_source_disable_unref(s->defer);
	/* The writer finishes what it was given before it ends: nothing is lost at shutdown. */
	if (s->writer_running) {
		pthread_mutex_lock(&s->lock);
		s->stopping = true;
		pthread_cond_signal(&s->cond);
		pthread_mutex_unlock(&s->lock);
		(void)pthread_join(s->writer, NULL);
	}
	if (s->lock_ready) {
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
	}
	free(s->pending);
	s->acks = ack_store_free(s->acks);
	free(s);
	return NULL;
}
