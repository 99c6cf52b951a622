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
	ASSERT_EQ(chuid("00300101", &t), -ERANGE); /* fuzz-card-piv: a negative epoch */
	ASSERT_EQ(chuid("19691231", &t), -ERANGE);
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
	/* A YubiKey's answers to GET METADATA of 9A (ECC P-256, PIN once, touch never, generated)
	 * and of the PIN (retries 5 of 5), from Yubico.NET.SDK's manual,
	 * Yubico.YubiKey/docs/users-manual/application-piv/apdu/metadata.md. */
	static const uint8_t real_9a[] = {
		0x01, 0x01, 0x11, 0x02, 0x02, 0x02, 0x01, 0x03, 0x01, 0x01, 0x04, 0x43, 0x86, 0x41,
		0x04, 0xc4, 0x17, 0x7f, 0x2b, 0x96, 0x8f, 0x9c, 0x00, 0x0c, 0x4f, 0x3d, 0x2b, 0x88,
		0xb0, 0xab, 0x5b, 0x0c, 0x3b, 0x19, 0x42, 0x63, 0x20, 0x8c, 0xa1, 0x2f, 0xee, 0x1c,
		0xb4, 0xd8, 0x81, 0x96, 0x9f, 0xd8, 0xc8, 0xd0, 0x8d, 0xd1, 0xbb, 0x66, 0x58, 0x00,
		0x26, 0x7d, 0x05, 0x34, 0xa8, 0xa3, 0x30, 0xd1, 0x59, 0xde, 0x66, 0x01, 0x0e, 0x3f,
		0x21, 0x13, 0x29, 0xc5, 0x98, 0x56, 0x07, 0xb5, 0x26,
	};
	static const uint8_t real_pin[] = { 0x01, 0x01, 0xff, 0x05, 0x01,
		                            0x01, 0x06, 0x02, 0x05, 0x05 };
	static const uint8_t bad[] = { 0x01, 0x02, 0x11, 0x11 };
	static const uint8_t past[] = { 0x01, 0x01, 0x11, 0x04, 0x43, 0x86 };
	struct piv_metadata m;

	ASSERT_EQ(piv_parse_metadata(real_9a, sizeof(real_9a), &m), 0);
	ASSERT_STREQ(piv_algorithm_name(m.algorithm), "nistp256");
	ASSERT_EQ(m.pin_policy, 2);
	ASSERT_EQ(m.touch_policy, 1);
	ASSERT_EQ(m.origin, 1);
	ASSERT_TRUE(m.has_public_key);
	ASSERT_EQ(piv_parse_metadata(real_pin, sizeof(real_pin), &m), 0);
	ASSERT_EQ(m.algorithm, 0xff);
	ASSERT_TRUE(m.is_default);
	ASSERT_TRUE(piv_algorithm_name(m.algorithm) == NULL);
	ASSERT_EQ(piv_parse_metadata(bad, sizeof(bad), &m), -EBADMSG);
	ASSERT_EQ(piv_parse_metadata(past, sizeof(past), &m), -EBADMSG);
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
