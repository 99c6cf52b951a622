/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a PIV application answers, as bytes: the 53 wrapper of every GET DATA answer, a
 * certificate object (70 certificate, 71 certinfo, FE error detection code; NIST SP 800-73-4,
 * Table 10 and 3.3.2 of Part 1), the CHUID's expiration date (tag 35, Table 9), Yubico's
 * GET METADATA (yubikit piv.py), and the bounded inflate of a compressed certificate (certinfo
 * 01: gzip, as ykman and yubico-piv-tool write it). Pure: bytes in, values out; every length is
 * checked against what remains.
 *
 * Does not: send APDUs (card-piv.c), parse X.509 (card-piv-cert.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "card-piv.h"
#include "card-tlv.h"

int piv_parse_wrapper(const uint8_t *p, size_t n, const uint8_t **ret_val, size_t *ret_len)
{
	struct tlv_cursor c;
	uint32_t tag;
	int r;

	/* tlv_next() refuses a length that runs past the answer: that is -EBADMSG here too. */
	tlv_init(&c, p, n);
	r = tlv_next(&c, &tag, ret_val, ret_len);
	if (r <= 0 || tag != 0x53)
		return -EBADMSG;
	return 0;
}

int piv_parse_cert_object(const uint8_t *p, size_t n, struct piv_cert_object *ret)
{
	struct tlv_cursor c;
	const uint8_t *v, *val;
	size_t len, vlen;
	uint32_t tag;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = piv_parse_wrapper(p, n, &v, &vlen);
	if (r < 0)
		return r;
	tlv_init(&c, v, vlen);
	while ((r = tlv_next(&c, &tag, &val, &len)) > 0) {
		if (tag == 0x70 && !ret->cert) {
			ret->cert = val;
			ret->cert_len = len;
		} else if (tag == 0x71 && len >= 1)
			/* Bit 0: compressed (SP 800-73-4 Part 1, 3.3.2 "CertInfo"). */
			ret->compressed = val[0] & 0x01;
	}
	if (r < 0)
		return r;
	if (!ret->cert || ret->cert_len == 0)
		return -ENOENT;
	return 0;
}

static bool is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

int piv_parse_date(const uint8_t *p, size_t n, int64_t *ret)
{
	static const unsigned mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	unsigned v[8], y, m, d;

	if (n != 8)
		return -EBADMSG;
	for (size_t i = 0; i < 8; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EBADMSG;
		v[i] = p[i] - '0';
	}
	y = v[0] * 1000 + v[1] * 100 + v[2] * 10 + v[3];
	m = v[4] * 10 + v[5];
	d = v[6] * 10 + v[7];
	/* Year 0000 is no year of the Gregorian calendar (ISO 8601 needs agreement to use it), and
	 * a day before 1970 is no PIV card's (FIPS 201 is from 2005): its epoch would be negative,
	 * which callers read as no date at all (fuzz-card-piv found "00300101"). */
	if (y < 1970 || m < 1 || m > 12 || d < 1 ||
	    d > mdays[m - 1] + (m == 2 && is_leap(y) ? 1u : 0u))
		return -ERANGE;
	*ret = days_from_civil(y, m, d) * 86400;
	return 0;
}

int piv_parse_chuid(const uint8_t *p, size_t n, int64_t *ret_expiry)
{
	const uint8_t *v, *date;
	size_t vlen, dlen;
	int r;

	r = piv_parse_wrapper(p, n, &v, &vlen);
	if (r < 0)
		return r;
	r = tlv_find(v, vlen, 0x35, &date, &dlen);
	if (r < 0)
		return r;
	if (r == 0) {
		*ret_expiry = 0;
		return 0;
	}
	return piv_parse_date(date, dlen, ret_expiry);
}

/* One field of GET METADATA's answer: a field of the wrong size is -EBADMSG. */
static int metadata_field(uint32_t tag, const uint8_t *v, size_t len, struct piv_metadata *m)
{
	switch (tag) {
	case 0x01:
		if (len != 1)
			return -EBADMSG;
		m->algorithm = v[0];
		return 0;
	case 0x02:
		if (len != 2)
			return -EBADMSG;
		m->pin_policy = v[0];
		m->touch_policy = v[1];
		return 0;
	case 0x03:
		if (len != 1)
			return -EBADMSG;
		m->origin = v[0];
		return 0;
	case 0x04:
		m->has_public_key = len > 0;
		return 0;
	case 0x05:
		if (len != 1)
			return -EBADMSG;
		m->is_default = v[0] != 0;
		return 0;
	default:
		return 0; /* 06 retries and whatever later firmware adds */
	}
}

int piv_parse_metadata(const uint8_t *p, size_t n, struct piv_metadata *ret)
{
	struct piv_metadata m = {};
	struct tlv_cursor c;
	const uint8_t *v;
	size_t len;
	uint32_t tag;
	int r;

	tlv_init(&c, p, n);
	while ((r = tlv_next(&c, &tag, &v, &len)) > 0) {
		r = metadata_field(tag, v, len, &m);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	*ret = m;
	return 0;
}

const char *piv_algorithm_name(uint8_t algorithm)
{
	/* yubikit piv.py KEY_TYPE; SP 800-78-4 Table 6-2 for the first ones. */
	switch (algorithm) {
	case 0x06:
		return "rsa1024";
	case 0x07:
		return "rsa2048";
	case 0x05:
		return "rsa3072";
	case 0x16:
		return "rsa4096";
	case 0x11:
		return "nistp256";
	case 0x14:
		return "nistp384";
	case 0xe0:
		return "ed25519";
	case 0xe1:
		return "x25519";
	default:
		return NULL;
	}
}

int piv_inflate(const uint8_t *p, size_t n, uint8_t *out, size_t size, size_t *ret_len)
{
	z_stream z = {};
	int zr;

	if (n > UINT32_MAX || size > UINT32_MAX)
		return -EFBIG;
	/* 15 + 32: a window of 32 KiB, and a gzip or zlib header, whichever the data has. */
	if (inflateInit2(&z, 15 + 32) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)size;
	zr = inflate(&z, Z_FINISH);
	*ret_len = size - z.avail_out;
	inflateEnd(&z);
	if (zr == Z_STREAM_END)
		return 0;
	/* Out of room with input left: it would inflate past size. */
	if ((zr == Z_BUF_ERROR || zr == Z_OK) && z.avail_out == 0)
		return -EFBIG;
	return -EBADMSG;
}

int piv_read_cert_answer(const uint8_t *p, size_t n, struct piv_cert *c)
{
	_cleanup_(freep) uint8_t *buf = NULL;
	struct piv_cert_object o;
	size_t len;
	int r;

	r = piv_parse_cert_object(p, n, &o);
	if (r == -ENOENT)
		return r;
	if (r < 0) {
		snprintf(c->error, sizeof(c->error),
		         "certificate object malformed (a length runs past its %zu bytes)", n);
		return r;
	}
	if (!o.compressed)
		return piv_cert_parse(o.cert, o.cert_len, c);
	buf = malloc(PIV_INFLATE_MAX);
	if (!buf)
		return -ENOMEM;
	r = piv_inflate(o.cert, o.cert_len, buf, PIV_INFLATE_MAX, &len);
	if (r == -EFBIG)
		snprintf(c->error, sizeof(c->error),
		         "compressed certificate inflates past %d KiB: not read",
		         PIV_INFLATE_MAX / 1024);
	else if (r < 0)
		snprintf(c->error, sizeof(c->error),
		         "compressed certificate (certinfo 01) is not gzip data");
	if (r < 0)
		return r;
	return piv_cert_parse(buf, len, c);
}
