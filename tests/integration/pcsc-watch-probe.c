/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test driver for the PC/SC watcher: runs pcsc-watch with a real model on an sd-event loop and
 * prints each token and daemon-info event as one JSON line on stdout, for the Python tests
 * (test-pcsc-watch.py) to assert on. SIGUSR1 asks for a rescan; SIGTERM/SIGINT stop it cleanly.
 * `--scd` instead reads the card once through scd_read_card() and prints the result.
 *
 * Does not: run the keyring, the server or any deriver.
 */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "model.h"
#include "watch-pcsc.h"
#include "card-scd.h"

static json_object *card_json(const struct openpgp_card *c)
{
	json_object *o = json_object_new_object(), *slots = json_object_new_array(),
	            *retries = json_object_new_array();

	json_object_object_add(o, "aid", json_object_new_string(c->aid));
	json_object_object_add(o, "version", json_object_new_string(c->version));
	json_object_object_add(o, "manufacturer_id", json_object_new_int(c->manufacturer_id));
	json_object_object_add(o, "manufacturer", json_object_new_string(c->manufacturer));
	json_object_object_add(o, "serial", json_object_new_string(c->serial));
	json_object_object_add(o, "firmware", json_object_new_string(c->firmware));
	json_object_object_add(o, "signature_counter", json_object_new_int64(c->signature_counter));
	for (int i = 0; i < 3; i++)
		json_object_array_add(retries, json_object_new_int(c->pin_retries[i]));
	json_object_object_add(o, "pin_retries", retries);
	json_object_object_add(o, "url", json_object_new_string(c->url));
	json_object_object_add(o, "cardholder", json_object_new_string(c->cardholder));
	json_object_object_add(o, "key_slots", json_object_new_int(c->key_slots));
	json_object_object_add(o, "error", json_object_new_string(c->error));
	for (int i = 0; i < SLOT_MAX; i++) {
		json_object *s = json_object_new_object();

		json_object_object_add(s, "fingerprint",
		                       json_object_new_string(c->slots[i].fingerprint));
		json_object_object_add(s, "created", json_object_new_int64(c->slots[i].created));
		json_object_object_add(s, "algorithm",
		                       json_object_new_string(c->slots[i].algorithm));
		json_object_object_add(s, "touch", json_object_new_int(c->slots[i].touch));
		json_object_array_add(slots, s);
	}
	json_object_object_add(o, "slots", slots);
	return o;
}

static json_object *token_json(const struct token *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(t->id));
	json_object_object_add(o, "kind", json_object_new_int(t->kind));
	json_object_object_add(o, "model", json_object_new_string(t->model));
	json_object_object_add(o, "serial", json_object_new_string(t->serial));
	json_object_object_add(o, "firmware", json_object_new_string(t->firmware));
	json_object_object_add(o, "usb_interfaces", json_object_new_int((int)t->usb_interfaces));
	json_object_object_add(o, "reader", json_object_new_string(t->reader));
	json_object_object_add(o, "present", json_object_new_boolean(t->present));
	json_object_object_add(o, "has_openpgp", json_object_new_boolean(t->has_openpgp));
	json_object_object_add(o, "read_path", json_object_new_int(t->read_path));
	json_object_object_add(o, "error", json_object_new_string(t->error));
	if (t->has_openpgp)
		json_object_object_add(o, "openpgp", card_json(&t->openpgp));
	return o;
}

static void emit(json_object *o)
{
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
}

static void on_event(struct model *m, const struct model_event *ev, void *userdata)
{
	json_object *o = json_object_new_object();

	switch (ev->type) {
	case MODEL_TOKEN_ADDED:
	case MODEL_TOKEN_CHANGED:
	case MODEL_TOKEN_REMOVED:
		json_object_object_add(
		        o, "event",
		        json_object_new_string(ev->type == MODEL_TOKEN_ADDED     ? "added"
		                               : ev->type == MODEL_TOKEN_CHANGED ? "changed"
		                                                                 : "removed"));
		json_object_object_add(o, "token", token_json(ev->token));
		break;
	case MODEL_DAEMON_CHANGED:
		json_object_object_add(o, "event", json_object_new_string("daemon"));
		json_object_object_add(
		        o, "pcsc_available",
		        json_object_new_boolean(model_daemon_info(m)->pcsc_available));
		break;
	default:
		json_object_put(o);
		return;
	}
	emit(o);
}

static int on_usr1(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	return pcsc_watch_rescan(userdata, NULL);
}

static int run_scd(void)
{
	struct openpgp_card c;
	char err[ERROR_TEXT_MAX];
	json_object *o = json_object_new_object();
	int r = scd_read_card(getenv("GNUPGHOME"), &c, err, sizeof(err));

	json_object_object_add(o, "event", json_object_new_string("scd"));
	json_object_object_add(o, "r", json_object_new_int(r));
	json_object_object_add(o, "error", json_object_new_string(err));
	if (r >= 0)
		json_object_object_add(o, "openpgp", card_json(&c));
	emit(o);
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	_cleanup_(sd_event_unrefp) sd_event *e = NULL;
	_cleanup_(model_freep) struct model *m = NULL;
	_cleanup_(pcsc_watch_freep) struct pcsc_watch *w = NULL;
	struct daemon_info info;
	const char *home = getenv("GNUPGHOME");
	sigset_t mask;
	int r;

	log_setup(LOG_TARGET_STDERR);
	log_set_max_level(getenv("PROBE_DEBUG") ? LOG_DEBUG : LOG_INFO);
	if (argc > 1 && streq(argv[1], "--scd"))
		return run_scd();

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGUSR1);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	r = sd_event_default(&e);
	if (r >= 0)
		r = model_new(&m);
	if (r < 0)
		return log_error_errno(r, "Setup failed: %m"), EXIT_FAILURE;
	memcpy(&info, model_daemon_info(m), sizeof(info));
	if (home)
		strcpy_trunc(info.gnupghome, sizeof(info.gnupghome), home);
	(void)model_daemon_info_put(m, &info);
	r = model_subscribe(m, on_event, NULL);
	if (r >= 0)
		r = pcsc_watch_new(e, m, NULL, &w);
	if (r < 0)
		return log_error_errno(r, "Cannot watch PC/SC: %m"), EXIT_FAILURE;
	(void)sd_event_add_signal(e, NULL, SIGTERM, NULL, NULL);
	(void)sd_event_add_signal(e, NULL, SIGINT, NULL, NULL);
	(void)sd_event_add_signal(e, NULL, SIGUSR1, on_usr1, w);
	emit(json_object_new_string("ready"));
	r = sd_event_loop(e);
	w = pcsc_watch_free(w);
	emit(json_object_new_string("stopped"));
	return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
