/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-notify: follows keyctld's Watch inside a GLib main loop and raises desktop notifications
 * (libnotify) when a subkey crosses an expiry threshold, when a token holding a warned subkey is
 * plugged in, and for audit findings at warning or worse. Each (subject, threshold) is announced
 * once, remembered in notify-state.c's file across restarts and logins. Without --once it
 * outlives both of its peers: the daemon (notify-daemon.c waits and reconnects) and the
 * notification server (notify-popup.c keeps what could not be shown until one appears).
 *
 * This file: the command line, the settings (keyctl.conf through protocol/config.c, the
 * environment), the state file, and starting and stopping the parts above.
 * Does not: compute levels (the daemon does), compose texts (notify-text.c), or poll: every wait
 * is a GLib fd watch or a timer armed for a known moment (a threshold, a snooze's end).
 */
#include <getopt.h>
#include <glib-unix.h>
#include <libnotify/notify.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "config-build.h"
#include "notify-app.h"
/* After notify-app.h, which undefines GLib's MIN and MAX before util.h's. */
#include "config.h"

/* What the command line asked for, applied over keyctl.conf's settings. */
struct options {
	const char *thresholds, *renewal_url;
};

int64_t app_now(const struct app *a)
{
	struct timespec ts;

	/* Not time(): it is the coarse clock, a tick behind the moment our timerfd fires at. */
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec + a->clock_offset;
}

void log_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("keyctl-notify: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void app_save(struct app *a)
{
	int r = notify_state_save(a->state, a->state_path);

	if (r < 0)
		log_msg("Failed to save %s: %s, ignoring", a->state_path, strerror(-r));
}

void app_give_up(struct app *a, const char *why)
{
	log_msg("%s; giving up (--once)", why);
	a->exit_status = 1;
	g_main_loop_quit(a->loop);
}

/* --once's deadline. A keyctld that answered but still holds its first state (it waits up to
 * its own bound for its first look at cards and keyring) is waited for: it will send it. */
static gboolean on_once_timeout(gpointer data)
{
	struct app *a = data;
	char why[VARLINK_CLIENT_TEXT_MAX + 64];

	a->once_source = 0;
	popup_why_unshown(a, why, sizeof(why));
	if (why[0])
		app_give_up(a, why);
	else if (!a->client)
		app_give_up(a, a->link_text[0] ? a->link_text : "keyctld is not reachable");
	return G_SOURCE_REMOVE;
}

static gboolean on_signal(gpointer data)
{
	struct app *a = data;

	g_main_loop_quit(a->loop);
	return G_SOURCE_CONTINUE;
}

/* Only the keys we read are ours to complain about: the daemon judges the rest of the file. */
static bool warning_is_ours(const struct config_warning *w)
{
	return isempty(w->key) || streq(w->key, "notify/renewal-url") ||
	       streq(w->key, "expiry/thresholds");
}

/* keyctl.conf's [expiry] thresholds and [notify] renewal-url, until the daemon tells its own. */
static void read_config(struct app *a)
{
	char path[PATH_MAX], err[CONFIG_ERROR_MAX] = "";
	struct config c;
	int r;

	if (config_default_path(path, sizeof(path)) < 0)
		return;
	/* Lenient: a mistake in a key of the daemon's must not cost us ours. */
	r = config_load(path, CONFIG_MISSING_OK | CONFIG_LENIENT, &c, err, sizeof(err));
	if (r < 0) {
		log_msg("%s, using the defaults", err);
		return;
	}
	for (unsigned i = 0; i < c.n_warnings; i++)
		if (warning_is_ours(&c.warnings[i]))
			log_msg("%s", c.warnings[i].text);
	memcpy(a->thresholds, c.thresholds, c.n_thresholds * sizeof(c.thresholds[0]));
	a->policy.n_thresholds = c.n_thresholds;
	memcpy(a->renewal_url, c.renewal_url, sizeof(a->renewal_url));
}

static void help(void)
{
	printf("Usage: keyctl-notify [OPTION...]\n"
	       "Desktop notifications before OpenPGP subkeys on hardware tokens expire.\n\n"
	       "  -h --help               show this help\n"
	       "     --version            show the version\n"
	       "     --socket=PATH        keyctld's socket (default $KEYCTL_SOCKET,\n"
	       "                          else $XDG_RUNTIME_DIR/keyctl/socket)\n"
	       "     --state-file=PATH    what was announced (default\n"
	       "                          $XDG_STATE_HOME/keyctl/notified)\n"
	       "     --thresholds=DAYS    e.g. 30,14,7,3,1 (default: keyctl.conf's [expiry])\n"
	       "     --renewal-url=URL    renewal instructions (default $KEYCTL_RENEWAL_URL,\n"
	       "                          else keyctl.conf's [notify] renewal-url)\n"
	       "     --once               exit once the current state is announced; 1 when\n"
	       "                          keyctld or a notification server is not there\n");
}

/* 1: go on; 0: done (--help, --version); -EINVAL: bad usage, said. */
static int parse_argv(int argc, char **argv, struct app *a, struct options *o)
{
	enum { ARG_VERSION = 0x100, ARG_SOCKET, ARG_STATE, ARG_THRESHOLDS, ARG_URL, ARG_ONCE };
	static const struct option options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, ARG_VERSION },
		{ "socket", required_argument, NULL, ARG_SOCKET },
		{ "state-file", required_argument, NULL, ARG_STATE },
		{ "thresholds", required_argument, NULL, ARG_THRESHOLDS },
		{ "renewal-url", required_argument, NULL, ARG_URL },
		{ "once", no_argument, NULL, ARG_ONCE },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
			printf("keyctl-notify %s\n", PACKAGE_VERSION);
			return 0;
		case ARG_SOCKET:
			a->socket = optarg;
			break;
		case ARG_STATE:
			if (strcpy_bounded(a->state_path, sizeof(a->state_path), optarg) < 0) {
				log_msg("--state-file: path too long");
				return -EINVAL;
			}
			break;
		case ARG_THRESHOLDS:
			o->thresholds = optarg;
			break;
		case ARG_URL:
			o->renewal_url = optarg;
			break;
		case ARG_ONCE:
			a->once = true;
			break;
		default:
			return -EINVAL;
		}
	if (optind < argc) {
		log_msg("Unexpected argument: %s", argv[optind]);
		return -EINVAL;
	}
	return 1;
}

/* keyctl.conf, then the environment and the command line over it. 0, or -EINVAL when said. */
static int apply_settings(struct app *a, const struct options *o)
{
	const char *env_url = getenv("KEYCTL_RENEWAL_URL"), *env_retry;
	char why[CONFIG_ERROR_MAX];
	unsigned n;

	read_config(a);
	if (o->thresholds) {
		if (config_parse_thresholds((const uint8_t *)o->thresholds, strlen(o->thresholds),
		                            a->thresholds, &n, why, sizeof(why)) < 0) {
			log_msg("--thresholds: want strictly descending days, e.g. 30,14,7,3,1");
			return -EINVAL;
		}
		a->policy.n_thresholds = n;
		a->own_thresholds = true;
	}
	env_retry = getenv("KEYCTL_NOTIFY_RETRY_MAX");
	if (env_retry && *env_retry) {
		char *end;
		unsigned long v = strtoul(env_retry, &end, 10);

		if (*end || v < 1 || v > BACKOFF_MAX_S) {
			log_msg("KEYCTL_NOTIFY_RETRY_MAX: want seconds from 1 to %u",
			        BACKOFF_MAX_S);
			return -EINVAL;
		}
		a->backoff_max = (unsigned)v;
	}
	if (o->renewal_url || env_url) {
		a->own_url = true;
		if (strcpy_bounded(a->renewal_url, sizeof(a->renewal_url),
		                   o->renewal_url ? o->renewal_url : env_url) < 0) {
			log_msg("Renewal URL too long (max %d bytes)", URL_MAX - 1);
			return -EINVAL;
		}
	}
	return 0;
}

static int open_state(struct app *a)
{
	int r;

	if (!a->state_path[0]) {
		r = notify_state_default_path(a->state_path, sizeof(a->state_path));
		if (r < 0) {
			log_msg("No place for the state file: %s", strerror(-r));
			return r;
		}
	}
	r = notify_state_load(a->state_path, &a->state);
	if (r < 0) {
		log_msg("Failed to read %s: %s; starting afresh", a->state_path, strerror(-r));
		r = notify_state_new(&a->state);
	}
	return r;
}

static int app_start(struct app *a)
{
	int r;

	if (!notify_init("keyctl-notify")) {
		log_msg("Failed to initialize libnotify");
		return -EIO;
	}
	a->loop = g_main_loop_new(NULL, FALSE);
	r = announce_start(a);
	if (r < 0) {
		log_msg("Failed to create a timer: %s", strerror(-r));
		return r;
	}
	if (a->once)
		a->once_source = g_timeout_add_seconds(ONCE_TIMEOUT_S, on_once_timeout, a);
	g_unix_signal_add(SIGTERM, on_signal, a);
	g_unix_signal_add(SIGINT, on_signal, a);
	popup_watch_server(a);
	daemon_link_start(a);
	return 0;
}

static void app_stop(struct app *a)
{
	if (a->once_source)
		g_source_remove(a->once_source);
	a->once_source = 0;
	popup_done(a);
	daemon_link_stop(a);
	announce_stop(a);
	keyctl_status_done(&a->status);
	notify_state_free(a->state);
	g_main_loop_unref(a->loop);
	notify_uninit();
}

int main(int argc, char **argv)
{
	static const unsigned defaults[] = { 30, 14, 7, 3, 1 };
	struct app a = { .backoff = 1, .backoff_max = BACKOFF_MAX_S, .wake_fd = -1 };
	struct options o = {};
	int r;

	memcpy(a.thresholds, defaults, sizeof(defaults));
	path_wait_init(&a.wait);
	a.policy = (struct expiry_policy){
		.thresholds = a.thresholds,
		.n_thresholds = ELEMENTSOF(defaults),
		.warning_days = 14,
		.critical_days = 3,
	};

	r = parse_argv(argc, argv, &a, &o);
	if (r <= 0)
		return r < 0 ? 2 : 0;
	if (apply_settings(&a, &o) < 0)
		return 2;
	if (open_state(&a) < 0 || app_start(&a) < 0)
		return 1;
	/* --once may have given up already, before the loop ran: a quit then would be lost. */
	if (a.exit_status == 0)
		g_main_loop_run(a.loop);
	app_stop(&a);
	return a.exit_status;
}
