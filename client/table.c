/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The human report of keyctl-status. Each section is printed in two passes over the data: the
 * first measures every column, the second prints, so columns line up without storing rows and
 * without padding the last column (no trailing blanks). Widths count UTF-8 code points, which
 * is right for the Latin, Cyrillic and Greek user ids GnuPG users mostly have.
 *
 * Findings are word-wrapped to the terminal's width (COLUMNS, else the terminal's own, else 80
 * when the output is no terminal); a hint never is: it is often a command to paste, and a command
 * broken across lines runs as two. One that does not fit beside "hint:" goes on a line of its own,
 * whole, however long.
 *
 * Does not: decide exit codes (status.c), read the clock, or decide colour (the caller's job).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "expiry-math.h"
#include "table.h"

#include "table-internal.h"

#define SEP "  "
#define FINDING_INDENT 12
#define HINT_INDENT (FINDING_INDENT + 2)
/* Below this a finding's words would stand one per line; above it nobody reads a line. */
#define WIDTH_MIN 40
#define WIDTH_MAX 1000
#define WIDTH_NOT_A_TERMINAL 80

const char *table_level_color(enum level l)
{
	switch (l) {
	case LEVEL_OK:
		return SGR_GREEN;
	case LEVEL_NOTICE:
		return SGR_CYAN;
	case LEVEL_WARNING:
		return SGR_YELLOW;
	case LEVEL_CRITICAL:
		return SGR_RED;
	case LEVEL_EXPIRED:
		return SGR_BOLD_RED;
	default:
		return "";
	}
}

const char *table_level_name(enum level l)
{
	const char *s = level_to_string(l);

	return s ? s : "unknown";
}

/* Display width of UTF-8 text: code points, not bytes. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void table_put_colored(const struct ctx *c, const char *sgr, const char *text)
{
	if (c->color && !isempty(sgr))
		fprintf(c->out, "%s%s%s", sgr, text, SGR_RESET);
	else
		fputs(text, c->out);
}

/* One cell of a row: the separator before it, the text, and padding unless it is the last. */
static void put_cell(const struct ctx *c, bool first, const char *sgr, const char *text,
                     size_t width, bool last)
{
	if (!first)
		fputs(SEP, c->out);
	table_put_colored(c, sgr, text);
	if (!last)
		for (size_t w = text_width(text); w < width; w++)
			fputc(' ', c->out);
}

static void put_header(const struct ctx *c, const char *title)
{
	table_put_colored(c, SGR_BOLD, title);
	fputc('\n', c->out);
}

const char *table_short_fpr(const char *fpr)
{
	size_t n = strlen(fpr);

	return n > 16 ? fpr + n - 16 : fpr;
}

static void plural(char *buf, size_t size, const char *pre, int64_t n, const char *unit,
                   const char *post)
{
	snprintf(buf, size, "%s%" PRId64 " %s%s%s", pre, n, unit, n == 1 ? "" : "s", post);
}

void table_format_ago(char *buf, size_t size, int64_t then, int64_t now)
{
	int64_t d = now - then;

	if (d < 60)
		snprintf(buf, size, "just now");
	else if (d < 3600)
		plural(buf, size, "", d / 60, "minute", " ago");
	else if (d < SECONDS_PER_DAY)
		plural(buf, size, "", d / 3600, "hour", " ago");
	else
		plural(buf, size, "", d / SECONDS_PER_DAY, "day", " ago");
}

void table_format_usage(char *buf, size_t size, unsigned caps)
{
	snprintf(buf, size, "[%s%s%s%s%s]", caps & CAP_SIGN ? "S" : "",
	         caps & CAP_ENCRYPT ? "E" : "", caps & CAP_AUTH ? "A" : "",
	         caps & CAP_CERTIFY ? "C" : "",
	         caps & (CAP_SIGN | CAP_ENCRYPT | CAP_AUTH | CAP_CERTIFY) ? "" : "-");
}

/* GnuPG's stubs name the card by its AID (OpenPGP card 3.4, 4.2.1): D2 76 00 01 24 01, version,
 * manufacturer, then the 4-byte serial that `gpg --card-status` prints. */
static bool aid_serial(const char *card_serial, char ret[static 9])
{
	if (strlen(card_serial) != 32 || strncasecmp(card_serial, "D27600012401", 12) != 0)
		return false;
	memcpy(ret, card_serial + 20, 8);
	ret[8] = 0;
	return true;
}

static const struct token *find_token(const struct ctx *c, const struct subkey *s)
{
	char serial[9];
	bool have_serial = aid_serial(s->card_serial, serial);

	for (size_t i = 0; i < c->n_tokens; i++) {
		const struct token *t = &c->tokens[i];

		if (!isempty(s->token_id) && streq(s->token_id, t->id))
			return t;
		if (isempty(s->token_id) && !isempty(s->card_serial) && t->has_openpgp &&
		    (strcasecmp(s->card_serial, t->openpgp.aid) == 0 ||
		     (have_serial && strcasecmp(serial, t->openpgp.serial) == 0)))
			return t;
	}
	return NULL;
}

static void format_where(const struct ctx *c, char *buf, size_t size, const struct key *k,
                         const struct subkey *s)
{
	const struct token *t;
	char name[128], serial[9];

	switch (s->secret) {
	case SECRET_DISK:
		snprintf(buf, size, "on disk");
		return;
	case SECRET_CARD:
		t = find_token(c, s);
		if (t) {
			token_display_name(t, name, sizeof(name));
			snprintf(buf, size, "on %s%s", name, t->present ? "" : " (absent)");
		} else if (aid_serial(s->card_serial, serial))
			snprintf(buf, size, "card #%s (not seen)", serial);
		else if (strlen(s->card_serial) > 16)
			snprintf(buf, size, "card #%.8s… (not seen)", s->card_serial);
		else
			snprintf(buf, size, "card #%s (not seen)", s->card_serial);
		return;
	default:
		if (!k->has_secret)
			snprintf(buf, size, "public only");
		else
			snprintf(buf, size, "offline (%s#)", s->is_primary ? "sec" : "ssb");
		return;
	}
}

/* ---- header ---- */

static void render_daemon(const struct ctx *c, const struct daemon_info *d)
{
	char ago[32];

	fprintf(c->out, "keyctld %s", isempty(d->version) ? "(unknown version)" : d->version);
	if (d->started > 0 && d->started <= c->now) {
		table_format_ago(ago, sizeof(ago), d->started, c->now);
		/* "up 3 days ago" would read wrong: cut the " ago". */
		if (strlen(ago) > 4 && streq(ago + strlen(ago) - 4, " ago"))
			ago[strlen(ago) - 4] = 0;
		fprintf(c->out, ", up %s", streq(ago, "just now") ? "a moment" : ago);
	}
	if (!isempty(d->gnupghome))
		fprintf(c->out, "; keyring %s", d->gnupghome);
	if (d->keyring_refreshed > 0) {
		table_format_ago(ago, sizeof(ago), d->keyring_refreshed, c->now);
		fprintf(c->out, " read %s", ago);
	} else
		fputs(" not read yet", c->out);
	fputc('\n', c->out);

	if (d->keyring_stale) {
		fputs("  ", c->out);
		table_put_colored(c, SGR_YELLOW, "keyring is stale");
		fprintf(c->out, "%s%s\n", isempty(d->keyring_error) ? "" : ": ", d->keyring_error);
	}
	if (d->upstream_checked > 0) {
		table_format_ago(ago, sizeof(ago), d->upstream_checked, c->now);
		fprintf(c->out, "  published copies checked %s", ago);
		if (!isempty(d->upstream_error)) {
			fputs(": ", c->out);
			table_put_colored(c, SGR_YELLOW, "incomplete");
			fprintf(c->out, " (%s)", d->upstream_error);
		}
		fputc('\n', c->out);
	}
	if (!d->pcsc_available) {
		fputs("  ", c->out);
		table_put_colored(c, SGR_YELLOW, "PC/SC is not available");
		fputs(": cards are not read (is pcscd installed and running?)\n", c->out);
	}
}

/* ---- TOKENS ---- */

enum { SLOT_COL_NAME, SLOT_COL_FPR, SLOT_COL_ALGO, SLOT_COL_TOUCH, SLOT_COL_OWNER, SLOT_COL_MAX };

struct slot_row {
	char cells[SLOT_COL_MAX][UID_MAX + 32];
	const char *sgr[SLOT_COL_MAX];
	size_t n; /* cells in use */
};

static const struct key *find_key_by_fpr(const struct ctx *c, const char *fpr,
                                         const struct subkey **ret_sub)
{
	for (size_t i = 0; i < c->n_keys; i++)
		for (size_t j = 0; j < c->keys[i].n_subkeys; j++)
			if (strcasecmp(c->keys[i].subkeys[j].fingerprint, fpr) == 0) {
				*ret_sub = &c->keys[i].subkeys[j];
				return &c->keys[i];
			}
	return NULL;
}

static void slot_row_fill(const struct ctx *c, const struct card_slot *s, enum key_slot slot,
                          struct slot_row *row)
{
	static const char *const names[SLOT_MAX] = { "sign", "encrypt", "auth" };
	const struct subkey *sub = NULL;
	const struct key *k;

	memset(row, 0, sizeof(*row));
	snprintf(row->cells[SLOT_COL_NAME], sizeof(row->cells[0]), "%s", names[slot]);
	if (isempty(s->fingerprint)) {
		snprintf(row->cells[SLOT_COL_FPR], sizeof(row->cells[0]), "empty");
		row->sgr[SLOT_COL_FPR] = SGR_DIM;
		row->n = 2;
		return;
	}
	snprintf(row->cells[SLOT_COL_FPR], sizeof(row->cells[0]), "%s",
	         table_short_fpr(s->fingerprint));
	snprintf(row->cells[SLOT_COL_ALGO], sizeof(row->cells[0]), "%s", s->algorithm);
	if (s->touch != TOUCH_UNKNOWN && touch_policy_to_string(s->touch))
		snprintf(row->cells[SLOT_COL_TOUCH], sizeof(row->cells[0]), "touch %s",
		         touch_policy_to_string(s->touch));
	k = find_key_by_fpr(c, s->fingerprint, &sub);
	if (k) {
		snprintf(row->cells[SLOT_COL_OWNER], sizeof(row->cells[0]), "%s",
		         isempty(k->uid) ? table_short_fpr(k->fingerprint) : k->uid);
		row->sgr[SLOT_COL_OWNER] = table_level_color(sub->level);
		if (sub->level == LEVEL_OK)
			row->sgr[SLOT_COL_OWNER] = NULL; /* green everywhere would be noise */
	} else {
		snprintf(row->cells[SLOT_COL_OWNER], sizeof(row->cells[0]), "not in keyring");
		row->sgr[SLOT_COL_OWNER] = SGR_DIM;
	}
	row->n = SLOT_COL_MAX;
}

static void put_field(const struct ctx *c, const char *name, const char *sgr, const char *value)
{
	fprintf(c->out, "    %-11s ", name);
	table_put_colored(c, sgr, value);
	fputc('\n', c->out);
}

/* "present" (and what it waits for: a touch), or "absent, last seen 3 days ago". */
static void put_presence(const struct ctx *c, const struct token *t)
{
	char buf[160], ago[32];

	if (t->present) {
		table_put_colored(c, SGR_GREEN, "present");
		if (!t->touch_waiting)
			return;
		table_touch_words(&t->touch, buf, sizeof(buf));
		fputs(SEP, c->out);
		table_put_colored(c, SGR_YELLOW, buf);
		return;
	}
	if (t->last_seen > 0) {
		table_format_ago(ago, sizeof(ago), t->last_seen, c->now);
		snprintf(buf, sizeof(buf), "absent, last seen %s", ago);
	} else
		snprintf(buf, sizeof(buf), "absent");
	table_put_colored(c, SGR_DIM, buf);
}

static void render_token(const struct ctx *c, const struct token *t)
{
	const struct openpgp_card *o = &t->openpgp;
	const char *fw = !isempty(t->firmware) ? t->firmware : o->firmware;
	struct slot_row rows[SLOT_MAX];
	size_t widths[SLOT_COL_MAX] = { 11 }; /* line up with put_field's names */
	char buf[256];

	token_display_name(t, buf, sizeof(buf));
	fputs("  ", c->out);
	table_put_colored(c, SGR_BOLD, buf);
	fputs(SEP, c->out);
	put_presence(c, t);
	if (!isempty(fw))
		fprintf(c->out, "%sfirmware %s", SEP, fw);
	fputc('\n', c->out);

	if (!isempty(t->reader)) {
		snprintf(buf, sizeof(buf), "%s%s", t->reader,
		         t->read_path == READ_PATH_SCDAEMON ? ", read through scdaemon" : "");
		put_field(c, "reader", NULL, buf);
	} else if (t->read_path == READ_PATH_SCDAEMON)
		put_field(c, "reader", NULL, "read through scdaemon");

	if (!isempty(t->error))
		put_field(c, "error", SGR_RED, t->error);

	if (!t->has_openpgp) {
		put_field(c, "openpgp", SGR_DIM,
		          t->usb_interfaces && !(t->usb_interfaces & USB_IFACE_CCID)
		                  ? "not readable: the CCID interface is disabled"
		                  : "not read");
		table_render_piv(c, t);
		return;
	}

	for (size_t i = 0; i < SLOT_MAX; i++) {
		slot_row_fill(c, &o->slots[i], (enum key_slot)i, &rows[i]);
		for (size_t j = 0; j < rows[i].n; j++)
			widths[j] = MAX(widths[j], text_width(rows[i].cells[j]));
	}
	for (size_t i = 0; i < SLOT_MAX; i++) {
		/* The last non-empty cell is the last one: no padding after it. */
		size_t last = rows[i].n;

		while (last > 0 && isempty(rows[i].cells[last - 1]))
			last--;
		fputs("    ", c->out);
		for (size_t j = 0; j < last; j++) {
			if (widths[j] == 0)
				continue; /* no slot has a touch DO: no empty column */
			/* name is followed by one blank, like put_field */
			if (j == SLOT_COL_FPR)
				fputc(' ', c->out);
			put_cell(c, j <= SLOT_COL_FPR, rows[i].sgr[j], rows[i].cells[j], widths[j],
			         j + 1 == last);
		}
		fputc('\n', c->out);
	}

	snprintf(buf, sizeof(buf), "user %u, reset %u, admin %u", o->pin_retries[0],
	         o->pin_retries[1], o->pin_retries[2]);
	put_field(c, "PIN retries",
	          o->pin_retries[0] == 0 || o->pin_retries[2] == 0 ? SGR_RED : NULL, buf);
	snprintf(buf, sizeof(buf), "%" PRIu32 "%s", o->signature_counter,
	         t->counter_went_down ? " (lower than last seen: was the card reset?)" : "");
	put_field(c, "signatures", t->counter_went_down ? SGR_RED : NULL, buf);
	table_render_piv(c, t);
}

static void render_tokens(const struct ctx *c)
{
	put_header(c, "TOKENS");
	if (c->n_tokens == 0)
		fputs("  none seen\n", c->out);
	for (size_t i = 0; i < c->n_tokens; i++)
		render_token(c, &c->tokens[i]);
}

/* ---- KEYS ---- */

enum {
	SUB_COL_USAGE,
	SUB_COL_ALGO,
	SUB_COL_WHERE,
	SUB_COL_DATE,
	SUB_COL_REL,
	SUB_COL_LEVEL,
	SUB_COL_MAX,
};

struct subkey_row {
	char cells[SUB_COL_MAX][160];
	const char *sgr[SUB_COL_MAX];
};

/* GnuPG's long key id: a fingerprint's last 16 digits. */
static const char *long_key_id(const char *fpr)
{
	size_t n = strlen(fpr);

	return n > 16 ? fpr + n - 16 : fpr;
}

static void subkey_row_fill(const struct ctx *c, const struct key *k, const struct subkey *s,
                            struct subkey_row *row)
{
	const size_t n = sizeof(row->cells[0]);
	const char *lsgr = table_level_color(s->level);

	memset(row, 0, sizeof(*row));
	table_format_usage(row->cells[SUB_COL_USAGE], n, s->capabilities);
	snprintf(row->cells[SUB_COL_ALGO], n, "%s", s->algorithm);
	format_where(c, row->cells[SUB_COL_WHERE], n, k, s);
	expiry_format_date(row->cells[SUB_COL_DATE], n, s->expires);
	if (s->revoked || s->disabled) {
		/* dead either way: how long ago it expired is noise */
		snprintf(row->cells[SUB_COL_LEVEL], n, s->revoked ? "revoked" : "disabled");
		for (size_t i = 0; i < SUB_COL_MAX; i++)
			row->sgr[i] = SGR_DIM;
		return;
	}
	if (s->expires != 0)
		expiry_format_relative(row->cells[SUB_COL_REL], n, s->expires, c->now);
	if (subkey_superseded(k, s)) {
		/* shown, not counted (the daemon's rule): its date stays, its level is why */
		if (k->retired)
			snprintf(row->cells[SUB_COL_LEVEL], n, "retired");
		else
			snprintf(row->cells[SUB_COL_LEVEL], n, "replaced by 0x%s",
			         long_key_id(s->replaced_by));
		for (size_t i = 0; i < SUB_COL_MAX; i++)
			row->sgr[i] = SGR_DIM;
		return;
	}
	if (s->acked) {
		/* the user said "I know" (--ack): shown as the finding is, dim */
		snprintf(row->cells[SUB_COL_LEVEL], n, "acked");
		for (size_t i = 0; i < SUB_COL_MAX; i++)
			row->sgr[i] = SGR_DIM;
		return;
	}
	if (!isempty(s->replaced_by))
		snprintf(row->cells[SUB_COL_LEVEL], n, "%s, replacement 0x%s not on its card",
		         table_level_name(s->level), long_key_id(s->replaced_by));
	else
		snprintf(row->cells[SUB_COL_LEVEL], n, "%s", table_level_name(s->level));
	row->sgr[SUB_COL_REL] = s->level == LEVEL_OK ? NULL : lsgr;
	row->sgr[SUB_COL_LEVEL] = lsgr;
}

static void render_keys(const struct ctx *c)
{
	size_t widths[SUB_COL_MAX] = { 0 };
	struct subkey_row row;

	put_header(c, "KEYS");
	if (c->n_keys == 0)
		fputs("  none: no key with a secret part and none tracked\n", c->out);

	for (size_t i = 0; i < c->n_keys; i++)
		for (size_t j = 0; j < c->keys[i].n_subkeys; j++) {
			subkey_row_fill(c, &c->keys[i], &c->keys[i].subkeys[j], &row);
			for (size_t col = 0; col < SUB_COL_MAX; col++)
				widths[col] = MAX(widths[col], text_width(row.cells[col]));
		}

	for (size_t i = 0; i < c->n_keys; i++) {
		const struct key *k = &c->keys[i];

		fputs("  ", c->out);
		table_put_colored(c, SGR_BOLD, isempty(k->uid) ? "(no user id)" : k->uid);
		fprintf(c->out, "%s%s%s", SEP, table_short_fpr(k->fingerprint), SEP);
		if (k->revoked || k->disabled)
			table_put_colored(c, SGR_DIM, k->revoked ? "revoked" : "disabled");
		else if (k->retired)
			table_put_colored(c, SGR_DIM, "retired");
		else
			table_put_colored(c, table_level_color(k->level),
			                  table_level_name(k->level));
		if (k->tracked && !k->has_secret)
			fputs(", tracked", c->out);
		else if (k->relied_on && !k->has_secret)
			fputs(", relied on", c->out);
		fputc('\n', c->out);

		for (size_t j = 0; j < k->n_subkeys; j++) {
			subkey_row_fill(c, k, &k->subkeys[j], &row);
			fputs("    ", c->out);
			for (size_t col = 0; col < SUB_COL_MAX; col++)
				put_cell(c, col == 0, row.sgr[col], row.cells[col], widths[col],
				         col + 1 == SUB_COL_MAX);
			fputc('\n', c->out);
		}
	}
}

/* ---- FINDINGS ---- */

/* The width findings are wrapped to: COLUMNS as the shell sets it for programs that ask, else
 * the terminal's, else 80 (a pipe, a file, a monitor's log). */
size_t table_out_width(FILE *out)
{
	const char *e = getenv("COLUMNS");
	struct winsize ws = { 0 };
	unsigned long n = 0;

	if (e && *e) {
		char *end;

		errno = 0;
		n = strtoul(e, &end, 10);
		if (errno != 0 || *end != '\0')
			n = 0;
	}
	if (n == 0 && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0)
		n = ws.ws_col;
	if (n == 0)
		return WIDTH_NOT_A_TERMINAL;
	return MIN(MAX(n, (unsigned long)WIDTH_MIN), (unsigned long)WIDTH_MAX);
}

/* Word-wraps text at the output's width with a hanging indent; a word longer than a line (a
 * path, a URL) is printed whole rather than cut. */
static void put_wrapped(const struct ctx *c, const char *sgr, const char *text, size_t col)
{
	const char *p = text;

	while (*p) {
		const char *e;
		size_t w;

		while (*p == ' ')
			p++;
		if (!*p)
			break;
		e = p + strcspn(p, " ");
		w = 0;
		for (const char *q = p; q < e; q++)
			if (((unsigned char)*q & 0xc0) != 0x80)
				w++;
		if (col > FINDING_INDENT && col + 1 + w > c->width) {
			fprintf(c->out, "\n%*s", FINDING_INDENT, "");
			col = FINDING_INDENT;
		} else if (col > FINDING_INDENT) {
			fputc(' ', c->out);
			col++;
		}
		if (c->color && !isempty(sgr))
			fputs(sgr, c->out);
		fwrite(p, 1, (size_t)(e - p), c->out);
		if (c->color && !isempty(sgr))
			fputs(SGR_RESET, c->out);
		col += w;
		p = e;
	}
	fputc('\n', c->out);
}

/* A hint is often a command line ("gpg --quick-set-expire FPR 1y SUBFPR" is 107 columns): it is
 * never wrapped. Beside "hint:" when it fits, else whole on the next line. */
static void put_hint(const struct ctx *c, const char *hint)
{
	fprintf(c->out, "%*shint:", FINDING_INDENT, "");
	if (FINDING_INDENT + strlen("hint: ") + text_width(hint) <= c->width)
		fprintf(c->out, " %s\n", hint);
	else
		fprintf(c->out, "\n%*s%s\n", HINT_INDENT, "", hint);
}

static void render_findings(const struct ctx *c, const struct finding *f, size_t n)
{
	put_header(c, "FINDINGS");
	if (n == 0)
		fputs("  none\n", c->out);
	for (size_t i = 0; i < n; i++) {
		/* An acknowledged one is information: dim, with the way back. */
		const char *name = f[i].acked ? "acked" : table_level_name(f[i].level);
		char id[FINDING_ID_MAX];

		fputs("  ", c->out);
		table_put_colored(c, f[i].acked ? SGR_DIM : table_level_color(f[i].level), name);
		fprintf(c->out, "%*s", (int)(FINDING_INDENT - 2 - strlen(name)), "");
		put_wrapped(c, f[i].acked ? SGR_DIM : NULL, f[i].message, FINDING_INDENT);
		if (!isempty(f[i].hint))
			put_hint(c, f[i].hint);
		if (f[i].acked) {
			finding_id(&f[i], id, sizeof(id));
			fprintf(c->out, "%*sacknowledged; undo: keyctl-status --unack=%s\n",
			        FINDING_INDENT, "", id);
		}
	}
}

int table_render(FILE *out, const struct daemon_info *d, const struct token *tokens,
                 size_t n_tokens, const struct key *keys, size_t n_keys,
                 const struct finding *findings, size_t n_findings, int64_t now, bool color)
{
	const struct ctx c = {
		.out = out,
		.color = color,
		.width = table_out_width(out),
		.now = now,
		.tokens = tokens,
		.n_tokens = n_tokens,
		.keys = keys,
		.n_keys = n_keys,
	};

	if (d) {
		render_daemon(&c, d);
		fputc('\n', out);
	}
	render_tokens(&c);
	fputc('\n', out);
	render_keys(&c);
	fputc('\n', out);
	render_findings(&c, findings, n_findings);

	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
