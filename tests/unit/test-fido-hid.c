/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fido-hid: report descriptors (real FIDO ones, a keyboard's, truncated, overlong, nested, long
 * items), CTAPHID frames, and the touch state machine replaying real devices' reports.
 *
 * Real bytes, cited:
 *  - A YubiKey "Security Key by Yubico" (1050:0120, bcdDevice 5.12) recorded with umockdev doing a
 *    FIDO2 makeCredential: 12 KEEPALIVE UPNEEDED reports about 288 ms apart, then the CBOR answer.
 *    martinpitt/umockdev, devices/hidraw/fido2.script and its report_descriptor in
 *    devices/hidraw/fido2.umockdev, commit 92c8a005e84b8d6c2dc8229b3cc4b75c9d878872 (unchanged at
 *    39f785a74e3fcfa27ea5096fd7945ad080420d35).
 *  - The FIDO HID interface descriptor of a YubiKey 5: Yubico/libfido2, fuzz/fuzz_hid.c,
 *    dummy_report_descriptor, commit 8ee8e5a2eb94575c8baeda9c7bf1d4f27a3b1db4.
 *  - U2F over CTAPHID: a token's 0x6985 answer and its authentication answer, libfido2's recorded
 *    HID reports, Yubico/libfido2 fuzz/wiredata_u2f.h (WIREDATA_CTAP_U2F_6985,
 *    WIREDATA_CTAP_U2F_AUTH) and fuzz/wiredata_fido2.h (WIREDATA_CTAP_KEEPALIVE), commit
 *    8ee8e5a2eb94575c8baeda9c7bf1d4f27a3b1db4.
 *  - A keyboard: the boot keyboard report descriptor of USB HID 1.11, Appendix E.6, which boot
 *    keyboards (the YubiKey's OTP interface among them) declare.
 */
#include <errno.h>

#include "test.h"
#include "fido-hid.h"
#include "util.h"

#define SEC UINT64_C(1000000)
#define MSEC UINT64_C(1000)

/* umockdev devices/hidraw/fido2.umockdev, H: report_descriptor of the hid device. */
static const uint8_t yubico_security_key_rdesc[] = {
	0x06, 0xd0, 0xf1, 0x09, 0x01, 0xa1, 0x01, 0x09, 0x20, 0x15, 0x00, 0x26,
	0xff, 0x00, 0x75, 0x08, 0x95, 0x40, 0x81, 0x02, 0x09, 0x21, 0x15, 0x00,
	0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x40, 0x91, 0x02, 0xc0,
};

/* libfido2 fuzz/fuzz_hid.c: "the FIDO HID interface of a YubiKey 5" (the same bytes). */
static const uint8_t yubikey5_fido_rdesc[] = {
	0x06, 0xd0, 0xf1, 0x09, 0x01, 0xa1, 0x01, 0x09, 0x20, 0x15, 0x00, 0x26,
	0xff, 0x00, 0x75, 0x08, 0x95, 0x40, 0x81, 0x02, 0x09, 0x21, 0x15, 0x00,
	0x26, 0xff, 0x00, 0x75, 0x08, 0x95, 0x40, 0x91, 0x02, 0xc0,
};

/* USB HID 1.11, Appendix E.6. */
static const uint8_t boot_keyboard_rdesc[] = {
	0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x05, 0x07, 0x19, 0xe0, 0x29, 0xe7, 0x15,
	0x00, 0x25, 0x01, 0x75, 0x01, 0x95, 0x08, 0x81, 0x02, 0x95, 0x01, 0x75, 0x08,
	0x81, 0x01, 0x95, 0x05, 0x75, 0x01, 0x05, 0x08, 0x19, 0x01, 0x29, 0x05, 0x91,
	0x02, 0x95, 0x01, 0x75, 0x03, 0x91, 0x01, 0x95, 0x06, 0x75, 0x08, 0x15, 0x00,
	0x25, 0x65, 0x05, 0x07, 0x19, 0x00, 0x29, 0x65, 0x81, 0x00, 0xc0,
};

/* umockdev devices/hidraw/fido2.script, the "r" lines after makeCredential: the token's
 * KEEPALIVE (CID 01b20003, CMD 0xbb, BCNT 1, status 2 UPNEEDED), 64 bytes with zero padding. */
static const uint8_t yubico_keepalive_upneeded[64] = { 0x01, 0xb2, 0x00, 0x03,
	                                               0xbb, 0x00, 0x01, 0x02 };
/* ... and the first report of its answer: CTAPHID_CBOR (0x90), BCNT 0x00cb, status 0 (CTAP2_OK),
 * a map of 3 (a3) whose first key 1 holds a map of 2: credential id follows. */
static const uint8_t yubico_cbor_answer[64] = {
	0x01, 0xb2, 0x00, 0x03, 0x90, 0x00, 0xcb, 0x00, 0xa3, 0x01, 0xa2, 0x62, 0x69,
	0x64, 0x58, 0x40, 0x4e, 0xcf, 0x8e, 0x5b, 0xb4, 0xca, 0x8d, 0x92, 0x88, 0x51,
	0x32, 0x3d, 0x8d, 0x47, 0x18, 0xe9, 0xc7, 0x1d, 0x26, 0x63, 0x16, 0x0a, 0x58,
	0x09, 0x8b, 0x98, 0xfd, 0x25, 0xc2, 0x2f, 0xd4, 0xdb, 0x32, 0x4f, 0xd7, 0x2b,
	0x83, 0x74, 0x22, 0x98, 0xfd, 0x0a, 0x68, 0xc6, 0x98, 0x05, 0x5c, 0x10,
};
/* ... and its first continuation report (SEQ 0). */
static const uint8_t yubico_cbor_cont0[64] = {
	0x01, 0xb2, 0x00, 0x03, 0x00, 0xa5, 0xb6, 0x9e, 0xb0, 0x9f, 0x7f, 0x07, 0x84,
	0x9a, 0x4b, 0xe9, 0x8b, 0xd3, 0x46, 0x4a, 0x31, 0x64, 0x74, 0x79, 0x70, 0x65,
	0x6a, 0x70, 0x75, 0x62, 0x6c, 0x69, 0x63, 0x2d, 0x6b, 0x65, 0x79, 0x02, 0x58,
	0x25, 0xae, 0xb0, 0x38, 0x84, 0x97, 0xc8, 0xc3, 0xd3, 0x75, 0xc1, 0x57, 0xee,
	0x72, 0x06, 0x98, 0xac, 0x78, 0x78, 0xbe, 0x87, 0x0a, 0xd8, 0xf1, 0xaa,
};
/* The INIT answer on the broadcast channel, from the same recording. */
static const uint8_t yubico_init_answer[64] = {
	0xff, 0xff, 0xff, 0xff, 0x86, 0x00, 0x11, 0x01, 0x01, 0x01, 0x01, 0x01,
	0x01, 0x01, 0x01, 0x01, 0xb2, 0x00, 0x03, 0x02, 0x05, 0x01, 0x02, 0x05,
};

/* libfido2 fuzz/wiredata_u2f.h WIREDATA_CTAP_U2F_6985: CID 00009901, CTAPHID_MSG, BCNT 2,
 * 69 85. */
static const uint8_t u2f_6985[64] = { 0x00, 0x00, 0x99, 0x01, 0x83, 0x00, 0x02, 0x69, 0x85 };
/* WIREDATA_CTAP_U2F_AUTH, its first report: CTAPHID_MSG, BCNT 0x4e, user presence 01, counter,
 * signature. */
static const uint8_t u2f_auth[64] = {
	0x00, 0x00, 0x99, 0x01, 0x83, 0x00, 0x4e, 0x01, 0x00, 0x00, 0x00, 0x2c, 0x30,
	0x45, 0x02, 0x20, 0x1c, 0xf5, 0x7c, 0xf6, 0xde, 0xbe, 0xe9, 0x86, 0xee, 0x97,
	0xb7, 0x64, 0xa3, 0x4e, 0x7a, 0x70, 0x85, 0xd0, 0x66, 0xf9, 0xf0, 0xcd, 0x04,
	0x5d, 0x97, 0xf2, 0x3c, 0x22, 0xe3, 0x0e, 0x61, 0xc8, 0x02, 0x21, 0x00, 0x97,
	0xef, 0xae, 0x36, 0xe6, 0x17, 0x9f, 0x5e, 0x2d, 0xd7, 0x8c, 0x34, 0xa7,
};
/* wiredata_fido2.h WIREDATA_CTAP_KEEPALIVE: CID 00220002, status 2. */
static const uint8_t libfido2_keepalive[64] = { 0x00, 0x22, 0x00, 0x02, 0xbb, 0x00, 0x01, 0x02 };

TEST(descriptor_real)
{
	ASSERT_EQ(fido_hid_descriptor_is_fido(yubico_security_key_rdesc,
	                                      sizeof(yubico_security_key_rdesc)),
	          1);
	ASSERT_EQ(fido_hid_descriptor_is_fido(yubikey5_fido_rdesc, sizeof(yubikey5_fido_rdesc)), 1);
	ASSERT_EQ(fido_hid_descriptor_is_fido(boot_keyboard_rdesc, sizeof(boot_keyboard_rdesc)), 0);
	ASSERT_EQ(fido_hid_descriptor_is_fido(NULL, 0), 0);
}

TEST(descriptor_truncated)
{
	/* Every cut of the real descriptors: an item cut short, or a collection left open;
	 * before the collection, whole items that declare nothing yet. Never FIDO. */
	for (size_t n = 1; n < sizeof(yubico_security_key_rdesc); n++) {
		int r = fido_hid_descriptor_is_fido(yubico_security_key_rdesc, n);

		if (n == 3 || n == 5)
			ASSERT_EQ(r, 0);
		else
			ASSERT_ERR(r, EBADMSG);
	}
	for (size_t n = 1; n < sizeof(boot_keyboard_rdesc); n++) {
		int r = fido_hid_descriptor_is_fido(boot_keyboard_rdesc, n);

		if (n == 2 || n == 4)
			ASSERT_EQ(r, 0);
		else
			ASSERT_ERR(r, EBADMSG);
	}
}

TEST(descriptor_overlong)
{
	static uint8_t big[FIDO_HID_DESCRIPTOR_MAX + 1];

	ASSERT_ERR(fido_hid_descriptor_is_fido(big, sizeof(big)), EMSGSIZE);
	/* FIDO_HID_DESCRIPTOR_MAX zero bytes: Input items with no data, well formed, not FIDO. */
	ASSERT_EQ(fido_hid_descriptor_is_fido(big, FIDO_HID_DESCRIPTOR_MAX), 0);
}

TEST(descriptor_items)
{
	/* The usage as one 4-byte extended usage, no Usage Page item. */
	static const uint8_t extended[] = { 0x0b, 0x01, 0x00, 0xd0, 0xf1, 0xa1, 0x01, 0xc0 };
	/* A long item (0xfe, 1 byte of data, tag 0xf0) before the real descriptor. */
	uint8_t with_long[4 + sizeof(yubico_security_key_rdesc)] = { 0xfe, 0x01, 0xf0, 0xaa };
	static const uint8_t long_cut[] = { 0xfe, 0x05, 0xf0, 0x00 };
	/* FIDO page, but usage 2 or a physical (not application) collection: not CTAPHID. */
	static const uint8_t usage2[] = { 0x06, 0xd0, 0xf1, 0x09, 0x02, 0xa1, 0x01, 0xc0 };
	static const uint8_t physical[] = { 0x06, 0xd0, 0xf1, 0x09, 0x01, 0xa1, 0x00, 0xc0 };
	/* Nested inside a keyboard's application collection: not top-level. */
	static const uint8_t nested[] = { 0x05, 0x01, 0x09, 0x06, 0xa1, 0x01, 0x06, 0xd0,
		                          0xf1, 0x09, 0x01, 0xa1, 0x01, 0xc0, 0xc0 };
	/* Usage page pushed, changed, popped back to FIDO's before the collection. */
	static const uint8_t push_pop[] = { 0x06, 0xd0, 0xf1, 0xa4, 0x05, 0x01,
		                            0xb4, 0x09, 0x01, 0xa1, 0x01, 0xc0 };
	static const uint8_t pop_empty[] = { 0xb4 };
	static const uint8_t reserved_type[] = { 0x0c };
	static const uint8_t end_unopened[] = { 0xc0 };
	uint8_t deep[2 * 40], pushes[9];

	ASSERT_EQ(fido_hid_descriptor_is_fido(extended, sizeof(extended)), 1);
	memcpy(with_long + 4, yubico_security_key_rdesc, sizeof(yubico_security_key_rdesc));
	ASSERT_EQ(fido_hid_descriptor_is_fido(with_long, sizeof(with_long)), 1);
	ASSERT_ERR(fido_hid_descriptor_is_fido(long_cut, sizeof(long_cut)), EBADMSG);
	ASSERT_EQ(fido_hid_descriptor_is_fido(usage2, sizeof(usage2)), 0);
	ASSERT_EQ(fido_hid_descriptor_is_fido(physical, sizeof(physical)), 0);
	ASSERT_EQ(fido_hid_descriptor_is_fido(nested, sizeof(nested)), 0);
	ASSERT_EQ(fido_hid_descriptor_is_fido(push_pop, sizeof(push_pop)), 1);
	ASSERT_ERR(fido_hid_descriptor_is_fido(pop_empty, sizeof(pop_empty)), EBADMSG);
	ASSERT_ERR(fido_hid_descriptor_is_fido(reserved_type, sizeof(reserved_type)), EBADMSG);
	ASSERT_ERR(fido_hid_descriptor_is_fido(end_unopened, sizeof(end_unopened)), EBADMSG);
	for (size_t i = 0; i < 40; i++) {
		deep[i] = 0xa0; /* 40 Collection items with no data would be 40 deep */
		deep[40 + i] = 0xc0;
	}
	ASSERT_ERR(fido_hid_descriptor_is_fido(deep, sizeof(deep)), EMSGSIZE);
	memset(pushes, 0xa4, sizeof(pushes));
	ASSERT_ERR(fido_hid_descriptor_is_fido(pushes, sizeof(pushes)), EMSGSIZE);
}

TEST(frames_real)
{
	struct fido_frame f;

	ASSERT_OK(fido_hid_frame_parse(yubico_keepalive_upneeded, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_KEEPALIVE);
	ASSERT_EQ(f.cid, 0x01b20003);
	ASSERT_EQ(f.status, CTAPHID_STATUS_UPNEEDED);
	ASSERT_OK(fido_hid_frame_parse(libfido2_keepalive, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_KEEPALIVE);
	ASSERT_EQ(f.cid, 0x00220002);
	ASSERT_EQ(f.status, CTAPHID_STATUS_UPNEEDED);

	ASSERT_OK(fido_hid_frame_parse(yubico_cbor_answer, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_OTHER);
	ASSERT_EQ(f.cmd, 0x90);
	ASSERT_EQ(f.bcnt, 0xcb);
	ASSERT_OK(fido_hid_frame_parse(yubico_cbor_cont0, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_CONTINUATION);
	ASSERT_EQ(f.cmd, 0);
	ASSERT_OK(fido_hid_frame_parse(yubico_init_answer, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_OTHER);
	ASSERT_EQ(f.cid, 0xffffffff);

	ASSERT_OK(fido_hid_frame_parse(u2f_6985, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_U2F_NOT_SATISFIED);
	ASSERT_EQ(f.cid, 0x00009901);
	ASSERT_OK(fido_hid_frame_parse(u2f_auth, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_OTHER);
	ASSERT_STREQ(fido_frame_kind_to_string(FIDO_FRAME_U2F_NOT_SATISFIED), "u2f-not-satisfied");
}

TEST(frames_malformed)
{
	static const uint8_t error_busy[64] = { 0x00, 0x00, 0x99, 0x02, 0xbf, 0x00, 0x01, 0x06 };
	static const uint8_t keepalive_bcnt2[64] = {
		0x01, 0xb2, 0x00, 0x03, 0xbb, 0x00, 0x02, 0x02
	};
	/* A 0x6985 that is only the start of a longer message is no bare status word. */
	static const uint8_t msg_longer[64] = {
		0x00, 0x00, 0x99, 0x01, 0x83, 0x00, 0x03, 0x69, 0x85
	};
	uint8_t big[FIDO_HID_REPORT_MAX + 1] = { 0 };
	struct fido_frame f;

	ASSERT_OK(fido_hid_frame_parse(error_busy, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_ERROR);
	ASSERT_EQ(f.status, 6);
	ASSERT_ERR(fido_hid_frame_parse(keepalive_bcnt2, 64, &f), EBADMSG);
	ASSERT_OK(fido_hid_frame_parse(msg_longer, 64, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_OTHER);
	/* Truncated: every length below the header, and a KEEPALIVE without its status byte. */
	for (size_t n = 0; n < 5; n++)
		ASSERT_ERR(fido_hid_frame_parse(yubico_keepalive_upneeded, n, &f), EBADMSG);
	ASSERT_ERR(fido_hid_frame_parse(yubico_keepalive_upneeded, 6, &f), EBADMSG);
	ASSERT_ERR(fido_hid_frame_parse(yubico_keepalive_upneeded, 7, &f), EBADMSG);
	ASSERT_OK(fido_hid_frame_parse(yubico_keepalive_upneeded, 8, &f));
	ASSERT_OK(fido_hid_frame_parse(yubico_cbor_cont0, 5, &f));
	/* A bare 6985 cut after its first byte is not one. */
	ASSERT_OK(fido_hid_frame_parse(u2f_6985, 8, &f));
	ASSERT_EQ(f.kind, FIDO_FRAME_OTHER);
	ASSERT_ERR(fido_hid_frame_parse(big, sizeof(big), &f), EMSGSIZE);
}

static enum fido_touch_change feed(struct fido_touch *t, const uint8_t *report, uint64_t mono)
{
	struct fido_frame f;

	ASSERT_OK(fido_hid_frame_parse(report, 64, &f));
	/* realtime: a fixed offset from monotonic, to tell which frame "since" came from. */
	return fido_touch_feed(t, &f, mono, mono + 1000 * SEC);
}

/* The recorded makeCredential: pending at the first keepalive, since stays, done on the answer. */
TEST(touch_fido2_recorded)
{
	/* The recording's gaps between the keepalives, in ms (fido2.script's "r" values). */
	static const unsigned gaps[] = {
		269, 287, 289, 287, 288, 288, 288, 288, 288, 287, 288, 288
	};
	struct fido_touch t = { 0 };
	uint64_t now = 5 * SEC;

	ASSERT_EQ(fido_touch_deadline(&t), UINT64_MAX);
	ASSERT_EQ(feed(&t, yubico_init_answer, now), FIDO_TOUCH_UNCHANGED);
	for (size_t i = 0; i < ELEMENTSOF(gaps); i++) {
		now += gaps[i] * MSEC;
		ASSERT_EQ(feed(&t, yubico_keepalive_upneeded, now),
		          i == 0 ? FIDO_TOUCH_STARTED : FIDO_TOUCH_UNCHANGED);
		ASSERT_TRUE(t.pending);
		ASSERT_EQ(t.since_realtime, 5 * SEC + 269 * MSEC + 1000 * SEC);
		ASSERT_EQ(fido_touch_deadline(&t), now + FIDO_TOUCH_SILENCE_USEC);
		ASSERT_EQ(fido_touch_tick(&t, now + 290 * MSEC), FIDO_TOUCH_UNCHANGED);
	}
	now += 124 * MSEC;
	ASSERT_EQ(feed(&t, yubico_cbor_answer, now), FIDO_TOUCH_ENDED);
	ASSERT_FALSE(t.pending);
	ASSERT_EQ(fido_touch_deadline(&t), UINT64_MAX);
	ASSERT_EQ(feed(&t, yubico_cbor_cont0, now), FIDO_TOUCH_UNCHANGED);
}

TEST(touch_silence)
{
	struct fido_touch t = { 0 };

	ASSERT_EQ(feed(&t, yubico_keepalive_upneeded, 10 * SEC), FIDO_TOUCH_STARTED);
	ASSERT_EQ(feed(&t, yubico_keepalive_upneeded, 10 * SEC + 300 * MSEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(fido_touch_deadline(&t), 12 * SEC + 300 * MSEC);
	ASSERT_EQ(fido_touch_tick(&t, 12 * SEC + 299 * MSEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(fido_touch_tick(&t, 12 * SEC + 300 * MSEC), FIDO_TOUCH_ENDED);
	ASSERT_EQ(t.since_realtime, 1010 * SEC); /* readable for the "done" report */
	ASSERT_EQ(fido_touch_tick(&t, 20 * SEC), FIDO_TOUCH_UNCHANGED);
	/* A late keepalive starts a new wait, with its own since. */
	ASSERT_EQ(feed(&t, yubico_keepalive_upneeded, 21 * SEC), FIDO_TOUCH_STARTED);
	ASSERT_EQ(t.since_realtime, 1021 * SEC);
	ASSERT_EQ(fido_touch_abort(&t), FIDO_TOUCH_ENDED);
	ASSERT_EQ(fido_touch_abort(&t), FIDO_TOUCH_UNCHANGED);
}

/* libfido2's U2F registration as its fuzzer replays it: 0x6985 five times (100 ms apart, its
 * U2F_PACE_MS), then the answer. A lone 0x6985 (a check-only lookup) is no wait. */
TEST(touch_u2f)
{
	struct fido_touch t = { 0 };

	ASSERT_EQ(feed(&t, u2f_6985, 1 * SEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_FALSE(t.pending);
	ASSERT_EQ(fido_touch_deadline(&t), UINT64_MAX); /* nothing to wake for */
	ASSERT_EQ(feed(&t, u2f_auth, 1 * SEC + 10 * MSEC), FIDO_TOUCH_UNCHANGED);
	/* A second 0x6985 after an answer, or more than 1 s later, is again a first. */
	ASSERT_EQ(feed(&t, u2f_6985, 2 * SEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(feed(&t, u2f_6985, 3 * SEC + 1), FIDO_TOUCH_UNCHANGED);
	ASSERT_FALSE(t.pending);

	for (unsigned i = 1; i < 5; i++) {
		ASSERT_EQ(feed(&t, u2f_6985, 3 * SEC + 1 + i * 100 * MSEC),
		          i == 1 ? FIDO_TOUCH_STARTED : FIDO_TOUCH_UNCHANGED);
		ASSERT_EQ(t.since_realtime, 1003 * SEC + 1);
	}
	ASSERT_EQ(feed(&t, u2f_auth, 3 * SEC + 600 * MSEC), FIDO_TOUCH_ENDED);
}

/* Two channels on one token: the other's answers neither start, extend nor end this wait; its
 * KEEPALIVE UPNEEDED takes the wait over (the token still blinks), without a flap. */
TEST(touch_channels)
{
	static const uint8_t busy_other[64] = { 0x00, 0x00, 0x99, 0x02, 0xbf, 0x00, 0x01, 0x06 };
	static const uint8_t processing[64] = { 0x01, 0xb2, 0x00, 0x03, 0xbb, 0x00, 0x01, 0x01 };
	static const uint8_t processing2[64] = { 0x00, 0x22, 0x00, 0x02, 0xbb, 0x00, 0x01, 0x01 };
	struct fido_touch t = { 0 };

	ASSERT_EQ(feed(&t, processing, 1 * SEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(feed(&t, yubico_keepalive_upneeded, 1 * SEC), FIDO_TOUCH_STARTED);
	ASSERT_EQ(feed(&t, busy_other, 1 * SEC + 100 * MSEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(feed(&t, u2f_auth, 1 * SEC + 200 * MSEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(t.cid, 0x01b20003);
	ASSERT_EQ(fido_touch_deadline(&t), 3 * SEC);
	ASSERT_EQ(feed(&t, libfido2_keepalive, 1 * SEC + 300 * MSEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(t.cid, 0x00220002);
	ASSERT_EQ(t.since_realtime, 1001 * SEC);
	ASSERT_EQ(fido_touch_deadline(&t), 3 * SEC + 300 * MSEC);
	/* The first channel's last word no longer counts; the new one's does. KEEPALIVE
	 * PROCESSING after UPNEEDED on the channel: touched, now computing. */
	ASSERT_EQ(feed(&t, processing, 1 * SEC + 400 * MSEC), FIDO_TOUCH_UNCHANGED);
	ASSERT_EQ(feed(&t, processing2, 1 * SEC + 500 * MSEC), FIDO_TOUCH_ENDED);
}

int main(void)
{
	RUN(descriptor_real);
	RUN(descriptor_truncated);
	RUN(descriptor_overlong);
	RUN(descriptor_items);
	RUN(frames_real);
	RUN(frames_malformed);
	RUN(touch_fido2_recorded);
	RUN(touch_silence);
	RUN(touch_u2f);
	RUN(touch_channels);
	return 0;
}
