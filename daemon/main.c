/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctld's entry: arguments, the sd-event loop, signals and sd_notify (keyctl.conf is applied by
 * main-config.c). It wires the watchers to the model and the model to the server; the work itself
 * lives in those files. Never forks: systemd (Type=notify) or the terminal holds it in the
 * foreground.
 *
 * Start: the server holds io.keyctl calls until the first keyring listing has ended and every
 * watcher's first look is complete (each token present has been read), so that the first answer
 * is a true one; READY=1 is sent then. A start that takes longer than START_BOUND_USEC answers
 * anyway, with a daemon-starting finding naming what it still waits for (and the keyring marked
 * stale while it has never been listed).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "audit-ack.h"
#include "audit.h"
#include "main-internal.h"
#include "config-build.h"
#include "config.h"
#include "events-log.h"
#include "expiry.h"
#include "watch-git.h"
#include "watch-keyring.h"
#include "log.h"
#include "model.h"
#include "watch-pcsc.h"
#include "watch-sleep.h"
#include "card-scd.h"
#include "server.h"
#include "state.h"
#include "watch-udev.h"
#include "watch-upstream-schedule.h"
#include "watch-upstream.h"

#define START_BOUND_USEC (10ull * 1000000ull)

/* keyctld(8), EXIT STATUS: another keyctld of this user serves the socket already. */
#define EXIT_ALREADY_RUNNING 2

/* What the start waits for; each is cleared once. */
enum {
	START_KEYRING = 1u << 0,
	START_PCSC = 1u << 1,
	START_UDEV = 1u << 2,
};

static char arg_config[PATH_MAX];
static bool arg_foreground;
static int arg_log_level = -1;

static void help(void)
{
	printf("Usage: keyctld [OPTIONS]\n\n"
	       "Watches hardware tokens (YubiKey, Nitrokey, OpenPGP cards) and the GnuPG keys on\n"
	       "them, and answers keyctl-status and keyctl-notify over Varlink.\n\n"
	       "  -h --help              Show this help and exit\n"
	       "  -V --version           Show the version and exit\n"
	       "  -f --foreground        Log to stderr even under systemd (keyctld never forks)\n"
	       "  -c --config=PATH       Configuration file (default:\n"
	       "                         $XDG_CONFIG_HOME/keyctl/keyctl.conf)\n"
	       "     --log-level=LEVEL   err, warning, notice, info or debug\n\n"
	       "See keyctld(8) and keyctl.conf(5).\n");
}

static int parse_argv(int argc, char **argv)
{
	enum { ARG_LOG_LEVEL = 0x100 };
	static const struct option options[] = { { "help", no_argument, NULL, 'h' },
		                                 { "version", no_argument, NULL, 'V' },
		                                 { "foreground", no_argument, NULL, 'f' },
		                                 { "config", required_argument, NULL, 'c' },
		                                 { "log-level", required_argument, NULL,
		                                   ARG_LOG_LEVEL },
		                                 {} };
	int c;

	while ((c = getopt_long(argc, argv, "hVfc:", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case 'V':
			printf("keyctld %s\n", PACKAGE_VERSION);
			return 0;
		case 'f':
			arg_foreground = true;
			break;
		case 'c':
			if (strcpy_bounded(arg_config, sizeof(arg_config), optarg) < 0) {
				fprintf(stderr, "keyctld: --config: path too long\n");
				return -EINVAL;
			}
			break;
		case ARG_LOG_LEVEL:
			arg_log_level = config_log_level_from_string(optarg);
			if (arg_log_level < 0) {
				fprintf(stderr,
				        "keyctld: --log-level: '%s' is not one of err, "
				        "warning, notice, info, debug\n",
				        optarg);
				return -EINVAL;
			}
			break;
		case '?':
			return -EINVAL;
		default:
			abort();
		}
	}
	if (optind < argc) {
		fprintf(stderr, "keyctld: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 1;
}

static int64_t daemon_now(const struct daemon *d)
{
	return (int64_t)time(NULL) + d->time_offset;
}

static int64_t clock_now(void *userdata)
{
	return daemon_now(userdata);
}

void daemon_info_update(struct daemon *d, void (*change)(struct daemon_info *i, void *arg),
                        void *arg)
{
	struct daemon_info info;

	memcpy(&info, model_daemon_info(d->model), sizeof(info));
	change(&info, arg);
	info.now = daemon_now(d);
	(void)model_daemon_info_put(d->model, &info);
}

static void set_deadline(struct daemon_info *i, void *arg)
{
	i->next_deadline = *(int64_t *)arg;
}

/* "the keyring has not been listed yet; ..." for what the start still waits for. */
static const char *starting_text(const struct daemon *d, char *buf, size_t size)
{
	static const struct {
		unsigned bit;
		const char *text;
	} parts[] = {
		{ START_KEYRING, "the keyring has not been listed yet (gpg is slow to answer)" },
		{ START_PCSC, "the cards present have not all been read yet" },
		{ START_UDEV, "the USB tokens present have not all been identified yet" },
	};
	size_t k = 0;

	if (!d->start_overdue || d->start_pending == 0)
		return NULL;
	buf[0] = 0;
	for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
		int n;

		if (!(d->start_pending & parts[i].bit))
			continue;
		n = snprintf(buf + k, size - k, "%s%s", k ? "; " : "", parts[i].text);
		if (n < 0 || (size_t)n >= size - k)
			break;
		k += (size_t)n;
	}
	return buf;
}

/* The subkey git signs with, resolved as gpg does (audit.c's rules use the same) at each
 * derivation, after the levels: a subkey that expired by the clock since the listing is not the
 * one any more. Marked for the clients: keyctl-notify names git in its expiry popups. */
static void mark_git_subkey(const char *spec, struct key *keys, size_t n_keys)
{
	struct audit_signing g;

	for (size_t i = 0; i < n_keys; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++)
			keys[i].subkeys[j].git_signs = false;
	if (isempty(spec))
		return;
	audit_resolve_signing(keys, n_keys, spec, &g);
	if (g.state != AUDIT_SIGN_USABLE || !g.key || !g.subkey)
		return;
	for (size_t i = 0; i < n_keys; i++)
		if (&keys[i] == g.key)
			keys[i].subkeys[g.subkey - g.key->subkeys].git_signs = true;
}

/* Each key's last upstream check, for the clients (Key.upstream_checked, upstream_error). */
static void keys_mark_upstream(struct key *keys, size_t n_keys, const struct upstream_result *res,
                               size_t n_res)
{
	for (size_t i = 0; i < n_keys; i++) {
		const struct upstream_result *u = NULL;
		char *e = keys[i].upstream_error;
		size_t size = sizeof(keys[i].upstream_error);

		keys[i].upstream_checked = 0;
		e[0] = 0;
		for (size_t j = 0; j < n_res && !u; j++)
			if (strcasecmp(res[j].fingerprint, keys[i].fingerprint) == 0)
				u = &res[j];
		if (!u)
			continue;
		keys[i].upstream_checked = u->checked;
		if (u->r == -ENOENT)
			snprintf(e, size, "not published on the keyserver");
		else
			strcpy_trunc(e, size, u->error);
		/* The WKD's side, when asked and it brought no copy this time. */
		if (u->wkd_asked && !isempty(u->wkd_error))
			snprintf(e + strlen(e), size - strlen(e), "%s%s", *e ? "; " : "",
			         u->wkd_error);
	}
}

/* The model's deriver: ties subkeys to tokens, sets levels, runs the audit, arms the timer. */
static int derive(struct model *m, void *userdata)
{
	struct daemon *d = userdata;
	_cleanup_(freep) struct finding *findings = NULL;
	const struct token *tokens;
	struct key *keys;
	size_t n_tokens = model_tokens(m, &tokens), n_keys = model_keys_mutable(m, &keys);
	size_t n_findings = 0;
	int64_t now = daemon_now(d), next;
	char starting[ERROR_TEXT_MAX];
	const struct daemon_info *info = model_daemon_info(m);
	struct audit_daemon dmn = {
		.default_key = *d->default_key ? d->default_key : NULL,
		.git_signing_key = *d->git_signing_key ? d->git_signing_key : NULL,
		.keys_listed = d->keys_listed,
		.pcsc_refused = info->pcsc_error,
		.scd_ccid_on = d->scd_ccid_on,
		.gnupghome = info->gnupghome,
		.starting = starting_text(d, starting, sizeof(starting)),
	};
	int r;

	if (d->upstream && d->cfg.upstream_check)
		dmn.n_upstream = upstream_watch_results(d->upstream, &dmn.upstream);
	keys_mark_upstream(keys, n_keys, dmn.upstream, dmn.n_upstream);
	audit_match(tokens, n_tokens, keys, n_keys);
	next = expiry_apply(keys, n_keys, &d->cfg, now);
	next = audit_piv_next_change(tokens, n_tokens, &d->cfg, now, next);
	audit_ack_subkeys(keys, n_keys, ack_store_current());
	mark_git_subkey(d->git_signing_key, keys, n_keys);
	r = audit_run(tokens, n_tokens, keys, n_keys, &d->cfg, &dmn, now, &findings, &n_findings);
	if (r < 0)
		return log_error_errno(r, "Audit failed: %m");
	r = model_findings_replace(m, findings, n_findings);
	if (r < 0)
		return log_error_errno(r, "Failed to store findings: %m");

	if (d->timer) {
		/* The timer runs on the real clock; tests shift ours by time_offset. */
		r = expiry_timer_arm(d->timer, next > 0 ? next - d->time_offset : 0);
		if (r < 0)
			log_warning_errno(r, "Failed to arm the expiry timer, ignoring: %m");
	}
	daemon_info_update(d, set_deadline, &next);
	return 0;
}

/* What the start's end may say: "keyring listed" only after a listing that worked (a failed
 * one was logged as it failed, in on_keyring() or start_keyring()). */
static const char *start_words(const struct daemon *d)
{
	const struct daemon_info *i = model_daemon_info(d->model);

	return i->keyring_refreshed && !i->keyring_stale
	               ? "keyring listed, tokens present read"
	               : "tokens present read, keyring not listed (see above)";
}

/* Answers from now on: parked calls go out, systemd hears READY=1. */
static void daemon_ready(struct daemon *d)
{
	uint64_t t = 0;

	if (d->ready)
		return;
	d->ready = true;
	(void)sd_event_now(d->event, CLOCK_MONOTONIC, &t);
	/* READY=1 before the first reply: whoever got an answer may count on systemd's word. */
	if (d->start_pending == 0) {
		d->start_timer = sd_event_source_disable_unref(d->start_timer);
		log_info("Ready after %" PRIu64 " ms: %s", (t - d->start_usec) / 1000u,
		         start_words(d));
		(void)sd_notify(false, "READY=1\nSTATUS=Watching tokens and keys");
	} else {
		log_warning("Still starting after %" PRIu64 " s, answering anyway: %s",
		            (uint64_t)(START_BOUND_USEC / 1000000u),
		            starting_text(d, (char[ERROR_TEXT_MAX]){}, ERROR_TEXT_MAX));
		(void)sd_notify(false, "READY=1\nSTATUS=Starting: answers may be incomplete");
	}
	if (d->server)
		server_release(d->server);
}

/* One START_* is in. Ready when none is left; after an overdue start, the finding's words
 * change or it goes. */
static void start_done(struct daemon *d, unsigned bit)
{
	if (!(d->start_pending & bit))
		return;
	d->start_pending &= ~bit;
	if (!d->ready) {
		if (d->start_pending == 0)
			daemon_ready(d);
		return;
	}
	if (d->start_pending == 0) {
		log_info("Start complete: %s", start_words(d));
		(void)sd_notify(false, "STATUS=Watching tokens and keys");
	}
	(void)model_update(d->model);
}

static void set_keyring_never_listed(struct daemon_info *i, void *arg)
{
	i->keyring_stale = true;
	strcpy_trunc(i->keyring_error, sizeof(i->keyring_error),
	             "the first keyring listing has not finished yet");
}

static int on_start_overdue(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct daemon *d = userdata;

	d->start_timer = sd_event_source_disable_unref(d->start_timer);
	if (d->start_pending == 0)
		return 0;
	d->start_overdue = true;
	if (d->start_pending & START_KEYRING)
		daemon_info_update(d, set_keyring_never_listed, NULL);
	(void)model_update(d->model);
	daemon_ready(d);
	return 0;
}

static void on_pcsc_settled(void *userdata)
{
	start_done(userdata, START_PCSC);
}

static void on_udev_settled(void *userdata)
{
	start_done(userdata, START_UDEV);
}

/* A token came or went: pcscd may let us in now (a new session), or have a new reader. */
static void on_udev_token(void *userdata)
{
	struct daemon *d = userdata;

	if (d->pcsc)
		pcsc_watch_kick(d->pcsc);
}

static int on_expiry_timer(struct expiry_timer *t, int64_t now, void *userdata)
{
	struct daemon *d = userdata;
	int r = model_update(d->model);

	if (r < 0)
		log_warning_errno(r, "Failed to update levels, ignoring: %m");
	return 0;
}

struct keyring_state {
	bool stale;
	const char *reason;
	int64_t refreshed;
};

static void set_keyring_state(struct daemon_info *i, void *arg)
{
	const struct keyring_state *k = arg;

	i->keyring_stale = k->stale;
	strcpy_trunc(i->keyring_error, sizeof(i->keyring_error), k->reason);
	if (k->refreshed)
		i->keyring_refreshed = k->refreshed;
}

/* scdaemon.conf is one of the keyring watch's files. A driver switched off clears the
 * scdaemon-ccid-conflict findings through the audit; switched back on, scdaemon must be asked
 * again about every card, which the watcher does as it reads them. */
static void scd_ccid_update(struct daemon *d)
{
	int r = scd_ccid_driver_on(d->cfg.gnupghome);
	bool was = d->scd_ccid_on, known = d->scd_ccid_known;

	if (r < 0) {
		log_debug_errno(r, "Failed to read scdaemon.conf, keeping the last answer: %m");
		return;
	}
	d->scd_ccid_on = r > 0;
	d->scd_ccid_known = true;
	if (known && !was && d->scd_ccid_on && d->pcsc)
		(void)pcsc_watch_rescan(d->pcsc, NULL);
}

static void on_keyring(struct keyring_watch *w, struct keyring_result *res, void *userdata)
{
	struct daemon *d = userdata;
	struct keyring_state st = { .stale = res->error < 0, .reason = res->reason };
	int r;

	if (res->error < 0) {
		/* The last good view stays; clients see it marked stale with the reason. */
		log_warning_errno(res->error, "Keyring listing failed, keeping the last view: %s",
		                  res->reason);
		daemon_info_update(d, set_keyring_state, &st);
		/* A failed first listing ends the wait too: the answer says stale, and why. */
		start_done(d, START_KEYRING);
		daemon_reload_progress(d);
		return;
	}
	strcpy_trunc(d->default_key, sizeof(d->default_key), res->default_key);
	strcpy_trunc(d->git_signing_key, sizeof(d->git_signing_key), res->git_signing_key);
	scd_ccid_update(d);
	st.reason = "";
	st.refreshed = daemon_now(d);
	daemon_info_update(d, set_keyring_state, &st);
	/* Before the keys go in, so that the derivation they cause judges card slots. */
	d->keys_listed = true;
	daemon_touch_keyring_changed(d);
	/* The model takes each key's subkeys; the array stays with res, freed by the watch. */
	r = model_keys_replace(d->model, res->keys, res->n_keys);
	if (r < 0)
		log_error_errno(r, "Failed to store the keyring's keys: %m");
	start_done(d, START_KEYRING);
	daemon_reload_progress(d);
}

static void set_static_info(struct daemon_info *i, void *arg)
{
	const char *home = arg;

	strcpy_trunc(i->version, sizeof(i->version), PACKAGE_VERSION);
	strcpy_trunc(i->gnupghome, sizeof(i->gnupghome), home);
}

static int resolve_gnupghome(const struct config *cfg, char *buf, size_t size)
{
	const char *env = getenv("GNUPGHOME"), *home = getenv("HOME");

	if (*cfg->gnupghome)
		return strcpy_bounded(buf, size, cfg->gnupghome);
	if (env && *env)
		return strcpy_bounded(buf, size, env);
	if (!home || !*home)
		return -ENOENT;
	return snprintf(buf, size, "%s/.gnupg", home) >= (int)size ? -ENAMETOOLONG : 0;
}

static int parse_time_offset(int64_t *ret)
{
	const char *e = getenv("KEYCTL_TIME_OFFSET");
	char *end;
	long long v;

	*ret = 0;
	if (!e || !*e)
		return 0;
	errno = 0;
	v = strtoll(e, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* daemon_start()'s parts, one per subsystem, called in the order they must start in. Those
 * returning void survive their failure: the daemon runs without that part. */

/* Tokens remembered across restarts. state_dir is meaningful only once d->state is set. */
static void start_state(struct daemon *d, char *state_dir, size_t size)
{
	char state_err[ERROR_TEXT_MAX + PATH_MAX];
	int r;

	r = state_default_dir(state_dir, size);
	if (r >= 0)
		r = state_new(d->event, d->model, state_dir, state_err, sizeof(state_err),
		              &d->state);
	if (r < 0)
		log_warning_errno(r, "Failed to set up the state directory, tokens will not be "
		                     "remembered across restarts: %m");
	else if (*state_err)
		log_warning("Ignoring remembered tokens: %s", state_err);
}

static void put_started(struct daemon *d)
{
	int64_t started = daemon_now(d);
	struct daemon_info info;

	memcpy(&info, model_daemon_info(d->model), sizeof(info));
	info.started = started;
	(void)model_daemon_info_put(d->model, &info);
}

static int start_server(struct daemon *d)
{
	struct server_config scfg = daemon_server_config(d);
	int r;

	r = server_new(d->event, d->model, &scfg, &d->server);
	/* Said by server-socket.c, which knows the path, the holder and what to set. */
	if (r == -ENXIO || r == -EADDRINUSE || r == -EBUSY || r == -EEXIST || r == -ENAMETOOLONG)
		return r;
	if (r < 0)
		return log_error_errno(r, "Failed to listen on the Varlink socket: %m");
	server_set_reload_handler(d->server, daemon_reload_request, d);
	server_set_upstream_handler(d->server, daemon_upstream_request, d);
	/* Listening already, so that clients queue up rather than fail; answered once true. */
	server_hold(d->server);
	d->start_pending = START_KEYRING | START_PCSC | START_UDEV;
	(void)sd_event_now(d->event, CLOCK_MONOTONIC, &d->start_usec);
	r = sd_event_add_time_relative(d->event, &d->start_timer, CLOCK_MONOTONIC, START_BOUND_USEC,
	                               0, on_start_overdue, d);
	if (r < 0)
		return log_error_errno(r, "Failed to arm the start timer: %m");
	return 0;
}

/* git's config changed: the keyring listing reads it again, off the loop thread. */
static void on_git_config(struct git_watch *w, void *userdata)
{
	struct daemon *d = userdata;

	if (d->keyring)
		(void)keyring_watch_refresh(d->keyring);
}

static void start_keyring(struct daemon *d, const char *home, const char *state_dir)
{
	const char *track[2 * CONFIG_TRACK_MAX];
	size_t n = daemon_track_list(&d->cfg, track);
	int r;

	r = keyring_watch_new(d->event, home, track, n, on_keyring, d, &d->keyring);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch the keyring in %s, ignoring: %m", home);
		d->keys_listed = true; /* no keyring at all: a card's keys are unknown indeed */
		start_done(d, START_KEYRING);
	} else if (d->state) {
		const char *e = getenv("KEYCTL_CERTIFIED_INTERVAL");
		char owned[PATH_MAX];

		keyring_watch_set_relied_trusted(d->keyring, daemon_relied_trusted(&d->cfg));
		/* Seconds, tests only: the certification scan's interval (and first delay). */
		if (!isempty(e))
			keyring_watch_set_certified_interval(d->keyring,
			                                     strtoull(e, NULL, 10) * 1000000ull);
		/* Lets a restart list just the user's own keys (keyring-owned.h). */
		if (snprintf(owned, sizeof(owned), "%s/owned-keys", state_dir) < (int)sizeof(owned))
			(void)keyring_watch_set_owned_path(d->keyring, owned);
	}
	r = git_watch_new(d->event, on_git_config, d, &d->git);
	if (r < 0)
		log_warning_errno(r, "Failed to watch git's config, ignoring: %m");
}

static void start_pcsc(struct daemon *d)
{
	int r;

	r = pcsc_watch_new(d->event, d->model,
	                   &(struct watch_hooks){ .settled = on_pcsc_settled,
	                                          .rescanned = daemon_on_pcsc_rescanned,
	                                          .userdata = d },
	                   &d->pcsc);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch PC/SC, ignoring: %m");
		start_done(d, START_PCSC);
	}
}

/* logind's PrepareForSleep: no card is read while the system sleeps, and every one is read again
 * when it resumes, since any may have been swapped meanwhile. */
static void on_sleep(bool asleep, void *userdata)
{
	struct daemon *d = userdata;

	if (asleep)
		log_info("System goes to sleep: no token is read until it resumes");
	else
		log_info("System resumed: reading every token again");
	if (d->pcsc)
		pcsc_watch_set_asleep(d->pcsc, asleep);
	daemon_lock_sleep(d, asleep);
}

static void start_sleep(struct daemon *d)
{
	int r = sleep_watch_new(d->event, on_sleep, d, &d->sleep);

	/* Containers and ssh logins have no system bus: nothing to follow, nothing wrong. */
	if (r == -ENOMEM)
		log_warning_errno(r, "Failed to follow suspend and resume, ignoring: %m");
	else if (r < 0)
		log_debug_errno(r, "No system bus (%m): suspend and resume are not followed");
}

static void start_udev(struct daemon *d)
{
	int r;

	r = udev_watch_new(d->event, d->model,
	                   &(struct watch_hooks){ .settled = on_udev_settled,
	                                          .token_event = on_udev_token,
	                                          .usb_device = daemon_lock_usb_device,
	                                          .userdata = d },
	                   &d->udev);
	if (r < 0) {
		log_warning_errno(r, "Failed to watch udev, ignoring: %m");
		start_done(d, START_UDEV);
	}
}

static int daemon_start(struct daemon *d)
{
	char home[PATH_MAX], state_dir[PATH_MAX];
	int r;

	r = parse_time_offset(&d->time_offset);
	if (r < 0)
		return log_error_errno(r, "KEYCTL_TIME_OFFSET is not a number of seconds");
	if (d->time_offset)
		log_warning("Clock shifted by %lld s (KEYCTL_TIME_OFFSET, for tests)",
		            (long long)d->time_offset);

	r = resolve_gnupghome(&d->cfg, home, sizeof(home));
	if (r < 0)
		return log_error_errno(r, "Cannot tell the GnuPG home (set GNUPGHOME or HOME): %m");
	/* gpgme and scdaemon's fallback both honour it, so one setting reaches every gpg we run. */
	setenv("GNUPGHOME", home, 1);

	r = model_new(&d->model);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate the model: %m");
	model_set_deriver(d->model, derive, d);
	model_set_clock(d->model, clock_now, d);

	/* Remembered tokens load before the journal listens: they were not inserted just now. */
	start_state(d, state_dir, sizeof(state_dir));
	r = events_log_attach(d->model);
	if (r < 0)
		return log_error_errno(r, "Failed to attach the journal: %m");
	daemon_info_update(d, set_static_info, home);
	daemon_info_update(d, daemon_info_set_policy, &d->cfg);
	put_started(d);

	r = expiry_timer_new(d->event, on_expiry_timer, d, &d->timer);
	if (r < 0)
		return log_error_errno(r, "Failed to set up the expiry timer: %m");
	r = start_server(d);
	if (r < 0)
		return r;

	start_keyring(d, home, state_dir);
	daemon_upstream_start(d, home);
	start_pcsc(d);
	daemon_lock_apply(d);
	start_udev(d);
	start_sleep(d);
	daemon_touch_start(d, home);
	return 0;
}

static void daemon_stop(struct daemon *d)
{
	/* Watchers first: their threads may still post into the model. */
	daemon_touch_stop(d);
	d->sleep = sleep_watch_free(d->sleep);
	d->udev = udev_watch_free(d->udev);
	daemon_lock_stop(d);
	d->pcsc = pcsc_watch_free(d->pcsc);
	d->keyring = keyring_watch_free(d->keyring);
	d->git = git_watch_free(d->git);
	d->upstream_schedule = upstream_schedule_free(d->upstream_schedule);
	d->upstream = upstream_watch_free(d->upstream);
	d->server = server_free(d->server);
	d->start_timer = sd_event_source_disable_unref(d->start_timer);
	d->reload_timer = sd_event_source_disable_unref(d->reload_timer);
	d->reload_deadline = sd_event_source_disable_unref(d->reload_deadline);
	d->timer = expiry_timer_free(d->timer);
	d->state = state_free(d->state);
	d->model = model_free(d->model);
}

int main(int argc, char **argv)
{
	_cleanup_(sd_event_unrefp) sd_event *event = NULL;
	static struct daemon d;
	sigset_t mask;
	int r;

	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

	log_setup(arg_foreground ? LOG_TARGET_STDERR : LOG_TARGET_AUTO);
	if (arg_log_level >= 0)
		log_set_max_level(arg_log_level);

	d.config_path = arg_config;
	d.log_level_arg = arg_log_level;
	r = daemon_load_config(&d, &d.cfg, true);
	if (r < 0)
		return EXIT_FAILURE;
	log_set_max_level(arg_log_level >= 0 ? arg_log_level : d.cfg.log_level);
	daemon_raise_fd_limit(&d);

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	/* A client that disappears mid-write must not kill us. */
	signal(SIGPIPE, SIG_IGN);

	r = sd_event_default(&event);
	if (r < 0)
		return log_error_errno(r, "Failed to allocate event loop: %m"), EXIT_FAILURE;
	r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(event, NULL, SIGHUP, daemon_on_sighup, &d);
	if (r < 0)
		return log_error_errno(r, "Failed to watch signals: %m"), EXIT_FAILURE;
	r = sd_event_set_watchdog(event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable the watchdog, ignoring: %m");

	d.event = event;
	r = daemon_start(&d);
	if (r < 0) {
		daemon_stop(&d);
		return r == -EADDRINUSE ? EXIT_ALREADY_RUNNING : EXIT_FAILURE;
	}

	(void)sd_notify(false, "STATUS=Starting: listing the keyring, reading tokens");
	log_info("keyctld %s started, serving %s", PACKAGE_VERSION, server_socket_path(d.server));

	r = sd_event_loop(event);
	(void)sd_notify(false, "STOPPING=1");
	daemon_stop(&d);
	if (r < 0)
		return log_error_errno(r, "Event loop failed: %m"), EXIT_FAILURE;
	log_info("keyctld stopped");
	return EXIT_SUCCESS;
}
