/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * card-piv-object.c and the model's keeping of a PIV read: the 53 wrapper (a length that runs
 * past the answer is an error), the CHUID's date (year 0000, February 30th, a leap day), GET
 * METADATA's fields, the inflate bound, the slot-to-object map, and piv_keep(): a later sighting
 * that did not read PIV keeps the last read, one that read it replaces it.
 */
#include <errno.h>
#include <zlib.h>

#include "card-piv.h"
#include "model-merge.h"
#include "test.h"

TEST(wrapper)
{
	static const uint8_t ok[] = { 0x53, 0x03, 0x70, 0x01, 0x30 };
	static const uint8_t past[] = { 0x53, 0x82, 0x02, 0x00, 0x70, 0x01, 0x30 };
	static const uint8_t other[] = { 0x54, 0x00 };
	struct piv_cert_object o;
	const uint8_t *v;
	size_t n;

	ASSERT_EQ(piv_parse_wrapper(ok, sizeof(ok), &v, &n), 0);
	ASSERT_EQ(n, 3);
	ASSERT_EQ(piv_parse_wrapper(past, sizeof(past), &v, &n), -EBADMSG);
	ASSERT_EQ(piv_parse_wrapper(other, sizeof(other), &v, &n), -EBADMSG);
	ASSERT_EQ(piv_parse_wrapper(ok, 0, &v, &n), -EBADMSG);
	ASSERT_EQ(piv_parse_cert_object(ok, sizeof(ok), &o), 0);
	ASSERT_EQ(o.cert_len, 1);
	ASSERT_FALSE(o.compressed);
	/* 70 empty: an empty slot, not an error. */
	static const uint8_t empty[] = { 0x53, 0x05, 0x70, 0x00, 0x71, 0x01, 0x01 };
	ASSERT_EQ(piv_parse_cert_object(empty, sizeof(empty), &o), -ENOENT);
}

static int chuid(const char *date, int64_t *ret)
{
	uint8_t b[32] = { 0x53, 0x0c, 0x34, 0x00, 0x35, 0x08 };

	memcpy(b + 6, date, 8);
	b[14] = 0xfe;
	b[15] = 0x00;
	return piv_parse_chuid(b, 16, ret);
}

TEST(chuid_dates)
{
	int64_t t = -1;

	ASSERT_EQ(chuid("20300101", &t), 0);
	ASSERT_EQ(t, 1893456000); /* 2030-01-01T00:00:00Z, ykman's CHUID */
	ASSERT_EQ(chuid("20240229", &t), 0);
	ASSERT_EQ(t, 1709164800); /* 2024-02-29T00:00:00Z */
	ASSERT_EQ(chuid("19700101", &t), 0);
	ASSERT_EQ(t, 0);
	ASSERT_EQ(chuid("00000101", &t), -ERANGE);
	ASSERT_EQ(chuid("20230229", &t), -ERANGE);
	ASSERT_EQ(chuid("20231301", &t), -ERANGE);
	ASSERT_EQ(chuid("2023O101", &t), -EBADMSG);
	/* No tag 35: no expiry. */
	static const uint8_t none[] = { 0x53, 0x04, 0x34, 0x00, 0xfe, 0x00 };
	t = -1;
	ASSERT_EQ(piv_parse_chuid(none, sizeof(none), &t), 0);
	ASSERT_EQ(t, 0);
}

TEST(metadata)
{
	static const uint8_t p256[] = { 0x01, 0x01, 0x11, 0x02, 0x02, 0x02,
		                        0x01, 0x03, 0x01, 0x01, 0x06, 0x00 };
	static const uint8_t bad[] = { 0x01, 0x02, 0x11, 0x11 };
	struct piv_metadata m;

	ASSERT_EQ(piv_parse_metadata(p256, sizeof(p256), &m), 0);
	ASSERT_STREQ(piv_algorithm_name(m.algorithm), "nistp256");
	ASSERT_EQ(m.pin_policy, 2);
	ASSERT_EQ(m.touch_policy, 1);
	ASSERT_EQ(m.origin, 1);
	ASSERT_EQ(piv_parse_metadata(bad, sizeof(bad), &m), -EBADMSG);
	ASSERT_TRUE(piv_algorithm_name(0x42) == NULL);
}

TEST(inflate_bound)
{
	static uint8_t zeros[70000], packed[1024], out[PIV_INFLATE_MAX];
	uLongf plen = sizeof(packed);
	size_t n;

	ASSERT_EQ(compress(packed, &plen, zeros, sizeof(zeros)), Z_OK);
	ASSERT_EQ(piv_inflate(packed, plen, out, sizeof(out), &n), -EFBIG);
	ASSERT_EQ(piv_inflate(packed, plen, out, 1, &n), -EFBIG);
	plen = sizeof(packed);
	ASSERT_EQ(compress(packed, &plen, zeros, 1000), Z_OK);
	ASSERT_EQ(piv_inflate(packed, plen, out, sizeof(out), &n), 0);
	ASSERT_EQ(n, 1000);
	ASSERT_EQ(piv_inflate(packed, plen - 1, out, sizeof(out), &n), -EBADMSG);
	ASSERT_EQ(piv_inflate(zeros, 100, out, sizeof(out), &n), -EBADMSG);
}

TEST(slot_objects)
{
	ASSERT_EQ(piv_slot_object(0x9a), 0x5fc105);
	ASSERT_EQ(piv_slot_object(0x9c), 0x5fc10a);
	ASSERT_EQ(piv_slot_object(0x9d), 0x5fc10b);
	ASSERT_EQ(piv_slot_object(0x9e), 0x5fc101);
	ASSERT_EQ(piv_slot_object(0x82), 0x5fc10d);
	ASSERT_EQ(piv_slot_object(0x95), 0x5fc120);
	ASSERT_EQ(piv_slot_object(0x96), 0);
	ASSERT_EQ(piv_slot_object(0x9b), 0);
}

TEST(keep_across_sightings)
{
	struct piv_app old = {}, now = {};
	struct sighting usb = {}, pcsc = {};
	struct token t;

	old.state = PIV_READ_OK;
	old.n_certs = 1;
	strcpy(old.certs[0].slot, "9a");
	/* A rescan does not ask: the last read stays. */
	piv_keep(&old, &now);
	ASSERT_EQ(now.state, PIV_READ_OK);
	ASSERT_STREQ(now.certs[0].slot, "9a");
	/* Found in use later: the last read stays too. */
	memset(&now, 0, sizeof(now));
	now.state = PIV_READ_IN_USE;
	piv_keep(&old, &now);
	ASSERT_EQ(now.state, PIV_READ_OK);
	/* Read again: the new read wins. */
	memset(&now, 0, sizeof(now));
	now.state = PIV_READ_OK;
	piv_keep(&old, &now);
	ASSERT_EQ(now.n_certs, 0);

	/* A YubiKey seen on USB and over PC/SC: the merged token has the card's PIV. */
	usb.src = SIGHTING_USB;
	usb.t.kind = TOKEN_KIND_YUBIKEY;
	strcpy(usb.t.serial, "12345678");
	pcsc.src = SIGHTING_PCSC;
	pcsc.t.kind = TOKEN_KIND_YUBIKEY;
	strcpy(pcsc.t.serial, "12345678");
	memcpy(&pcsc.t.piv, &old, sizeof(old));
	token_merge(&usb, &pcsc, &t);
	ASSERT_EQ(t.piv.state, PIV_READ_OK);
	ASSERT_STREQ(t.piv.certs[0].slot, "9a");
}

int main(void)
{
	RUN(wrapper);
	RUN(chuid_dates);
	RUN(metadata);
	RUN(inflate_bound);
	RUN(slot_objects);
	RUN(keep_across_sightings);
	return 0;
}
