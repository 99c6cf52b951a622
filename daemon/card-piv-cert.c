/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A PIV slot's X.509 certificate, parsed by GnuTLS (never by hand): subject and issuer as
 * RFC 4514 text, the validity, the certified key's algorithm, and whether it is self-signed:
 * its issuer equals its subject and its own key verifies its signature (the placeholders ykman
 * and yubico-piv-tool make for a key that only an ssh or age agent uses). The one file that
 * includes <gnutls/...>: the seam where a test would put a fake.
 *
 * Does not: read the card (card-piv.c), unwrap or inflate the object (card-piv-object.c), judge
 * an expiry (audit-piv.c), or check a chain to any CA: the card holds no chain.
 */
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <string.h>

#include "card-piv.h"
#include "card-tlv.h"

static void crt_deinitp(gnutls_x509_crt_t *c)
{
	if (*c)
		gnutls_x509_crt_deinit(*c);
}

static void pubkey_deinitp(gnutls_pubkey_t *k)
{
	if (*k)
		gnutls_pubkey_deinit(*k);
}

static void datum_freep(gnutls_datum_t *d)
{
	gnutls_free(d->data);
	d->data = NULL;
}

/* The length of the valid UTF-8 character at p (at most n bytes), 0 when there is none. */
static size_t utf8_char_len(const uint8_t *p, size_t n)
{
	size_t k = p[0] < 0x80             ? 1
	           : (p[0] & 0xe0) == 0xc0 ? 2
	           : (p[0] & 0xf0) == 0xe0 ? 3
	           : (p[0] & 0xf8) == 0xf0 ? 4
	                                   : 0;

	if (k == 0 || k > n || (k == 2 && p[0] < 0xc2))
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return k;
}

/* A name from the card for people: control characters and bytes that are no UTF-8 become "?",
 * and a name too long is cut where a character ends, with "…". */
static void name_show(const gnutls_datum_t *d, char buf[PIV_NAME_MAX])
{
	const size_t cut = PIV_NAME_MAX - 4; /* room for "…" and the NUL */
	size_t o = 0;

	for (size_t i = 0; i < d->size;) {
		size_t k = utf8_char_len(d->data + i, d->size - i);

		if (o + (k ? k : 1) > cut) {
			memcpy(buf + o, "\xe2\x80\xa6", 3);
			o += 3;
			break;
		}
		if (k == 0 || d->data[i] < 0x20 || d->data[i] == 0x7f ||
		    (k == 2 && d->data[i] == 0xc2 && d->data[i + 1] < 0xa0)) {
			buf[o++] = '?';
			i += k ? k : 1;
			continue;
		}
		memcpy(buf + o, d->data + i, k);
		o += k;
		i += k;
	}
	buf[o] = 0;
}

static void key_algorithm(gnutls_x509_crt_t crt, char ret[static ALGO_NAME_MAX])
{
	_cleanup_(pubkey_deinitp) gnutls_pubkey_t pub = NULL;
	gnutls_ecc_curve_t curve = GNUTLS_ECC_CURVE_INVALID;
	unsigned bits = 0;
	int pk = gnutls_x509_crt_get_pk_algorithm(crt, &bits);

	switch (pk) {
	case GNUTLS_PK_RSA:
	case GNUTLS_PK_RSA_PSS:
		snprintf(ret, ALGO_NAME_MAX, "rsa%u", bits);
		return;
	case GNUTLS_PK_EDDSA_ED25519:
		snprintf(ret, ALGO_NAME_MAX, "ed25519");
		return;
	case GNUTLS_PK_ECDH_X25519:
		snprintf(ret, ALGO_NAME_MAX, "x25519");
		return;
	case GNUTLS_PK_ECDSA:
		if (gnutls_pubkey_init(&pub) >= 0 && gnutls_pubkey_import_x509(pub, crt, 0) >= 0)
			(void)gnutls_pubkey_export_ecc_raw2(pub, &curve, NULL, NULL, 0);
		snprintf(ret, ALGO_NAME_MAX, "%s",
		         curve == GNUTLS_ECC_CURVE_SECP256R1   ? "nistp256"
		         : curve == GNUTLS_ECC_CURVE_SECP384R1 ? "nistp384"
		         : curve == GNUTLS_ECC_CURVE_SECP521R1 ? "nistp521"
		                                               : "ecdsa");
		return;
	default:
		snprintf(ret, ALGO_NAME_MAX, "%s", pk < 0 ? "unknown" : gnutls_pk_get_name(pk));
		return;
	}
}

/* The signed part of the certificate: the first item inside its outer SEQUENCE, header and
 * all. GnuTLS has no accessor for it; this only slices, the parse was GnuTLS's. */
static int tbs_slice(const uint8_t *der, size_t n, gnutls_datum_t *ret)
{
	struct tlv_cursor c;
	const uint8_t *v, *start;
	size_t len;
	uint32_t tag;

	tlv_init(&c, der, n);
	if (tlv_next(&c, &tag, &v, &len) <= 0 || tag != 0x30)
		return -EBADMSG;
	tlv_init(&c, v, len);
	start = c.p;
	if (tlv_next(&c, &tag, &v, &len) <= 0 || tag != 0x30)
		return -EBADMSG;
	ret->data = (unsigned char *)start;
	ret->size = (unsigned)(v + len - start);
	return 0;
}

/* Issuer equals subject, and the certificate's own key verifies its signature. Old placeholders
 * are signed with SHA-1: allowed here, since the question is who signed, not how well. */
/* The length of the DER item at der (header and value), or n when it is not one. */
static size_t der_length(const uint8_t *der, size_t n)
{
	struct tlv_cursor c;
	const uint8_t *v;
	size_t len;
	uint32_t tag;

	tlv_init(&c, der, n);
	if (tlv_next(&c, &tag, &v, &len) <= 0)
		return n;
	return (size_t)(v - der) + len;
}

static bool self_signed(gnutls_x509_crt_t crt, const uint8_t *der, size_t n)
{
	_cleanup_(pubkey_deinitp) gnutls_pubkey_t pub = NULL;
	uint8_t sig[2048];
	size_t sig_len = sizeof(sig);
	gnutls_datum_t tbs, s;
	int algo;

	if (!gnutls_x509_crt_check_issuer(crt, crt) || tbs_slice(der, n, &tbs) < 0)
		return false;
	algo = gnutls_x509_crt_get_signature_algorithm(crt);
	if (algo < 0 || gnutls_x509_crt_get_signature(crt, (char *)sig, &sig_len) < 0)
		return false;
	if (gnutls_pubkey_init(&pub) < 0 || gnutls_pubkey_import_x509(pub, crt, 0) < 0)
		return false;
	s.data = sig;
	s.size = (unsigned)sig_len;
	return gnutls_pubkey_verify_data2(pub, (gnutls_sign_algorithm_t)algo,
	                                  GNUTLS_VERIFY_ALLOW_SIGN_WITH_SHA1 |
	                                          GNUTLS_VERIFY_ALLOW_BROKEN,
	                                  &tbs, &s) >= 0;
}

int piv_cert_parse(const uint8_t *der, size_t n, struct piv_cert *c)
{
	_cleanup_(crt_deinitp) gnutls_x509_crt_t crt = NULL;
	_cleanup_(datum_freep) gnutls_datum_t subject = {}, issuer = {};
	gnutls_datum_t in = { .data = (unsigned char *)der, .size = (unsigned)n };
	time_t nb, na;
	int r;

	if (n > UINT32_MAX || gnutls_x509_crt_init(&crt) < 0)
		return -ENOMEM;
	/* Some tools pad the 70 object after the certificate: GnuTLS gets the certificate only. */
	in.size = (unsigned)der_length(der, n);
	r = gnutls_x509_crt_import(crt, &in, GNUTLS_X509_FMT_DER);
	if (r < 0) {
		snprintf(c->error, sizeof(c->error), "not a certificate: %s", gnutls_strerror(r));
		return -EBADMSG;
	}
	nb = gnutls_x509_crt_get_activation_time(crt);
	na = gnutls_x509_crt_get_expiration_time(crt);
	/* (time_t)-1 is GnuTLS's error; for a GeneralizedTime of year 0000 (seen in the wild, and
	 * no year of the Gregorian calendar) GnuTLS 3.7 returns 0 (tests/data/piv/synthetic). 0 is
	 * also "unset" in struct piv_cert: either way, no date to warn about. */
	if (nb == (time_t)-1 || nb == 0 || na == (time_t)-1 || na == 0) {
		snprintf(c->error, sizeof(c->error), "certificate's %s is not a valid date",
		         na == (time_t)-1 || na == 0 ? "not_after" : "not_before");
		return -EBADMSG;
	}
	/* An empty name is allowed (RFC 5280, 4.1.2.6: the subject is then in subjectAltName). */
	r = gnutls_x509_crt_get_dn3(crt, &subject, 0);
	if (r >= 0 || r == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
		r = gnutls_x509_crt_get_issuer_dn3(crt, &issuer, 0);
	if (r < 0 && r != GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE) {
		snprintf(c->error, sizeof(c->error),
		         "certificate's subject or issuer unreadable: %s", gnutls_strerror(r));
		return -EBADMSG;
	}
	name_show(&subject, c->subject);
	name_show(&issuer, c->issuer);
	c->not_before = nb;
	c->not_after = na;
	key_algorithm(crt, c->key_algorithm);
	c->self_signed = self_signed(crt, der, n);
	return 0;
}
