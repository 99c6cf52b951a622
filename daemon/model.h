/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's one shared state: tokens, keys and findings, and the events when any of them
 * changes. Watchers (pcsc-watch, udev-watch, keyring) write into it; expiry and audit derive
 * levels and findings from it; the server reads it and subscribes to its events. Nothing here
 * calls a watcher or the server.
 *
 * Does not: talk to any device, parse any input, or keep time (the caller passes `now`).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

enum model_event_type {
	MODEL_TOKEN_ADDED,
	MODEL_TOKEN_CHANGED,
	MODEL_TOKEN_REMOVED,
	MODEL_KEY_ADDED,
	MODEL_KEY_CHANGED,
	MODEL_KEY_REMOVED,
	MODEL_LEVEL_CHANGED, /* a subkey's expiry level moved; key and subkey are set */
	MODEL_FINDING_RAISED,
	MODEL_FINDING_CLEARED,
	MODEL_DAEMON_CHANGED, /* daemon_info changed (pcsc availability, keyring staleness) */
	MODEL_TOUCH_PENDING, /* token waits for a touch (token->touch says what for) */
	MODEL_TOUCH_DONE, /* token's wait ended; touch_end says how */
	MODEL_EVENT_MAX,
};

struct model_event {
	enum model_event_type type;
	const struct token *token; /* TOKEN_*; for REMOVED the last state */
	const struct key *key; /* KEY_*, LEVEL_CHANGED */
	const struct subkey *subkey; /* LEVEL_CHANGED */
	enum level old_level; /* LEVEL_CHANGED */
	const struct finding *finding; /* FINDING_* */
	/* FINDING_RAISED of a finding already raised at this level whose words moved ("in 5 days"
	 * became "in 4 days", or the token holding the key became known): news for a client
	 * that shows the text, not a new problem. */
	bool reworded;
	enum touch_end touch_end; /* TOUCH_DONE */
};

struct model;

typedef void (*model_event_fn)(struct model *m, const struct model_event *ev, void *userdata);

int model_new(struct model **ret);
struct model *model_free(struct model *m);
static inline void model_freep(struct model **m)
{
	if (*m)
		model_free(*m);
}

const char *model_event_type_to_string(enum model_event_type t);

/* A number that moves whenever what a client reads may have changed (any event, any put or
 * update), so that an answer built once can be sent again while it stays the same. */
uint64_t model_generation(const struct model *m);

/* One subscriber list; events are delivered synchronously, in order. */
int model_subscribe(struct model *m, model_event_fn fn, void *userdata);
void model_unsubscribe(struct model *m, model_event_fn fn, void *userdata);

/*
 * Sightings: each source reports what it sees under its own handle (PC/SC: the reader name; udev:
 * the device's syspath) and the model merges sightings of one physical token into one struct
 * token: same kind and serial, or, when one side has no serial yet, the only unmatched pair of
 * that kind. USB sightings fill kind, model, serial, firmware, usb_*; PC/SC sightings fill reader,
 * OpenPGP data, read_path, error (and kind/serial from the card). The model sets id, present,
 * first_seen, last_seen and counter_went_down. A token no source sees is kept as not present.
 */
enum sighting_source {
	SIGHTING_USB,
	SIGHTING_PCSC,
	SIGHTING_MAX,
};
int model_sighting_put(struct model *m, enum sighting_source src, const char *handle,
                       const struct token *t, int64_t now);
int model_sighting_remove(struct model *m, enum sighting_source src, const char *handle,
                          int64_t now);
/* The id of the token a sighting is part of now, into buf (TOKEN_ID_MAX bytes suffice).
 * handle is the one its source reports under: for SIGHTING_USB the syspath of the USB device
 * (sd-device devtype "usb_device", "/sys/devices/.../usb1/1-2"), so a hidraw node's reader
 * finds it with sd_device_get_parent_with_subsystem_devtype(dev, "usb", "usb_device"); for
 * SIGHTING_PCSC the reader name. -ENOENT when no such sighting is known, -ENOBUFS when buf is too
 * small. The id can change when a USB-only token's card is read (its provisional id gives way
 * to the card's): look it up again when the wait ends rather than keeping it. */
int model_token_id_by_sighting(struct model *m, enum sighting_source src, const char *handle,
                               char *buf, size_t size);

/*
 * Touch waits (doc/touch.md), reported by the detectors on the loop thread. tp non-NULL: the
 * present token token_id waits for a touch; emits TOUCH_PENDING, again when tp differs from
 * what was set (a requester learned later), nothing when it is the same. tp NULL: the wait
 * ended the ordinary way (TOUCH_END_TOUCHED), as model_touch_done(). Returns 1 when an event was
 * emitted, 0 when nothing changed (done while not waiting), -ENOENT for an unknown or absent
 * token, -EINVAL when tp fails touch_pending_check(). Either moves the generation, so replies
 * built since show it. The model ends a wait itself when its token goes away (TOUCH_DONE with
 * TOUCH_END_REMOVED, before TOKEN_REMOVED); nothing of it is remembered across restarts.
 */
int model_touch_set(struct model *m, const char *token_id, const struct touch_pending *tp);
int model_touch_done(struct model *m, const char *token_id, enum touch_end how);

/* Adds or replaces the token with t->id; emits ADDED or CHANGED (nothing if equal). */
int model_token_put(struct model *m, const struct token *t);
/* Removes the token; emits REMOVED. -ENOENT if unknown. */
int model_token_remove(struct model *m, const char *id);
const struct token *model_token_get(const struct model *m, const char *id);
size_t model_tokens(const struct model *m, const struct token **ret);

/* Replaces the whole key list (one keyring refresh); emits ADDED/CHANGED/REMOVED per key.
 * Takes ownership of keys[i].subkeys on success and failure alike. */
int model_keys_replace(struct model *m, struct key *keys, size_t n);
size_t model_keys(const struct model *m, const struct key **ret);
/*
 * Derived fields (a subkey's level and token_id, the findings) are computed by a deriver the
 * daemon installs (expiry + match + audit). model_update() runs it and then emits what changed
 * since the last update: KEY_ADDED/CHANGED/REMOVED, LEVEL_CHANGED, FINDING_RAISED/CLEARED.
 * Sightings and key replacement call model_update() themselves; the expiry timer calls it when a
 * threshold is crossed.
 */
typedef int (*model_derive_fn)(struct model *m, void *userdata);
void model_set_deriver(struct model *m, model_derive_fn fn, void *userdata);
int model_update(struct model *m);
/* For the deriver only: the keys to annotate in place. */
size_t model_keys_mutable(struct model *m, struct key **ret);

/* Replaces the findings (one audit pass, from the deriver); RAISED/CLEARED are emitted by
 * model_update(), by identity (rule, key, subkey, token). */
int model_findings_replace(struct model *m, const struct finding *f, size_t n);
size_t model_findings(const struct model *m, const struct finding **ret);

/* The model's clock (the daemon's, which tests may shift); time(NULL) when none is set. */
typedef int64_t (*model_clock_fn)(void *userdata);
void model_set_clock(struct model *m, model_clock_fn fn, void *userdata);
int64_t model_now(const struct model *m);
/* The daemon's info, with `now` read from the model's clock at this call. */
const struct daemon_info *model_daemon_info(const struct model *m);
/* Changes daemon info through a callback-free copy: emits DAEMON_CHANGED when different. */
int model_daemon_info_put(struct model *m, const struct daemon_info *info);
