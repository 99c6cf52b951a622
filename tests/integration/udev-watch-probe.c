/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runs udev-watch with a real model on an sd-event loop and prints each token event of the model
 * as one JSON line on stdout ({"event":"token-added",...}), then {"event":"ready"} once the
 * start-up enumeration is done. For test-udev-watch.py, which drives umockdev devices around it.
 * Exits on SIGTERM or SIGINT, or when stdin closes (so it never outlives its driver).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <systemd/sd-event.h>

#include "model.h"
#include "watch-udev.h"

static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void field(const char *name, const char *value)
{
	printf(",\"%s\":", name);
	json_string(value);
}

static void on_event(struct model *m, const struct model_event *ev, void *userdata)
{
	static const char *const names[] = {
		[MODEL_TOKEN_ADDED] = "token-added",
		[MODEL_TOKEN_CHANGED] = "token-changed",
		[MODEL_TOKEN_REMOVED] = "token-removed",
	};
	const struct token *t = ev->token;
	char hex[8];

	if (ev->type > MODEL_TOKEN_REMOVED || !t)
		return;
	printf("{\"event\":\"%s\"", names[ev->type]);
	field("id", t->id);
	field("kind", token_kind_to_string(t->kind));
	field("model", t->model);
	field("serial", t->serial);
	field("firmware", t->firmware);
	printf(",\"interfaces\":[");
	for (unsigned bit = USB_IFACE_OTP, first = 1; bit <= USB_IFACE_CCID; bit <<= 1) {
		if (!(t->usb_interfaces & bit))
			continue;
		printf("%s\"%s\"", first ? "" : ",",
		       bit == USB_IFACE_OTP    ? "otp"
		       : bit == USB_IFACE_FIDO ? "fido"
		                               : "ccid");
		first = 0;
	}
	printf("]");
	snprintf(hex, sizeof(hex), "%04x", t->usb_vendor);
	field("vendor", hex);
	snprintf(hex, sizeof(hex), "%04x", t->usb_product);
	field("product", hex);
	printf(",\"present\":%s", t->present ? "true" : "false");
	field("error", t->error);
	printf("}\n");
	fflush(stdout);
}

static int on_stdin(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	char buf[64];

	if (read(fd, buf, sizeof(buf)) <= 0)
		return sd_event_exit(sd_event_source_get_event(s), 0);
	return 0;
}

int main(void)
{
	_cleanup_(udev_watch_freep) struct udev_watch *w = NULL;
	_cleanup_(model_freep) struct model *m = NULL;
	sd_event *e = NULL;
	sigset_t mask;
	int r;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	r = sd_event_new(&e);
	if (r < 0 || model_new(&m) < 0 || model_subscribe(m, on_event, NULL) < 0 ||
	    sd_event_add_signal(e, NULL, SIGTERM, NULL, NULL) < 0 ||
	    sd_event_add_signal(e, NULL, SIGINT, NULL, NULL) < 0 ||
	    sd_event_add_io(e, NULL, STDIN_FILENO, EPOLLIN, on_stdin, NULL) < 0) {
		fprintf(stderr, "probe: setup failed\n");
		return 1;
	}
	r = udev_watch_new(e, m, NULL, &w);
	if (r < 0) {
		fprintf(stderr, "probe: udev_watch_new: %s\n", strerror(-r));
		return 1;
	}
	printf("{\"event\":\"ready\"}\n");
	fflush(stdout);
	r = sd_event_loop(e);
	w = udev_watch_free(w);
	sd_event_unref(e);
	return r < 0 ? 1 : 0;
}
