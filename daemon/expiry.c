/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Expiry: the pure part sets levels on keys and finds the next deadline; the timer part wakes the
 * loop at that deadline. The levels are what counts, the one rule every output honours: a
 * subkey replaced by a newer usable one of the same use, a revoked one and every subkey of a key
 * retired in keyctl.conf stay listed but count as ok (their level by the clock alone is kept
 * in expiry_level for the audit); a replaced subkey on a card whose replacement is not on that
 * card still counts, at most as a warning, since the card is what signs. The timer is an sd-event
 * CLOCK_REALTIME timer with 1 s accuracy (levels are about days; one second lets the kernel
 * coalesce wake-ups and costs nothing visible). Absolute CLOCK_REALTIME timers already fire at the
 * right wall time after the clock is set, but a backward jump can make a crossed threshold
 * uncrossed again, so a second timerfd with TFD_TIMER_CANCEL_ON_SET reports every clock change and
 * the callback recomputes.
 *
 * Does not: notify, log, or decide what a level means to a user (audit.c words findings).
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "expiry.h"

#define USEC_PER_SEC UINT64_C(1000000)

struct expiry_policy expiry_policy_from_config(const struct config *cfg)
{
	return (struct expiry_policy){
		.thresholds = cfg->thresholds,
		.n_thresholds = cfg->n_thresholds,
		.warning_days = cfg->warning_days,
		.critical_days = cfg->critical_days,
	};
}

static const unsigned caps[] = { CAP_SIGN, CAP_ENCRYPT, CAP_AUTH };

#define USES (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH)

static bool key_retired(const struct key *k, const struct config *cfg)
{
	for (unsigned i = 0; i < cfg->n_retired; i++)
		if (strcasecmp(cfg->retired[i], k->fingerprint) == 0)
			return true;
	return false;
}

/* o takes over from s: a newer subkey of the same key doing at least what s does, usable now
 * (not revoked, not expired), and lasting longer or for ever. */
static bool replaces(const struct subkey *o, const struct subkey *s)
{
	unsigned need = s->capabilities & USES;

	if (o == s || o->is_primary || o->revoked || o->expired ||
	    o->expiry_level == LEVEL_EXPIRED || o->created <= s->created)
		return false;
	if (need == 0 || (o->capabilities & need) != need)
		return false;
	return o->expires == 0 || (s->expires != 0 && o->expires > s->expires);
}

/* The newest subkey that replaces s, or NULL: after two rotations the one in use now. */
static const struct subkey *replacement(const struct key *k, const struct subkey *s)
{
	const struct subkey *best = NULL;

	if (s->is_primary)
		return NULL; /* the primary's expiry is the key's */
	for (size_t i = 0; i < k->n_subkeys; i++)
		if (replaces(&k->subkeys[i], s) && (!best || k->subkeys[i].created > best->created))
			best = &k->subkeys[i];
	return best;
}

/* The card is what signs: s lives on a card (its stub names the serial) and its replacement is
 * not on that card, so until it is moved there the old subkey is still the one in use. Unless
 * the user now carries the replacement's card and not the old one (a new token took over): the
 * card plugged in is the one that signs. */
static bool replacement_off_card(const struct subkey *s, const struct subkey *o)
{
	if (s->secret != SECRET_CARD || isempty(s->card_serial))
		return false;
	if (o->secret == SECRET_CARD && strcasecmp(o->card_serial, s->card_serial) == 0)
		return false;
	if (!isempty(o->token_id) && o->token_present && !s->token_present)
		return false;
	return isempty(s->token_id) || !streq(o->token_id, s->token_id);
}

/* What counts: a superseded subkey (revoked, replaced, of a retired key) is ok, a replaced one
 * whose replacement is not on its card at most warning. */
static void subkey_count(const struct key *k, struct subkey *s)
{
	const struct subkey *o = replacement(k, s);

	s->replaced_by[0] = 0;
	if (o)
		strcpy_trunc(s->replaced_by, sizeof(s->replaced_by), o->fingerprint);
	if (k->retired || s->revoked)
		s->level = LEVEL_OK;
	else if (o)
		s->level =
		        replacement_off_card(s, o) ? MIN(s->expiry_level, LEVEL_WARNING) : LEVEL_OK;
}

/* The worst, over its uses (and its primary key), of the best counted subkey for that use; a
 * replaced subkey still counted (its replacement off its card) counts on its own. */
enum level expiry_key_level(const struct key *k)
{
	enum level worst = LEVEL_OK;

	if (k->revoked || k->retired || k->n_subkeys == 0)
		return LEVEL_OK;
	/* The primary's expiry is the key's. */
	worst = k->subkeys[0].level;
	for (size_t c = 0; c < ELEMENTSOF(caps); c++) {
		bool any = false;
		enum level best = LEVEL_EXPIRED;

		for (size_t i = 0; i < k->n_subkeys; i++) {
			const struct subkey *s = &k->subkeys[i];

			if (subkey_superseded(k, s) || !(s->capabilities & caps[c]))
				continue;
			if (!isempty(s->replaced_by)) {
				worst = MAX(worst, s->level);
				continue;
			}
			any = true;
			best = MIN(best, s->level);
		}
		if (any)
			worst = MAX(worst, best);
	}
	return worst;
}

int64_t expiry_apply(struct key *keys, size_t n_keys, const struct config *cfg, int64_t now)
{
	struct expiry_policy p = expiry_policy_from_config(cfg);
	int64_t next = 0;

	for (size_t i = 0; i < n_keys; i++) {
		struct key *k = &keys[i];

		k->retired = key_retired(k, cfg);
		for (size_t j = 0; j < k->n_subkeys; j++) {
			struct subkey *s = &k->subkeys[j];
			int64_t t;

			s->expiry_level = expiry_level(&p, s->expires, s->expired, now);
			s->level = s->expiry_level;
			/* Superseded subkeys still show their expiry, and a replacement's expiry
			 * ends the supersession: one extra wake-up per threshold is cheap. */
			t = expiry_next_change(&p, s->expires, now);
			if (t > 0 && (next == 0 || t < next))
				next = t;
		}
		/* After every raw level: replacement() asks whether the newer one expired. */
		for (size_t j = 0; j < k->n_subkeys; j++)
			subkey_count(k, &k->subkeys[j]);
		k->level = expiry_key_level(k);
	}
	return next;
}

int expiry_subkey_threshold(const struct subkey *s, const struct config *cfg, int64_t now)
{
	struct expiry_policy p = expiry_policy_from_config(cfg);

	if (s->expired)
		return -ENOENT;
	return expiry_threshold_crossed(&p, s->expires, now);
}

struct expiry_timer {
	sd_event *event;
	sd_event_source *timer;
	sd_event_source *clock_change;
	int clock_fd;
	expiry_timer_fn fn;
	void *userdata;
};

static int64_t realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct expiry_timer *t = userdata;

	return t->fn(t, realtime_now(), t->userdata);
}

/*
 * Arms the CANCEL_ON_SET timer at the far future: it never expires, it only gets cancelled. The
 * largest time_t, as systemd's time_change_fd() (src/basic/time-util.c) arms its own: INT32_MAX
 * seconds is January 2038, after which the timer would be due at once and the loop would spin.
 */
static int clock_fd_arm(int fd)
{
	const int flags = TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET;
	struct itimerspec its = { .it_value.tv_sec = TIME_T_MAX };

	if (timerfd_settime(fd, flags, &its, NULL) >= 0)
		return 0;
#if ULONG_MAX < UINT64_MAX
	/* A 32-bit kernel without 64-bit time refuses TIME_T_MAX; INT32_MAX is then as far as it
	 * counts. systemd falls back the same way (systemd issue 14362); unlike it, not once that
	 * moment has passed, which would be the spin again. */
	if (sizeof(time_t) == 8 && (errno == EOVERFLOW || errno == EOPNOTSUPP || errno == ENOSYS) &&
	    realtime_now() < INT32_MAX) {
		its.it_value.tv_sec = INT32_MAX;
		if (timerfd_settime(fd, flags, &its, NULL) >= 0)
			return 0;
	}
#endif
	return -errno;
}

static int on_clock_change(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct expiry_timer *t = userdata;
	uint64_t ticks;
	int r;

	/* ECANCELED is the news: the clock was set. Either way re-arm before calling out. */
	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != ECANCELED && errno != EAGAIN)
		return -errno;
	r = clock_fd_arm(fd);
	if (r < 0)
		return r;
	return t->fn(t, realtime_now(), t->userdata);
}

int expiry_timer_new(sd_event *e, expiry_timer_fn fn, void *userdata, struct expiry_timer **ret)
{
	_cleanup_(expiry_timer_freep) struct expiry_timer *t = NULL;
	int r;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->clock_fd = -1;
	t->event = sd_event_ref(e);
	t->fn = fn;
	t->userdata = userdata;

	t->clock_fd = timerfd_create(CLOCK_REALTIME, TFD_NONBLOCK | TFD_CLOEXEC);
	if (t->clock_fd < 0)
		return -errno;
	r = clock_fd_arm(t->clock_fd);
	if (r < 0)
		return r;
	r = sd_event_add_io(e, &t->clock_change, t->clock_fd, EPOLLIN, on_clock_change, t);
	if (r < 0)
		return r;
	(void)sd_event_source_set_description(t->clock_change, "expiry-clock-change");

	*ret = TAKE_PTR(t);
	return 0;
}

struct expiry_timer *expiry_timer_free(struct expiry_timer *t)
{
	if (!t)
		return NULL;
	sd_event_source_disable_unref(t->timer);
	sd_event_source_disable_unref(t->clock_change);
	if (t->clock_fd >= 0)
		close(t->clock_fd);
	sd_event_unref(t->event);
	free(t);
	return NULL;
}

int expiry_timer_arm(struct expiry_timer *t, int64_t deadline)
{
	uint64_t usec;
	int r;

	if (deadline <= 0) {
		if (t->timer)
			return sd_event_source_set_enabled(t->timer, SD_EVENT_OFF);
		return 0;
	}
	usec = (uint64_t)deadline * USEC_PER_SEC;
	if (!t->timer) {
		r = sd_event_add_time(t->event, &t->timer, CLOCK_REALTIME, usec, USEC_PER_SEC,
		                      on_timer, t);
		if (r < 0)
			return r;
		(void)sd_event_source_set_description(t->timer, "expiry-deadline");
		return 0;
	}
	r = sd_event_source_set_time(t->timer, usec);
	if (r < 0)
		return r;
	return sd_event_source_set_enabled(t->timer, SD_EVENT_ONESHOT);
}
