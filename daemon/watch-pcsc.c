/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PC/SC watcher: one worker thread (watch-pcsc-worker.c) blocks in SCardGetStatusChange
 * (INFINITE) over every reader plus the "\\?PnP?\Notification" pseudo reader, and reads a card when
 * it appears or its event counter (upper 16 bits of dwEventState) moves. Results go into a
 * mutex-guarded queue and wake the sd-event loop (loop-wake.c); the loop side turns them into
 * model sightings.
 *
 * Reading (card-pcsc.c): the only application we SELECT is OpenPGP, which is the one scdaemon
 * expects selected; selecting Yubico's management applet would leave scdaemon talking to the
 * wrong application until it re-selects, so the device serial of a YubiKey is taken from the
 * OpenPGP AID (the same number in BCD) instead. A card that stops answering is reported as "card
 * did not answer within 5 s" and its read left to finish. A card is read at most twice per state
 * change (one retry after a reset by another program), never in a loop.
 *
 * Sharing: a card held exclusively (SCARD_STATE_EXCLUSIVE, or SCardConnect answering
 * SCARD_E_SHARING_VIOLATION: scdaemon without pcsc-shared) is read through scdaemon instead
 * (card-scd.c, on the worker thread, with its own timeout). A card in shared use
 * (SCARD_STATE_INUSE: scdaemon with pcsc-shared) is also asked through scdaemon when gpg-agent
 * is already running, to keep out of its way; otherwise we read it ourselves. Where GnuPG 2.4's
 * scdaemon runs its own CCID driver (no disable-ccid), a card read over PC/SC is also put to
 * scdaemon (SERIALNO only), because that scdaemon never looks at pcscd: its answer feeds the
 * scdaemon-ccid-conflict rule.
 *
 * pcscd's absence is a state, not an error: every PC/SC sighting is removed, pcsc_available is
 * cleared, and the loop waits for pcscd's socket ($PCSCLITE_CSOCK_NAME or /run/pcscd/pcscd.comm)
 * with inotify on its directory (or the nearest existing parent: path-wait.c), without polling. A
 * pcscd that accepts the connection and then drops it (pcsc-lite 2.x when polkit refuses the
 * caller: no active session, a container, an ssh login) is a refusal: daemon_info.pcsc_error says
 * so, and the next attempt waits 1 s, doubling to 5 min, until a context holds through its first
 * look; a new socket or pcsc_watch_kick() (a token plugged in) tries again at once. Under systemd,
 * pcscd.socket keeps the socket, so SCardEstablishContext starts pcscd on demand and the service
 * never looks absent. pcscd --auto-exit (Debian's pcscd.service) arms its 60 s exit alarm only
 * when its list of client contexts becomes empty (winscard_svc.c), so the context this watcher
 * holds keeps pcscd running for as long as keyctld runs. After suspend/resume pcscd may drop and
 * re-add readers; the PnP pseudo reader reports both, and the readers are listed anew. While the
 * system sleeps (pcsc_watch_set_asleep(), from logind's PrepareForSleep through main.c) no read
 * starts, a read the sleep cut is dropped rather than reported as an error, and on resume every
 * present card is read again, as if inserted anew: a card swapped meanwhile is seen at once.
 *
 * Does not: read a card itself (card-pcsc.c, card-scd.c), merge sightings (model.c), or log above
 * debug.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-login.h>
#include <winscard.h>

#include "card-openpgp.h"
#include "card-pcsc.h"
#include "fileio.h"
#include "log.h"
#include "path-wait.h"
#include "watch-pcsc-internal.h"
#include "watch-pcsc.h"
#include "card-scd.h"
#include "worker-job.h"

#define DEFAULT_SOCKET "/run/pcscd/pcscd.comm"
#define SOCKET_RETRIES 20 /* after the socket appeared, pcscd may not listen yet */
#define SOCKET_RETRY_USEC 100000ULL
#define BACKOFF_FIRST_USEC (1 * 1000000ULL)
#define BACKOFF_MAX_USEC (300 * 1000000ULL)
#define NUDGE_USEC 100000ULL
#define NUDGES_MAX 20 /* 2 s of them */

/* ---- loop side --------------------------------------------------------------------------- */

static int64_t now_epoch(void)
{
	return (int64_t)time(NULL);
}

/* error: why pcscd refuses us, "" when it does not. The audit turns it into a finding. */
static void set_available(struct pcsc_watch *w, bool available, const char *error)
{
	struct daemon_info info;

	memcpy(&info, model_daemon_info(w->model), sizeof(info));
	if (info.pcsc_available == available && streq(info.pcsc_error, error))
		return;
	info.pcsc_available = available;
	strcpy_trunc(info.pcsc_error, sizeof(info.pcsc_error), error);
	if (model_daemon_info_put(w->model, &info) > 0)
		(void)model_update(w->model);
}

static void settle(struct pcsc_watch *w)
{
	if (w->settled)
		return;
	w->settled = true;
	if (w->hooks.settled)
		w->hooks.settled(w->hooks.userdata);
}

static void sighted_add(struct pcsc_watch *w, const char *reader)
{
	for (size_t i = 0; i < w->n_sighted; i++)
		if (streq(w->sighted[i], reader))
			return;
	if (w->n_sighted < READERS_MAX)
		strcpy_trunc(w->sighted[w->n_sighted++], READER_NAME_MAX, reader);
}

static void sighted_del(struct pcsc_watch *w, const char *reader)
{
	for (size_t i = 0; i < w->n_sighted; i++)
		if (streq(w->sighted[i], reader)) {
			memmove(w->sighted[i], w->sighted[w->n_sighted - 1], READER_NAME_MAX);
			w->n_sighted--;
			return;
		}
}

static int start_worker(struct pcsc_watch *w);
static int arm_wait(struct pcsc_watch *w);
static int arm_inotify(struct pcsc_watch *w);
static void went_down(struct pcsc_watch *w, bool was_up, LONG rv);

static void join_worker(struct pcsc_watch *w)
{
	if (!w->thread_running)
		return;
	(void)pthread_join(w->thread, NULL);
	w->thread_running = false;
}

static int on_wakeup(void *userdata)
{
	struct pcsc_watch *w = userdata;
	struct msg *q;
	int r;

	pthread_mutex_lock(&w->lock);
	q = w->queue;
	w->queue = NULL;
	w->queue_tail = &w->queue;
	pthread_mutex_unlock(&w->lock);

	while (q) {
		struct msg *m = q;

		q = m->next;
		switch (m->type) {
		case MSG_UP:
			set_available(w, true, "");
			break;
		case MSG_SETTLED:
			/* A context that got through its first look is no refusal. */
			w->backoff_usec = 0;
			settle(w);
			break;
		case MSG_CARD:
			r = model_sighting_put(w->model, SIGHTING_PCSC, m->reader, &m->token,
			                       now_epoch());
			if (r < 0)
				log_debug_errno(r, "PC/SC: sighting of %s not stored: %m",
				                m->reader);
			sighted_add(w, m->reader);
			break;
		case MSG_GONE:
			(void)model_sighting_remove(w->model, SIGHTING_PCSC, m->reader,
			                            now_epoch());
			sighted_del(w, m->reader);
			break;
		case MSG_RESCANNED:
			w->rescan_done = MAX(w->rescan_done, m->seq);
			if (w->hooks.rescanned)
				w->hooks.rescanned(w->hooks.userdata);
			break;
		case MSG_DOWN:
			join_worker(w);
			while (w->n_sighted > 0) {
				(void)model_sighting_remove(w->model, SIGHTING_PCSC,
				                            w->sighted[w->n_sighted - 1],
				                            now_epoch());
				w->n_sighted--;
			}
			went_down(w, m->was_up, m->rv);
			settle(w);
			/* No card left to read: a rescan still awaited is done. */
			if (w->hooks.rescanned)
				w->hooks.rescanned(w->hooks.userdata);
			break;
		}
		free(m);
	}
	return 0;
}

/* True when something listens on pcscd's socket. A stale socket file (pcscd killed) refuses. */
static void disarm_wait(struct pcsc_watch *w)
{
	w->socket_source = sd_event_source_disable_unref(w->socket_source);
	path_wait_done(&w->socket_wait);
	w->retry_source = sd_event_source_disable_unref(w->retry_source);
	w->backoff_source = sd_event_source_disable_unref(w->backoff_source);
}

static void try_start(struct pcsc_watch *w)
{
	int r;

	if (w->thread_running)
		return;
	disarm_wait(w);
	r = start_worker(w);
	if (r < 0) {
		log_debug_errno(r, "PC/SC: cannot start the watcher thread: %m");
		(void)arm_wait(w);
	}
}

static int on_backoff(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct pcsc_watch *w = userdata;

	w->backoff_source = sd_event_source_disable_unref(w->backoff_source);
	try_start(w);
	return 0;
}

/* pcscd listens: try now, or after the backoff when the last attempt failed. */
static void start_when_due(struct pcsc_watch *w)
{
	int r;

	if (w->thread_running || w->backoff_source)
		return;
	if (w->backoff_usec == 0) {
		try_start(w);
		return;
	}
	r = sd_event_add_time_relative(w->event, &w->backoff_source, CLOCK_MONOTONIC,
	                               w->backoff_usec, 0, on_backoff, w);
	if (r < 0) {
		log_debug_errno(r, "PC/SC: cannot arm the retry timer, trying now: %m");
		try_start(w);
		return;
	}
	(void)sd_event_source_set_description(w->backoff_source, "pcscd-backoff");
}

/* Why polkit said no, as far as logind tells: pcscd's policy (org.debian.pcsc-lite.policy)
 * allows only a process of the user's active local session, and polkit judges a user service
 * by the user's display session (sd_uid_get_display()), since it is in none. Measured on Debian
 * 13 (tests/integration/test-boot.py, doc/polkit.md): an inactive or remote-only session and
 * lingering without a session are refused; an active local one is let in. "" when logind does
 * not say (no logind: a container, the bed) or the session is active and local. */
static void login_standing(char *buf, size_t size)
{
	_cleanup_(freep) char *state = NULL, *display = NULL;
	int remote;

	*buf = '\0';
	if (sd_uid_get_state(getuid(), &state) < 0)
		return;
	if (streq(state, "lingering")) {
		snprintf(buf, size, "you have no session (lingering)");
		return;
	}
	if (sd_uid_get_display(getuid(), &display) < 0) {
		if (sd_uid_get_sessions(getuid(), 0, NULL) > 0)
			snprintf(buf, size, "you have no local session");
		return;
	}
	remote = sd_session_is_remote(display);
	if (remote > 0)
		snprintf(buf, size, "your session is remote");
	else if (sd_session_is_active(display) == 0)
		snprintf(buf, size, "your session is not the active one on its seat");
}

/* The worker ended. A pcscd that still listens dropped us: a refusal when we never got a
 * context, a crash or restart otherwise. Either way the next attempt waits. */
static void went_down(struct pcsc_watch *w, bool was_up, LONG rv)
{
	char error[ERROR_TEXT_MAX] = "", why[64];
	bool alive = unix_socket_answers(w->socket_path);
	int r;

	w->backoff_usec =
	        w->backoff_usec ? MIN(w->backoff_usec * 2, BACKOFF_MAX_USEC) : BACKOFF_FIRST_USEC;
	if (!was_up && alive) {
		login_standing(why, sizeof(why));
		snprintf(error, sizeof(error),
		         "it accepts the connection, then ends it at SCardEstablishContext (%s, "
		         "0x%08lX)%s%s",
		         pcsc_stringify_error(rv), (unsigned long)rv, *why ? ": " : "", why);
	}
	set_available(w, false, error);
	log_debug("PC/SC: %s; next attempt in %" PRIu64 " s", *error ? error : "pcscd went away",
	          w->backoff_usec / 1000000u);
	r = arm_inotify(w);
	if (r < 0)
		log_debug_errno(r, "PC/SC: cannot watch for pcscd's socket: %m");
	if (alive)
		start_when_due(w);
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct pcsc_watch *w = userdata;

	w->retry_source = sd_event_source_disable_unref(w->retry_source);
	if (unix_socket_answers(w->socket_path)) {
		start_when_due(w);
		return 0;
	}
	if (++w->retries < SOCKET_RETRIES)
		(void)sd_event_add_time_relative(w->event, &w->retry_source, CLOCK_MONOTONIC,
		                                 SOCKET_RETRY_USEC, 0, on_retry, w);
	return 0;
}

/* A new socket is a new pcscd (or its socket unit): it deserves a try at once. */
static void socket_appeared(struct pcsc_watch *w)
{
	w->backoff_usec = 0;
	w->backoff_source = sd_event_source_disable_unref(w->backoff_source);
	if (unix_socket_answers(w->socket_path)) {
		try_start(w);
		return;
	}
	/* The socket exists before pcscd listens on it (bind, then listen): give it a moment, a
	 * bounded number of times, then go back to waiting for the next creation. */
	w->retries = 0;
	if (!w->retry_source)
		(void)sd_event_add_time_relative(w->event, &w->retry_source, CLOCK_MONOTONIC,
		                                 SOCKET_RETRY_USEC, 0, on_retry, w);
}

/* The socket created or re-created (pcscd restarted in an existing /run/pcscd), or the
 * directories above it: path_wait_process() says 1 whenever the socket is there after that. */
static int on_socket_wait(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct pcsc_watch *w = userdata;
	int r = path_wait_process(&w->socket_wait);

	if (r < 0)
		log_debug_errno(r, "PC/SC: watching for pcscd's socket failed, ignoring: %m");
	else if (r > 0)
		socket_appeared(w);
	return 0;
}

/* inotify on the socket's directory, or the nearest existing parent (path-wait.c). */
static int arm_inotify(struct pcsc_watch *w)
{
	int r;

	r = path_wait_arm(&w->socket_wait, w->socket_path);
	if (r < 0)
		return r;
	if (w->socket_source)
		return 0;
	r = sd_event_add_io(w->event, &w->socket_source, path_wait_fd(&w->socket_wait), EPOLLIN,
	                    on_socket_wait, w);
	if (r < 0)
		return r;
	(void)sd_event_source_set_description(w->socket_source, "pcscd-socket");
	return 0;
}

/* Waits for pcscd's socket to answer. */
static int arm_wait(struct pcsc_watch *w)
{
	int r = arm_inotify(w);

	if (r < 0)
		return r;
	/* pcscd may have come back before the watch was in place. */
	if (unix_socket_answers(w->socket_path))
		start_when_due(w);
	return 0;
}

static int start_worker(struct pcsc_watch *w)
{
	int r;

	pthread_mutex_lock(&w->lock);
	w->stopping = false;
	pthread_mutex_unlock(&w->lock);
	r = -pthread_create(&w->thread, NULL, pcsc_worker_main, w);
	if (r < 0)
		return r;
	w->thread_running = true;
	return 0;
}

int pcsc_watch_new(sd_event *e, struct model *m, const struct watch_hooks *hooks,
                   struct pcsc_watch **ret)
{
	_cleanup_(pcsc_watch_freep) struct pcsc_watch *w = NULL;
	const char *sock = getenv("PCSCLITE_CSOCK_NAME");
	int r;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	path_wait_init(&w->socket_wait);
	pthread_mutex_init(&w->lock, NULL);
	w->queue_tail = &w->queue;
	w->event = sd_event_ref(e);
	w->model = m;
	if (hooks)
		w->hooks = *hooks;
	r = strcpy_bounded(w->socket_path, sizeof(w->socket_path),
	                   !isempty(sock) && sock[0] == '/' ? sock : DEFAULT_SOCKET);
	if (r < 0)
		return r;
	/* Never cut: the agent of a shorter home would be a second one, competing for the card. */
	r = strcpy_bounded(w->gnupghome, sizeof(w->gnupghome), model_daemon_info(m)->gnupghome);
	if (r < 0)
		return r;

	r = loop_wake_new(e, "pcsc-watch", on_wakeup, w, &w->wake);
	if (r < 0)
		return r;

	r = start_worker(w);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(w);
	return 0;
}

void pcsc_watch_kick(struct pcsc_watch *w)
{
	if (w->thread_running)
		return;
	w->backoff_usec = 0;
	w->backoff_source = sd_event_source_disable_unref(w->backoff_source);
	if (unix_socket_answers(w->socket_path))
		try_start(w);
}

/* pcsc-lite drops an SCardCancel that finds no SCardGetStatusChange in progress (winscard_clnt.c,
 * `cancellable`): one sent while the worker was between its check of `rescan` and its next wait
 * would leave the request waiting for the next reader event. Cancel again until the worker has
 * taken it, a bounded number of times; the worker also looks again just before it waits. */
static int nudge_later(sd_event_source *s)
{
	int r = sd_event_source_set_time_relative(s, NUDGE_USEC);

	/* A one-shot timer is off once it has fired. */
	return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int on_nudge(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct pcsc_watch *w = userdata;
	bool pending;

	/* Without a context (pcscd away) there is no wait to cancel: the worker sees `rescan`
	 * when it starts again, and the loop stays quiet meanwhile. */
	pthread_mutex_lock(&w->lock);
	pending = w->rescan && w->ctx_valid;
	if (pending)
		(void)SCardCancel(w->ctx);
	pthread_mutex_unlock(&w->lock);
	if (!pending || ++w->nudges >= NUDGES_MAX)
		return 0;
	return nudge_later(s);
}

static void arm_nudge(struct pcsc_watch *w)
{
	int r;

	w->nudges = 0;
	if (w->nudge_source)
		r = nudge_later(w->nudge_source);
	else {
		r = sd_event_add_time_relative(w->event, &w->nudge_source, CLOCK_MONOTONIC,
		                               NUDGE_USEC, 0, on_nudge, w);
		if (r >= 0)
			(void)sd_event_source_set_description(w->nudge_source, "pcsc-rescan");
	}
	if (r < 0)
		log_debug_errno(r, "PC/SC: cannot arm the rescan timer, ignoring: %m");
}

int pcsc_watch_rescan(struct pcsc_watch *w, uint64_t *ret_seq)
{
	uint64_t seq;

	pthread_mutex_lock(&w->lock);
	w->rescan = true;
	seq = ++w->rescan_asked;
	if (w->ctx_valid)
		(void)SCardCancel(w->ctx);
	pthread_mutex_unlock(&w->lock);
	arm_nudge(w);
	if (ret_seq)
		*ret_seq = seq;
	return 0;
}

bool pcsc_watch_rescanned(struct pcsc_watch *w, uint64_t seq)
{
	bool up;

	if (w->rescan_done >= seq)
		return true;
	/* No worker, or one without a context: there is no card to read until pcscd is back,
	 * and then the first look reads every card anyway. */
	pthread_mutex_lock(&w->lock);
	up = w->thread_running && w->ctx_valid;
	pthread_mutex_unlock(&w->lock);
	return !up;
}

void pcsc_watch_set_asleep(struct pcsc_watch *w, bool asleep)
{
	pthread_mutex_lock(&w->lock);
	w->asleep = asleep;
	if (asleep)
		w->sleep_gen++;
	pthread_mutex_unlock(&w->lock);
	/* Every card, changed or not: the reads skipped while asleep are owed, and pcscd may not
	 * report a card swapped during the sleep as a change at all (a reader that lost power
	 * comes back in the state it had). */
	if (!asleep)
		(void)pcsc_watch_rescan(w, NULL);
}

struct pcsc_watch *pcsc_watch_free(struct pcsc_watch *w)
{
	if (!w)
		return NULL;
	if (w->thread_running) {
		pthread_mutex_lock(&w->lock);
		w->stopping = true;
		pthread_mutex_unlock(&w->lock);
		/* SCardCancel is lost when the worker is between two waits: repeat it until the
		 * worker has left (it checks `stopping` before each wait and during reads). But
		 * libpcsclite sends it over a connection of its own, which pcscd's polkit check
		 * refuses once the user's session is gone: at logout the worker stayed in
		 * SCardGetStatusChange and keyctld until the user manager killed it 90 s later
		 * (tests/integration/test-boot.py). After 2 s of refused cancels the worker is left
		 * to the process's exit, and w with it. */
		for (unsigned refused = 0;;) {
			struct timespec ts;
			LONG rv = SCARD_S_SUCCESS;

			pthread_mutex_lock(&w->lock);
			if (w->ctx_valid)
				rv = SCardCancel(w->ctx);
			pthread_mutex_unlock(&w->lock);
			refused = rv == SCARD_S_SUCCESS ? 0 : refused + 1;
			if (refused > 20) {
				log_debug("PC/SC: pcscd refuses SCardCancel (%s); leaving its wait",
				          pcsc_stringify_error(rv));
				return NULL;
			}
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += 100 * 1000000L;
			ts.tv_sec += ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			if (pthread_clockjoin_np(w->thread, NULL, CLOCK_MONOTONIC, &ts) == 0)
				break;
		}
		w->thread_running = false;
	}
	disarm_wait(w);
	w->nudge_source = sd_event_source_disable_unref(w->nudge_source);
	w->wake = loop_wake_detach(w->wake);
	while (w->queue) {
		struct msg *m = w->queue;

		w->queue = m->next;
		free(m);
	}
	pthread_mutex_destroy(&w->lock);
	sd_event_unref(w->event);
	free(w);
	return NULL;
}
