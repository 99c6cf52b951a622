/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status and a token waiting for a touch: the words on its line of the table, the lines
 * --watch prints for touch-pending and touch-done, and keyctl_token_touch_pending in the
 * Prometheus text. Beside test-table.c, which holds the rest of the renderers' tests.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "prometheus.h"
#include "table.h"
#include "test.h"

#define NOW INT64_C(1748736000) /* 2025-06-01 00:00:00 UTC */

static void yubikey(struct token *t, const char *id, const char *serial)
{
	memset(t, 0, sizeof(*t));
	strcpy_trunc(t->id, sizeof(t->id), id);
	t->kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(t->model, sizeof(t->model), "YubiKey 5 NFC");
	strcpy_trunc(t->serial, sizeof(t->serial), serial);
	t->present = true;
	t->last_seen = NOW;
}

static void waits(struct token *t, enum touch_app app, const char *slot, const char *requester)
{
	t->touch_waiting = true;
	memset(&t->touch, 0, sizeof(t->touch));
	t->touch.application = app;
	strcpy_trunc(t->touch.slot, sizeof(t->touch.slot), slot);
	t->touch.since = NOW - 2;
	strcpy_trunc(t->touch.requester, sizeof(t->touch.requester), requester);
}

typedef int (*render_fn)(FILE *f, const struct token *tokens, size_t n, bool color);

static int render_table(FILE *f, const struct token *tokens, size_t n, bool color)
{
	return table_render(f, NULL, tokens, n, NULL, 0, NULL, 0, NOW, color);
}

static int render_prometheus(FILE *f, const struct token *tokens, size_t n, bool color)
{
	struct daemon_info d = { .now = NOW };

	return prometheus_render(f, &d, tokens, n, NULL, 0, NULL, 0, NOW);
}

/* The first line that contains needle, without its newline; "" when none. */
static char *line_with(render_fn fn, const struct token *tokens, size_t n, bool color,
                       const char *needle)
{
	char *buf = NULL, *p, *end;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ASSERT_TRUE(f);
	ASSERT_OK(fn(f, tokens, n, color));
	fclose(f);
	p = strstr(buf, needle);
	if (!p) {
		buf[0] = 0;
		return buf;
	}
	while (p > buf && p[-1] != '\n')
		p--;
	end = strchr(p, '\n');
	memmove(buf, p, end ? (size_t)(end - p) : strlen(p));
	buf[end ? (size_t)(end - p) : strlen(p)] = 0;
	return buf;
}

/* t made to wait as said: its line ends with "  waiting for touch " and want. */
static void expect_words(struct token *t, enum touch_app app, const char *slot,
                         const char *requester, const char *want)
{
	char *s, end[128];

	waits(t, app, slot, requester);
	s = line_with(render_table, t, 1, false, "waiting");
	snprintf(end, sizeof(end), "  waiting for touch %s", want);
	ASSERT_TRUE(strlen(s) > strlen(end));
	ASSERT_STREQ(s + strlen(s) - strlen(end), end);
	free(s);
}

TEST(table_line)
{
	struct token t[2];
	char *s;

	yubikey(&t[0], "yubikey-12345678", "12345678");
	waits(&t[0], TOUCH_APP_OPENPGP, "sig", "git");
	yubikey(&t[1], "yubikey-87654321", "87654321");
	s = line_with(render_table, t, 2, false, "#12345678");
	ASSERT_STREQ(s,
	             "  YubiKey 5 NFC #12345678  present  waiting for touch (signing key; likely "
	             "git)");
	free(s);
	/* The other token does not wait: its line says nothing of it. */
	s = line_with(render_table, t, 2, false, "#87654321");
	ASSERT_STREQ(s, "  YubiKey 5 NFC #87654321  present");
	free(s);
	s = line_with(render_table, t, 1, true, "#12345678");
	ASSERT_STREQ(s, "  \033[1mYubiKey 5 NFC #12345678\033[0m  \033[32mpresent\033[0m  "
	                "\033[33mwaiting for touch (signing key; likely git)\033[0m");
	free(s);

	/* No requester known: no "likely". FIDO, PIV and the other OpenPGP slots. */
	expect_words(&t[0], TOUCH_APP_OPENPGP, "dec", "", "(decryption key)");
	expect_words(&t[0], TOUCH_APP_OPENPGP, "aut", "ssh", "(authentication key; likely ssh)");
	expect_words(&t[0], TOUCH_APP_FIDO, "", "firefox", "(FIDO; likely firefox)");
	expect_words(&t[0], TOUCH_APP_PIV, "9c", "", "(PIV slot 9c)");

	/* An absent token never waits, whatever it carries. */
	t[0].present = false;
	s = line_with(render_table, t, 1, false, "waiting");
	ASSERT_STREQ(s, "");
	free(s);
}

TEST(watch_lines)
{
	struct keyctl_event e;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	ASSERT_TRUE(f);
	memset(&e, 0, sizeof(e));
	e.type = EVENT_TOUCH_PENDING;
	yubikey(&e.token, "yubikey-12345678", "12345678");
	waits(&e.token, TOUCH_APP_OPENPGP, "sig", "git");
	ASSERT_OK(table_render_event(f, &e, NOW + 5, false));
	e.type = EVENT_TOUCH_DONE;
	e.token.touch_waiting = false;
	memset(&e.token.touch, 0, sizeof(e.token.touch));
	ASSERT_OK(table_render_event(f, &e, NOW + 6, false));
	e.has_touch_end = true;
	e.touch_end = TOUCH_END_TIMEOUT;
	ASSERT_OK(table_render_event(f, &e, NOW + 7, false));
	e.touch_end = TOUCH_END_REMOVED;
	ASSERT_OK(table_render_event(f, &e, NOW + 8, false));
	fclose(f);
	ASSERT_STREQ(buf, "00:00:05 touch pending: YubiKey 5 NFC #12345678, waiting for touch "
	                  "(signing key; likely git)\n"
	                  "00:00:06 touch done: YubiKey 5 NFC #12345678, touched\n"
	                  "00:00:07 touch done: YubiKey 5 NFC #12345678, no longer waiting: timed "
	                  "out\n"
	                  "00:00:08 touch done: YubiKey 5 NFC #12345678, no longer waiting: "
	                  "unplugged\n");
	free(buf);
}

TEST(prometheus_gauge)
{
	struct token t[3];
	char *s;

	yubikey(&t[0], "yubikey-12345678", "12345678");
	waits(&t[0], TOUCH_APP_OPENPGP, "sig", "git");
	yubikey(&t[1], "yubikey-87654321", "87654321");
	yubikey(&t[2], "yubikey-11111111", "11111111");
	t[2].present = false;
	s = line_with(render_prometheus, t, 3, false, "# HELP keyctl_token_touch_pending");
	ASSERT_STREQ(s, "# HELP keyctl_token_touch_pending 1 while the token waits for a touch "
	                "(application and slot say which key), else 0; present tokens only.");
	free(s);
	s = line_with(render_prometheus, t, 3, false,
	              "keyctl_token_touch_pending{token=\"yubikey-1");
	ASSERT_STREQ(s, "keyctl_token_touch_pending{token=\"yubikey-12345678\",application="
	                "\"openpgp\",slot=\"sig\"} 1");
	free(s);
	s = line_with(render_prometheus, t, 3, false,
	              "keyctl_token_touch_pending{token=\"yubikey-8");
	ASSERT_STREQ(s, "keyctl_token_touch_pending{token=\"yubikey-87654321\",application=\"\","
	                "slot=\"\"} 0");
	free(s);
	/* Absent tokens have no sample. */
	s = line_with(render_prometheus, t, 3, false, "touch_pending{token=\"yubikey-11111111\"");
	ASSERT_STREQ(s, "");
	free(s);
	waits(&t[1], TOUCH_APP_FIDO, "", "");
	s = line_with(render_prometheus, t, 3, false,
	              "keyctl_token_touch_pending{token=\"yubikey-8");
	ASSERT_STREQ(s, "keyctl_token_touch_pending{token=\"yubikey-87654321\",application="
	                "\"fido\",slot=\"\"} 1");
	free(s);
}

int main(void)
{
	/* Event lines carry local time: pin it. */
	setenv("TZ", "UTC", 1);
	tzset();
	RUN(table_line);
	RUN(watch_lines);
	RUN(prometheus_gauge);
	return 0;
}
