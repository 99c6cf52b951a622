/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FIDO HID bytes, read passively (fido-hid.h): the report descriptor's items walked one at a time
 * as HID 1.11, 6.2.2 defines them, CTAPHID input reports as CTAP 2.1 PS 2021-06-15, 11.2.4 frames
 * them, and the touch state machine doc/touch.md, 5 chose.
 *
 * Every reader compares a length with what is left. Does not: allocate, keep state beyond the
 * struct fido_touch its caller owns, or read the clock (times come in as arguments).
 */
#include <errno.h>

#include "fido-hid.h"

/* HID 1.11, 6.2.2.2 and 6.2.2.3: item prefixes, types and the tags we follow. */
#define HID_ITEM_LONG 0xfe
#define HID_TYPE_MAIN 0
#define HID_TYPE_GLOBAL 1
#define HID_TYPE_LOCAL 2
#define HID_TYPE_RESERVED 3
#define HID_MAIN_COLLECTION 0xa
#define HID_MAIN_END_COLLECTION 0xc
#define HID_GLOBAL_USAGE_PAGE 0x0
#define HID_GLOBAL_PUSH 0xa
#define HID_GLOBAL_POP 0xb
#define HID_LOCAL_USAGE 0x0
#define HID_COLLECTION_APPLICATION 0x01

/* CTAP 2.1, 11.2.8.1: the FIDO Alliance's usage page and the CTAPHID usage, as an extended
 * usage (page in the upper 16 bits, HID 1.11, 6.2.2.8). */
#define FIDO_USAGE_CTAPHID UINT32_C(0xf1d00001)

/* Limits on what a descriptor may make us remember: the kernel's HID_GLOBAL_STACK_SIZE is 4 and
 * HID_COLLECTION_STACK_SIZE 4; a little more is harmless, unbounded is not. */
#define HID_PUSH_MAX 8
#define HID_DEPTH_MAX 32

struct hid_item {
	bool is_long;
	uint8_t type, tag;
	uint8_t size; /* of the data: 0, 1, 2 or 4 for short items */
	uint32_t value;
};

/* Returns 1 and one item, 0 at the end, -EBADMSG when the last item is cut short. */
static int hid_item_next(const uint8_t *p, size_t n, size_t *pos, struct hid_item *ret)
{
	size_t left = n - *pos;
	uint8_t prefix;

	if (left == 0)
		return 0;
	prefix = p[*pos];
	*ret = (struct hid_item){ 0 };
	if (prefix == HID_ITEM_LONG) {
		/* HID 1.11, 6.2.2.3: bDataSize, bLongItemTag, then the data. No tags are defined;
		 * skipped whole. */
		if (left < 3 || p[*pos + 1] > left - 3)
			return -EBADMSG;
		ret->is_long = true;
		ret->tag = p[*pos + 2];
		*pos += 3 + (size_t)p[*pos + 1];
		return 1;
	}
	ret->size = (prefix & 3) == 3 ? 4 : (prefix & 3);
	if (ret->size > left - 1)
		return -EBADMSG;
	ret->type = (prefix >> 2) & 3;
	ret->tag = prefix >> 4;
	for (uint8_t i = 0; i < ret->size; i++)
		ret->value |= (uint32_t)p[*pos + 1 + i] << (8 * i);
	*pos += 1 + (size_t)ret->size;
	return 1;
}

struct hid_walk {
	uint16_t page;
	uint16_t pushed[HID_PUSH_MAX];
	size_t n_pushed;
	size_t depth;
	bool have_usage; /* the first Usage since the last main item */
	uint32_t usage;
	uint8_t usage_size;
	bool fido;
};

static int hid_walk_global(struct hid_walk *w, const struct hid_item *it)
{
	switch (it->tag) {
	case HID_GLOBAL_USAGE_PAGE:
		w->page = (uint16_t)it->value;
		return 0;
	case HID_GLOBAL_PUSH:
		if (w->n_pushed >= HID_PUSH_MAX)
			return -EMSGSIZE;
		w->pushed[w->n_pushed++] = w->page;
		return 0;
	case HID_GLOBAL_POP:
		if (w->n_pushed == 0)
			return -EBADMSG;
		w->page = w->pushed[--w->n_pushed];
		return 0;
	}
	return 0;
}

static int hid_walk_main(struct hid_walk *w, const struct hid_item *it)
{
	/* A 1- or 2-byte usage takes the page in effect at the main item (HID 1.11, 6.2.2.8). */
	uint32_t usage = w->usage_size == 4 ? w->usage : (uint32_t)w->page << 16 | w->usage;

	if (it->tag == HID_MAIN_COLLECTION) {
		if (w->depth == 0 && it->value == HID_COLLECTION_APPLICATION && w->have_usage &&
		    usage == FIDO_USAGE_CTAPHID)
			w->fido = true;
		if (w->depth >= HID_DEPTH_MAX)
			return -EMSGSIZE;
		w->depth++;
	} else if (it->tag == HID_MAIN_END_COLLECTION) {
		if (w->depth == 0)
			return -EBADMSG;
		w->depth--;
	}
	/* Local items last until the next main item. */
	w->have_usage = false;
	return 0;
}

int fido_hid_descriptor_is_fido(const uint8_t *p, size_t n)
{
	struct hid_walk w = { 0 };
	struct hid_item it;
	size_t pos = 0;
	int r;

	if (n > FIDO_HID_DESCRIPTOR_MAX)
		return -EMSGSIZE;
	while ((r = hid_item_next(p, n, &pos, &it)) > 0) {
		if (it.is_long)
			continue;
		switch (it.type) {
		case HID_TYPE_MAIN:
			r = hid_walk_main(&w, &it);
			break;
		case HID_TYPE_GLOBAL:
			r = hid_walk_global(&w, &it);
			break;
		case HID_TYPE_LOCAL:
			if (it.tag == HID_LOCAL_USAGE && !w.have_usage) {
				w.have_usage = true;
				w.usage = it.value;
				w.usage_size = it.size;
			}
			break;
		default:
			r = -EBADMSG; /* HID 1.11, 6.2.2.2: type 3 is reserved */
		}
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	/* The kernel refuses a descriptor that leaves a collection open; so do we. */
	if (w.depth != 0)
		return -EBADMSG;
	return w.fido ? 1 : 0;
}

int fido_hid_frame_parse(const uint8_t *p, size_t n, struct fido_frame *ret)
{
	struct fido_frame f = { 0 };
	size_t left;

	if (n > FIDO_HID_REPORT_MAX)
		return -EMSGSIZE;
	/* CTAP 2.1, 11.2.4: CID (4 bytes, big-endian), then CMD or SEQ. */
	if (n < 5)
		return -EBADMSG;
	f.cid = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	f.cmd = p[4];
	if (!(f.cmd & 0x80)) {
		f.kind = FIDO_FRAME_CONTINUATION;
		*ret = f;
		return 0;
	}
	/* An initialization packet: BCNTH, BCNTL, then as much of the payload as fits. */
	if (n < 7)
		return -EBADMSG;
	f.bcnt = (uint16_t)(p[5] << 8 | p[6]);
	left = n - 7;
	switch (f.cmd) {
	case CTAPHID_KEEPALIVE:
	case CTAPHID_ERROR:
		/* 11.2.9.1.7 and 11.2.9.1.6: exactly one byte, the status or the error code. */
		if (f.bcnt != 1 || left < 1)
			return -EBADMSG;
		f.kind = f.cmd == CTAPHID_KEEPALIVE ? FIDO_FRAME_KEEPALIVE : FIDO_FRAME_ERROR;
		f.status = p[7];
		break;
	case CTAPHID_MSG:
		/* 11.2.9.1.1: a U2F response APDU; a bare status word is all of it. */
		if (f.bcnt == 2 && left >= 2 &&
		    (uint16_t)(p[7] << 8 | p[8]) == U2F_SW_CONDITIONS_NOT_SATISFIED)
			f.kind = FIDO_FRAME_U2F_NOT_SATISFIED;
		else
			f.kind = FIDO_FRAME_OTHER;
		break;
	default:
		f.kind = FIDO_FRAME_OTHER;
	}
	*ret = f;
	return 0;
}

const char *fido_frame_kind_to_string(enum fido_frame_kind k)
{
	static const char *const names[_FIDO_FRAME_KIND_MAX] = {
		[FIDO_FRAME_OTHER] = "other",
		[FIDO_FRAME_CONTINUATION] = "continuation",
		[FIDO_FRAME_KEEPALIVE] = "keepalive",
		[FIDO_FRAME_U2F_NOT_SATISFIED] = "u2f-not-satisfied",
		[FIDO_FRAME_ERROR] = "error",
	};

	if ((unsigned)k >= _FIDO_FRAME_KIND_MAX)
		return NULL;
	return names[k];
}

static bool frame_asks_touch(const struct fido_frame *f)
{
	return (f->kind == FIDO_FRAME_KEEPALIVE && f->status == CTAPHID_STATUS_UPNEEDED) ||
	       f->kind == FIDO_FRAME_U2F_NOT_SATISFIED;
}

static enum fido_touch_change touch_start(struct fido_touch *t, uint32_t cid, uint64_t monotonic,
                                          uint64_t since_realtime)
{
	t->pending = true;
	t->cid = cid;
	t->since_realtime = since_realtime;
	t->last_monotonic = monotonic;
	t->u2f_seen = false;
	return FIDO_TOUCH_STARTED;
}

/* since_realtime stays readable after the end, for the caller's "done" report. */
static enum fido_touch_change touch_end(struct fido_touch *t)
{
	t->pending = false;
	t->u2f_seen = false;
	return FIDO_TOUCH_ENDED;
}

enum fido_touch_change fido_touch_feed(struct fido_touch *t, const struct fido_frame *f,
                                       uint64_t now_monotonic, uint64_t now_realtime)
{
	if (t->pending) {
		/* A token serves one transaction at a time (CTAP 2.1, 11.2, "Arbitration"; other
		 * channels get CTAP1_ERR_CHANNEL_BUSY): a KEEPALIVE UPNEEDED on another channel
		 * means the token still waits, now for that client (the first gave up). The wait
		 * goes on under the new channel: no flap. */
		if (f->cid != t->cid && f->kind == FIDO_FRAME_KEEPALIVE &&
		    f->status == CTAPHID_STATUS_UPNEEDED) {
			t->cid = f->cid;
			t->last_monotonic = now_monotonic;
			return FIDO_TOUCH_UNCHANGED;
		}
		/* Any other traffic of another channel (a second client told
		 * CTAP1_ERR_CHANNEL_BUSY) says nothing about this wait. */
		if (f->cid != t->cid)
			return FIDO_TOUCH_UNCHANGED;
		if (frame_asks_touch(f)) {
			t->last_monotonic = now_monotonic; /* extends; since stays */
			return FIDO_TOUCH_UNCHANGED;
		}
		/* The answer, an error, or KEEPALIVE PROCESSING: touched (or given up). */
		return touch_end(t);
	}

	if (f->kind == FIDO_FRAME_KEEPALIVE && f->status == CTAPHID_STATUS_UPNEEDED)
		return touch_start(t, f->cid, now_monotonic, now_realtime);

	if (f->kind == FIDO_FRAME_U2F_NOT_SATISFIED) {
		/* The client asked again and got 0x6985 again: it polls for a touch. The wait began
		 * with the first of the two. */
		if (t->u2f_seen && t->u2f_cid == f->cid && now_monotonic >= t->u2f_monotonic &&
		    now_monotonic - t->u2f_monotonic <= FIDO_TOUCH_U2F_REPEAT_USEC)
			return touch_start(t, f->cid, now_monotonic, t->u2f_realtime);
		t->u2f_seen = true;
		t->u2f_cid = f->cid;
		t->u2f_monotonic = now_monotonic;
		t->u2f_realtime = now_realtime;
		return FIDO_TOUCH_UNCHANGED;
	}

	/* Any other answer on that channel ends the polling that was not yet a wait. */
	if (t->u2f_seen && f->cid == t->u2f_cid)
		t->u2f_seen = false;
	return FIDO_TOUCH_UNCHANGED;
}

uint64_t fido_touch_deadline(const struct fido_touch *t)
{
	if (!t->pending)
		return UINT64_MAX;
	if (t->last_monotonic > UINT64_MAX - FIDO_TOUCH_SILENCE_USEC)
		return UINT64_MAX - 1;
	return t->last_monotonic + FIDO_TOUCH_SILENCE_USEC;
}

enum fido_touch_change fido_touch_tick(struct fido_touch *t, uint64_t now_monotonic)
{
	if (!t->pending || now_monotonic < fido_touch_deadline(t))
		return FIDO_TOUCH_UNCHANGED;
	return touch_end(t);
}

enum fido_touch_change fido_touch_abort(struct fido_touch *t)
{
	if (!t->pending) {
		t->u2f_seen = false;
		return FIDO_TOUCH_UNCHANGED;
	}
	return touch_end(t);
}
