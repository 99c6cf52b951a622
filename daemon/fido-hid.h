/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FIDO over HID, read passively: whether a HID report descriptor is a FIDO authenticator's, what
 * one CTAPHID input report says, and whether the token waits for a touch (a small state machine per
 * device, fed with reports and the time, that names its own next deadline).
 *
 * Pure: no I/O, no clock, no globals. The bytes are the token's (untrusted); nothing here reads
 * past the length given. Does not: open devices, see the host's requests (output reports are not
 * visible to a passive reader), decode CBOR or U2F payloads beyond a status word.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* CTAP 2.1 PS 2021-06-15, 11.2.4: a packet is one HID report of at most 64 bytes. */
#define FIDO_HID_REPORT_MAX 64
/* The kernel's HID_MAX_DESCRIPTOR_SIZE: sysfs report_descriptor is never longer. */
#define FIDO_HID_DESCRIPTOR_MAX 4096

/* CTAP 2.1, 11.2.9.1.1 MSG, 11.2.9.1.6 ERROR, 11.2.9.1.7 KEEPALIVE: commands as they appear on
 * the wire, bit 7 set (11.2.4). */
#define CTAPHID_MSG 0x83
#define CTAPHID_KEEPALIVE 0xbb
#define CTAPHID_ERROR 0xbf
/* CTAP 2.1, 11.2.9.1.7: CTAPHID_KEEPALIVE's one status byte. */
#define CTAPHID_STATUS_PROCESSING 1
#define CTAPHID_STATUS_UPNEEDED 2
/* ISO 7816-4 status word that U2F (FIDO U2F Raw Message Formats 1.2, 3.3) answers until touched. */
#define U2F_SW_CONDITIONS_NOT_SATISFIED 0x6985

/* How long a wait outlives its last sign: a token sends keepalives while it waits (CTAP 2.1,
 * 11.2.9.1.7; a YubiKey every 290 ms, the recording in tests/unit/test-fido-hid.c); 2 s without
 * one means the client or the token gave up. */
#define FIDO_TOUCH_SILENCE_USEC (2 * UINT64_C(1000000))
/* U2F clients repeat a request answered 0x6985 (libfido2 every 100 ms); two within this make a
 * wait, one alone is a check-only lookup (doc/touch.md, 5). */
#define FIDO_TOUCH_U2F_REPEAT_USEC UINT64_C(1000000)

/* Returns 1 when the descriptor has a top-level application collection of usage page 0xF1D0,
 * usage 0x01 (CTAP 2.1, 11.2.8.1), 0 when it is well formed but not FIDO, -EBADMSG when it is
 * malformed (a truncated item, a reserved item type, unbalanced collections or pops), -EMSGSIZE
 * over FIDO_HID_DESCRIPTOR_MAX or past the nesting limits. Items as HID 1.11, 6.2.2 has them. */
int fido_hid_descriptor_is_fido(const uint8_t *p, size_t n);

enum fido_frame_kind {
	FIDO_FRAME_OTHER, /* any other init packet */
	FIDO_FRAME_CONTINUATION, /* SEQ < 0x80: the rest of some message */
	FIDO_FRAME_KEEPALIVE, /* status in fido_frame.status */
	FIDO_FRAME_U2F_NOT_SATISFIED, /* CTAPHID_MSG whose whole payload is 0x6985 */
	FIDO_FRAME_ERROR, /* CTAPHID_ERROR; code in fido_frame.status */
	_FIDO_FRAME_KIND_MAX,
};

struct fido_frame {
	uint32_t cid;
	enum fido_frame_kind kind;
	uint8_t cmd; /* init packets: CMD with bit 7; continuations: SEQ */
	uint8_t status;
	uint16_t bcnt; /* init packets only */
};

/* Parses one input report as hidraw returns it for a FIDO interface (no report id: CID first).
 * Returns 0, -EBADMSG when too short for its header or a KEEPALIVE/ERROR of the wrong length,
 * -EMSGSIZE over FIDO_HID_REPORT_MAX. CTAP 2.1, 11.2.4. */
int fido_hid_frame_parse(const uint8_t *p, size_t n, struct fido_frame *ret);

const char *fido_frame_kind_to_string(enum fido_frame_kind k);

/* Touch state of one device. Zeroed is idle. */
struct fido_touch {
	bool pending;
	uint32_t cid; /* the channel that waits */
	uint64_t since_realtime; /* first sign of this wait, CLOCK_REALTIME usec */
	uint64_t last_monotonic; /* last frame that kept it pending */
	/* A 0x6985 not yet repeated: when and on which channel. */
	bool u2f_seen;
	uint32_t u2f_cid;
	uint64_t u2f_monotonic, u2f_realtime;
};

enum fido_touch_change {
	FIDO_TOUCH_UNCHANGED,
	FIDO_TOUCH_STARTED,
	FIDO_TOUCH_ENDED,
	_FIDO_TOUCH_CHANGE_MAX,
};

/* Feeds one parsed frame seen at the given times (usec). Pending starts on a KEEPALIVE UPNEEDED
 * or on the second 0x6985 on one channel within FIDO_TOUCH_U2F_REPEAT_USEC; repeats extend it
 * (since stays at the first), and so does a KEEPALIVE UPNEEDED on another channel, which takes
 * the wait over; any other frame on the waiting channel ends it, other channels' other frames
 * do nothing. Returns the change. */
enum fido_touch_change fido_touch_feed(struct fido_touch *t, const struct fido_frame *f,
                                       uint64_t now_monotonic, uint64_t now_realtime);

/* Ends a wait whose deadline has passed. Returns the change. */
enum fido_touch_change fido_touch_tick(struct fido_touch *t, uint64_t now_monotonic);

/* Ends a wait, whatever its deadline: the device left or can no longer be read. Returns the
 * change (FIDO_TOUCH_UNCHANGED when nothing waited). */
enum fido_touch_change fido_touch_abort(struct fido_touch *t);

/* CLOCK_MONOTONIC usec at which fido_touch_tick() must run, or UINT64_MAX when nothing waits:
 * an idle device needs no timer. */
uint64_t fido_touch_deadline(const struct fido_touch *t);
