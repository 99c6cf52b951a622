/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What main.c (the daemon's wiring and lifecycle) and main-upstream.c (the upstream checks'
 * wiring) share: the daemon's state and the calls between the two. Private to them.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "expiry.h"
#include "git-config.h"
#include "model.h"
#include "server.h"
#include "state.h"
#include "watch-git.h"
#include "watch-keyring.h"
#include "watch-pcsc.h"
#include "watch-sleep.h"
#include "watch-udev.h"
#include "watch-upstream-schedule.h"
#include "watch-upstream.h"

struct daemon {
	sd_event *event;
	const char *config_path; /* --config, or "" for the default path */
	int log_level_arg; /* --log-level, or -1: keyctl.conf's log-level rules */
	/* The open-file limit in effect (0: none); the caps fit_fd_limit() last said it cut to. */
	uint64_t fd_limit;
	unsigned fd_fit_clients, fd_fit_watchers;
	bool fd_fit_told;
	/* The next reload, armed while one is due; when the last one ran (CLOCK_MONOTONIC usec);
	 * whether one of the requests it serves asked for full, and how many there were. */
	sd_event_source *reload_timer;
	uint64_t reload_last;
	bool reload_full;
	unsigned reload_asked;
	/* A reload's answer waits until the cards it rescans are read and the listing it asks for
	 * is done (reload_cards_seq, reload_keyring_seq, bounded by reload_deadline): a user's card
	 * operation right after the answer must not meet our work (issue 33). */
	bool reload_answer_due;
	int reload_error;
	char reload_reason[ERROR_TEXT_MAX];
	uint64_t reload_cards_seq, reload_keyring_seq;
	sd_event_source *reload_deadline;
	struct config cfg;
	struct model *model;
	struct server *server;
	struct pcsc_watch *pcsc;
	struct sleep_watch *sleep;
	struct udev_watch *udev;
	struct keyring_watch *keyring;
	struct touch_openpgp *touch_openpgp;
	struct watch_fido *fido;
	struct git_watch *git;
	struct upstream_watch *upstream;
	struct upstream_schedule *upstream_schedule;
	struct expiry_timer *timer;
	struct state *state;
	struct daemon_lock *lock; /* lock on removal (main-lock.c) */
	char default_key[KEYRING_DEFAULT_KEY_MAX];
	char git_signing_key[GIT_SIGNING_KEY_MAX];
	int64_t time_offset; /* tests only: KEYCTL_TIME_OFFSET seconds added to the wall clock */
	unsigned start_pending; /* START_* not yet in */
	sd_event_source *start_timer;
	uint64_t start_usec; /* CLOCK_MONOTONIC at the start, for the "ready after" line */
	bool start_overdue; /* START_BOUND_USEC passed with start_pending set */
	bool ready; /* answering: READY=1 sent, the server released */
	bool keys_listed; /* a keyring listing has succeeded once */
	/* scdaemon runs its own CCID driver (scd_ccid_driver_on), as of the last keyring event;
	 * scd_ccid_known: asked once. */
	bool scd_ccid_on, scd_ccid_known;
};

/* Changes DaemonInfo through change(info, arg), with the daemon's clock as its `now`. */
void daemon_info_update(struct daemon *d, void (*change)(struct daemon_info *i, void *arg),
                        void *arg);

/* main-config.c */
/* Reads keyctl.conf (--config, or the default path) into c and logs what is wrong with it;
 * `starting` picks the words: a bad file refuses a start, but only a reload otherwise. */
int daemon_load_config(const struct daemon *d, struct config *c, bool starting);
/* DaemonInfo's policy (thresholds, warning and critical days, renewal URL) from a config. */
void daemon_info_set_policy(struct daemon_info *i, void *arg);
/* Raises the soft limit on open files to the hard one and remembers it in d->fd_limit. */
void daemon_raise_fd_limit(struct daemon *d);
/* The server's settings from d->cfg, max-clients and max-watchers fitted to d->fd_limit. */
struct server_config daemon_server_config(struct daemon *d);
/* [keyring] track and [upstream] relied-on: a relied-on key's local copy is what its published
 * copy is compared with, so it is listed like a tracked one. Returns the number in track. */
size_t daemon_track_list(const struct config *c, const char *track[static 2 * CONFIG_TRACK_MAX]);
/* The keys with full or ultimate owner trust are relied on only for the upstream checks. */
bool daemon_relied_trusted(const struct config *c);
/* io.keyctl.Reload (the server's handler) and SIGHUP: keyctl.conf read again and applied, at
 * most once a second; the server hears the end through server_reload_done(). */
int daemon_reload_request(void *userdata, bool full);
int daemon_on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);
/* The PC/SC watcher's rescanned hook, and the keyring listing's end: a reload's answer may be
 * due. */
void daemon_on_pcsc_rescanned(void *userdata);
void daemon_reload_progress(struct daemon *d);

/* main-upstream.c */
/* [upstream] check and interval, at start and on reload. */
int daemon_upstream_apply(struct daemon *d);
/* io.keyctl.CheckUpstream: every owned and relied-on key now. */
int daemon_upstream_request(void *userdata, char *reason, size_t reason_size);
/* The check and its schedule, for home; a failure leaves the daemon without them. */
void daemon_upstream_start(struct daemon *d, const char *home);

/* main-lock.c */
/* [session] lock-on-removal, at start (before the udev watcher) and on reload. */
void daemon_lock_apply(struct daemon *d);
/* The udev watcher's usb_device hook. */
void daemon_lock_usb_device(const char *syspath, bool present, void *userdata);
/* logind's PrepareForSleep, as main.c hears it. */
void daemon_lock_sleep(struct daemon *d, bool asleep);
void daemon_lock_stop(struct daemon *d);

/* main-touch.c */
/* The touch detectors, started once the model and the keyring watch exist; failures are
 * logged and survived (no touch is then reported). */
void daemon_touch_start(struct daemon *d, const char *gnupghome);
/* After a keyring listing: private-keys-v1.d may have appeared. */
void daemon_touch_keyring_changed(struct daemon *d);
void daemon_touch_stop(struct daemon *d);
