/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status's words for a token waiting for a touch: on the token's line of the table
 * ("waiting for touch (signing key; likely git)") and as the lines --watch prints for the
 * touch-pending and touch-done events. Kept apart from table.c, which has the layout. The part
 * that names the key and the requester is touch_pending_describe(), shared with keyctl-notify.
 *
 * Does not: colour, measure columns or write to a stream (table.c does).
 */
#include <stdio.h>

#include "table.h"

void table_touch_words(const struct touch_pending *tp, char *buf, size_t size)
{
	char what[REQUESTER_MAX + 64];

	touch_pending_describe(tp, what, sizeof(what));
	snprintf(buf, size, "waiting for touch (%s)", what);
}

/* How a wait ended, for people; an older daemon that did not say: the ordinary way. */
static const char *end_words(const struct keyctl_event *e)
{
	switch (e->has_touch_end ? e->touch_end : TOUCH_END_TOUCHED) {
	case TOUCH_END_TIMEOUT:
		return "no longer waiting: timed out";
	case TOUCH_END_REMOVED:
		return "no longer waiting: unplugged";
	default:
		return "touched";
	}
}

void table_touch_event_words(const struct keyctl_event *e, char *buf, size_t size)
{
	char name[128], words[REQUESTER_MAX + 96];

	token_display_name(&e->token, name, sizeof(name));
	if (e->type == EVENT_TOUCH_PENDING)
		table_touch_words(&e->token.touch, words, sizeof(words));
	else
		snprintf(words, sizeof(words), "%s", end_words(e));
	snprintf(buf, size, "touch %s: %s, %s", e->type == EVENT_TOUCH_PENDING ? "pending" : "done",
	         name, words);
}
