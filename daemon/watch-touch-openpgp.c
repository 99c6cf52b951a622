/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The OpenPGP touch detector (watch-touch-openpgp.h; the signals and the choice: doc/touch.md).
 *
 * One operation at a time: a stub open of a touch-protected slot starts a probe 50 ms later (the
 * agent needs that long to reach scdaemon); a probe that returns at once (the operation had not
 * taken the card's lock yet, or it was a listing, not an operation) is tried again 100, 200, then
 * every 400 ms until 2 s after the last open: on a busy machine the agent reaches the card's lock
 * up to a second after it read the stub. Spaced, with the agent's pid asked once an operation, so
 * that an operation opens few assuan connections: tries every 100 ms met an agent restarting after
 * a suspend and keyctld died in gpgme's assuan read (doc/touch.md, section 9; cause not found).
 * A probe still waiting after 300 ms while no pinentry runs for the agent raises touch_pending;
 * its return (the card answered: touched, refused or timed out) clears it. A pinentry means a PIN
 * prompt, which holds the lock as a touch does: nothing is raised while it runs, and the 300 ms
 * start again when it exits (its pidfd).
 *
 * Measured on the bed with GnuPG 2.2.40 (Debian 12): during a signature waiting for a touch,
 * both `GETINFO card_list` and `GETINFO status` on S.scdaemon waited until the touch and the
 * card saw no APDU but gpg's own; idle, both answer in 2 ms.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "gpgconf-run.h"
#include "gpgme-init.h"
#include "log.h"
#include "touch-requester.h"
#include "loop-wake.h"
#include "util.h"
#include "watch-touch-openpgp.h"
#include "worker-job.h"

#define MSEC 1000ull
#define PROBE_DELAY_USEC (50 * MSEC)
#define PENDING_AFTER_USEC (300 * MSEC)
#define RETRY_DELAY_USEC (100 * MSEC)
#define RETRY_DELAY_MAX_USEC (400 * MSEC)
#define RETRY_WINDOW_USEC (2000 * MSEC)
#define PROBE_TRIES_MAX 8
/* A cached touch lasts 15 s after the last one (doc/touch.md, section 3). */
#define CACHED_USEC (15000 * MSEC)
/* scdaemon that never answers: the wait is called over, the probe's thread left to end. */
#define PROBE_GIVE_UP_USEC (120000 * MSEC)
#define RECENT_MAX 8

struct probe {
	struct worker_job base; /* first: worker_job frees the whole struct */
	char home[PATH_MAX];
	char sockdir[PATH_MAX]; /* in: the last probe's, or empty; out (base.lock): this one's */
	struct loop_wake *wake; /* a reference of its own: the job may outlive the watch */
	pid_t agent; /* in: this operation's, 0 to ask; out (base.lock): gpg-agent's pid, or 0 */
};

struct recent {
	char token[TOKEN_ID_MAX];
	char slot[TOUCH_SLOT_MAX];
	uint64_t done_usec;
};

enum phase { IDLE, WAIT_START, PROBING };

struct touch_openpgp {
	sd_event *event;
	struct model *model;
	char home[PATH_MAX];
	char dir[PATH_MAX];
	sd_event_source *inotify, *timer, *pinentry_src;
	struct loop_wake *wake;
	struct probe *job;
	char sockdir[PATH_MAX]; /* gpgconf's socketdir, asked once, not once a try */
	pid_t agent; /* this operation's gpg-agent pid as its last probe found it, 0 if none */
	enum phase phase;
	char token[TOKEN_ID_MAX];
	char slot[TOUCH_SLOT_MAX];
	unsigned tries;
	uint64_t first_usec, probe_usec;
	bool pending;
	struct recent recent[RECENT_MAX];
};

static const char *const slot_names[3] = { "sig", "dec", "aut" };

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static uint64_t now_mono(const struct touch_openpgp *t)
{
	uint64_t now = 0;

	(void)sd_event_now(t->event, CLOCK_MONOTONIC, &now);
	return now;
}

/* ---- the probe, on its thread ---------------------------------------------------------- */

struct pid_data {
	char buf[16];
	size_t n;
};

static unsigned on_pid_data(void *opaque, const void *data, size_t len)
{
	struct pid_data *p = opaque;
	size_t take = MIN(len, sizeof(p->buf) - 1 - p->n);

	memcpy(p->buf + p->n, data, take);
	p->n += take;
	return 0;
}

/* gpg-agent's pid, for the pinentry gate. Asked, not taken from SO_PEERCRED: that names who
 * called listen(), which for `gpg-agent --daemon` is the parent that forked it and exited. */
static pid_t agent_pid(const char *sock)
{
	struct pid_data d = {};
	char *end;
	long pid;

	if (gpgme_assuan_command(sock, "GETINFO pid", on_pid_data, &d) != 0 || d.n == 0)
		return 0;
	pid = strtol(d.buf, &end, 10);
	return *end == 0 && pid > 1 && pid < INT_MAX ? (pid_t)pid : 0;
}

static int probe_run(struct worker_job *base)
{
	struct probe *p = (struct probe *)base;
	char dir[PATH_MAX], sock[PATH_MAX + 16];
	pid_t agent = 0;
	int r = 0;

	strcpy_trunc(dir, sizeof(dir), p->sockdir);
	if (isempty(dir))
		r = gpgconf_run(isempty(p->home) ? NULL : p->home, "--list-dirs", "socketdir", dir,
		                sizeof(dir));
	if (r == 0 && !isempty(dir)) {
		(void)snprintf(sock, sizeof(sock), "%s/S.gpg-agent", dir);
		/* --no-autostart's way: only an agent that runs is asked, once an operation: the
		 * agent that opened the stub serves the operation's every try. */
		agent = p->agent > 0 ? p->agent : unix_socket_answers(sock) ? agent_pid(sock) : 0;
		pthread_mutex_lock(&base->lock);
		p->agent = agent;
		/* Kept while an agent answers there; else asked again next time (the directory
		 * moves when /run/user/UID comes or goes). */
		strcpy_trunc(p->sockdir, sizeof(p->sockdir), agent > 0 ? dir : "");
		pthread_mutex_unlock(&base->lock);
		(void)snprintf(sock, sizeof(sock), "%s/S.scdaemon", dir);
		/* No scdaemon, nothing holds a card through it: never start one. The command waits
		 * while an operation holds a card (scdaemon's lock_card); no APDU is sent. */
		if (!unix_socket_answers(sock))
			r = -EHOSTDOWN;
		else if (gpgme_assuan_command(sock, "GETINFO card_list", NULL, NULL) != 0)
			r = -EIO;
	} else
		r = r < 0 ? r : -ENOENT;
	(void)loop_wake_post(p->wake);
	p->wake = loop_wake_unref(p->wake);
	return r;
}

/* ---- which slot a stub is, and whether it asks for a touch ----------------------------- */

static struct recent *recent_find(struct touch_openpgp *t, const char *token, const char *slot)
{
	for (size_t i = 0; i < RECENT_MAX; i++)
		if (streq(t->recent[i].token, token) && streq(t->recent[i].slot, slot))
			return &t->recent[i];
	return NULL;
}

static void recent_put(struct touch_openpgp *t, const char *token, const char *slot, uint64_t now)
{
	struct recent *r = recent_find(t, token, slot), *oldest = &t->recent[0];

	for (size_t i = 1; !r && i < RECENT_MAX; i++)
		if (t->recent[i].done_usec < oldest->done_usec)
			oldest = &t->recent[i];
	if (!r) {
		r = oldest;
		strcpy_trunc(r->token, sizeof(r->token), token);
		strcpy_trunc(r->slot, sizeof(r->slot), slot);
	}
	r->done_usec = now;
}

static bool policy_asks(struct touch_openpgp *t, enum touch_policy p, const char *token,
                        const char *slot)
{
	const struct recent *r;

	if (p == TOUCH_ON || p == TOUCH_FIXED)
		return true;
	if (p != TOUCH_CACHED && p != TOUCH_CACHED_FIXED)
		return false;
	r = recent_find(t, token, slot);
	if (r && now_mono(t) - r->done_usec <= CACHED_USEC) {
		log_debug("Touch: %s %s touched %llu ms ago, within its cache", token, slot,
		          (unsigned long long)((now_mono(t) - r->done_usec) / MSEC));
		return false;
	}
	return true;
}

/* The present token and slot holding the card key whose keygrip is grip; 0, or -ENOENT. */
static int slot_of_grip(struct touch_openpgp *t, const char *grip, const struct token **ret_tok,
                        unsigned *ret_slot)
{
	const struct key *keys;
	const struct token *toks;
	size_t nk = model_keys(t->model, &keys), nt = model_tokens(t->model, &toks);

	for (size_t k = 0; k < nk; k++)
		for (size_t s = 0; s < keys[k].n_subkeys; s++) {
			const struct subkey *sk = &keys[k].subkeys[s];

			if (sk->secret != SECRET_CARD || strcasecmp(sk->keygrip, grip) != 0)
				continue;
			for (size_t i = 0; i < nt; i++) {
				if (!toks[i].present || !toks[i].has_openpgp)
					continue;
				for (unsigned j = 0; j < ELEMENTSOF(slot_names); j++)
					if (strcasecmp(toks[i].openpgp.slots[j].fingerprint,
					               sk->fingerprint) == 0) {
						*ret_tok = &toks[i];
						*ret_slot = j;
						return 0;
					}
			}
		}
	return -ENOENT;
}

/* ---- the states ------------------------------------------------------------------------ */

static int arm(struct touch_openpgp *t, uint64_t usec);

static void raise_pending(struct touch_openpgp *t, bool on, enum touch_end end)
{
	struct touch_pending tp = { .application = TOUCH_APP_OPENPGP };
	struct timespec ts;
	int r;

	if (on == t->pending)
		return;
	t->pending = on;
	if (on) {
		(void)clock_gettime(CLOCK_REALTIME, &ts);
		tp.since = ts.tv_sec;
		tp.since_usec = (uint32_t)(ts.tv_nsec / 1000);
		strcpy_trunc(tp.slot, sizeof(tp.slot), t->slot);
		touch_requester_guess(t->home, tp.requester, sizeof(tp.requester));
		r = model_touch_set(t->model, t->token, &tp);
	} else
		r = model_touch_done(t->model, t->token, end);
	if (r < 0 && r != -ENOENT)
		log_debug_errno(r, "Touch: cannot update %s: %m", t->token);
}

static void job_drop(struct touch_openpgp *t)
{
	if (t->job)
		worker_job_unref(&t->job->base);
	t->job = NULL;
	t->pinentry_src = sd_event_source_disable_unref(t->pinentry_src);
}

static void end_operation(struct touch_openpgp *t, enum touch_end end)
{
	if (t->pending)
		recent_put(t, t->token, t->slot, now_mono(t));
	raise_pending(t, false, end);
	job_drop(t);
	t->phase = IDLE;
	if (t->timer)
		(void)sd_event_source_set_enabled(t->timer, SD_EVENT_OFF);
}

static int start_probe(struct touch_openpgp *t)
{
	struct probe *p = calloc(1, sizeof(*p));
	struct loop_wake *wake;
	int r;

	if (!p)
		return -ENOMEM;
	strcpy_trunc(p->home, sizeof(p->home), t->home);
	strcpy_trunc(p->sockdir, sizeof(p->sockdir), t->sockdir);
	/* A new operation asks anew: the last one's agent may have been replaced, and a zombie's
	 * pid still answers kill 0, so liveness is no test. */
	p->agent = t->tries > 0 ? t->agent : 0;
	wake = p->wake = loop_wake_ref(t->wake);
	r = worker_job_start(&p->base, probe_run);
	if (r < 0) {
		loop_wake_unref(wake); /* p is freed */
		return r;
	}
	t->job = p;
	t->tries++;
	t->probe_usec = now_mono(t);
	t->phase = PROBING;
	return arm(t, PENDING_AFTER_USEC);
}

/* A child of gpg-agent that is neither scdaemon nor tpm2daemon: a pinentry (the agent's only
 * other children). Its pid, or 0. The agent's pid came from its socket's SO_PEERCRED. */
static pid_t pinentry_of(pid_t agent)
{
	_cleanup_(closedirp) DIR *d = opendir("/proc");
	struct dirent *de;

	if (!d || agent <= 0)
		return 0;
	while ((de = readdir(d))) {
		char path[64], buf[256], *close_paren;
		int ppid = 0;
		ssize_t n;
		_cleanup_(closep) int fd = -1;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name) >= (int)sizeof(path))
			continue;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (n <= 0)
			continue;
		buf[n] = 0;
		/* "pid (comm) S ppid ...": comm may hold spaces and parentheses. */
		close_paren = strrchr(buf, ')');
		if (!close_paren || sscanf(close_paren, ") %*c %d", &ppid) != 1 || ppid != agent)
			continue;
		if (strstr(buf, "(scdaemon)") || strstr(buf, "(tpm2daemon)"))
			continue;
		return (pid_t)atoi(de->d_name);
	}
	return 0;
}

static int on_pinentry_exit(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct touch_openpgp *t = userdata;

	t->pinentry_src = sd_event_source_disable_unref(t->pinentry_src);
	/* The PIN was typed; the operation goes on to the card, which may now want the touch. */
	if (t->phase == PROBING)
		return arm(t, PENDING_AFTER_USEC);
	return 0;
}

/* While a pinentry runs the wait is a PIN prompt: wait for its exit instead. Returns whether
 * one runs (and is waited for). */
static bool pinentry_gate(struct touch_openpgp *t)
{
	pid_t agent, pin;
	int fd, r;

	pthread_mutex_lock(&t->job->base.lock);
	agent = t->job->agent;
	pthread_mutex_unlock(&t->job->base.lock);
	pin = pinentry_of(agent);
	if (pin <= 0)
		return false;
	fd = (int)syscall(SYS_pidfd_open, pin, 0);
	if (fd < 0)
		return true; /* gone already, or no pidfd: try again at the next tick */
	r = sd_event_add_io(t->event, &t->pinentry_src, fd, EPOLLIN, on_pinentry_exit, t);
	if (r < 0) {
		close(fd);
		return true;
	}
	(void)sd_event_source_set_io_fd_own(t->pinentry_src, true);
	(void)sd_event_source_set_description(t->pinentry_src, "touch-pinentry");
	return true;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct touch_openpgp *t = userdata;
	int r;

	switch (t->phase) {
	case IDLE:
		return 0;
	case WAIT_START:
		r = start_probe(t);
		if (r < 0) {
			log_debug_errno(r, "Touch: cannot start the scdaemon probe: %m");
			end_operation(t, TOUCH_END_TOUCHED);
		}
		return 0;
	case PROBING:
		if (t->pending) {
			end_operation(t, TOUCH_END_TIMEOUT);
			return 0;
		}
		if (t->pinentry_src || pinentry_gate(t)) {
			if (!t->pinentry_src)
				return arm(t, PENDING_AFTER_USEC);
			return 0;
		}
		log_debug("Touch: %s %s waits (probe %u blocked 300 ms)", t->token, t->slot,
		          t->tries);
		raise_pending(t, true, TOUCH_END_TOUCHED);
		return arm(t, PROBE_GIVE_UP_USEC);
	}
	return 0;
}

static int on_probe_done(void *userdata)
{
	struct touch_openpgp *t = userdata;
	uint64_t now = now_mono(t);
	bool quick;

	if (t->phase != PROBING || !t->job)
		return 0;
	/* The thread posts just before it returns: its end is a moment away. */
	pthread_mutex_lock(&t->job->base.lock);
	(void)worker_job_wait_locked(&t->job->base, worker_job_now_usec() + 100 * MSEC);
	strcpy_trunc(t->sockdir, sizeof(t->sockdir), t->job->sockdir);
	t->agent = t->job->agent;
	pthread_mutex_unlock(&t->job->base.lock);
	/* Back at once, or no scdaemon yet (the agent starts it on demand, after it read the
	 * stub): the operation may not hold the card yet. */
	quick = !t->pending && now - t->probe_usec < PENDING_AFTER_USEC;
	log_debug("Touch: probe %u for %s %s back after %llu ms", t->tries, t->token, t->slot,
	          (unsigned long long)((now - t->probe_usec) / MSEC));
	if (quick && t->tries < PROBE_TRIES_MAX && now - t->first_usec < RETRY_WINDOW_USEC) {
		job_drop(t);
		t->phase = WAIT_START;
		return arm(t, MIN(RETRY_DELAY_USEC << MIN(t->tries - 1, 2u), RETRY_DELAY_MAX_USEC));
	}
	end_operation(t, TOUCH_END_TOUCHED);
	return 0;
}

static int arm(struct touch_openpgp *t, uint64_t usec)
{
	int r;

	if (!t->timer) {
		r = sd_event_add_time_relative(t->event, &t->timer, CLOCK_MONOTONIC, usec, 0,
		                               on_timer, t);
		if (r >= 0)
			(void)sd_event_source_set_description(t->timer, "touch-openpgp");
		return r;
	}
	r = sd_event_source_set_time_relative(t->timer, usec);
	return r < 0 ? r : sd_event_source_set_enabled(t->timer, SD_EVENT_ONESHOT);
}

/* ---- the trigger ----------------------------------------------------------------------- */

static bool stub_name(const char *name, char grip[static 41])
{
	size_t i;

	for (i = 0; i < 40; i++)
		if (!strchr("0123456789ABCDEF", name[i]) || !name[i])
			return false;
	/* "<GRIP>.key" only: new stubs are written as .key.tmp and renamed. */
	if (!streq(name + 40, ".key"))
		return false;
	memcpy(grip, name, 40);
	grip[40] = 0;
	return true;
}

static int on_inotify(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
	struct touch_openpgp *t = userdata;
	const struct token *tok;
	char grip[41];
	unsigned slot;

	if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
		t->inotify = sd_event_source_disable_unref(t->inotify);
		return 0;
	}
	if (ev->len == 0 || !stub_name(ev->name, grip))
		return 0;
	if (slot_of_grip(t, grip, &tok, &slot) < 0 ||
	    !policy_asks(t, tok->openpgp.slots[slot].touch, tok->id, slot_names[slot]))
		return 0;
	if (t->phase != IDLE) {
		/* Another open while a probe runs for the last one (a listing opens every stub,
		 * keyctld's own included): the tries start over, so that an operation that
		 * follows a listing is still seen. A wait already raised stays with its slot. */
		if (!t->pending) {
			strcpy_trunc(t->token, sizeof(t->token), tok->id);
			strcpy_trunc(t->slot, sizeof(t->slot), slot_names[slot]);
			t->tries = 0;
			t->first_usec = now_mono(t);
		}
		return 0;
	}
	log_debug("Touch: the stub of %s %s opened", tok->id, slot_names[slot]);
	strcpy_trunc(t->token, sizeof(t->token), tok->id);
	strcpy_trunc(t->slot, sizeof(t->slot), slot_names[slot]);
	t->tries = 0;
	t->first_usec = now_mono(t);
	t->phase = WAIT_START;
	return arm(t, PROBE_DELAY_USEC);
}

void touch_openpgp_rewatch(struct touch_openpgp *t)
{
	if (t->inotify)
		return;
	/* Missing (no secret key yet): the keyring watch's next change calls this again. */
	(void)sd_event_add_inotify(t->event, &t->inotify, t->dir,
	                           IN_OPEN | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR, on_inotify,
	                           t);
	if (t->inotify)
		(void)sd_event_source_set_description(t->inotify, "touch-stubs");
}

int touch_openpgp_new(sd_event *e, struct model *m, const char *gnupghome,
                      struct touch_openpgp **ret)
{
	_cleanup_(touch_openpgp_freep) struct touch_openpgp *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->event = sd_event_ref(e);
	t->model = m;
	r = strcpy_bounded(t->home, sizeof(t->home), gnupghome ? gnupghome : "");
	if (r < 0)
		return r;
	if (snprintf(t->dir, sizeof(t->dir), "%s/private-keys-v1.d", gnupghome) >=
	    (int)sizeof(t->dir))
		return -ENAMETOOLONG;
	r = loop_wake_new(e, "touch-probe", on_probe_done, t, &t->wake);
	if (r < 0)
		return r;
	touch_openpgp_rewatch(t);
	*ret = TAKE_PTR(t);
	return 0;
}

struct touch_openpgp *touch_openpgp_free(struct touch_openpgp *t)
{
	if (!t)
		return NULL;
	job_drop(t);
	sd_event_source_disable_unref(t->inotify);
	sd_event_source_disable_unref(t->timer);
	loop_wake_detach(t->wake);
	sd_event_unref(t->event);
	free(t);
	return NULL;
}
