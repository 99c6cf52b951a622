/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Prometheus text format of a GetStatus reply. Every family is written whole (HELP, TYPE,
 * then all its samples) because the format forbids interleaving families. Subkeys that never
 * expire have no expiry samples (there is no date to alert on) but do have a level; revoked
 * and disabled subkeys have none at all: nobody renews them. Replaced subkeys and those of a
 * retired key (the daemon's one rule of what counts) are not in the expiry and level families,
 * which alerts read, but in keyctl_subkey_superseded, at 1.
 *
 * Does not: read the clock (now is a parameter), or decide the exit code (status.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "prometheus.h"
#include "expiry-math.h"

void prometheus_put_label_value(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++)
		switch (*s) {
		case '\\':
			fputs("\\\\", out);
			break;
		case '"':
			fputs("\\\"", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		default:
			fputc(*s, out);
		}
	fputc('"', out);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void usage_label(char *buf, size_t size, unsigned caps)
{
	static const struct {
		unsigned cap;
		const char *name;
	} names[] = {
		{ CAP_SIGN, "sign" },
		{ CAP_ENCRYPT, "encrypt" },
		{ CAP_AUTH, "auth" },
		{ CAP_CERTIFY, "certify" },
	};
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (caps & names[i].cap)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "," : "",
			                      names[i].name);
}

/* with_reason: also why it is not counted, "retired" or "replaced" (and by which). */
static void subkey_labels(FILE *out, const struct key *k, const struct subkey *s, bool with_reason)
{
	char usage[48];

	usage_label(usage, sizeof(usage), s->capabilities);
	fputs("{key=", out);
	prometheus_put_label_value(out, k->fingerprint);
	fputs(",subkey=", out);
	prometheus_put_label_value(out, s->fingerprint);
	fputs(",usage=", out);
	prometheus_put_label_value(out, usage);
	fputs(",uid=", out);
	prometheus_put_label_value(out, k->uid);
	if (with_reason) {
		fputs(",reason=", out);
		prometheus_put_label_value(out, k->retired ? "retired" : "replaced");
		fputs(",replaced_by=", out);
		prometheus_put_label_value(out, s->replaced_by);
	}
	fputc('}', out);
}

static void token_labels(FILE *out, const struct token *t, const char *extra_name,
                         const char *extra_value)
{
	const char *kind = token_kind_to_string(t->kind);

	fputs("{token=", out);
	prometheus_put_label_value(out, t->id);
	fputs(",kind=", out);
	prometheus_put_label_value(out, kind ? kind : "unknown");
	fputs(",serial=", out);
	/* the maker's serial; a plain card has only the OpenPGP one */
	prometheus_put_label_value(out, !isempty(t->serial) ? t->serial : t->openpgp.serial);
	if (extra_name) {
		fprintf(out, ",%s=", extra_name);
		prometheus_put_label_value(out, extra_value);
	}
	fputc('}', out);
}

/* One sample per present token: 1 with what waits while it waits for a touch, else 0 with empty
 * labels, so that an alert on "== 1" and a graph of the waits both have a series to read. */
static void touch_family(FILE *out, const struct token *tokens, size_t n_tokens)
{
	family(out, "keyctl_token_touch_pending", "gauge",
	       "1 while the token waits for a touch (application and slot say which key), else "
	       "0; present tokens only.");
	for (size_t i = 0; i < n_tokens; i++) {
		const struct token *t = &tokens[i];
		const char *app = t->touch_waiting ? touch_app_to_string(t->touch.application) : "";

		if (!t->present)
			continue;
		fputs("keyctl_token_touch_pending{token=", out);
		prometheus_put_label_value(out, t->id);
		fputs(",application=", out);
		prometheus_put_label_value(out, app ? app : "");
		fputs(",slot=", out);
		prometheus_put_label_value(out, t->touch_waiting ? t->touch.slot : "");
		fprintf(out, "} %d\n", t->touch_waiting ? 1 : 0);
	}
}

static bool piv_cert_listed(const struct piv_cert *c)
{
	return isempty(c->error) && c->not_after > 0;
}

/* The PIV certificates' not-after dates, as Unix timestamps (blackbox_exporter's
 * probe_ssl_earliest_cert_expiry is one too: an alert subtracts time()), one per certificate read
 * whole, kept for an absent token as its findings are. Written only when some token has one, as
 * are the CHUIDs' expiries: a keyring without PIV reads as before. */
static void piv_certs_family(FILE *out, const struct token *tokens, size_t n_tokens)
{
	bool any = false;

	for (size_t i = 0; i < n_tokens; i++)
		for (size_t j = 0; j < tokens[i].piv.n_certs && j < PIV_CERTS_MAX; j++) {
			const struct piv_cert *c = &tokens[i].piv.certs[j];

			if (!piv_cert_listed(c))
				continue;
			if (!any)
				family(out, "keyctl_piv_cert_expiry_seconds", "gauge",
				       "When the PIV certificate in the slot expires (Unix time); "
				       "self_signed: a placeholder whose dates ssh and age agents "
				       "ignore.");
			any = true;
			fputs("keyctl_piv_cert_expiry_seconds{token=", out);
			prometheus_put_label_value(out, tokens[i].id);
			fputs(",slot=", out);
			prometheus_put_label_value(out, c->slot);
			fprintf(out, ",self_signed=\"%s\"} %" PRId64 "\n",
			        c->self_signed ? "true" : "false", c->not_after);
		}
}

static void piv_chuid_family(FILE *out, const struct token *tokens, size_t n_tokens)
{
	bool any = false;

	for (size_t i = 0; i < n_tokens; i++) {
		if (tokens[i].piv.chuid_expiry <= 0)
			continue;
		if (!any)
			family(out, "keyctl_piv_chuid_expiry_seconds", "gauge",
			       "When the PIV card identifier (CHUID) expires (Unix time).");
		any = true;
		fputs("keyctl_piv_chuid_expiry_seconds{token=", out);
		prometheus_put_label_value(out, tokens[i].id);
		fprintf(out, "} %" PRId64 "\n", tokens[i].piv.chuid_expiry);
	}
}

static bool subkey_listed(const struct key *k, const struct subkey *s)
{
	return !k->revoked && !k->disabled && !s->revoked && !s->disabled;
}

/* Shown in keyctl_subkey_superseded instead of the expiry families, which alerts read: a
 * replaced subkey (one the daemon still counts, its replacement not on its card, stays in
 * those) and every subkey of a retired key. */
static bool subkey_info_only(const struct key *k, const struct subkey *s)
{
	return subkey_listed(k, s) && subkey_superseded(k, s);
}

/* Only when there is one: a keyring that never rotated keeps its output as it was. */
static void superseded_family(FILE *out, const struct key *keys, size_t n_keys)
{
	size_t n = 0;

	for (size_t i = 0; i < n_keys; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++)
			n += subkey_info_only(&keys[i], &keys[i].subkeys[j]);
	if (n == 0)
		return;
	family(out, "keyctl_subkey_superseded", "gauge",
	       "1 for a (sub)key shown but not counted, so absent from the families above: "
	       "replaced by a newer one (replaced_by), or of a retired key.");
	for (size_t i = 0; i < n_keys; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++) {
			const struct subkey *s = &keys[i].subkeys[j];

			if (!subkey_info_only(&keys[i], s))
				continue;
			fputs("keyctl_subkey_superseded", out);
			subkey_labels(out, &keys[i], s, true);
			fputs(" 1\n", out);
		}
}

enum subkey_metric { M_TIMESTAMP, M_DAYS, M_LEVEL };

static void subkey_family(FILE *out, const struct key *keys, size_t n_keys, int64_t now,
                          enum subkey_metric m)
{
	for (size_t i = 0; i < n_keys; i++)
		for (size_t j = 0; j < keys[i].n_subkeys; j++) {
			const struct subkey *s = &keys[i].subkeys[j];
			int64_t v;

			if (!subkey_listed(&keys[i], s) || subkey_superseded(&keys[i], s) ||
			    (m != M_LEVEL && s->expires == 0))
				continue;
			v = m == M_TIMESTAMP ? s->expires
			    : m == M_DAYS    ? expiry_days_left(s->expires, now)
			                     : (int64_t)s->level;
			fputs(m == M_TIMESTAMP ? "keyctl_subkey_expiry_timestamp_seconds"
			      : m == M_DAYS    ? "keyctl_subkey_expiry_days"
			                       : "keyctl_subkey_level",
			      out);
			subkey_labels(out, &keys[i], s, false);
			fprintf(out, " %" PRId64 "\n", v);
		}
}

int prometheus_render(FILE *out, const struct daemon_info *d, const struct token *tokens,
                      size_t n_tokens, const struct key *keys, size_t n_keys,
                      const struct finding *findings, size_t n_findings, int64_t now)
{
	static const char *const pins[3] = { "user", "reset", "admin" };
	size_t counts[LEVEL_MAX] = { 0 };

	family(out, "keyctl_daemon_up", "gauge", "Whether keyctld answered (1) or not (0).");
	fputs("keyctl_daemon_up 1\n", out);

	family(out, "keyctl_keyring_stale", "gauge",
	       "1 when the last keyring listing failed and the keys shown are older.");
	fprintf(out, "keyctl_keyring_stale %d\n", d && d->keyring_stale ? 1 : 0);
	if (d && d->keyring_refreshed > 0) {
		family(out, "keyctl_keyring_refreshed_timestamp_seconds", "gauge",
		       "When the keyring was last listed successfully.");
		fprintf(out, "keyctl_keyring_refreshed_timestamp_seconds %" PRId64 "\n",
		        d->keyring_refreshed);
	}

	if (n_tokens > 0) {
		family(out, "keyctl_token_present", "gauge", "1 when the token is plugged in.");
		for (size_t i = 0; i < n_tokens; i++) {
			fputs("keyctl_token_present", out);
			token_labels(out, &tokens[i], NULL, NULL);
			fprintf(out, " %d\n", tokens[i].present ? 1 : 0);
		}
		family(out, "keyctl_token_last_seen_timestamp_seconds", "gauge",
		       "When the token was last seen plugged in.");
		for (size_t i = 0; i < n_tokens; i++) {
			fputs("keyctl_token_last_seen_timestamp_seconds", out);
			token_labels(out, &tokens[i], NULL, NULL);
			fprintf(out, " %" PRId64 "\n", tokens[i].last_seen);
		}
		family(out, "keyctl_token_pin_retries", "gauge",
		       "Tries left for the OpenPGP PINs (user PW1, reset code, admin PW3).");
		for (size_t i = 0; i < n_tokens; i++)
			for (size_t p = 0; p < ELEMENTSOF(pins) && tokens[i].has_openpgp; p++) {
				fputs("keyctl_token_pin_retries", out);
				token_labels(out, &tokens[i], "pin", pins[p]);
				fprintf(out, " %u\n", tokens[i].openpgp.pin_retries[p]);
			}
		touch_family(out, tokens, n_tokens);
		piv_certs_family(out, tokens, n_tokens);
		piv_chuid_family(out, tokens, n_tokens);
	}

	family(out, "keyctl_subkey_expiry_timestamp_seconds", "gauge",
	       "When the (sub)key expires; absent for keys that never expire.");
	subkey_family(out, keys, n_keys, now, M_TIMESTAMP);
	family(out, "keyctl_subkey_expiry_days", "gauge",
	       "Whole days until the (sub)key expires, rounded up; 0 or less once expired.");
	subkey_family(out, keys, n_keys, now, M_DAYS);
	family(out, "keyctl_subkey_level", "gauge",
	       "The (sub)key's level: 0 ok, 1 notice, 2 warning, 3 critical, 4 expired.");
	subkey_family(out, keys, n_keys, now, M_LEVEL);
	superseded_family(out, keys, n_keys);

	for (size_t i = 0; i < n_findings; i++)
		if ((unsigned)findings[i].level < LEVEL_MAX)
			counts[findings[i].level]++;
	family(out, "keyctl_findings", "gauge", "Number of audit findings by level.");
	for (size_t l = 0; l < LEVEL_MAX; l++)
		fprintf(out, "keyctl_findings{level=\"%s\"} %zu\n", level_to_string((enum level)l),
		        counts[l]);

	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}

int prometheus_render_down(FILE *out)
{
	family(out, "keyctl_daemon_up", "gauge", "Whether keyctld answered (1) or not (0).");
	fputs("keyctl_daemon_up 0\n", out);
	if (fflush(out) != 0 || ferror(out))
		return -EIO;
	return 0;
}
