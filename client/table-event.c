/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status --watch: one line per Watch event, after a time stamp (table_render_event()).
 * The words of a touch wait are table-touch.c's.
 *
 * Does not: render the full report (table.c), or decide colour (the caller's job).
 */
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "expiry-math.h"
#include "table-internal.h"

static void put_key_brief(const struct ctx *c, const struct key *k)
{
	fprintf(c->out, "%s %s", isempty(k->uid) ? "(no user id)" : k->uid,
	        table_short_fpr(k->fingerprint));
}

static void put_token_brief(const struct ctx *c, const struct token *t)
{
	char name[128];

	token_display_name(t, name, sizeof(name));
	fputs(name, c->out);
	if (t->present)
		fputs(", present", c->out);
	else
		table_put_colored(c, SGR_DIM, ", absent");
	if (!isempty(t->error)) {
		fputs(", ", c->out);
		table_put_colored(c, SGR_RED, t->error);
	}
}

static enum level worst_level(const struct keyctl_status *s)
{
	enum level l = LEVEL_OK;

	for (size_t i = 0; i < s->n_keys; i++)
		if (!s->keys[i].revoked)
			l = MAX(l, s->keys[i].level);
	for (size_t i = 0; i < s->n_findings; i++)
		l = MAX(l, s->findings[i].level);
	return l;
}

/* The event_<kind>() helpers write one event's words between table_render_event()'s time stamp
 * and its newline. Tokens and keys share the word for what happened to them. */
static const char *change_word(enum event_type t)
{
	switch (t) {
	case EVENT_TOKEN_ADDED:
	case EVENT_KEY_ADDED:
		return "added";
	case EVENT_TOKEN_CHANGED:
	case EVENT_KEY_CHANGED:
		return "changed";
	default:
		return "removed";
	}
}

static void event_state(const struct ctx *c, const struct keyctl_status *s)
{
	size_t present = 0;

	for (size_t i = 0; i < s->n_tokens; i++)
		present += s->tokens[i].present;
	fprintf(c->out, "state: %zu token%s (%zu present), %zu key%s, %zu finding%s; ", s->n_tokens,
	        s->n_tokens == 1 ? "" : "s", present, s->n_keys, s->n_keys == 1 ? "" : "s",
	        s->n_findings, s->n_findings == 1 ? "" : "s");
	table_put_colored(c, table_level_color(worst_level(s)), table_level_name(worst_level(s)));
}

static void event_token(const struct ctx *c, const struct keyctl_event *e)
{
	fprintf(c->out, "token %s: ", change_word(e->type));
	put_token_brief(c, &e->token);
}

static void event_key(const struct ctx *c, const struct keyctl_event *e)
{
	fprintf(c->out, "key %s: ", change_word(e->type));
	put_key_brief(c, &e->key);
	fputs(", ", c->out);
	table_put_colored(c, table_level_color(e->key.level), table_level_name(e->key.level));
}

static void event_level(const struct ctx *c, const struct keyctl_event *e)
{
	const struct subkey *sub = NULL;
	char rel[EXPIRY_TEXT_MAX];

	fputs("level: ", c->out);
	put_key_brief(c, &e->key);
	for (size_t i = 0; i < e->key.n_subkeys; i++)
		if (strcasecmp(e->key.subkeys[i].fingerprint, e->subkey) == 0)
			sub = &e->key.subkeys[i];
	if (!isempty(e->subkey) && strcasecmp(e->subkey, e->key.fingerprint) != 0)
		fprintf(c->out, " subkey %s", table_short_fpr(e->subkey));
	fprintf(c->out, ": %s -> ", table_level_name(e->old_level));
	table_put_colored(c, table_level_color(e->level), table_level_name(e->level));
	if (sub && sub->expires != 0)
		fprintf(c->out, ", %s%s", sub->expires > c->now ? "expires " : "",
		        expiry_format_relative(rel, sizeof(rel), sub->expires, c->now));
}

static void event_finding(const struct ctx *c, const struct keyctl_event *e)
{
	if (e->type == EVENT_FINDING_CLEARED) {
		fprintf(c->out, "finding cleared: %s", e->finding.message);
		return;
	}
	fputs("finding: ", c->out);
	table_put_colored(c, table_level_color(e->finding.level),
	                  table_level_name(e->finding.level));
	fprintf(c->out, " %s", e->finding.message);
}

static void event_daemon(const struct ctx *c, const struct daemon_info *d)
{
	fputs("daemon: ", c->out);
	if (d->keyring_stale) {
		table_put_colored(c, SGR_YELLOW, "keyring is stale");
		fprintf(c->out, "%s%s", isempty(d->keyring_error) ? "" : ": ", d->keyring_error);
	} else
		fputs("keyring is current", c->out);
	if (!d->pcsc_available) {
		fputs("; ", c->out);
		table_put_colored(c, SGR_YELLOW, "PC/SC is not available");
	}
}

int table_render_event(FILE *out, const struct keyctl_event *e, int64_t now, bool color)
{
	const struct ctx c = {
		.out = out, .color = color, .width = table_out_width(out), .now = now
	};
	time_t tt = (time_t)now;
	char stamp[16] = "";
	struct tm tm;

	if (localtime_r(&tt, &tm))
		strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	fprintf(out, "%s ", stamp);

	switch (e->type) {
	case EVENT_STATE:
		event_state(&c, &e->status);
		break;
	case EVENT_TOKEN_ADDED:
	case EVENT_TOKEN_CHANGED:
	case EVENT_TOKEN_REMOVED:
		event_token(&c, e);
		break;
	case EVENT_KEY_ADDED:
	case EVENT_KEY_CHANGED:
	case EVENT_KEY_REMOVED:
		event_key(&c, e);
		break;
	case EVENT_LEVEL_CHANGED:
		event_level(&c, e);
		break;
	case EVENT_FINDING_RAISED:
	case EVENT_FINDING_CLEARED:
		event_finding(&c, e);
		break;
	case EVENT_DAEMON_CHANGED:
		event_daemon(&c, &e->daemon);
		break;
	case EVENT_TOUCH_PENDING:
	case EVENT_TOUCH_DONE: {
		char line[512];

		table_touch_event_words(e, line, sizeof(line));
		fputs(line, out);
		break;
	}
	default:
		fputs("unknown event", out);
	}
	fputc('\n', out);

	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
