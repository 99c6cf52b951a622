/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The clients and a token's PIV application (issue 35): keyctl-status's lines under the token
 * (each certificate, the CHUID, "not read: the card is in use", a slot's error, nothing without
 * PIV), keyctl_piv_cert_expiry_seconds and keyctl_piv_chuid_expiry_seconds in the Prometheus
 * text (absent without PIV), and keyctl-notify's words for a piv-* finding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify-text.h"
#include "prometheus.h"
#include "table.h"
#include "test.h"

#define DAY INT64_C(86400)
#define NOW INT64_C(1796256000) /* 2026-12-03 00:00:00 UTC */
#define CA "CN=Example Issuing CA,O=Example Corp"

static void yubikey(struct token *t)
{
	memset(t, 0, sizeof(*t));
	strcpy_trunc(t->id, sizeof(t->id), "yubikey-12345678");
	t->kind = TOKEN_KIND_YUBIKEY;
	strcpy_trunc(t->model, sizeof(t->model), "YubiKey 5 NFC");
	strcpy_trunc(t->serial, sizeof(t->serial), "12345678");
	t->present = true;
	t->last_seen = NOW;
	t->has_openpgp = true;
}

static void add_cert(struct token *t, const char *slot, const char *subject, const char *issuer,
                     const char *algo, int64_t not_after)
{
	struct piv_cert *c = &t->piv.certs[t->piv.n_certs++];

	t->piv.state = PIV_READ_OK;
	strcpy_trunc(c->slot, sizeof(c->slot), slot);
	strcpy_trunc(c->subject, sizeof(c->subject), subject);
	strcpy_trunc(c->issuer, sizeof(c->issuer), issuer ? issuer : subject);
	c->self_signed = !issuer;
	strcpy_trunc(c->key_algorithm, sizeof(c->key_algorithm), algo);
	c->not_before = NOW - 30 * DAY;
	c->not_after = not_after;
}

static char *render(const struct token *t, bool prometheus)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	struct daemon_info d = { .now = NOW };

	ASSERT_TRUE(f);
	if (prometheus)
		ASSERT_OK(prometheus_render(f, &d, t, 1, NULL, 0, NULL, 0, NOW));
	else
		ASSERT_OK(table_render(f, NULL, t, 1, NULL, 0, NULL, 0, NOW, false));
	fclose(f);
	return buf;
}

static void expect_line(const char *text, const char *line)
{
	char want[1024];

	snprintf(want, sizeof(want), "\n%s\n", line);
	if (!strstr(text, want))
		TEST_FAIL("no line \"%s\" in:\n%s", line, text);
}

TEST(table_lines)
{
	struct token t;
	char *s;

	yubikey(&t);
	add_cert(&t, "9a", "CN=alice,O=Example Corp", CA, "nistp256", NOW + 335 * DAY);
	add_cert(&t, "9c", "CN=SSH key", NULL, "rsa2048", NOW - 2 * DAY);
	add_cert(&t, "83", "", CA, "", 0);
	strcpy(t.piv.certs[2].error, "not a certificate: Error in DER parsing");
	t.piv.chuid_expiry = INT64_C(1893456000);
	s = render(&t, false);
	expect_line(s, "    piv 9a      CN=alice,O=Example Corp, nistp256, issued by " CA
	               ", until 2027-11-03 (in 335 days)");
	expect_line(s, "    piv 9c      CN=SSH key, rsa2048, self-signed, expired 2026-12-01 "
	               "(expired 2 days ago)");
	expect_line(s, "    piv 83      not a certificate: Error in DER parsing");
	expect_line(s, "    piv chuid   until 2030-01-01 (in 1125 days)");
	free(s);
}

TEST(table_states)
{
	struct token t;
	char *s;

	yubikey(&t);
	s = render(&t, false); /* no PIV: not a word of it */
	ASSERT_TRUE(strstr(s, "piv") == NULL);
	free(s);
	t.piv.state = PIV_READ_IN_USE;
	s = render(&t, false);
	expect_line(s, "    piv         not read: the card is in use");
	free(s);
	t.piv.state = PIV_READ_OK;
	s = render(&t, false);
	expect_line(s, "    piv         no certificates");
	free(s);
	t.piv.state = PIV_READ_ERROR;
	strcpy(t.piv.error, "the card answered 6F00 to SELECT");
	s = render(&t, false);
	expect_line(s, "    piv         the card answered 6F00 to SELECT");
	free(s);
	/* A token whose OpenPGP could not be read still shows its PIV. */
	yubikey(&t);
	t.has_openpgp = false;
	add_cert(&t, "9a", "CN=a", CA, "nistp256", NOW + DAY);
	s = render(&t, false);
	expect_line(s, "    piv 9a      CN=a, nistp256, issued by " CA
	               ", until 2026-12-04 (in 1 day)");
	free(s);
}

TEST(prometheus)
{
	struct token t;
	char *s;

	yubikey(&t);
	s = render(&t, true);
	ASSERT_TRUE(strstr(s, "keyctl_piv") == NULL);
	free(s);
	add_cert(&t, "9a", "CN=a", CA, "nistp256", NOW + 335 * DAY);
	add_cert(&t, "9c", "CN=b", NULL, "rsa2048", NOW - DAY);
	add_cert(&t, "9d", "", CA, "", 0);
	strcpy(t.piv.certs[2].error, "bad");
	t.piv.chuid_expiry = INT64_C(1893456000);
	s = render(&t, true);
	expect_line(s, "# TYPE keyctl_piv_cert_expiry_seconds gauge");
	expect_line(s, "keyctl_piv_cert_expiry_seconds{token=\"yubikey-12345678\",slot=\"9a\","
	               "self_signed=\"false\"} 1825200000");
	expect_line(s, "keyctl_piv_cert_expiry_seconds{token=\"yubikey-12345678\",slot=\"9c\","
	               "self_signed=\"true\"} 1796169600");
	ASSERT_TRUE(strstr(s, "slot=\"9d\"") == NULL);
	expect_line(s, "keyctl_piv_chuid_expiry_seconds{token=\"yubikey-12345678\"} 1893456000");
	/* One family each, written whole. */
	ASSERT_TRUE(strstr(strstr(s, "# HELP keyctl_piv_cert") + 1, "# HELP keyctl_piv_cert") ==
	            NULL);
	free(s);
}

TEST(notify_words)
{
	struct finding f = { 0 };
	struct notify_text n;
	struct token t;

	yubikey(&t);
	strcpy(f.rule, "piv-cert-expiring");
	f.level = LEVEL_WARNING;
	strcpy(f.key, "9a");
	strcpy(f.token, t.id);
	strcpy(f.message, "The PIV Authentication certificate (slot 9A) of YubiKey 5 NFC #12345678 "
	                  "expires in 6 days (2026-12-09)");
	strcpy(f.hint, "Ask its issuer for a new certificate, then: ykman piv certificates import "
	               "9a CERT.pem");
	notify_text_finding(&f, NULL, &t, &n);
	ASSERT_STREQ(n.summary, f.message);
	ASSERT_STREQ(n.body, "PIV slot: 9a\n"
	                     "Token: YubiKey 5 NFC #12345678\n"
	                     "What to do: Ask its issuer for a new certificate, then: ykman piv "
	                     "certificates import 9a CERT.pem\n"
	                     "Rule: piv-cert-expiring");
	ASSERT_EQ(n.urgency, NOTIFY_TEXT_URGENCY_NORMAL);
	strcpy(f.rule, "piv-chuid-expiring");
	strcpy(f.key, "chuid");
	notify_text_finding(&f, NULL, &t, &n);
	ASSERT_TRUE(strncmp(n.body, "PIV object: chuid\n", 18) == 0);
}

int main(void)
{
	RUN(table_lines);
	RUN(table_states);
	RUN(prometheus);
	RUN(notify_words);
	return 0;
}
