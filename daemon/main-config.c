/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl.conf in the running daemon: read at start, read again on Reload and SIGHUP and applied
 * to every part (the policy clients see, the server's limits, the keyring's tracked keys, the
 * upstream checks, the log level), and the settings the start needs from it.
 *
 * Reloads are coalesced: a Reload call or SIGHUP that comes while one is due, or within
 * RELOAD_INTERVAL_USEC of the last, is served by the next one, run once for all of them (a
 * reload reads the file, lists the keyring and opens a transaction on every card present).
 * The answer waits until those card reads and that listing are done (at most
 * RELOAD_CARDS_WAIT_USEC): a user's card operation sent right after it then queues behind none
 * of our reads, and its gpg shares the CPUs with none of our listing's (issue 33: the operation
 * after Reload {full} was 7-10 ms slower while they ran).
 *
 * Each connection is an open file: the soft limit on them is raised to the hard one at start,
 * as systemd's own services do (a user unit's soft limit is 1024, keyctl.conf allows 4096
 * clients and 4096 watchers), and max-clients and max-watchers are cut to what still fits.
 *
 * Does not: parse the file (protocol/config.c), or start any part (main.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-event.h>

#include "config.h"
#include "log.h"
#include "main-internal.h"

/* Files keyctld keeps for itself beside its connections: pcscd's socket, inotify, udev, the
 * journal, timers, gpg's and scdaemon's pipes while a listing or a probe runs (16 at rest on the
 * test bed, a few dozen at a peak). Half the limit when that is less. */
#define DAEMON_FDS_OWN 64u
#define RELOAD_INTERVAL_USEC (1000ull * 1000ull)
#define RELOAD_CARDS_WAIT_USEC (5ull * 1000ull * 1000ull)

int daemon_load_config(const struct daemon *d, struct config *c, bool starting)
{
	char path[PATH_MAX], err[CONFIG_ERROR_MAX] = "";
	unsigned flags = *d->config_path ? 0 : CONFIG_MISSING_OK;
	int r;

	if (*d->config_path)
		strcpy_trunc(path, sizeof(path), d->config_path);
	else if (config_default_path(path, sizeof(path)) < 0) {
		config_init(c);
		return 0;
	}
	r = config_load(path, flags, c, err, sizeof(err));
	if (r < 0) {
		if (starting)
			log_error("Refusing to start with a bad configuration: %s", err);
		else
			log_warning("Not reloading, the configuration is bad: %s", err);
		return r;
	}
	for (unsigned i = 0; i < c->n_warnings; i++)
		log_warning("%s", c->warnings[i].text);
	return 0;
}

void daemon_info_set_policy(struct daemon_info *i, void *arg)
{
	const struct config *c = arg;

	i->n_thresholds = c->n_thresholds;
	memcpy(i->thresholds, c->thresholds, sizeof(i->thresholds));
	i->warning_days = c->warning_days;
	i->critical_days = c->critical_days;
	memcpy(i->renewal_url, c->renewal_url, sizeof(i->renewal_url));
}

void daemon_raise_fd_limit(struct daemon *d)
{
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0) {
		log_warning_errno(-errno, "Failed to read the open-file limit, ignoring: %m");
		return;
	}
	was = rl.rlim_cur;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
			log_warning_errno(-errno,
			                  "Failed to raise the open-file limit to %llu, "
			                  "keeping %llu: %m",
			                  (unsigned long long)rl.rlim_max, (unsigned long long)was);
			rl.rlim_cur = was;
		} else
			log_debug("Raised the open-file limit from %llu to %llu (the hard limit)",
			          (unsigned long long)was, (unsigned long long)rl.rlim_cur);
	}
	d->fd_limit = rl.rlim_cur == RLIM_INFINITY ? 0 : (uint64_t)rl.rlim_cur;
}

/* max-clients and max-watchers cut, in proportion, to what the open-file limit leaves room for;
 * said once for each new outcome. */
static void fit_fd_limit(struct daemon *d, struct server_config *s)
{
	uint64_t own, room, want = (uint64_t)s->max_clients + s->max_watchers;
	unsigned clients, watchers;

	if (d->fd_limit == 0)
		return;
	own = MIN((uint64_t)DAEMON_FDS_OWN, d->fd_limit / 2) + SERVER_REFUSING_MAX;
	room = d->fd_limit > own + 2 ? d->fd_limit - own : 2;
	if (want <= room) {
		d->fd_fit_told = false;
		return;
	}
	clients = (unsigned)MAX(room * s->max_clients / want, 1u);
	watchers = (unsigned)MAX(room - clients, 1u);
	if (!d->fd_fit_told || d->fd_fit_clients != clients || d->fd_fit_watchers != watchers)
		log_notice("max-clients %u and max-watchers %u do not fit the file limit of %llu "
		           "open files: serving at most %u clients and %u watchers",
		           s->max_clients, s->max_watchers, (unsigned long long)d->fd_limit,
		           clients, watchers);
	d->fd_fit_told = true;
	d->fd_fit_clients = s->max_clients = clients;
	d->fd_fit_watchers = s->max_watchers = watchers;
}

struct server_config daemon_server_config(struct daemon *d)
{
	const struct config *c = &d->cfg;
	struct server_config s = {
		.socket_path = c->socket_path,
		.max_clients = c->max_clients,
		.max_watchers = c->max_watchers,
		.queue_max = (size_t)c->client_queue_kib * 1024u,
		.idle_usec = (uint64_t)c->client_idle_sec * 1000000u,
	};

	fit_fd_limit(d, &s);
	return s;
}

size_t daemon_track_list(const struct config *c, const char *track[static 2 * CONFIG_TRACK_MAX])
{
	size_t n = 0;

	for (unsigned i = 0; i < c->n_track; i++)
		track[n++] = c->track[i];
	for (unsigned i = 0; i < c->n_relied_on; i++)
		track[n++] = c->relied_on[i];
	return n;
}

bool daemon_relied_trusted(const struct config *c)
{
	return c->upstream_check && c->upstream_relied_trusted;
}

static int reload(struct daemon *d, bool full, char *reason, size_t reason_size)
{
	struct config fresh;
	int r;

	/* A broken file on reload keeps the configuration we run with. */
	r = daemon_load_config(d, &fresh, false);
	if (r < 0) {
		snprintf(reason, reason_size,
		         "the configuration file is invalid (see the journal)");
		log_warning("Configuration reload failed, keeping the running configuration");
		return r;
	}
	/* Both are fixed for the daemon's life: moving them under running clients, or under a
	 * listing and the scdaemon fallback, is a restart's job. Say so rather than ignore it. */
	if (!streq(fresh.socket_path, d->cfg.socket_path))
		log_warning("[daemon] socket changed; it takes effect when keyctld is restarted");
	if (!streq(fresh.gnupghome, d->cfg.gnupghome))
		log_warning(
		        "[keyring] gnupghome changed; it takes effect when keyctld is restarted");
	memcpy(fresh.socket_path, d->cfg.socket_path, sizeof(fresh.socket_path));
	memcpy(fresh.gnupghome, d->cfg.gnupghome, sizeof(fresh.gnupghome));
	memcpy(&d->cfg, &fresh, sizeof(fresh));
	daemon_info_update(d, daemon_info_set_policy, &d->cfg);
	if (d->server) {
		struct server_config scfg = daemon_server_config(d);

		server_set_limits(d->server, &scfg);
	}
	log_set_max_level(d->log_level_arg >= 0 ? d->log_level_arg : d->cfg.log_level);
	if (d->keyring) {
		const char *track[2 * CONFIG_TRACK_MAX];
		size_t n = daemon_track_list(&d->cfg, track);

		keyring_watch_set_relied_trusted(d->keyring, daemon_relied_trusted(&d->cfg));
		r = keyring_watch_set_track(d->keyring, track, n);
		if (r < 0)
			log_warning_errno(r, "Failed to apply [keyring] track, ignoring: %m");
		(void)(full ? keyring_watch_refresh_full(d->keyring)
		            : keyring_watch_refresh(d->keyring));
		d->reload_keyring_seq = keyring_watch_asked(d->keyring);
	}
	if (d->pcsc)
		(void)pcsc_watch_rescan(d->pcsc, &d->reload_cards_seq);
	r = daemon_upstream_apply(d);
	if (r < 0)
		log_warning_errno(r, "Failed to apply [upstream], ignoring: %m");
	daemon_lock_apply(d);
	(void)model_update(d->model);
	if (d->reload_asked > 1)
		log_info("Configuration reloaded (asked for %u times since the last reload)",
		         d->reload_asked);
	else
		log_info("Configuration reloaded");
	if (reason_size > 0)
		reason[0] = 0;
	return 0;
}

static void reload_answer(struct daemon *d)
{
	d->reload_answer_due = false;
	d->reload_deadline = sd_event_source_disable_unref(d->reload_deadline);
	if (d->server)
		server_reload_done(d->server, d->reload_error, d->reload_reason);
}

static bool reload_finished(struct daemon *d)
{
	return (!d->pcsc || pcsc_watch_rescanned(d->pcsc, d->reload_cards_seq)) &&
	       (!d->keyring || keyring_watch_listed(d->keyring, d->reload_keyring_seq));
}

void daemon_reload_progress(struct daemon *d)
{
	if (d->reload_answer_due && reload_finished(d))
		reload_answer(d);
}

void daemon_on_pcsc_rescanned(void *userdata)
{
	daemon_reload_progress(userdata);
}

/* A card that stops answering must not hold the answer for as long as its read may take. */
static int on_reload_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	log_debug("Reload answered before the cards and the keyring were read again (%.1f s)",
	          (double)RELOAD_CARDS_WAIT_USEC / 1e6);
	reload_answer(d);
	return 0;
}

static int on_reload_due(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;
	bool full = d->reload_full;

	d->reload_full = false;
	/* A reload that comes while the last one's answer waits serves its callers too. */
	d->reload_error = reload(d, full, d->reload_reason, sizeof(d->reload_reason));
	d->reload_asked = 0;
	(void)sd_event_now(d->event, CLOCK_MONOTONIC, &d->reload_last);
	if (d->reload_error < 0 || reload_finished(d)) {
		reload_answer(d);
		return 0;
	}
	d->reload_answer_due = true;
	if (!d->reload_deadline &&
	    sd_event_add_time_relative(d->event, &d->reload_deadline, CLOCK_MONOTONIC,
	                               RELOAD_CARDS_WAIT_USEC, 0, on_reload_deadline, d) < 0)
		reload_answer(d); /* no timer: answer now rather than risk never */
	return 0;
}

int daemon_reload_request(void *userdata, bool full)
{
	struct daemon *d = userdata;
	uint64_t now = 0, due;
	int r, on = SD_EVENT_OFF;

	d->reload_full = d->reload_full || full;
	d->reload_asked++;
	if (d->reload_timer)
		(void)sd_event_source_get_enabled(d->reload_timer, &on);
	if (on != SD_EVENT_OFF)
		return 0; /* one is due: this request joins it */
	(void)sd_event_now(d->event, CLOCK_MONOTONIC, &now);
	/* From the loop, not from here: every call read in the same pass joins the first. */
	due = d->reload_last > 0 ? MAX(now, d->reload_last + RELOAD_INTERVAL_USEC) : now;
	if (!d->reload_timer)
		r = sd_event_add_time(d->event, &d->reload_timer, CLOCK_MONOTONIC, due, 0,
		                      on_reload_due, d);
	else {
		r = sd_event_source_set_time(d->reload_timer, due);
		if (r >= 0)
			r = sd_event_source_set_enabled(d->reload_timer, SD_EVENT_ONESHOT);
	}
	if (r < 0)
		return log_warning_errno(r, "Failed to schedule a reload: %m");
	return 0;
}

int daemon_on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	(void)daemon_reload_request(userdata, false);
	return 0;
}
