/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * PIV answers (tests/data/piv/NAME.piv, format in tests/data/piv/FORMAT.md) read through the
 * daemon's own reader: card_read_piv() over a transport that answers each APDU from the file,
 * then every hand-decoded "= field value" line compared with what the reader made of the bytes.
 * argv[1] "real" reads tests/data/piv (public recordings of real YubiKeys), "synthetic" its
 * synthetic/ folder, and a path reads that one file (KEYCTL_PIV_DUMP: a dump kept elsewhere).
 *
 * A command is the file's when CLA INS P1 P2 and the data agree (a SELECT also when one AID is
 * the other's beginning: a card selects by a truncated AID); what the file lacks is answered
 * 6A82 (not found: an empty slot) and listed. A recorded answer longer than a short APDU carries
 * is served as a card serves it: 256 bytes and 61xx, then GET RESPONSE; where the file records
 * the pieces (an answer ending in 61xx, then `> 00 C0 ...` pairs), GET RESPONSE takes them in
 * their order.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>

#include "card-piv.h"
#include "test.h"

#define PAIRS_MAX 128
#define FIELDS_MAX 128

struct pair {
	uint8_t key[CARD_APDU_MAX];
	size_t key_len;
	uint8_t *resp;
	size_t resp_len;
};

struct piv_dump {
	char path[800];
	struct pair pairs[PAIRS_MAX];
	size_t n_pairs;
	char names[FIELDS_MAX][32], values[FIELDS_MAX][256];
	size_t n_fields;
	bool have_source;
	const struct pair *serving;
	size_t served;
	size_t next; /* the pair after the one being served: a recorded GET RESPONSE may follow */
	unsigned unrecorded;
};

static size_t hex_line(const char *s, uint8_t *out, size_t size, const char *where)
{
	size_t n = 0;
	unsigned b;
	int k;

	for (;;) {
		while (*s == ' ')
			s++;
		if (*s == 0 || *s == '#')
			return n;
		if (sscanf(s, "%2x%n", &b, &k) != 1 || k != 2 || n >= size)
			TEST_FAIL("%s: bad hex at \"%.20s\"", where, s);
		out[n++] = (uint8_t)b;
		s += k;
	}
}

/* CLA INS P1 P2 and the data of a short or extended APDU (a trace made with extended lengths),
 * without Lc and Le. */
static size_t command_key(const uint8_t *a, size_t n, uint8_t *key)
{
	size_t lc = 0, off = 5;

	memcpy(key, a, 4);
	if (n > 7 && a[4] == 0) {
		lc = (size_t)a[5] << 8 | a[6];
		off = 7;
	} else if (n > 5)
		lc = a[4];
	if (lc > n - MIN(off, n))
		lc = n - MIN(off, n);
	if (lc > CARD_APDU_MAX - 4)
		lc = CARD_APDU_MAX - 4;
	if (lc)
		memcpy(key + 4, a + off, lc);
	return 4 + lc;
}

static void load(struct piv_dump *d, const char *path)
{
	static char line[65536];
	static uint8_t buf[32768];
	char where[900];
	unsigned no = 0;
	FILE *f = fopen(path, "re");

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s", path);
	if (!f)
		TEST_FAIL("%s: %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct pair *p = d->n_pairs ? &d->pairs[d->n_pairs - 1] : NULL;
		char *sp;

		line[strcspn(line, "\r\n")] = 0;
		snprintf(where, sizeof(where), "%s:%u", path, ++no);
		if ((strncmp(line, "@ source ", 9) == 0 && strstr(line, "://")) ||
		    strncmp(line, "@ synthetic ", 12) == 0)
			d->have_source = true;
		if (line[0] == '#' || line[0] == '@' || line[0] == 0)
			continue;
		if (line[0] == '>') {
			size_t n = hex_line(line + 1, buf, CARD_APDU_MAX + 4, where);

			if (d->n_pairs >= PAIRS_MAX || n < 4 || (p && !p->resp))
				TEST_FAIL("%s: command out of place", where);
			p = &d->pairs[d->n_pairs++];
			p->key_len = command_key(buf, n, p->key);
		} else if (line[0] == '<') {
			bool assumed = line[1] == '~';

			if (!p || p->resp)
				TEST_FAIL("%s: answer without command", where);
			p->resp_len = hex_line(line + 1 + assumed, buf, sizeof(buf), where);
			if (p->resp_len < 2)
				TEST_FAIL("%s: answer without status word", where);
			p->resp = malloc(p->resp_len);
			ASSERT_TRUE(p->resp);
			memcpy(p->resp, buf, p->resp_len);
		} else if (line[0] == '=' && (sp = strchr(line + 2, ' ')) &&
		           d->n_fields < FIELDS_MAX) {
			*sp = 0;
			/* Cut to fit, said as such to gcc's -Wformat-truncation. */
			snprintf(d->names[d->n_fields], sizeof(d->names[0]), "%.*s",
			         (int)sizeof(d->names[0]) - 1, line + 2);
			snprintf(d->values[d->n_fields++], sizeof(d->values[0]), "%.*s",
			         (int)sizeof(d->values[0]) - 1, sp + 1);
		} else
			TEST_FAIL("%s: unknown line \"%.40s\"", where, line);
	}
	fclose(f);
	if (!d->have_source || d->n_fields == 0)
		TEST_FAIL("%s: no \"@ source URL\" / \"@ synthetic why\", or no \"= \" lines",
		          path);
}

/* The next piece of d->serving: at most 256 data bytes, 61xx while more is left. */
static int serve(struct piv_dump *d, uint8_t *resp, size_t *resp_len)
{
	size_t data = d->serving->resp_len - 2, k = MIN(data - d->served, (size_t)256);

	memcpy(resp, d->serving->resp + d->served, k);
	d->served += k;
	if (d->served < data) {
		resp[k] = 0x61;
		resp[k + 1] = (uint8_t)MIN(data - d->served, (size_t)255);
	} else
		memcpy(resp + k, d->serving->resp + data, 2);
	*resp_len = k + 2;
	return 0;
}

static bool same_command(const struct pair *p, const uint8_t *key, size_t k)
{
	size_t m = MIN(p->key_len, k);

	if (p->key_len == k && memcmp(p->key, key, k) == 0)
		return true;
	/* SELECT by AID: the same application when one AID begins the other. */
	return key[1] == 0xa4 && p->key_len >= 9 && k >= 9 && memcmp(p->key, key, 4) == 0 &&
	       memcmp(p->key + 4, key + 4, m - 4) == 0;
}

static int start_serving(struct piv_dump *d, size_t i, uint8_t *resp, size_t *resp_len)
{
	d->serving = &d->pairs[i];
	d->served = 0;
	d->next = i + 1;
	return serve(d, resp, resp_len);
}

static int dump_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                         size_t *resp_len)
{
	struct piv_dump *d = userdata;
	uint8_t key[CARD_APDU_MAX];
	size_t k = command_key(apdu, n, key);

	if (apdu[1] == 0xc0 && d->serving) {
		if (d->served < d->serving->resp_len - 2)
			return serve(d, resp, resp_len);
		/* The recorded answer ended in 61xx: its recorded GET RESPONSE comes next. */
		if (d->next < d->n_pairs && d->pairs[d->next].key[1] == 0xc0)
			return start_serving(d, d->next, resp, resp_len);
	}
	d->serving = NULL;
	for (size_t i = 0; i < d->n_pairs; i++)
		if (d->pairs[i].key[1] != 0xc0 && same_command(&d->pairs[i], key, k))
			return start_serving(d, i, resp, resp_len);
	d->unrecorded++;
	resp[0] = 0x6a;
	resp[1] = 0x82;
	*resp_len = 2;
	return 0;
}

static const struct piv_cert *cert_of(const struct piv_app *a, const char *slot)
{
	for (size_t i = 0; i < a->n_certs; i++)
		if (streq(a->certs[i].slot, slot))
			return &a->certs[i];
	return NULL;
}

/* What the reader made of field name, as FORMAT.md writes it. */
static void value_of(const struct piv_app *a, const char *name, char *buf, size_t size)
{
	const struct piv_cert *c;
	char slot[3] = "";
	const char *f = name;

	buf[0] = 0;
	if (streq(name, "state"))
		snprintf(buf, size, "%s", piv_read_to_string(a->state));
	else if (streq(name, "chuid_expiry"))
		snprintf(buf, size, "%lld", (long long)a->chuid_expiry);
	else if (streq(name, "slots")) {
		for (size_t i = 0; i < a->n_certs; i++)
			snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? " " : "",
			         a->certs[i].slot);
		if (a->n_certs == 0)
			snprintf(buf, size, "-");
	} else if (strlen(name) > 3 && name[2] == '.') {
		memcpy(slot, name, 2);
		f = name + 3;
		c = cert_of(a, slot);
		if (!c)
			snprintf(buf, size, "(slot %s not read)", slot);
		else if (streq(f, "subject"))
			snprintf(buf, size, "%s", c->subject);
		else if (streq(f, "issuer"))
			snprintf(buf, size, "%s", c->issuer);
		else if (streq(f, "not_before"))
			snprintf(buf, size, "%lld", (long long)c->not_before);
		else if (streq(f, "not_after"))
			snprintf(buf, size, "%lld", (long long)c->not_after);
		else if (streq(f, "self_signed"))
			snprintf(buf, size, "%s", c->self_signed ? "yes" : "no");
		else if (streq(f, "algorithm"))
			snprintf(buf, size, "%s", c->key_algorithm);
		else if (streq(f, "error"))
			snprintf(buf, size, "%s", c->error[0] ? c->error : "-");
		else
			TEST_FAIL("unknown field %s", name);
	} else
		TEST_FAIL("unknown field %s", name);
}

static unsigned check_file(const char *path)
{
	static struct piv_dump d;
	const struct card_transport t = { .transmit = dump_transmit, .userdata = &d };
	struct piv_app a;
	unsigned bad = 0;
	char got[512];
	int r;

	load(&d, path);
	r = card_read_piv(&t, true, &a);
	if (r < 0)
		TEST_FAIL("%s: card_read_piv: %s", path, strerror(-r));
	for (size_t i = 0; i < d.n_fields; i++) {
		value_of(&a, d.names[i], got, sizeof(got));
		/* An error is matched by its beginning: the rest may say more. */
		if (strstr(d.names[i], ".error")
		            ? strncmp(got, d.values[i], strlen(d.values[i])) != 0
		            : !streq(got, d.values[i])) {
			fprintf(stderr, "%s: %s: want \"%s\", got \"%s\"\n", path, d.names[i],
			        d.values[i], got);
			bad++;
		}
	}
	printf("%s: %zu fields checked, %u commands not in the file (answered 6A82)%s%s\n", path,
	       d.n_fields, d.unrecorded, a.error[0] ? "; application: " : "", a.error);
	for (size_t i = 0; i < d.n_pairs; i++)
		free(d.pairs[i].resp);
	return bad;
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "real";
	const char *src = getenv("KEYCTL_SRCDIR");
	char dir[600], path[1200], file[600];
	unsigned bad = 0, files = 0;
	struct dirent *e;
	DIR *dp;

	if (strchr(which, '/'))
		return check_file(which) ? 1 : 0;
	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(dir, sizeof(dir), "%s/tests/data/piv%s", src ? src : dirname(file),
	         streq(which, "synthetic") ? "/synthetic" : "");
	if (!src)
		snprintf(dir, sizeof(dir), "%s/../data/piv%s", dirname(file),
		         streq(which, "synthetic") ? "/synthetic" : "");
	dp = opendir(dir);
	if (!dp)
		TEST_FAIL("%s: %s", dir, strerror(errno));
	while ((e = readdir(dp))) {
		size_t n = strlen(e->d_name);

		if (n < 5 || !streq(e->d_name + n - 4, ".piv"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		bad += check_file(path);
		files++;
	}
	closedir(dp);
	if (files == 0)
		TEST_FAIL("%s: no .piv file", dir);
	printf("%u files, %u fields wrong\n", files, bad);
	return bad ? 1 : 0;
}
