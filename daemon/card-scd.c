/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads the OpenPGP card through scdaemon when scdaemon holds it: an Assuan session with gpg-agent
 * (gpgme, GPGME_PROTOCOL_ASSUAN) sending "SCD SERIALNO openpgp", then card-openpgp.c's own read
 * with "SCD APDU <hex>" as its transport (GET DATA and GET RESPONSE only: the parser and the
 * fields are those of our PC/SC read, touch policy included); where scdaemon will not pass APDUs,
 * "SCD GETATTR <name>" for the fields keyctl shows, their status lines parsed by card-scd-status.c.
 * gpg-agent is started the way GnuPG starts it (`gpgconf --launch gpg-agent`), only when a read
 * needs it. The session runs on a helper thread so that a hung agent costs the caller
 * SCD_TIMEOUT_MS, not forever; the helper finishes on its own and frees what it owns.
 *
 * Never sends a command that could ask for a PIN or touch: no PKSIGN, PKDECRYPT, PKAUTH,
 * CHECKPIN, PASSWD, LEARN --force; the command list is fixed below, and SCD APDU carries only
 * the instructions scd_transmit() lets through (no SELECT, VERIFY or write).
 * With several cards, scdaemon answers for the card it has selected; we cannot name the reader.
 *
 * Does not: talk PC/SC, parse status lines, read the keyring, or log.
 */
#include <errno.h>
#include <fcntl.h>
#include <gpgme.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "card-openpgp.h"
#include "fileio.h"
#include "gpg-conf.h"
#include "gpgme-init.h"
#include "card-scd.h"
#include "gpgconf-run.h"
#include "worker-job.h"

/* ---- talking to gpg-agent ------------------------------------------------------------------ */

static const char *const scd_attrs[] = {
	"MANUFACTURER", "KEY-FPR",  "KEY-TIME", "SIG-COUNTER", "CHV-STATUS", "DISP-NAME",
	"PUBKEY-URL",   "KEY-ATTR", "UIF-1",    "UIF-2",       "UIF-3",
};

static int agent_socket(const char *home, char *out, size_t size)
{
	int r;

	if (isempty(home)) {
		const char *s = gpgme_get_dirinfo("agent-socket");

		if (s)
			return strcpy_bounded(out, size, s);
	}
	r = gpgconf_run(home, "--list-dirs", "agent-socket", out, size);
	if (r < 0)
		return r;
	if (r != 0 || !*out)
		return -EHOSTDOWN;
	return 0;
}

struct agent_probe {
	struct worker_job base; /* first: worker_job frees the whole struct */
	char home[PATH_MAX];
};

static int agent_probe_run(struct worker_job *base)
{
	struct agent_probe *p = (struct agent_probe *)base;
	char sock[PATH_MAX];

	return agent_socket(p->home, sock, sizeof(sock)) >= 0 && unix_socket_answers(sock);
}

/* The PC/SC thread asks this on every state change of a card in shared use. It spawns gpgconf,
 * which must not hold that thread up: a child stuck before its exec would stop every later card
 * event (one Debian 13 CI run under ASan lost a card for good and left such a child behind). So
 * the question runs on a job of its own, bounded like a session; no answer in time reads as
 * "not running", and the card is then read over PC/SC as when no agent runs. */
bool scd_agent_running(const char *gnupghome)
{
	struct agent_probe *p;
	bool done, running = false;

	gpgme_init_once();
	p = calloc(1, sizeof(*p));
	if (!p)
		return false;
	/* A home cut short would name another agent's socket: no home that long has one. */
	if (gnupghome && strcpy_bounded(p->home, sizeof(p->home), gnupghome) < 0) {
		free(p);
		return false;
	}
	if (worker_job_start(&p->base, agent_probe_run) < 0)
		return false;
	pthread_mutex_lock(&p->base.lock);
	done = worker_job_wait_locked(&p->base, worker_job_now_usec() +
	                                                (uint64_t)SCD_PROBE_TIMEOUT_MS * 1000);
	if (done)
		running = p->base.r > 0;
	pthread_mutex_unlock(&p->base.lock);
	worker_job_unref(&p->base);
	return running;
}

struct scd_job {
	struct worker_job base; /* first: worker_job frees the whole struct */
	char home[PATH_MAX];
	char err[ERROR_TEXT_MAX];
	struct openpgp_card card;
	/* status-callback state */
	int parse_error;
	char parse_keyword[24];
	/* the answer to one SCD APDU, collected from D lines */
	gpgme_ctx_t ctx;
	uint8_t apdu_resp[CARD_RESPONSE_MAX + 2];
	size_t apdu_len;
	bool apdu_overflow, apdu_refused;
	bool serialno_only; /* scd_card_reachable(): SERIALNO answers the question */
};

static gpgme_error_t on_status(void *opaque, const char *status, const char *args)
{
	struct scd_job *j = opaque;
	char line[SCD_LINE_MAX + 64];
	int n, r;

	n = snprintf(line, sizeof(line), "%s%s%s", status, args && *args ? " " : "",
	             args ? args : "");
	if (n < 0 || (size_t)n >= sizeof(line))
		r = -EMSGSIZE;
	else
		r = scd_parse_status((const uint8_t *)line, (size_t)n, &j->card);
	if (r < 0 && !j->parse_error) {
		j->parse_error = r;
		strcpy_trunc(j->parse_keyword, sizeof(j->parse_keyword), status);
	}
	return 0;
}

static gpgme_error_t on_data(void *opaque, const void *data, size_t len)
{
	return 0; /* GETATTR answers in status lines; D lines are not expected and ignored */
}

static gpgme_error_t on_apdu_data(void *opaque, const void *data, size_t len)
{
	struct scd_job *j = opaque;

	/* gpgme says END with (NULL, 0): nothing to copy, and memcpy from NULL is undefined. */
	if (!data || len == 0)
		return 0;
	if (len > sizeof(j->apdu_resp) - j->apdu_len) {
		j->apdu_overflow = true;
		return 0;
	}
	memcpy(j->apdu_resp + j->apdu_len, data, len);
	j->apdu_len += len;
	return 0;
}

static int map_gpg_error(gpgme_error_t e);

/* card-openpgp.c's transport over scdaemon: "SCD APDU <hex>" passes one command to the card
 * scdaemon holds and answers with the response and its status word (GnuPG 2.2 and 2.4). The
 * transport has get_data_only set, and refuses anything else itself: scdaemon selected the
 * application, and nothing but GET DATA and GET RESPONSE goes through its session. */
static int scd_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                        size_t *resp_len)
{
	static const char digits[] = "0123456789ABCDEF";
	struct scd_job *j = userdata;
	char cmd[sizeof("SCD APDU ") + 2 * CARD_APDU_MAX];
	gpgme_error_t e, op = 0;
	size_t k = strlen("SCD APDU ");

	if (n < 4 || n > CARD_APDU_MAX || apdu[0] != 0x00 ||
	    (apdu[1] != 0xca && apdu[1] != 0xcb && apdu[1] != 0xc0))
		return -EPERM;
	memcpy(cmd, "SCD APDU ", k);
	for (size_t i = 0; i < n; i++) {
		cmd[k++] = digits[apdu[i] >> 4];
		cmd[k++] = digits[apdu[i] & 0xf];
	}
	cmd[k] = 0;
	j->apdu_len = 0;
	j->apdu_overflow = false;
	e = gpgme_op_assuan_transact_ext(j->ctx, cmd, on_apdu_data, j, NULL, NULL, NULL, NULL, &op);
	if (e)
		return map_gpg_error(e);
	if (op) {
		/* scdaemon or the agent will not pass APDUs: the GETATTR path reads instead. */
		j->apdu_refused = true;
		return -EOPNOTSUPP;
	}
	if (j->apdu_overflow || j->apdu_len < 2 || j->apdu_len > *resp_len)
		return -EBADMSG;
	memcpy(resp, j->apdu_resp, j->apdu_len);
	*resp_len = j->apdu_len;
	return 0;
}

/* The card through the same reader as our own PC/SC read, one parser for both paths. Returns
 * 1 when it read the card (into j->card, with the AID scdaemon's SERIALNO named), 0 when
 * scdaemon will not pass APDUs (the caller asks GETATTR), or a negative errno. */
static int scd_read_by_apdu(struct scd_job *j)
{
	const struct card_transport t = { .transmit = scd_transmit,
		                          .userdata = j,
		                          .get_data_only = true };
	_cleanup_(freep) struct openpgp_card *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = card_read_openpgp(&t, c);
	if (j->apdu_refused)
		return 0;
	if (r < 0 && !c->aid[0])
		return r;
	/* 6E names the card; if it is another card than SERIALNO's, scdaemon switched cards
	 * between the two commands: trust neither. The version may differ (GnuPG 2.4's SERIALNO
	 * says 0100); 6E's AID, the card's own, is the one kept. */
	if (!card_aid_same_card(c->aid, j->card.aid))
		return -EIO;
	memcpy(&j->card, c, sizeof(*c));
	return r < 0 ? r : 1;
}

static int map_gpg_error(gpgme_error_t e)
{
	switch (gpgme_err_code(e)) {
	case GPG_ERR_NO_ERROR:
		return 0;
	case GPG_ERR_CARD_NOT_PRESENT:
	case GPG_ERR_CARD_REMOVED:
	case GPG_ERR_ENODEV:
		return -ENODEV;
	case GPG_ERR_NOT_SUPPORTED:
	case GPG_ERR_NOT_FOUND:
	case GPG_ERR_WRONG_CARD:
	case GPG_ERR_UNSUPPORTED_OPERATION:
		return -ENOENT;
	case GPG_ERR_TIMEOUT:
	case GPG_ERR_ETIMEDOUT:
		return -ETIMEDOUT;
	case GPG_ERR_ASS_CONNECT_FAILED:
	case GPG_ERR_NO_AGENT:
	case GPG_ERR_ECONNREFUSED:
	case GPG_ERR_ENOENT:
		return -EHOSTDOWN;
	default:
		return -EIO;
	}
}

/* The session's phases, in order: reach gpg-agent (starting it), open the Assuan connection,
 * ask SERIALNO, then read the card through SCD APDU or else GETATTR. Each phase writes j->err
 * when it fails. */
static int scd_agent_reach(struct scd_job *j, char *sock, size_t size)
{
	int r;

	r = agent_socket(j->home, sock, size);
	if (r < 0) {
		snprintf(j->err, sizeof(j->err), "cannot find gpg-agent's socket (gpgconf)");
		return -EHOSTDOWN;
	}
	/* A long GNUPGHOME without /run/user puts the socket there: say so, no agent can bind
	 * it. */
	if (strlen(sock) > UNIX_SOCKET_PATH_MAX) {
		snprintf(j->err, sizeof(j->err),
		         "gpg-agent's socket is too long for a unix socket (over %zu bytes): %.80s",
		         UNIX_SOCKET_PATH_MAX, sock);
		return -ENAMETOOLONG;
	}
	if (!unix_socket_answers(sock)) {
		/* Start the agent the way gpg does; it then starts scdaemon on demand. */
		r = gpgconf_run(j->home, "--launch", "gpg-agent", NULL, 0);
		if (r != 0 || !unix_socket_answers(sock)) {
			snprintf(j->err, sizeof(j->err),
			         "gpg-agent is not running and could not be started");
			return -EHOSTDOWN;
		}
	}
	return 0;
}

static int scd_assuan_open(struct scd_job *j, const char *sock, gpgme_ctx_t *ret)
{
	gpgme_ctx_t ctx = NULL;
	gpgme_error_t e;

	e = gpgme_new(&ctx);
	if (!e)
		e = gpgme_set_protocol(ctx, GPGME_PROTOCOL_ASSUAN);
	if (!e)
		e = gpgme_ctx_set_engine_info(ctx, GPGME_PROTOCOL_ASSUAN, sock, NULL);
	if (e) {
		snprintf(j->err, sizeof(j->err), "gpgme: %s", gpgme_strerror(e));
		gpgme_release(ctx);
		return -EIO;
	}
	*ret = ctx;
	return 0;
}

/* Fills j->card.aid, which scd_read_by_apdu() then holds the card to. */
static int scd_serialno(struct scd_job *j, gpgme_ctx_t ctx)
{
	gpgme_error_t e, op = 0;

	e = gpgme_op_assuan_transact_ext(ctx, "SCD SERIALNO openpgp", on_data, j, NULL, NULL,
	                                 on_status, j, &op);
	if (e || op) {
		gpgme_error_t x = e ? e : op;

		snprintf(j->err, sizeof(j->err), "scdaemon: %s", gpgme_strerror(x));
		return map_gpg_error(x);
	}
	if (!j->card.aid[0]) {
		snprintf(j->err, sizeof(j->err), "scdaemon sent no OpenPGP serial number");
		return j->parse_error ? -EBADMSG : -ENOENT;
	}
	return 0;
}

static int scd_read_by_getattr(struct scd_job *j, gpgme_ctx_t ctx)
{
	gpgme_error_t e, op;
	char cmd[64];

	for (size_t i = 0; i < ELEMENTSOF(scd_attrs); i++) {
		snprintf(cmd, sizeof(cmd), "SCD GETATTR %s", scd_attrs[i]);
		op = 0;
		e = gpgme_op_assuan_transact_ext(ctx, cmd, on_data, j, NULL, NULL, on_status, j,
		                                 &op);
		if (e) {
			/* The connection itself failed: what we have is incomplete. */
			snprintf(j->err, sizeof(j->err), "scdaemon: %s", gpgme_strerror(e));
			return map_gpg_error(e);
		}
		/* op != 0: this attribute is unknown to this GnuPG (UIF-n before 2.3) or the
		 * card lacks the DO; the others still count. */
	}
	if (j->parse_error == -EMSGSIZE && j->card.error[0])
		snprintf(j->err, sizeof(j->err), "scdaemon's %s: %.120s", j->parse_keyword,
		         j->card.error);
	else if (j->parse_error == -EMSGSIZE)
		snprintf(j->err, sizeof(j->err), "scdaemon sent a %s too long", j->parse_keyword);
	else if (j->parse_error)
		snprintf(j->err, sizeof(j->err), "scdaemon sent a malformed %s", j->parse_keyword);
	return j->parse_error == -EMSGSIZE ? -EMSGSIZE : j->parse_error ? -EBADMSG : 0;
}

/* SCD APDU first; GETATTR only where scdaemon will not pass APDUs. */
static int scd_read_fields(struct scd_job *j, gpgme_ctx_t ctx)
{
	int r;

	j->ctx = ctx;
	r = scd_read_by_apdu(j);
	j->ctx = NULL;
	if (r == 0)
		return scd_read_by_getattr(j, ctx);
	if (r < 0 && j->card.error[0])
		strcpy_trunc(j->err, sizeof(j->err), j->card.error);
	else if (r < 0)
		snprintf(j->err, sizeof(j->err), "scdaemon: reading through SCD APDU: %s",
		         strerror(-r));
	return r < 0 ? r : 0;
}

static int scd_session(struct scd_job *j)
{
	gpgme_ctx_t ctx = NULL;
	char sock[PATH_MAX];
	int r;

	r = scd_agent_reach(j, sock, sizeof(sock));
	if (r < 0)
		return r;
	r = scd_assuan_open(j, sock, &ctx);
	if (r < 0)
		return r;
	r = scd_serialno(j, ctx);
	if (r == 0 && !j->serialno_only)
		r = scd_read_fields(j, ctx);
	gpgme_release(ctx);
	return r;
}

static int scd_job_run(struct worker_job *base)
{
	return scd_session((struct scd_job *)base);
}

static int scd_run(const char *gnupghome, bool serialno_only, struct openpgp_card *ret, char *err,
                   size_t errsize)
{
	struct scd_job *j;
	bool done;
	int r;

	gpgme_init_once();
	memset(ret, 0, sizeof(*ret));
	if (errsize > 0)
		err[0] = 0;

	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	/* Never a shorter home: gpgconf --launch would start a second agent in it. */
	if (gnupghome && strcpy_bounded(j->home, sizeof(j->home), gnupghome) < 0) {
		free(j);
		if (errsize > 0)
			snprintf(err, errsize, "GnuPG home too long (%zu bytes): %s",
			         strlen(gnupghome), gnupghome);
		return -ENAMETOOLONG;
	}
	j->serialno_only = serialno_only;
	r = worker_job_start(&j->base, scd_job_run);
	if (r < 0)
		return r;

	pthread_mutex_lock(&j->base.lock);
	done = worker_job_wait_locked(&j->base,
	                              worker_job_now_usec() + (uint64_t)SCD_TIMEOUT_MS * 1000);
	if (done) {
		r = j->base.r;
		memcpy(ret, &j->card, sizeof(*ret));
		if (errsize > 0)
			strcpy_trunc(err, errsize, j->err);
	} else {
		/* The session goes on writing card and err: touch neither. */
		r = -ETIMEDOUT;
		if (errsize > 0)
			snprintf(err, errsize, "scdaemon did not answer within %d s",
			         SCD_TIMEOUT_MS / 1000);
	}
	pthread_mutex_unlock(&j->base.lock);
	worker_job_unref(&j->base);
	/* A field refused (malformed or too long) keeps what was read. */
	if (r < 0 && r != -EBADMSG && r != -EMSGSIZE)
		memset(ret, 0, sizeof(*ret));
	return r;
}

int scd_read_card(const char *gnupghome, struct openpgp_card *ret, char *err, size_t errsize)
{
	return scd_run(gnupghome, false, ret, err, errsize);
}

int scd_card_reachable(const char *gnupghome, char *err, size_t errsize)
{
	_cleanup_(freep) struct openpgp_card *card = calloc(1, sizeof(*card));

	if (!card)
		return -ENOMEM;
	return scd_run(gnupghome, true, card, err, errsize);
}

int scd_ccid_driver_on(const char *gnupghome)
{
	gpgme_engine_info_t info = NULL;
	unsigned major = 0, minor = 0;
	const char *dirs[2];

	gpgme_init_once();
	if (gpgme_get_engine_info(&info) != 0)
		return -EIO;
	for (; info; info = info->next)
		if (info->protocol == GPGME_PROTOCOL_OpenPGP && info->version) {
			if (sscanf(info->version, "%u.%u", &major, &minor) != 2)
				return -EINVAL;
			break;
		}
	if (major < 2 || (major == 2 && minor < 4))
		return 0;
	/* scdaemon reads the system-wide file first, then the home's: either may switch the
	 * driver off. */
	dirs[0] = gpgme_get_dirinfo("sysconfdir");
	dirs[1] = isempty(gnupghome) ? gpgme_get_dirinfo("homedir") : gnupghome;
	for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
		int r;

		if (isempty(dirs[i]))
			continue;
		r = gpg_conf_file_has_option(dirs[i], "scdaemon.conf", "disable-ccid");
		if (r != 0)
			return r > 0 ? 0 : r;
	}
	return 1;
}
