/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctld's entry: arguments, configuration, the sd-event loop, signals and sd_notify. It wires
 * the watchers to the model and the model to the server; the work itself lives in those files.
 * Never forks: systemd (Type=notify) or the terminal holds it in the foreground.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "config-build.h"
#include "config.h"
#include "log.h"

static char arg_config[PATH_MAX];
static bool arg_foreground;
static int arg_log_level = -1;

static void help(void)
{
	printf("Usage: keyctld [OPTIONS]\n\n"
	       "Watches hardware tokens (YubiKey, Nitrokey, OpenPGP cards) and the GnuPG keys on\n"
	       "them, and answers keyctl-status and keyctl-notify over Varlink.\n\n"
	       "  -h --help              Show this help and exit\n"
	       "     --version           Show the version and exit\n"
	       "  -f --foreground        Log to stderr even under systemd (keyctld never forks)\n"
	       "  -c --config=PATH       Configuration file (default:\n"
	       "                         $XDG_CONFIG_HOME/keyctl/keyctl.conf)\n"
	       "     --log-level=LEVEL   err, warning, notice, info or debug\n\n"
	       "See keyctld(8) and keyctl.conf(5).\n");
}

static int parse_argv(int argc, char **argv)
{
	enum { ARG_VERSION = 0x100, ARG_LOG_LEVEL };
	static const struct option options[] = { { "help", no_argument, NULL, 'h' },
		                                 { "version", no_argument, NULL, ARG_VERSION },
		                                 { "foreground", no_argument, NULL, 'f' },
		                                 { "config", required_argument, NULL, 'c' },
		                                 { "log-level", required_argument, NULL,
		                                   ARG_LOG_LEVEL },
		                                 {} };
	int c;

	while ((c = getopt_long(argc, argv, "hfc:", options, NULL)) >= 0) {
		switch (c) {
		case 'h':
			help();
			return 0;
		case ARG_VERSION:
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
			arg_log_level = log_level_from_string(optarg);
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

static int load_config(struct config *c)
{
	char path[PATH_MAX], err[CONFIG_ERROR_MAX] = "";
	bool missing_ok = !*arg_config;
	int r;

	if (*arg_config)
		strcpy_trunc(path, sizeof(path), arg_config);
	else if (config_default_path(path, sizeof(path)) < 0) {
		config_init(c);
		return 0;
	}
	r = config_load(path, missing_ok, c, err, sizeof(err));
	if (r < 0) {
		log_error("Refusing to start with a bad configuration: %s", err);
		return r;
	}
	for (unsigned i = 0; i < c->n_warnings; i++)
		log_warning("%s", c->warnings[i]);
	return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct config *cfg = userdata, fresh;

	/* A broken file on reload keeps the configuration we run with. */
	if (load_config(&fresh) < 0) {
		log_warning("Configuration reload failed, keeping the running configuration");
		return 0;
	}
	*cfg = fresh;
	log_set_max_level(arg_log_level >= 0 ? arg_log_level : cfg->log_level);
	log_info("Configuration reloaded");
	return 0;
}

int main(int argc, char **argv)
{
	_cleanup_(sd_event_unrefp) sd_event *event = NULL;
	static struct config cfg;
	sigset_t mask;
	int r;

	r = parse_argv(argc, argv);
	if (r <= 0)
		return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

	log_setup(arg_foreground ? LOG_TARGET_STDERR : LOG_TARGET_AUTO);
	if (arg_log_level >= 0)
		log_set_max_level(arg_log_level);

	r = load_config(&cfg);
	if (r < 0)
		return EXIT_FAILURE;
	log_set_max_level(arg_log_level >= 0 ? arg_log_level : cfg.log_level);

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
		r = sd_event_add_signal(event, NULL, SIGHUP, on_sighup, &cfg);
	if (r < 0)
		return log_error_errno(r, "Failed to watch signals: %m"), EXIT_FAILURE;
	r = sd_event_set_watchdog(event, true);
	if (r < 0)
		log_warning_errno(r, "Failed to enable the watchdog, ignoring: %m");

	(void)sd_notify(false, "READY=1\nSTATUS=Watching tokens and keys");
	log_info("keyctld %s started", PACKAGE_VERSION);

	r = sd_event_loop(event);
	(void)sd_notify(false, "STOPPING=1");
	if (r < 0)
		return log_error_errno(r, "Event loop failed: %m"), EXIT_FAILURE;
	log_info("keyctld stopped");
	return EXIT_SUCCESS;
}
