/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * FIDO HID bytes from a token: the input is read as a report descriptor whole, and as a run of
 * reports (one length byte, cut to 0..65, then that many bytes) fed to one touch state machine
 * with a clock that moves by the length byte. Any bytes give 0/1 or -EBADMSG / -EMSGSIZE, never a
 * read past the end; the state machine keeps its promises: a deadline only while pending, since
 * unchanged while a wait lasts, an end only after a start.
 */
#include <errno.h>

#include "fido-hid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_frame(const uint8_t *p, size_t n, struct fido_touch *t, uint64_t now)
{
	bool was_pending = t->pending;
	uint64_t since = t->since_realtime;
	enum fido_touch_change c;
	struct fido_frame f;
	int r;

	r = fido_hid_frame_parse(p, n, &f);
	if (r < 0) {
		if (r != -EBADMSG && r != -EMSGSIZE)
			__builtin_trap();
		return;
	}
	if ((unsigned)f.kind >= _FIDO_FRAME_KIND_MAX || !fido_frame_kind_to_string(f.kind))
		__builtin_trap();
	c = fido_touch_feed(t, &f, now, now);
	if ((c == FIDO_TOUCH_STARTED && (was_pending || !t->pending)) ||
	    (c == FIDO_TOUCH_ENDED && (!was_pending || t->pending)) ||
	    (c == FIDO_TOUCH_UNCHANGED &&
	     (t->pending != was_pending || (t->pending && t->since_realtime != since))))
		__builtin_trap();
	if ((fido_touch_deadline(t) == UINT64_MAX) == t->pending)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fido_touch t = { 0 };
	uint64_t now = 1000000;
	size_t pos = 0;
	int r;

	r = fido_hid_descriptor_is_fido(data, size);
	if (r < 0 ? r != -EBADMSG && r != -EMSGSIZE : r > 1)
		__builtin_trap();

	while (pos < size) {
		size_t n = data[pos++] % (FIDO_HID_REPORT_MAX + 2);

		now += (uint64_t)data[pos - 1] * 20000;
		if (fido_touch_tick(&t, now) == FIDO_TOUCH_ENDED && t.pending)
			__builtin_trap();
		n = n < size - pos ? n : size - pos;
		check_frame(data + pos, n, &t, now);
		pos += n;
	}
	return 0;
}
