/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One card read over PC/SC, for watch-pcsc.c: SCardConnect(SHARED, T0|T1), one
 * SCardBeginTransaction around the whole read (a few milliseconds), card_read_openpgp() over
 * SCardTransmit and, when asked (a card no other program uses), card_read_piv() in the same
 * transaction, then End/Disconnect with SCARD_LEAVE_CARD. Never SCARD_RESET_CARD or
 * SCARD_UNPOWER_CARD: a reset throws away the OpenPGP application scdaemon has selected and its
 * next command fails once. A read runs on its own short-lived thread with its own context: a card
 * that never answers makes SCardTransmit block without end (vpcd and many readers have no
 * timeout), so the caller gives up after READ_SILENCE_USEC without progress and leaves that
 * thread to finish whenever pcscd lets it go. Also the PC/SC edge's error mapping and the pure
 * helpers that turn a reader name and card data into a token.
 *
 * Does not: watch readers (watch-pcsc.c), parse card data (card-openpgp.c), or log above debug.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "card-openpgp.h"
#include "card-piv.h"
#include "card-pcsc.h"
#include "log.h"
#include "worker-job.h"

#define READ_TOTAL_USEC (30 * 1000000ULL) /* a slow card still has to finish within this */
#define WAIT_SLICE_USEC 250000ULL

/* ---- pure helpers ------------------------------------------------------------------------ */

unsigned pcsc_yubikey_interfaces(const char *reader)
{
	static const char prefix[] = "Yubico YubiKey ";
	unsigned ifaces = 0;
	const char *p;

	if (strncmp(reader, prefix, sizeof(prefix) - 1) != 0)
		return 0;
	p = reader + sizeof(prefix) - 1;
	/* The interface list is the next word: "OTP+FIDO+CCID", "FIDO+CCID", "CCID". */
	while (*p && *p != ' ') {
		size_t k = strcspn(p, "+ ");

		if (k == 3 && strncmp(p, "OTP", 3) == 0)
			ifaces |= USB_IFACE_OTP;
		else if (k == 4 && strncmp(p, "FIDO", 4) == 0)
			ifaces |= USB_IFACE_FIDO;
		else if (k == 4 && strncmp(p, "CCID", 4) == 0)
			ifaces |= USB_IFACE_CCID;
		else if (k == 3 && strncmp(p, "U2F", 3) == 0)
			ifaces |= USB_IFACE_FIDO;
		p += k;
		if (*p == '+')
			p++;
	}
	return ifaces;
}

void pcsc_token_from_card(const char *reader, const struct openpgp_card *c, struct token *t)
{
	unsigned ifaces = pcsc_yubikey_interfaces(reader);

	if (ifaces) {
		t->kind = TOKEN_KIND_YUBIKEY;
		strcpy_trunc(t->model, sizeof(t->model), "YubiKey");
		t->usb_interfaces = ifaces;
	}
	if (!c || !*c->aid)
		return;

	switch (c->manufacturer_id) {
	case 0x0006:
		t->kind = TOKEN_KIND_YUBIKEY;
		break;
	case 0x000F:
		t->kind = TOKEN_KIND_NITROKEY;
		break;
	default:
		t->kind = TOKEN_KIND_OPENPGP_CARD;
		break;
	}

	if (t->kind == TOKEN_KIND_YUBIKEY && c->serial[0] &&
	    strspn(c->serial, "0123456789") == strlen(c->serial)) {
		/* The device serial in decimal is the AID serial read as BCD: "00512345" is
		 * YubiKey 512345, as ykman prints it. */
		const char *s = c->serial;

		while (s[0] == '0' && s[1])
			s++;
		strcpy_trunc(t->serial, sizeof(t->serial), s);
	} else
		strcpy_trunc(t->serial, sizeof(t->serial), c->serial);
	/* A serial every unpersonalised card of its kind has, or one from a test-card range, does
	 * not name one card (tests/data/cards: SmartPGP's 00000000, Nitrokey 3's early 0000). */
	t->serial_shared = streq(c->serial, "00000000") || streq(c->serial, "FFFFFFFF") ||
	                   c->manufacturer_id == 0x0000 || c->manufacturer_id == 0xffff;
	if (t->kind == TOKEN_KIND_YUBIKEY && !t->model[0])
		strcpy_trunc(t->model, sizeof(t->model), "YubiKey");
	if (c->firmware[0])
		strcpy_trunc(t->firmware, sizeof(t->firmware), c->firmware);
}

/* ---- error mapping (the PC/SC edge) ------------------------------------------------------ */

bool pcsc_rv_service_gone(LONG rv)
{
	return rv == (LONG)SCARD_E_NO_SERVICE || rv == (LONG)SCARD_E_SERVICE_STOPPED ||
	       rv == (LONG)SCARD_E_INVALID_HANDLE || rv == (LONG)SCARD_F_COMM_ERROR;
}

int pcsc_rv_to_errno(LONG rv)
{
	switch (rv) {
	case SCARD_S_SUCCESS:
		return 0;
	case SCARD_W_REMOVED_CARD:
	case SCARD_E_NO_SMARTCARD:
	case SCARD_E_UNKNOWN_READER:
	case SCARD_E_READER_UNAVAILABLE:
		return -ENODEV;
	case SCARD_W_RESET_CARD:
		return -ECONNRESET;
	case SCARD_E_TIMEOUT:
		return -ETIMEDOUT;
	case SCARD_E_SHARING_VIOLATION:
		return -EBUSY;
	case SCARD_W_UNRESPONSIVE_CARD:
	case SCARD_W_UNPOWERED_CARD:
		return -EPROTO;
	case SCARD_E_NO_MEMORY:
		return -ENOMEM;
	case SCARD_E_INSUFFICIENT_BUFFER:
		return -EMSGSIZE;
	default:
		return pcsc_rv_service_gone(rv) ? -ESHUTDOWN : -EIO;
	}
}

/* ---- one card read on its own thread ------------------------------------------------------ */

/*
 * The job thread holds base.lock whenever it is not inside a PC/SC call that may block
 * (SCardTransmit and the connect/transaction calls before it): card, last_sw and last_progress
 * change only under the lock, so a waiter that gives up copies a consistent partial read.
 */
struct card_pcsc_read {
	struct worker_job base; /* first: worker_job frees the whole struct */
	char reader[READER_NAME_MAX];
	SCARDHANDLE h;
	DWORD proto;
	uint64_t last_progress;
	uint16_t last_sw;
	struct openpgp_card card;
	bool want_piv; /* read the PIV application too, in the same transaction */
	struct piv_app piv;
	uint64_t piv_usec; /* how long the PIV read held the transaction */
};

static int job_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                        size_t *resp_len)
{
	struct card_pcsc_read *j = userdata;
	DWORD len = (DWORD)*resp_len;
	LONG rv;

	/* Defence in depth: card-openpgp.c only builds read commands, and this transport refuses
	 * anything else, so no code path can VERIFY or write through us. */
	if (n < 4 || !card_ins_allowed(apdu[1]))
		return -EPERM;
	pthread_mutex_unlock(&j->base.lock);
	rv = SCardTransmit(j->h, j->proto == SCARD_PROTOCOL_T0 ? SCARD_PCI_T0 : SCARD_PCI_T1, apdu,
	                   (DWORD)n, NULL, resp, &len);
	pthread_mutex_lock(&j->base.lock);
	j->last_progress = worker_job_now_usec();
	if (rv != SCARD_S_SUCCESS) {
		log_debug("PC/SC: SCardTransmit in %s: 0x%08lX", j->reader, (unsigned long)rv);
		return pcsc_rv_to_errno(rv);
	}
	/* Success without even a status word: the card left mid-exchange (vpcd and readers
	 * whose card is pulled answer so before pcscd notices the removal). */
	if (len < 2)
		return -ENODEV;
	*resp_len = len;
	j->last_sw = (uint16_t)(resp[len - 2] << 8 | resp[len - 1]);
	return 0;
}

static int job_reconnect(struct card_pcsc_read *j)
{
	LONG rv = SCardReconnect(j->h, SCARD_SHARE_SHARED, SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1,
	                         SCARD_LEAVE_CARD, &j->proto);
	return pcsc_rv_to_errno(rv);
}

/* The parse, between transmits, under the lock (see struct card_pcsc_read). */
static int job_read_locked(struct card_pcsc_read *j, const struct card_transport *t)
{
	int r;

	pthread_mutex_lock(&j->base.lock);
	r = card_read_openpgp(t, &j->card);
	if (j->want_piv && (r >= 0 || r == -ENOENT)) {
		uint64_t start = worker_job_now_usec();
		/* After the OpenPGP read, inside the same transaction: no other program can find
		 * PIV selected. OpenPGP is selected again when the card has it (r >= 0). */
		int q = card_read_piv(t, r >= 0, &j->piv);

		j->piv_usec = worker_job_now_usec() - start;
		if (q < 0) {
			j->piv.state = PIV_READ_ERROR;
			card_pcsc_error_text(q, j->last_sw, j->piv.error, sizeof(j->piv.error));
		}
	}
	pthread_mutex_unlock(&j->base.lock);
	return r;
}

static int job_read(struct card_pcsc_read *j, SCARDCONTEXT ctx)
{
	const struct card_transport t = { .transmit = job_transmit, .userdata = j };
	LONG rv;
	int r = -EIO;

	rv = SCardConnect(ctx, j->reader, SCARD_SHARE_SHARED, SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1,
	                  &j->h, &j->proto);
	if (rv != SCARD_S_SUCCESS) {
		log_debug("PC/SC: SCardConnect(%s): 0x%08lX", j->reader, (unsigned long)rv);
		return pcsc_rv_to_errno(rv);
	}
	for (int attempt = 0; attempt < 2; attempt++) {
		rv = SCardBeginTransaction(j->h);
		if (rv == (LONG)SCARD_W_RESET_CARD && attempt == 0) {
			r = job_reconnect(j);
			if (r < 0)
				break;
			continue;
		}
		if (rv != SCARD_S_SUCCESS) {
			r = pcsc_rv_to_errno(rv);
			break;
		}
		r = job_read_locked(j, &t);
		(void)SCardEndTransaction(j->h, SCARD_LEAVE_CARD);
		if (r != -ECONNRESET || attempt > 0)
			break;
		/* Someone reset the card under us: reconnect without resetting it again and read
		 * once more; a second reset is reported, not chased. */
		if (job_reconnect(j) < 0)
			break;
	}
	(void)SCardDisconnect(j->h, SCARD_LEAVE_CARD);
	return r;
}

static int job_run(struct worker_job *base)
{
	struct card_pcsc_read *j = (struct card_pcsc_read *)base;
	SCARDCONTEXT ctx;
	LONG rv;
	int r;

	rv = SCardEstablishContext(SCARD_SCOPE_USER, NULL, NULL, &ctx);
	if (rv != SCARD_S_SUCCESS)
		return pcsc_rv_to_errno(rv);
	r = job_read(j, ctx);
	(void)SCardReleaseContext(ctx);
	return r;
}

int card_pcsc_read(const char *reader, bool (*stopping)(void *), void *userdata,
                   struct openpgp_card *ret, struct piv_app *ret_piv, uint16_t *ret_sw,
                   struct card_pcsc_read **ret_stuck)
{
	struct card_pcsc_read *j = calloc(1, sizeof(*j));
	uint64_t start = worker_job_now_usec();
	bool done = false;
	int r;

	if (!j)
		return -ENOMEM;
	strcpy_trunc(j->reader, sizeof(j->reader), reader);
	j->last_progress = start;
	j->want_piv = ret_piv != NULL;
	r = worker_job_start(&j->base, job_run);
	if (r < 0)
		return r;

	pthread_mutex_lock(&j->base.lock);
	for (;;) {
		uint64_t now = worker_job_now_usec();

		done = j->base.done;
		if (done || now - j->last_progress >= READ_SILENCE_USEC ||
		    now - start >= READ_TOTAL_USEC)
			break;
		pthread_mutex_unlock(&j->base.lock);
		if (stopping(userdata)) {
			pthread_mutex_lock(&j->base.lock);
			done = j->base.done;
			break;
		}
		pthread_mutex_lock(&j->base.lock);
		/* Slices, so that a shutdown is noticed while a card is slow. */
		(void)worker_job_wait_locked(&j->base, now + WAIT_SLICE_USEC);
	}
	memcpy(ret, &j->card, sizeof(*ret));
	if (ret_piv) {
		memcpy(ret_piv, &j->piv, sizeof(*ret_piv));
		if (j->piv.state != PIV_READ_NONE)
			log_debug("PC/SC: the PIV read of %s took %llu us", j->reader,
			          (unsigned long long)j->piv_usec);
	}
	*ret_sw = j->last_sw;
	r = done ? j->base.r : -ETIMEDOUT;
	pthread_mutex_unlock(&j->base.lock);
	if (done) {
		worker_job_unref(&j->base);
		return r;
	}
	/* Keep our reference: the worker checks whether the stuck read has ended before it reads
	 * that reader again (its transaction would block ours). */
	*ret_stuck = j;
	return r;
}

bool card_pcsc_read_finished(struct card_pcsc_read *j)
{
	return worker_job_finished(&j->base);
}

void card_pcsc_read_unref(struct card_pcsc_read *j)
{
	if (j)
		worker_job_unref(&j->base);
}

void card_pcsc_error_text(int r, uint16_t sw, char *buf, size_t size)
{
	switch (r) {
	case -ENODEV:
		snprintf(buf, size, "card removed during read");
		break;
	case -EBADMSG:
		snprintf(buf, size, "malformed application data");
		break;
	case -ETIMEDOUT:
		snprintf(buf, size, "card did not answer within %llu s",
		         (unsigned long long)(READ_SILENCE_USEC / 1000000));
		break;
	case -ECONNRESET:
		snprintf(buf, size, "card was reset by another program twice during read");
		break;
	case -EPROTO:
		snprintf(buf, size, "card does not answer (mute or unpowered)");
		break;
	case -EMSGSIZE:
		snprintf(buf, size, "card data larger than expected");
		break;
	case -EACCES:
		snprintf(buf, size, "card refused to read data (status word %04X)", sw);
		break;
	case -EIO:
		if (sw && sw != 0x9000)
			snprintf(buf, size, "status word %04X", sw);
		else
			snprintf(buf, size, "card read failed: input/output error");
		break;
	default:
		snprintf(buf, size, "card read failed: %s", strerror(-r));
		break;
	}
}
