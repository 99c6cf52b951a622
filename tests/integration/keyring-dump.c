/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Test helper for test-keyring.py: lists a GNUPGHOME with keyring_list() (or, with --watch N,
 * through keyring_watch until N results arrived) and prints one line per key and subkey in a
 * stable text form that the driver asserts on. Exit 0 when listing worked, 1 on a listing error
 * (printed as "error ERRNO-NAME reason"), 2 on usage errors.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include <errno.h>
#include <unistd.h>

#include "keyring-owned.h"
#include "watch-keyring.h"

static unsigned arg_watch;
static const char *arg_gpg, *arg_owned;
static bool arg_full, arg_relied;
static double arg_certified_interval = -1;
static double arg_timeout;
static unsigned results;
static int last_error;

static const char *caps(unsigned c, char buf[static 5])
{
	size_t n = 0;

	if (c & CAP_SIGN)
		buf[n++] = 'S';
	if (c & CAP_ENCRYPT)
		buf[n++] = 'E';
	if (c & CAP_AUTH)
		buf[n++] = 'A';
	if (c & CAP_CERTIFY)
		buf[n++] = 'C';
	buf[n] = 0;
	return buf;
}

static void print_keys(const struct key *keys, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct key *k = &keys[i];

		printf("key %s revoked=%d expired=%d has_secret=%d tracked=%d relied=%d uid=%s\n",
		       k->fingerprint, k->revoked, k->expired, k->has_secret, k->tracked,
		       k->relied_on, k->uid);
		for (size_t j = 0; j < k->n_subkeys; j++) {
			const struct subkey *s = &k->subkeys[j];
			char c[5];

			printf("sub %s primary=%d algo=%s caps=%s expires=%lld revoked=%d "
			       "expired=%d secret=%s card=%s grip=%zu\n",
			       s->fingerprint, s->is_primary, s->algorithm,
			       caps(s->capabilities, c), (long long)s->expires, s->revoked,
			       s->expired, secret_location_to_string(s->secret),
			       isempty(s->card_serial) ? "-" : s->card_serial, strlen(s->keygrip));
		}
	}
}

static void on_result(struct keyring_watch *w, struct keyring_result *res, void *userdata)
{
	sd_event *e = userdata;

	results++;
	last_error = res->error;
	if (res->error < 0)
		printf("error %s %s\n", strerrorname_np(-res->error), res->reason);
	else {
		printf("result %zu default-key=%s\n", res->n_keys,
		       isempty(res->default_key) ? "-" : res->default_key);
		print_keys(res->keys, res->n_keys);
	}
	printf("end\n");
	fflush(stdout);
	if (results >= arg_watch)
		sd_event_exit(e, 0);
}

/* keyring_list_owned() with the owned keys kept in arg_owned between runs, as the watch keeps
 * them in the state directory; prints which way it went. */
static int list_owned(const char *home, const char *const *track, size_t n_track, struct key **keys,
                      size_t *n, char *err, size_t errsize)
{
	_cleanup_(freep) struct keyring_owned *o = calloc(1, sizeof(*o));
	enum keyring_way way = KEYRING_WAY_FULL;
	static const char *const ways[] = { "full", "fast", "trust" };
	int r;

	if (!o)
		return -ENOMEM;
	(void)keyring_owned_load(arg_owned, o);
	o->relied_wanted = arg_relied;
	r = keyring_list_owned(home, arg_gpg, track, n_track, NULL, o, arg_full, &way, keys, n, err,
	                       errsize);
	if (r < 0)
		return r;
	if (way != KEYRING_WAY_OWNED && (!o->valid || keyring_owned_save(arg_owned, o) < 0))
		(void)unlink(arg_owned);
	printf("way %s cache=%s\n", ways[way], o->valid ? "valid" : "none");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "watch", required_argument, NULL, 'w' },
		{ "gpg", required_argument, NULL, 'g' },
		{ "timeout", required_argument, NULL, 't' },
		{ "owned", required_argument, NULL, 'o' },
		{ "full", no_argument, NULL, 'f' },
		{ "relied", no_argument, NULL, 'r' },
		{ "certified-interval", required_argument, NULL, 'c' },
		{},
	};
	char err[ERROR_TEXT_MAX] = "";
	struct key *keys = NULL;
	size_t n = 0;
	int c, r;

	while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
		switch (c) {
		case 'w':
			arg_watch = (unsigned)atoi(optarg);
			break;
		case 'g':
			arg_gpg = optarg;
			break;
		case 't':
			arg_timeout = atof(optarg);
			break;
		case 'o':
			arg_owned = optarg;
			break;
		case 'r':
			arg_relied = true;
			break;
		case 'f':
			arg_full = true;
			break;
		case 'c':
			arg_certified_interval = atof(optarg);
			break;
		default:
			return 2;
		}
	if (optind >= argc) {
		fprintf(stderr, "usage: keyring-dump [--watch N] [--gpg PATH] [--owned FILE "
		                "[--full] [--relied]] [--certified-interval S] "
		                "HOME [TRACK...]\n");
		return 2;
	}

	if (arg_watch > 0) {
		_cleanup_(keyring_watch_freep) struct keyring_watch *w = NULL;
		sd_event *e = NULL;

		r = sd_event_default(&e);
		if (r < 0)
			return 2;
		r = keyring_watch_new(e, argv[optind], (const char *const *)argv + optind + 1,
		                      (size_t)(argc - optind - 1), on_result, e, &w);
		if (r < 0) {
			fprintf(stderr, "keyring_watch_new: %s\n", strerror(-r));
			return 2;
		}
		if (arg_gpg)
			(void)keyring_watch_set_gpg_path(w, arg_gpg);
		keyring_watch_set_relied_trusted(w, arg_relied);
		if (arg_certified_interval >= 0)
			keyring_watch_set_certified_interval(
			        w, (uint64_t)(arg_certified_interval * 1e6));
		if (arg_timeout > 0)
			keyring_watch_set_timeout(w, (uint64_t)(arg_timeout * 1e6));
		printf("watching\n");
		fflush(stdout);
		r = sd_event_loop(e);
		w = keyring_watch_free(w);
		sd_event_unref(e);
		return r < 0 || last_error < 0 ? 1 : 0;
	}

	if (arg_owned)
		r = list_owned(argv[optind], (const char *const *)argv + optind + 1,
		               (size_t)(argc - optind - 1), &keys, &n, err, sizeof(err));
	else
		r = keyring_list_with(argv[optind], arg_gpg, (const char *const *)argv + optind + 1,
		                      (size_t)(argc - optind - 1), &keys, &n, err, sizeof(err));
	if (r < 0) {
		printf("error %s %s\n", strerrorname_np(-r), err);
		/* As the watch's job does: a failed listing must have left nothing to free, so a
		 * pointer it left behind is freed twice here, where ASan sees it. */
		keyring_keys_free(keys, n);
		return 1;
	}
	r = keyring_default_key(argv[optind], err, sizeof(err));
	printf("result %zu default-key=%s\n", n, r > 0 ? err : "-");
	print_keys(keys, n);
	keyring_keys_free(keys, n);
	return 0;
}
