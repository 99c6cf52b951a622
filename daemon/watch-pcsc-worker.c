/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The PC/SC watcher's worker thread (see watch-pcsc.c for the whole design): it blocks in
 * SCardGetStatusChange (INFINITE) over every reader and the PnP pseudo reader, reads a card when
 * it appears or its event counter moves (card-pcsc.c, or card-scd.c when scdaemon holds it),
 * and posts what it found to the loop side's queue.
 *
 * Does not: touch the model or any sd-event object (the loop side does), or log above debug.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "card-openpgp.h"
#include "card-pcsc.h"
#include "card-scd.h"
#include "log.h"
#include "watch-pcsc-internal.h"
#include "worker-job.h"

/* ---- queue (worker -> loop) -------------------------------------------------------------- */

static void post_msg(struct pcsc_watch *w, struct msg *m)
{
	int r;

	pthread_mutex_lock(&w->lock);
	*w->queue_tail = m;
	w->queue_tail = &m->next;
	pthread_mutex_unlock(&w->lock);
	r = loop_wake_post(w->wake);
	if (r < 0)
		log_debug_errno(r, "PC/SC: cannot wake the loop: %m");
}

static void post(struct pcsc_watch *w, enum msg_type type, const char *reader,
                 const struct token *t)
{
	struct msg *m = calloc(1, sizeof(*m));

	if (!m) {
		log_debug("PC/SC: out of memory, dropping a reader event");
		return;
	}
	m->type = type;
	if (reader)
		strcpy_trunc(m->reader, sizeof(m->reader), reader);
	if (t)
		memcpy(&m->token, t, sizeof(*t));
	post_msg(w, m);
}

static void post_rescanned(struct pcsc_watch *w, uint64_t seq)
{
	struct msg *m = calloc(1, sizeof(*m));

	if (!m) {
		log_debug("PC/SC: out of memory, dropping a reader event");
		return;
	}
	m->type = MSG_RESCANNED;
	m->seq = seq;
	post_msg(w, m);
}

static void post_down(struct pcsc_watch *w, bool was_up, LONG rv)
{
	struct msg *m = calloc(1, sizeof(*m));

	if (!m) {
		log_debug("PC/SC: out of memory, dropping a reader event");
		return;
	}
	m->type = MSG_DOWN;
	m->was_up = was_up;
	m->rv = rv;
	post_msg(w, m);
}

bool pcsc_watch_is_stopping(struct pcsc_watch *w)
{
	bool b;

	pthread_mutex_lock(&w->lock);
	b = w->stopping;
	pthread_mutex_unlock(&w->lock);
	return b;
}

static bool stopping(void *userdata)
{
	return pcsc_watch_is_stopping(userdata);
}

/* ---- the worker -------------------------------------------------------------------------- */

struct reader_slot {
	char name[READER_NAME_MAX];
	DWORD state; /* dwCurrentState for the next wait */
	unsigned counter; /* event counter of the last read */
	bool have_read;
	bool reported; /* a MSG_CARD is in the model for this reader */
	struct card_pcsc_read *stuck;
};

/* GnuPG 2.4's scdaemon, its own CCID driver on, does not fall back to pcscd: gpg then finds no
 * card while we read one. Asked once per read, only where that can happen (a SERIALNO costs the
 * agent's start when it is not running); scdaemon's words go into t->gpg_error. */
static void probe_scdaemon(struct pcsc_watch *w, const char *reader, struct token *t)
{
	char err[ERROR_TEXT_MAX - 32] = "";
	int r;

	if (scd_ccid_driver_on(w->gnupghome) <= 0)
		return;
	r = scd_card_reachable(w->gnupghome, err, sizeof(err));
	if (r == -ENODEV)
		snprintf(t->gpg_error, sizeof(t->gpg_error), "%s", err);
	else if (r < 0)
		log_debug("PC/SC: asking scdaemon about %s: %s", reader, err);
}

/*
 * The PIV application is read only at insertion and only while no other program has the card
 * (neither INUSE nor EXCLUSIVE): selecting PIV and OpenPGP again costs a program that verified a
 * PIN its login (FIELD-NOTES: OpenSC#1230, go-piv#48; scdaemon re-asks the PIN), and a card just
 * inserted has no login to lose. Then piv points at where the read goes; else NULL, and t->piv
 * says "in use" at insertion, or stays unset ("not asked": the model keeps the last read).
 */
static struct piv_app *piv_wanted(DWORD ev, bool inserted, struct token *t)
{
	if (!inserted)
		return NULL;
	if (ev & (SCARD_STATE_INUSE | SCARD_STATE_EXCLUSIVE)) {
		t->piv.state = PIV_READ_IN_USE;
		snprintf(t->piv.error, sizeof(t->piv.error), "PIV not read: the card is in use");
		return NULL;
	}
	return &t->piv;
}

/* Reads the card in s into t: its data, or the error that stopped the read. Returns 0 when t is
 * to be reported, -EAGAIN when there is nothing to say (pcscd or the card went away before
 * anything was read: the next state change says so). inserted: a card new in the reader. */
static int read_card(struct pcsc_watch *w, struct reader_slot *s, DWORD ev, bool inserted,
                     struct token *t)
{
	_cleanup_(freep) struct openpgp_card *card = calloc(1, sizeof(*card));
	bool exclusive = ev & SCARD_STATE_EXCLUSIVE;
	bool scd_first = exclusive || ((ev & SCARD_STATE_INUSE) && scd_agent_running(w->gnupghome));
	struct piv_app *piv = piv_wanted(ev, inserted, t);
	char scd_err[ERROR_TEXT_MAX - 32] = "";
	uint16_t sw = 0;
	int r = -EBUSY;

	if (!card)
		return -EAGAIN;
	strcpy_trunc(t->reader, sizeof(t->reader), s->name);

	if (ev & SCARD_STATE_MUTE) {
		pcsc_token_from_card(s->name, NULL, t);
		snprintf(t->error, sizeof(t->error), "card does not answer (mute)");
		return 0;
	}

	if (!scd_first) {
		r = card_pcsc_read(s->name, stopping, w, card, piv, &sw, &s->stuck);
		if (r == -ESHUTDOWN || pcsc_watch_is_stopping(w))
			return -EAGAIN; /* pcscd went away: the next wait says so */
		if (r == -ENODEV && !card->aid[0])
			return -EAGAIN; /* gone before we got anything */
		if (r >= 0 || r == -ENOENT)
			t->read_path = READ_PATH_PCSC;
	}
	if (r == -EBUSY) {
		/* Held exclusively (or in shared use by scdaemon): ask scdaemon, which has it. */
		int q = scd_read_card(w->gnupghome, card, scd_err, sizeof(scd_err));

		if (q >= 0 || q == -ENOENT) {
			r = q;
			t->read_path = READ_PATH_SCDAEMON;
		} else if (!exclusive && scd_first) {
			/* Shared use and scdaemon could not help: read ourselves. */
			memset(card, 0, sizeof(*card));
			r = card_pcsc_read(s->name, stopping, w, card, NULL, &sw, &s->stuck);
			if (r == -ESHUTDOWN || pcsc_watch_is_stopping(w))
				return -EAGAIN;
			if (r >= 0 || r == -ENOENT)
				t->read_path = READ_PATH_PCSC;
		} else
			r = q;
	}

	if (r == -ENOENT) {
		/* A card without the OpenPGP application: seen, nothing to read, no error. */
		pcsc_token_from_card(s->name, NULL, t);
		t->has_openpgp = false;
	} else {
		t->has_openpgp = card->aid[0] != 0;
		if (t->has_openpgp)
			memcpy(&t->openpgp, card, sizeof(*card));
		pcsc_token_from_card(s->name, t->has_openpgp ? card : NULL, t);
		if (r == -EBUSY || (r < 0 && scd_err[0]))
			snprintf(t->error, sizeof(t->error), "card held by another program; %s",
			         scd_err[0] ? scd_err : "scdaemon could not read it");
		else if (r < 0 && card->error[0] && r != -ENODEV && r != -ETIMEDOUT &&
		         r != -ECONNRESET && r != -EPROTO)
			/* The reader said what and which data object: more than an errno. */
			strcpy_trunc(t->error, sizeof(t->error), card->error);
		else if (r < 0)
			card_pcsc_error_text(r, sw, t->error, sizeof(t->error));
	}
	if (r >= 0 && t->has_openpgp && t->read_path == READ_PATH_PCSC)
		probe_scdaemon(w, s->name, t);
	return 0;
}

/* The sleep generation while the system is awake, -1 while it sleeps. */
static int64_t awake_gen(struct pcsc_watch *w)
{
	int64_t gen;

	pthread_mutex_lock(&w->lock);
	gen = w->asleep ? -1 : (int64_t)w->sleep_gen;
	pthread_mutex_unlock(&w->lock);
	return gen;
}

/* gen: awake_gen() when the read was decided. */
static void report_card(struct pcsc_watch *w, struct reader_slot *s, DWORD ev, bool inserted,
                        int64_t gen)
{
	_cleanup_(freep) struct token *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return;
	r = read_card(w, s, ev, inserted, t);
	/* A card gone before its first answer (-EAGAIN) was cut by the sleep too when it slept:
	 * said alike, whichever APDU the card went away at. */
	if (r < 0 && awake_gen(w) == gen)
		return;
	if (awake_gen(w) != gen) {
		/* The system slept during the read: what it says (the card gone, the reader reset)
		 * is the sleep's doing, not the card's. The resume reads the card again. */
		log_debug("PC/SC: the read of %s was cut by sleep, dropped", s->name);
		s->have_read = false;
		return;
	}
	if (t->error[0])
		log_debug("PC/SC: reading %s: %s", s->name, t->error);
	post(w, MSG_CARD, s->name, t);
	s->reported = true;
}

static void handle_state(struct pcsc_watch *w, struct reader_slot *s, DWORD ev, bool rescan)
{
	unsigned counter = (unsigned)(ev >> 16);
	bool inserted;
	int64_t gen;

	if ((ev & (SCARD_STATE_UNKNOWN | SCARD_STATE_UNAVAILABLE | SCARD_STATE_IGNORE)) ||
	    !(ev & SCARD_STATE_PRESENT)) {
		if (s->reported)
			post(w, MSG_GONE, s->name, NULL);
		s->reported = false;
		s->have_read = false;
		return;
	}
	/* INUSE/EXCLUSIVE flip when anyone (us included) connects: only a new card, a changed
	 * event counter, or a rescan is a reason to read. */
	if (s->have_read && s->counter == counter && !rescan)
		return;
	gen = awake_gen(w);
	if (gen < 0) {
		/* Asleep: the resume reads every card (pcsc_watch_set_asleep). */
		s->have_read = false;
		return;
	}
	if (s->stuck) {
		if (!card_pcsc_read_finished(s->stuck))
			return; /* the silent read still holds the reader: wait for the next change
			         */
		card_pcsc_read_unref(s->stuck);
		s->stuck = NULL;
	}
	inserted = !s->have_read || s->counter != counter;
	s->counter = counter;
	s->have_read = true;
	report_card(w, s, ev, inserted, gen);
}

/* Lists the readers; keeps the state of readers seen before, reports vanished ones as gone. */
static LONG relist(struct pcsc_watch *w, SCARDCONTEXT ctx, struct reader_slot *slots,
                   size_t *n_slots)
{
	_cleanup_(freep) char *buf = NULL;
	struct reader_slot fresh[READERS_MAX];
	size_t n = 0;
	DWORD len = 0;
	LONG rv;

	rv = SCardListReaders(ctx, NULL, NULL, &len);
	if (rv == (LONG)SCARD_E_NO_READERS_AVAILABLE)
		len = 0;
	else if (rv != SCARD_S_SUCCESS)
		return rv;
	if (len > 0) {
		buf = calloc(1, len + 1);
		if (!buf)
			return SCARD_E_NO_MEMORY;
		rv = SCardListReaders(ctx, NULL, buf, &len);
		if (rv == (LONG)SCARD_E_NO_READERS_AVAILABLE)
			len = 0;
		else if (rv != SCARD_S_SUCCESS)
			return rv;
	}
	memset(fresh, 0, sizeof(fresh));
	for (const char *p = buf; p && len > 0 && *p && p < buf + len; p += strlen(p) + 1) {
		struct reader_slot *old = NULL;

		if (n >= READERS_MAX || strlen(p) >= READER_NAME_MAX)
			continue;
		for (size_t i = 0; i < *n_slots; i++)
			if (streq(slots[i].name, p))
				old = &slots[i];
		if (old) {
			fresh[n] = *old;
			old->name[0] = 0; /* taken over */
		} else {
			strcpy_trunc(fresh[n].name, sizeof(fresh[n].name), p);
			fresh[n].state = SCARD_STATE_UNAWARE;
		}
		n++;
	}
	for (size_t i = 0; i < *n_slots; i++) {
		if (!slots[i].name[0])
			continue;
		if (slots[i].reported)
			post(w, MSG_GONE, slots[i].name, NULL);
		card_pcsc_read_unref(slots[i].stuck);
	}
	memcpy(slots, fresh, sizeof(fresh));
	*n_slots = n;
	return SCARD_S_SUCCESS;
}

/* Over 80 lines, and kept whole: one thread's life around one blocking SCardGetStatusChange loop.
 * The PC/SC context, the reader slots and the wait array belong to setup, every pass and the
 * teardown alike; split up, that state would be handed around without the wait getting easier to
 * follow. */
void *pcsc_worker_main(void *p)
{
	struct pcsc_watch *w = p;
	struct reader_slot *slots = calloc(READERS_MAX, sizeof(*slots));
	SCARD_READERSTATE st[READERS_MAX + 1];
	DWORD pnp_state = SCARD_STATE_UNAWARE;
	bool settled = false, waited = false;
	size_t n = 0;
	SCARDCONTEXT ctx;
	LONG rv;

	if (!slots) {
		post_down(w, false, SCARD_E_NO_MEMORY);
		return NULL;
	}
	rv = SCardEstablishContext(SCARD_SCOPE_USER, NULL, NULL, &ctx);
	if (rv != SCARD_S_SUCCESS) {
		log_debug("PC/SC: SCardEstablishContext: 0x%08lX", (unsigned long)rv);
		free(slots);
		post_down(w, false, rv);
		return NULL;
	}
	pthread_mutex_lock(&w->lock);
	w->ctx = ctx;
	w->ctx_valid = true;
	pthread_mutex_unlock(&w->lock);
	post(w, MSG_UP, NULL, NULL);

	for (;;) {
		uint64_t seq;
		bool rescan;

		pthread_mutex_lock(&w->lock);
		rescan = w->rescan;
		seq = w->rescan_asked;
		w->rescan = false;
		pthread_mutex_unlock(&w->lock);
		if (pcsc_watch_is_stopping(w))
			break;

		rv = relist(w, ctx, slots, &n);
		if (rv != SCARD_S_SUCCESS)
			break;
		/* The first wait starts from UNAWARE, so it returns at once with every reader's
		 * card, and handle_state() reads each: after it, the first look is complete. */
		if (!settled && (n == 0 || waited)) {
			post(w, MSG_SETTLED, NULL, NULL);
			settled = true;
		}
		if (rescan) {
			for (size_t i = 0; i < n; i++)
				if (slots[i].state & SCARD_STATE_PRESENT)
					handle_state(w, &slots[i], slots[i].state, true);
			post_rescanned(w, seq);
		}

		memset(st, 0, sizeof(st));
		for (size_t i = 0; i < n; i++) {
			st[i].szReader = slots[i].name;
			st[i].dwCurrentState = slots[i].state;
		}
		st[n].szReader = PNP_READER;
		st[n].dwCurrentState = pnp_state;

		/* A rescan asked in this pass (Reload, resume): its SCardCancel found no wait. */
		pthread_mutex_lock(&w->lock);
		rescan = w->rescan;
		pthread_mutex_unlock(&w->lock);
		if (rescan)
			continue;
		rv = SCardGetStatusChange(ctx, INFINITE, st, (DWORD)(n + 1));
		if (pcsc_watch_is_stopping(w))
			break;
		if (rv == (LONG)SCARD_E_CANCELLED || rv == (LONG)SCARD_E_TIMEOUT ||
		    rv == (LONG)SCARD_E_UNKNOWN_READER)
			continue; /* rescan request, or a reader vanished: list again */
		if (rv != SCARD_S_SUCCESS) {
			log_debug("PC/SC: SCardGetStatusChange: 0x%08lX", (unsigned long)rv);
			if (pcsc_rv_service_gone(rv))
				break;
			/* Unexpected: do not spin on it; treat as pcscd trouble and start over
			 * once its socket shows life again. */
			break;
		}
		for (size_t i = 0; i < n && !pcsc_watch_is_stopping(w); i++) {
			DWORD ev = st[i].dwEventState;

			if (ev & SCARD_STATE_CHANGED)
				handle_state(w, &slots[i], ev, false);
			slots[i].state = ev & ~(DWORD)SCARD_STATE_CHANGED;
		}
		pnp_state = st[n].dwEventState & ~(DWORD)SCARD_STATE_CHANGED;
		waited = true;
	}

	pthread_mutex_lock(&w->lock);
	w->ctx_valid = false;
	pthread_mutex_unlock(&w->lock);
	(void)SCardReleaseContext(ctx);
	for (size_t i = 0; i < n; i++)
		card_pcsc_read_unref(slots[i].stuck);
	free(slots);
	if (!pcsc_watch_is_stopping(w))
		post_down(w, true, rv);
	return NULL;
}
