/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status's lines for a token's PIV application (Token.piv), under its OpenPGP slots: one
 * per certificate ("piv 9a      CN=alice, nistp256, issued by CN=Example CA, until 2027-11-07
 * (in 335 days)"), the CHUID's expiry, or why PIV was not read. Kept apart from table.c, which
 * has the OpenPGP layout. An expired certificate is red; the levels are the findings' (the
 * client knows no thresholds).
 *
 * Does not: judge (audit-piv.c does), or print anything for a token without PIV.
 */
#include <stdio.h>

#include "expiry-math.h"
#include "table-internal.h"

static void put_line(const struct ctx *c, const char *name, const char *sgr, const char *value)
{
	fprintf(c->out, "    %-11s ", name);
	table_put_colored(c, sgr, value);
	fputc('\n', c->out);
}

/* "until 2027-11-07 (in 335 days)", "expired 2026-12-01 (expired 2 days ago)". */
static void until_words(const struct ctx *c, int64_t t, char *buf, size_t size)
{
	char date[16], rel[EXPIRY_TEXT_MAX];

	expiry_format_date(date, sizeof(date), t);
	expiry_format_relative(rel, sizeof(rel), t, c->now);
	snprintf(buf, size, "%s %s (%s)", t <= c->now ? "expired" : "until", date, rel);
}

static void put_cert(const struct ctx *c, const struct piv_cert *pc)
{
	char name[16], until[EXPIRY_TEXT_MAX + 32], buf[2 * PIV_NAME_MAX + ALGO_NAME_MAX + 128];

	snprintf(name, sizeof(name), "piv %s", pc->slot);
	if (!isempty(pc->error)) {
		put_line(c, name, SGR_RED, pc->error);
		return;
	}
	until_words(c, pc->not_after, until, sizeof(until));
	snprintf(buf, sizeof(buf), "%s, %s, %s%s, %s", pc->subject,
	         isempty(pc->key_algorithm) ? "?" : pc->key_algorithm,
	         pc->self_signed ? "self-signed" : "issued by ", pc->self_signed ? "" : pc->issuer,
	         until);
	put_line(c, name, pc->not_after <= c->now ? SGR_RED : NULL, buf);
}

void table_render_piv(const struct ctx *c, const struct token *t)
{
	const struct piv_app *a = &t->piv;
	char buf[EXPIRY_TEXT_MAX + 64];

	switch (a->state) {
	case PIV_READ_IN_USE:
		put_line(c, "piv", SGR_DIM, "not read: the card is in use");
		return;
	case PIV_READ_ERROR:
		put_line(c, "piv", SGR_RED, isempty(a->error) ? "not read" : a->error);
		break;
	case PIV_READ_OK:
		if (a->n_certs == 0 && a->chuid_expiry <= 0)
			put_line(c, "piv", NULL, "no certificates");
		break;
	default:
		return;
	}
	for (size_t i = 0; i < a->n_certs && i < PIV_CERTS_MAX; i++)
		put_cert(c, &a->certs[i]);
	if (a->chuid_expiry > 0) {
		until_words(c, a->chuid_expiry, buf, sizeof(buf));
		put_line(c, "piv chuid", a->chuid_expiry <= c->now ? SGR_RED : NULL, buf);
	}
}
