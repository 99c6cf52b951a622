/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The touch detectors' wiring (doc/touch.md): OpenPGP cards through their key stubs and
 * scdaemon (watch-touch-openpgp.c), FIDO tokens through their hidraw reports (watch-fido.c),
 * each wait set on its token in the model, which tells the clients.
 *
 * Does not: detect anything itself, or keep a wait across restarts.
 */
#include <errno.h>

#include "log.h"
#include "main-internal.h"
#include "watch-fido.h"
#include "watch-touch-openpgp.h"

/* A FIDO token is known to the model by its USB device's sighting (watch-udev.c). */
static void on_fido(const char *usb_syspath, const char *serial, bool pending,
                    uint64_t since_realtime_usec, void *userdata)
{
	struct daemon *d = userdata;
	struct touch_pending tp = {
		.application = TOUCH_APP_FIDO,
		.since = (int64_t)(since_realtime_usec / 1000000),
		.since_usec = (uint32_t)(since_realtime_usec % 1000000),
	};
	char id[TOKEN_ID_MAX];
	int r;

	r = model_token_id_by_sighting(d->model, SIGHTING_USB, usb_syspath, id, sizeof(id));
	if (r < 0) {
		log_debug_errno(r, "Touch: FIDO device %s (serial %s) is no known token: %m",
		                usb_syspath, serial);
		return;
	}
	r = pending ? model_touch_set(d->model, id, &tp)
	            : model_touch_done(d->model, id, TOUCH_END_TOUCHED);
	if (r < 0)
		log_debug_errno(r, "Touch: cannot update %s: %m", id);
}

void daemon_touch_start(struct daemon *d, const char *gnupghome)
{
	int r;

	r = touch_openpgp_new(d->event, d->model, gnupghome, &d->touch_openpgp);
	if (r < 0)
		log_warning_errno(r, "Failed to watch for OpenPGP touch requests, ignoring: %m");
	r = watch_fido_new(d->event, on_fido, d, &d->fido);
	if (r < 0)
		log_warning_errno(r,
		                  "Failed to watch FIDO tokens for touch requests, ignoring: %m");
}

void daemon_touch_keyring_changed(struct daemon *d)
{
	if (d->touch_openpgp)
		touch_openpgp_rewatch(d->touch_openpgp);
}

void daemon_touch_stop(struct daemon *d)
{
	d->fido = watch_fido_free(d->fido);
	d->touch_openpgp = touch_openpgp_free(d->touch_openpgp);
}
