/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * KS_GET and WKD_GET over Assuan to dirmngr (gpgme, GPGME_PROTOCOL_ASSUAN), as `gpg-connect-agent
 * --dirmngr 'KS_GET -- 0xFPR'` would: dirmngr sends the keyserver's (or the Web Key Directory's)
 * answer in D lines and imports nothing (gpg --recv-keys is what imports, on gpg's side). The D
 * lines are collected up to UPSTREAM_DATA_MAX; one byte more and the data callback fails, which
 * makes gpgme cancel the transaction. One query per call, one key per query: the keyserver learns
 * one fingerprint at a time, as with parcimonie; a WKD learns one of its domain's addresses.
 *
 * Does not: import, bound its own time (the caller's worker job does), or log.
 */
#include <errno.h>
#include <gpgme.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "gpgconf-run.h"
#include "gpgme-init.h"
#include "upstream-compare.h"
#include "upstream-fetch.h"
#include "upstream-read.h"

struct fetch {
	uint8_t *buf;
	size_t n, alloc;
	bool overflow;
};

static gpgme_error_t on_data(void *opaque, const void *data, size_t len)
{
	struct fetch *f = opaque;

	/* gpgme says END with (NULL, 0): nothing to copy, and f->buf may still be NULL, which
	 * neither memcpy nor pointer arithmetic may be given. */
	if (!data || len == 0)
		return 0;
	if (len > UPSTREAM_DATA_MAX - f->n) {
		f->overflow = true;
		return gpg_error(GPG_ERR_TOO_LARGE);
	}
	if (f->n + len > f->alloc) {
		size_t a = MIN(UPSTREAM_DATA_MAX, MAX(f->alloc * 2, f->n + len + 4096));
		uint8_t *b = realloc(f->buf, a);

		if (!b)
			return gpg_error(GPG_ERR_ENOMEM);
		f->buf = b;
		f->alloc = a;
	}
	memcpy(f->buf + f->n, data, len);
	f->n += len;
	return 0;
}

/* dirmngr's answer (ERR lines over Assuan) as -errno. -EHOSTUNREACH: it could not reach the
 * server, whatever the layer (DNS, routing, connection, its own "No keyserver available"):
 * offline, never "not published". -ENOENT only for an answer saying there is no key. */
static int map_error(gpgme_error_t e)
{
	switch (gpgme_err_code(e)) {
	case GPG_ERR_NO_DATA:
	case GPG_ERR_NOT_FOUND:
		return -ENOENT;
	case GPG_ERR_TOO_LARGE:
		return -EMSGSIZE;
	case GPG_ERR_TIMEOUT:
	case GPG_ERR_ETIMEDOUT:
		return -ETIMEDOUT;
	case GPG_ERR_ASS_CONNECT_FAILED:
	case GPG_ERR_NO_DIRMNGR:
		return -EHOSTDOWN;
	case GPG_ERR_NO_KEYSERVER:
	case GPG_ERR_ECONNREFUSED:
	case GPG_ERR_ECONNRESET:
	case GPG_ERR_EHOSTUNREACH:
	case GPG_ERR_EHOSTDOWN:
	case GPG_ERR_ENETUNREACH:
	case GPG_ERR_ENETDOWN:
	case GPG_ERR_EADDRNOTAVAIL:
	case GPG_ERR_EAGAIN: /* getaddrinfo's EAI_AGAIN: no nameserver answered */
	case GPG_ERR_TRY_LATER: /* dirmngr's word for a resolver's temporary failure */
	case GPG_ERR_UNKNOWN_HOST:
	case GPG_ERR_NO_NAME:
	case GPG_ERR_SERVER_FAILED: /* the nameserver's SERVFAIL, or EAI_FAIL */
	case GPG_ERR_DNS_UNKNOWN:
	case GPG_ERR_DNS_NO_ANSWER:
	case GPG_ERR_DNS_CLOSED:
	case GPG_ERR_DNS_TIMEOUT:
		return -EHOSTUNREACH;
	default:
		return -EIO;
	}
}

/* dirmngr's socket, dirmngr started when it does not answer there. */
static int dirmngr_reach(const char *home, bool launch, char *sock, size_t size, char *err,
                         size_t errsize)
{
	int r = gpgconf_run(home, "--list-dirs", "dirmngr-socket", sock, size);

	if (r != 0 || !*sock) {
		snprintf(err, errsize, "cannot find dirmngr's socket (gpgconf)");
		return -EHOSTDOWN;
	}
	/* A long GNUPGHOME without /run/user puts the socket there: no dirmngr can bind it. */
	if (strlen(sock) > UNIX_SOCKET_PATH_MAX) {
		snprintf(err, errsize,
		         "dirmngr's socket is too long for a unix socket (over %zu bytes): %.80s",
		         UNIX_SOCKET_PATH_MAX, sock);
		return -ENAMETOOLONG;
	}
	if (unix_socket_answers(sock))
		return 0;
	if (!launch) {
		snprintf(err, errsize,
		         "dirmngr is not running (enable dirmngr.socket: systemctl "
		         "--user enable --now dirmngr.socket)");
		return -EHOSTDOWN;
	}
	r = gpgconf_run(home, "--launch", "dirmngr", NULL, 0);
	if (r != 0 || !unix_socket_answers(sock)) {
		snprintf(err, errsize, "dirmngr is not running and could not be started");
		return -EHOSTDOWN;
	}
	return 0;
}

/* One command whose answer is key data; source names who answers, for the errors. */
static int dirmngr_get(const char *sock, const char *cmd, const char *source, struct fetch *f,
                       char *err, size_t errsize)
{
	gpgme_error_t e = gpgme_assuan_command(sock, cmd, on_data, f);

	if (f->overflow) {
		snprintf(err, errsize, "%s's answer is over %u KiB, abandoned", source,
		         UPSTREAM_DATA_MAX / 1024);
		return -EMSGSIZE;
	}
	if (e) {
		gpgme_error_t x = e;
		int r = map_error(x);

		if (r == -EHOSTUNREACH || r == -ETIMEDOUT)
			snprintf(err, errsize, "could not reach %s (dirmngr: %s)", source,
			         gpgme_strerror(x));
		else
			snprintf(err, errsize, "dirmngr: %s", gpgme_strerror(x));
		return r;
	}
	return 0;
}

static bool fpr_ok(const char *s)
{
	size_t n = strspn(s, "0123456789ABCDEFabcdef");

	return s[n] == 0 && (n == 40 || n == 64);
}

int upstream_fetch(const char *home, const char *fpr, bool launch, struct key *ret, char *err,
                   size_t errsize)
{
	struct fetch f = {};
	char sock[PATH_MAX] = "", cmd[32 + FPR_HEX_MAX];
	int r;

	gpgme_init_once();
	if (!fpr_ok(fpr)) {
		snprintf(err, errsize, "'%s' is not a fingerprint", fpr);
		return -EINVAL;
	}
	r = dirmngr_reach(home, launch, sock, sizeof(sock), err, errsize);
	if (r < 0)
		return r;
	snprintf(cmd, sizeof(cmd), "KS_GET -- 0x%s", fpr);
	r = dirmngr_get(sock, cmd, "the keyserver", &f, err, errsize);
	if (r == 0 && f.n == 0) {
		snprintf(err, errsize, "the keyserver has no key %s", fpr);
		r = -ENOENT;
	}
	if (r == 0)
		r = upstream_read_key(f.buf, f.n, fpr, ret, err, errsize);
	free(f.buf);
	return r;
}

int upstream_fetch_wkd(const char *home, const char *mail, const char *fpr, bool launch,
                       struct key *ret, char *err, size_t errsize)
{
	struct fetch f = {};
	char sock[PATH_MAX] = "", cmd[32 + UPSTREAM_MAIL_MAX], why[ERROR_TEXT_MAX] = "";
	char source[64 + UPSTREAM_MAIL_MAX];
	char m[UPSTREAM_MAIL_MAX];
	const char *domain = strchr(mail, '@');
	int r;

	gpgme_init_once();
	/* A bare address is its own user id: what upstream_uid_mail() takes goes on the line. */
	if (!fpr_ok(fpr) || !upstream_uid_mail(mail, m, sizeof(m)) || !streq(m, mail)) {
		snprintf(err, errsize, "'%s' is not a mail address", mail);
		return -EINVAL;
	}
	domain++;
	r = dirmngr_reach(home, launch, sock, sizeof(sock), err, errsize);
	if (r < 0)
		return r;
	snprintf(cmd, sizeof(cmd), "WKD_GET -- %s", mail);
	snprintf(source, sizeof(source), "the Web Key Directory of %s", domain);
	r = dirmngr_get(sock, cmd, source, &f, why, sizeof(why));
	if (r == -ENOENT || (r == 0 && f.n == 0)) {
		snprintf(err, errsize, "the Web Key Directory of %s has no key for %s", domain,
		         mail);
		r = -ENOENT;
	} else if (r == -EHOSTUNREACH || r == -ETIMEDOUT || r == -EMSGSIZE)
		strcpy_trunc(err, errsize, why); /* names the directory already */
	else if (r < 0)
		snprintf(err, errsize, "the Web Key Directory of %s: %s", domain, why);
	if (r == 0)
		r = upstream_read_key(f.buf, f.n, fpr, ret, err, errsize);
	/* Not this key there (a newer one, or someone else's): for this key, not published. */
	if (r == -EXDEV) {
		snprintf(err, errsize, "the Web Key Directory of %s serves another key for %s",
		         domain, mail);
		r = -ENOENT;
	}
	free(f.buf);
	return r;
}
