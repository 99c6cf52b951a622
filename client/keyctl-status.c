/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status: asks keyctld for its state (io.keyctl.GetStatus) and prints it as a table for
 * people, as the reply's JSON, or as Prometheus text; or follows io.keyctl.Watch; or acknowledges
 * a finding (io.keyctl.Ack, Unack). Exits like a
 * monitoring plugin: 0 fine, 1 warning, 2 critical or expired, 3 unknown (no daemon, bad reply).
 *
 * Does not: read cards or the keyring itself (the daemon does), or judge levels: the daemon's
 * levels are taken as they come; only --warn-days adds a client-side threshold.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "codec.h"
#include "varlink.h"
#include "config-build.h"
#include "prometheus.h"
#include "status.h"
#include "table.h"

enum format { FORMAT_TABLE, FORMAT_JSON, FORMAT_PROMETHEUS };
enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

struct options {
	enum format format;
	enum color_mode color;
	bool watch, quiet, check_upstream;
	int warn_days; /* -1: not given */
	const char *socket;
	const char *ack, *unack; /* a finding's id, or NULL */
};

static void help(void)
{
	printf("Usage: keyctl-status [OPTION]...\n"
	       "Show the hardware tokens, GnuPG keys and findings that keyctld watches.\n"
	       "\n"
	       "  -j, --json             print GetStatus's reply as JSON (same as --format=json)\n"
	       "      --format=FORMAT    table (default), json or prometheus\n"
	       "  -w, --watch            follow changes: one line per event (JSON lines with "
	       "--json)\n"
	       "      --warn-days=N      exit 1 when a subkey expires within N days\n"
	       "  -q, --quiet            print nothing; only the exit code tells\n"
	       "      --check-upstream   first ask the keyserver for the published copy of each\n"
	       "                         owned and relied-on key (CheckUpstream; up to 30 s)\n"
	       "      --ack=FINDING-ID   acknowledge a finding (its id is in --json): it no "
	       "longer\n"
	       "                         counts until it changes for the worse or goes away\n"
	       "      --unack=FINDING-ID undo --ack\n"
	       "      --color[=WHEN]     auto (default), always (the same as a bare --color) or\n"
	       "                         never\n"
	       "      --socket=PATH      keyctld's socket (default $KEYCTL_SOCKET, else\n"
	       "                         $XDG_RUNTIME_DIR/keyctl/socket)\n"
	       "  -h, --help             show this help\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Exit status: 0 all fine (notice included), 1 warning, 2 critical or expired,\n"
	       "3 unknown (keyctld not running or not yours, protocol error).\n"
	       "See keyctl-status(1).\n");
}

/* The words an enum-valued option takes, ending with { NULL }. */
struct option_word {
	const char *word;
	int value;
};

static const struct option_word format_words[] = {
	{ "table", FORMAT_TABLE },
	{ "json", FORMAT_JSON },
	{ "prometheus", FORMAT_PROMETHEUS },
	{},
};

static const struct option_word color_words[] = {
	{ "auto", COLOR_AUTO },
	{ "always", COLOR_ALWAYS },
	{ "never", COLOR_NEVER },
	{},
};

/* Returns the value of arg among words, or -EINVAL when it is none of them. */
static int option_word_value(const struct option_word *words, const char *arg)
{
	for (; words->word; words++)
		if (streq(words->word, arg))
			return words->value;
	return -EINVAL;
}

/* Each parse_<option>() says what is wrong with the value itself, so parse_argv() only passes the
 * -EINVAL on. */
static int parse_format(const char *arg, enum format *ret)
{
	int v = option_word_value(format_words, arg);

	if (v < 0) {
		fprintf(stderr,
		        "keyctl-status: unknown format '%s': use table, json or prometheus\n", arg);
		return v;
	}
	*ret = v;
	return 0;
}

/* A bare --color is --color=always, as ls and grep take it. */
static int parse_color(const char *arg, enum color_mode *ret)
{
	int v = arg ? option_word_value(color_words, arg) : COLOR_ALWAYS;

	if (v < 0) {
		fprintf(stderr, "keyctl-status: --color wants auto, always or never, not '%s'\n",
		        arg);
		return v;
	}
	*ret = v;
	return 0;
}

static int parse_warn_days(const char *arg, int *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end || v < 0 || v > 100000) {
		fprintf(stderr,
		        "keyctl-status: --warn-days wants a number of days from 0 to 100000, not "
		        "'%s'\n",
		        arg);
		return -EINVAL;
	}
	*ret = (int)v;
	return 0;
}

static int check_combinations(const struct options *o);

/* Returns 0, 1 when the program should exit 0 now (--help, --version), or -EINVAL. */
static int parse_argv(int argc, char **argv, struct options *o)
{
	enum {
		ARG_FORMAT = 0x100,
		ARG_WARN_DAYS,
		ARG_COLOR,
		ARG_SOCKET,
		ARG_CHECK_UPSTREAM,
		ARG_ACK,
		ARG_UNACK,
	};
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, ARG_FORMAT },
		{ "watch", no_argument, NULL, 'w' },
		{ "warn-days", required_argument, NULL, ARG_WARN_DAYS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "color", optional_argument, NULL, ARG_COLOR },
		{ "colour", optional_argument, NULL, ARG_COLOR },
		{ "socket", required_argument, NULL, ARG_SOCKET },
		{ "check-upstream", no_argument, NULL, ARG_CHECK_UPSTREAM },
		{ "ack", required_argument, NULL, ARG_ACK },
		{ "unack", required_argument, NULL, ARG_UNACK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	int c, r;

	*o = (struct options){ .warn_days = -1 };
	while ((c = getopt_long(argc, argv, "jwqhV", longopts, NULL)) >= 0) {
		r = 0;
		switch (c) {
		case 'j':
			o->format = FORMAT_JSON;
			break;
		case ARG_FORMAT:
			r = parse_format(optarg, &o->format);
			break;
		case 'w':
			o->watch = true;
			break;
		case ARG_WARN_DAYS:
			r = parse_warn_days(optarg, &o->warn_days);
			break;
		case 'q':
			o->quiet = true;
			break;
		case ARG_COLOR:
			r = parse_color(optarg, &o->color);
			break;
		case ARG_SOCKET:
			o->socket = optarg;
			break;
		case ARG_CHECK_UPSTREAM:
			o->check_upstream = true;
			break;
		case ARG_ACK:
			o->ack = optarg;
			break;
		case ARG_UNACK:
			o->unack = optarg;
			break;
		case 'h':
			help();
			return 1;
		case 'V':
			printf("keyctl-status %s\n", PACKAGE_VERSION);
			return 1;
		default:
			fprintf(stderr, "Try 'keyctl-status --help' for more information.\n");
			return -EINVAL;
		}
		if (r < 0)
			return r;
	}

	if (optind < argc) {
		fprintf(stderr, "keyctl-status: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return check_combinations(o);
}

/* Options that make no sense together: said rather than one silently ignored. */
static int check_combinations(const struct options *o)
{
	if (o->watch && o->quiet) {
		fprintf(stderr, "keyctl-status: --quiet goes with a status (its exit code), not "
		                "--watch, which only prints\n");
		return -EINVAL;
	}
	if ((o->ack || o->unack) && (o->watch || o->check_upstream || (o->ack && o->unack))) {
		fprintf(stderr, "keyctl-status: --ack and --unack go alone, without --unack, "
		                "--ack, --watch or --check-upstream\n");
		return -EINVAL;
	}
	if (o->watch && o->format == FORMAT_PROMETHEUS) {
		fprintf(stderr, "keyctl-status: --watch prints table or json, not prometheus\n");
		return -EINVAL;
	}
	if (o->watch && o->check_upstream) {
		fprintf(stderr,
		        "keyctl-status: --check-upstream goes with a status, not --watch\n");
		return -EINVAL;
	}
	return 0;
}

/* https://no-color.org: a non-empty NO_COLOR disables colour unless the user asked for it. */
static bool use_color(enum color_mode m)
{
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");

	if (m != COLOR_AUTO)
		return m == COLOR_ALWAYS;
	if (!isempty(no_color))
		return false;
	if (term && streq(term, "dumb"))
		return false;
	return isatty(STDOUT_FILENO);
}

static int64_t now_epoch(void)
{
	return (int64_t)time(NULL);
}

static int socket_path(const struct options *o, char *path, size_t size)
{
	int r;

	if (o->socket) {
		strcpy_trunc(path, size, o->socket);
		return 0;
	}
	r = varlink_client_socket_path(path, size);
	if (r < 0 && !o->quiet) {
		if (r == -ENXIO)
			fprintf(stderr, "keyctl-status: cannot tell where keyctld's socket is: "
			                "neither KEYCTL_SOCKET nor XDG_RUNTIME_DIR is set. Use "
			                "--socket=PATH.\n");
		else
			fprintf(stderr, "keyctl-status: bad socket path: %s\n", strerror(-r));
	}
	return r;
}

static void report_connect_error(const char *path, const struct varlink_client *vc, int r,
                                 uid_t server_uid)
{
	char text[VARLINK_CLIENT_TEXT_MAX];

	if (r == -EPERM)
		varlink_client_untrusted_text(text, sizeof(text), path, server_uid);
	else
		varlink_client_error_text(text, sizeof(text), vc, path, r);
	fprintf(stderr, "keyctl-status: %s%s\n", text,
	        r == -ENOENT || r == -ECONNREFUSED
	                ? ". Start it with: systemctl --user start keyctld.socket (or run keyctld "
	                  "in a terminal)"
	                : "");
}

static void report_call_error(const char *method, int r, const char *error_name);

/* Connects and makes sure keyctld answers (varlink_client_hello()): a socket of another
 * program is named as such within its bound instead of being waited on for the call's. */
static int connect_daemon(const struct options *o, struct varlink_client **ret)
{
	_cleanup_(varlink_client_freep) struct varlink_client *vc = NULL;
	_cleanup_(freep) char *error_name = NULL;
	char path[PATH_MAX];
	uid_t server_uid = 0;
	int r;

	r = socket_path(o, path, sizeof(path));
	if (r < 0)
		return r;
	r = varlink_client_connect_checked(path, &server_uid, &vc);
	if (r >= 0)
		r = varlink_client_hello(vc, &error_name);
	if (r == 1) {
		if (!o->quiet)
			report_call_error("GetInfo", r, error_name);
		return -EIO;
	}
	if (r < 0) {
		if (!o->quiet)
			report_connect_error(path, vc, r, server_uid);
		return r;
	}
	*ret = TAKE_PTR(vc);
	return 0;
}

/* The reply's parameters as keyctld sent them (it parsed and validated already): printing them
 * again from the parsed tree would cost as much as the parse. Falls back to that for a reply of
 * another form. One line, compact: `jq .` makes it pretty. */
static void print_json(struct varlink_client *vc, json_object *o)
{
	size_t n;
	const char *raw = varlink_client_last_parameters(vc, &n);

	if (raw) {
		fwrite(raw, 1, n, stdout);
		putchar('\n');
	} else
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
		                                               JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(stdout);
}

static void report_call_error(const char *method, int r, const char *error_name)
{
	if (r == 1 && error_name &&
	    (streq(error_name, KEYCTL_ERROR_TOO_MANY_CLIENTS) ||
	     streq(error_name, KEYCTL_ERROR_TOO_MANY_WATCHERS)))
		fprintf(stderr,
		        "keyctl-status: keyctld is serving as many clients as it may (%s); try "
		        "again, or raise max-clients/max-watchers in keyctl.conf\n",
		        error_name);
	else if (r == 1)
		fprintf(stderr, "keyctl-status: keyctld answered %s with the error %s\n", method,
		        error_name ? error_name : "(unnamed)");
	else if (r == -ECONNRESET)
		fprintf(stderr, "keyctl-status: keyctld closed the connection\n");
	else if (r == -ETIMEDOUT)
		fprintf(stderr, "keyctl-status: keyctld did not answer %s in time\n", method);
	else
		fprintf(stderr, "keyctl-status: %s failed: %s\n", method, strerror(-r));
}

static int run_status(const struct options *o, struct varlink_client *vc)
{
	_cleanup_(json_object_putp) json_object *params = NULL;
	_cleanup_(freep) char *error_name = NULL;
	struct keyctl_status st = {};
	int64_t now = now_epoch();
	int r, code;

	r = varlink_client_call(vc, "io.keyctl.GetStatus", NULL, &params, &error_name);
	if (r != 0) {
		if (!o->quiet)
			report_call_error("GetStatus", r, error_name);
		if (!o->quiet && o->format == FORMAT_PROMETHEUS)
			prometheus_render_down(stdout);
		return STATUS_EXIT_UNKNOWN;
	}

	r = codec_status_from_json(params, &st);
	if (r < 0) {
		if (!o->quiet) {
			fprintf(stderr, "keyctl-status: keyctld's reply is malformed: %s\n",
			        strerror(-r));
			if (o->format == FORMAT_PROMETHEUS)
				prometheus_render_down(stdout);
		}
		return STATUS_EXIT_UNKNOWN;
	}

	/* "in 5 days" and --warn-days count from the daemon's clock, as its levels do (they differ
	 * under KEYCTL_TIME_OFFSET, or when the reply was made a while ago). */
	if (st.daemon.now > 0)
		now = st.daemon.now;
	code = status_exit_code(&st.daemon, st.keys, st.n_keys, st.findings, st.n_findings, now,
	                        o->warn_days);
	if (!o->quiet)
		switch (o->format) {
		case FORMAT_JSON:
			print_json(vc, params);
			break;
		case FORMAT_PROMETHEUS:
			r = prometheus_render(stdout, &st.daemon, st.tokens, st.n_tokens, st.keys,
			                      st.n_keys, st.findings, st.n_findings, now);
			break;
		default:
			r = table_render(stdout, &st.daemon, st.tokens, st.n_tokens, st.keys,
			                 st.n_keys, st.findings, st.n_findings, now,
			                 use_color(o->color));
		}
	keyctl_status_done(&st);
	if (r < 0 || fflush(stdout) != 0) {
		fprintf(stderr, "keyctl-status: cannot write the output: %m\n");
		return STATUS_EXIT_UNKNOWN;
	}
	return code;
}

/* CheckUpstream answers when the check is over: its bound, with room for the answer. */
#define CHECK_UPSTREAM_TIMEOUT_MS 40000

/* A keyserver out of reach is not a failure of the call (DaemonInfo's upstream_error tells);
 * a daemon that will not check (check = off) is, and so is a lost connection. */
static int run_check_upstream(const struct options *o, struct varlink_client *vc)
{
	_cleanup_(json_object_putp) json_object *params = NULL;
	_cleanup_(freep) char *error_name = NULL;
	int r;

	varlink_client_set_timeout(vc, CHECK_UPSTREAM_TIMEOUT_MS);
	r = varlink_client_call(vc, "io.keyctl.CheckUpstream", NULL, &params, &error_name);
	varlink_client_set_timeout(vc, VARLINK_CLIENT_TIMEOUT_MS_DEFAULT);
	if (r == 0)
		return 0;
	if (!o->quiet) {
		const char *reason = NULL;
		json_object *v;

		if (r == 1 && params && json_object_object_get_ex(params, "reason", &v))
			reason = json_object_get_string(v);
		if (reason)
			fprintf(stderr, "keyctl-status: keyctld cannot check upstream: %s\n",
			        reason);
		else
			report_call_error("CheckUpstream", r, error_name);
	}
	return -EIO;
}

/* --ack and --unack: 0 done; 3 (unknown: the daemon refused or could not be asked) otherwise,
 * "no finding ID" for an id no finding (or no ack) has. */
static int run_ack(const struct options *o, struct varlink_client *vc)
{
	_cleanup_(json_object_putp) json_object *call = json_object_new_object();
	_cleanup_(json_object_putp) json_object *params = NULL;
	_cleanup_(freep) char *error_name = NULL;
	const char *id = o->ack ? o->ack : o->unack, *method = o->ack ? "Ack" : "Unack";
	char full[64];
	int r;

	if (!call || varlink_json_add(call, "id", json_object_new_string(id)) < 0) {
		fprintf(stderr, "keyctl-status: %s\n", strerror(ENOMEM));
		return STATUS_EXIT_UNKNOWN;
	}
	snprintf(full, sizeof(full), "io.keyctl.%s", method);
	r = varlink_client_call(vc, full, call, &params, &error_name);
	if (r == 0)
		return STATUS_EXIT_OK;
	if (o->quiet)
		return STATUS_EXIT_UNKNOWN;
	if (r == 1 && error_name && streq(error_name, KEYCTL_ERROR_NO_SUCH_FINDING))
		fprintf(stderr, "keyctl-status: no %sfinding %s\n", o->ack ? "" : "acknowledged ",
		        id);
	else if (r == 1 && error_name && streq(error_name, KEYCTL_ERROR_TOO_MANY_ACKS))
		fprintf(stderr,
		        "keyctl-status: keyctld keeps %d acknowledged findings already; "
		        "--unack one first\n",
		        ACKS_MAX);
	else if (r == 1 && error_name && streq(error_name, VARLINK_ERROR_INVALID_PARAMETER))
		fprintf(stderr,
		        "keyctl-status: '%s' is not a finding id (see the \"id\" of each "
		        "finding in keyctl-status --json)\n",
		        id);
	else
		report_call_error(method, r, error_name);
	return STATUS_EXIT_UNKNOWN;
}

/* Follows Watch until the daemon goes away (exit 3) or a signal ends us. The exit code of a
 * stream has no meaning beyond "it broke". */
static int run_watch(const struct options *o, struct varlink_client *vc)
{
	bool color = use_color(o->color);
	int r;

	varlink_client_set_timeout(vc, -1);
	r = varlink_client_call_more(vc, "io.keyctl.Watch", NULL);
	if (r < 0) {
		if (!o->quiet)
			report_call_error("Watch", r, NULL);
		return STATUS_EXIT_UNKNOWN;
	}

	for (;;) {
		_cleanup_(json_object_putp) json_object *params = NULL;
		_cleanup_(freep) char *error_name = NULL;
		struct keyctl_event ev = {};
		int more;

		more = varlink_client_next(vc, -1, &params, &error_name);
		if (more < 0 || more == 2) {
			if (!o->quiet)
				report_call_error("Watch", more == 2 ? 1 : more, error_name);
			return STATUS_EXIT_UNKNOWN;
		}
		if (!o->quiet && o->format == FORMAT_JSON)
			print_json(vc, params);
		else if (!o->quiet) {
			r = codec_event_from_json(params, &ev);
			if (r < 0)
				fprintf(stderr, "keyctl-status: malformed event, ignoring: %s\n",
				        strerror(-r));
			else {
				(void)table_render_event(stdout, &ev, now_epoch(), color);
				keyctl_event_done(&ev);
			}
		}
		if (more == 0) {
			if (!o->quiet)
				fprintf(stderr, "keyctl-status: keyctld ended the watch\n");
			return STATUS_EXIT_UNKNOWN;
		}
	}
}

int main(int argc, char **argv)
{
	_cleanup_(varlink_client_freep) struct varlink_client *vc = NULL;
	struct options o;
	int r;

	r = parse_argv(argc, argv, &o);
	if (r != 0)
		return r > 0 ? 0 : STATUS_EXIT_UNKNOWN;

	r = connect_daemon(&o, &vc);
	if (r < 0) {
		if (!o.quiet && o.format == FORMAT_PROMETHEUS && !o.watch)
			prometheus_render_down(stdout);
		return STATUS_EXIT_UNKNOWN;
	}

	if (o.check_upstream && run_check_upstream(&o, vc) < 0)
		return STATUS_EXIT_UNKNOWN;
	if (o.ack || o.unack)
		return run_ack(&o, vc);
	return o.watch ? run_watch(&o, vc) : run_status(&o, vc);
}
