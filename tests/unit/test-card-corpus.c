/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Real devices' answers (tests/data/cards/NAME.card, format in FORMAT.md) read through the daemon's
 * own reader: card_read_openpgp() over a transport that answers each APDU from the dump, then
 * every hand-decoded "= field value" line compared with what the reader made of the bytes, and
 * pcsc_token_from_card() for the token's kind and serial. Where the file carries scdaemon's view
 * ("S " lines), those go through scd_parse_status() and must give the same values.
 *
 * The dump answers by command, not by order: a real trace was made by another program (gpg,
 * opensc-tool, ykman) that asked in its own order and with its own Le. A command is the dump's
 * when CLA INS P1 P2 and the data agree. What the dump lacks is answered 6A88 (not found) and
 * listed, so a field decoded from a DO the reader never got fails the comparison rather than
 * passing by luck; only SELECT must be in the dump (as "<~ 90 00" where the trace lacks it). A
 * recorded answer longer than a short APDU carries (a trace made with extended lengths) is served
 * as a card serves a short Le: 256 bytes and 61xx, then GET RESPONSE. Every file must read: none is
 * skipped.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>

#include "card-openpgp.h"
#include "card-pcsc.h"
#include "card-scd.h"
#include "test.h"

#define PAIRS_MAX 128
#define LINE_MAX_LEN 16384
#define FIELDS_MAX 64

struct pair {
	unsigned line;
	uint8_t key[CARD_APDU_MAX]; /* CLA INS P1 P2 data */
	size_t key_len;
	uint8_t *resp;
	size_t resp_len;
	bool assumed, used;
};

struct field {
	char name[32];
	char value[512];
	unsigned line;
};

struct dump {
	char path[800];
	struct pair pairs[PAIRS_MAX];
	size_t n_pairs;
	struct field fields[FIELDS_MAX];
	size_t n_fields;
	char scd[64][1000];
	size_t n_scd;
	bool have_source;
	/* serving state */
	const struct pair *serving;
	size_t served; /* bytes of serving->resp handed out */
	size_t chain_next; /* index of the next recorded GET RESPONSE after a recorded 61xx */
	unsigned unrecorded, assumed;
	char unrecorded_list[256];
};

/* tests/data/cards (real dumps), or its synthetic/ folder with argv[1] = "synthetic". */
static const char *subdir = "";

static const char *data_dir(void)
{
	static char dir[512];
	const char *e = getenv("KEYCTL_SRCDIR");
	char file[512];

	if (e) {
		snprintf(dir, sizeof(dir), "%s/tests/data/cards%s", e, subdir);
		return dir;
	}
	snprintf(file, sizeof(file), "%s", __FILE__);
	snprintf(dir, sizeof(dir), "%s/../data/cards%s", dirname(file), subdir);
	return dir;
}

static size_t parse_hex(const char *s, uint8_t *out, size_t size, const char *where)
{
	size_t n = 0;

	for (;;) {
		unsigned b;
		int k;

		while (*s == ' ' || *s == '\t' || *s == ':')
			s++;
		if (*s == 0 || *s == '\n' || *s == '\r' || *s == '#')
			return n;
		if (sscanf(s, "%2x%n", &b, &k) != 1 || k != 2)
			TEST_FAIL("%s: bad hex at \"%.20s\"", where, s);
		if (n >= size)
			TEST_FAIL("%s: line too long", where);
		out[n++] = (uint8_t)b;
		s += k;
	}
}

/* CLA INS P1 P2 and the command data, without Lc and Le, of a short or extended APDU. */
static size_t apdu_key(const uint8_t *a, size_t n, uint8_t *key, const char *where)
{
	size_t lc = 0, off = 4;

	if (n < 4)
		TEST_FAIL("%s: APDU of %zu bytes", where, n);
	memcpy(key, a, 4);
	if (n == 4 || n == 5)
		return 4; /* case 1, case 2 short */
	if (a[4] == 0 && n >= 7) { /* extended */
		if (n == 7)
			return 4; /* case 2 extended */
		lc = (size_t)a[5] << 8 | a[6];
		off = 7;
	} else {
		lc = a[4];
		off = 5;
	}
	if (off + lc > n)
		TEST_FAIL("%s: Lc %zu past the end of the APDU", where, lc);
	memcpy(key + 4, a + off, lc);
	return 4 + lc;
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = 0;
}

static void dump_load(struct dump *d, const char *name)
{
	static char line[LINE_MAX_LEN];
	static uint8_t buf[LINE_MAX_LEN / 2];
	char where[900];
	unsigned lineno = 0;
	FILE *f;

	memset(d, 0, sizeof(*d));
	snprintf(d->path, sizeof(d->path), "%s/%s", data_dir(), name);
	f = fopen(d->path, "re");
	if (!f)
		TEST_FAIL("%s: %s", d->path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct pair *p = d->n_pairs ? &d->pairs[d->n_pairs - 1] : NULL;

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", d->path, lineno);
		if (strlen(line) >= sizeof(line) - 1)
			TEST_FAIL("%s: line too long", where);
		chomp(line);
		if (line[0] == '#' || line[0] == 0)
			continue;
		if ((strncmp(line, "@ source ", 9) == 0 && strstr(line, "://")) ||
		    strncmp(line, "@ synthetic ", 12) == 0)
			d->have_source = true;
		if (line[0] == '@')
			continue;
		if (line[0] == '>') {
			size_t n;

			if (p && !p->resp)
				TEST_FAIL("%s: command without answer before this one", where);
			if (d->n_pairs >= PAIRS_MAX)
				TEST_FAIL("%s: too many pairs", where);
			p = &d->pairs[d->n_pairs++];
			p->line = lineno;
			n = parse_hex(line + 1, buf, sizeof(buf), where);
			if (n > CARD_APDU_MAX + 3)
				TEST_FAIL("%s: command too long", where);
			p->key_len = apdu_key(buf, n, p->key, where);
		} else if (line[0] == '<') {
			bool assumed = line[1] == '~';

			if (!p || p->resp)
				TEST_FAIL("%s: answer without command", where);
			p->resp_len = parse_hex(line + (assumed ? 2 : 1), buf, sizeof(buf), where);
			if (p->resp_len < 2)
				TEST_FAIL("%s: answer without status word", where);
			p->resp = malloc(p->resp_len);
			ASSERT_TRUE(p->resp);
			memcpy(p->resp, buf, p->resp_len);
			p->assumed = assumed;
		} else if (line[0] == 'S' && line[1] == ' ') {
			if (d->n_scd >= ELEMENTSOF(d->scd))
				TEST_FAIL("%s: too many status lines", where);
			strcpy_trunc(d->scd[d->n_scd++], sizeof(d->scd[0]), line + 2);
		} else if (line[0] == '=' && line[1] == ' ') {
			struct field *fl;
			char *sp = strchr(line + 2, ' ');

			if (!sp || d->n_fields >= FIELDS_MAX)
				TEST_FAIL("%s: bad field line", where);
			fl = &d->fields[d->n_fields++];
			*sp = 0;
			strcpy_trunc(fl->name, sizeof(fl->name), line + 2);
			strcpy_trunc(fl->value, sizeof(fl->value), sp + 1);
			fl->line = lineno;
		} else
			TEST_FAIL("%s: unknown line \"%.40s\"", where, line);
	}
	fclose(f);
	if (d->n_pairs && !d->pairs[d->n_pairs - 1].resp)
		TEST_FAIL("%s: last command has no answer", d->path);
	if (!d->have_source)
		TEST_FAIL("%s: no \"@ source URL\" (or, in synthetic/, \"@ synthetic why\") line",
		          d->path);
	if (d->n_fields == 0)
		TEST_FAIL("%s: no hand-decoded \"= field value\" lines", d->path);
}

static void dump_free(struct dump *d)
{
	for (size_t i = 0; i < d->n_pairs; i++)
		free(d->pairs[i].resp);
}

static const struct pair *dump_find(struct dump *d, const uint8_t *key, size_t n)
{
	const struct pair *last = NULL;

	/* The first unused answer to this command, else the last one (asked again). */
	for (size_t i = 0; i < d->n_pairs; i++) {
		struct pair *p = &d->pairs[i];

		if (p->key_len != n || memcmp(p->key, key, n) != 0)
			continue;
		if (!p->used) {
			p->used = true;
			d->chain_next = i + 1;
			return p;
		}
		last = p;
	}
	return last;
}

static void answer(uint8_t *resp, size_t *resp_len, const uint8_t *p, size_t n)
{
	memcpy(resp, p, n);
	*resp_len = n;
}

/* Serves the next piece of d->serving: at most 256 data bytes, 61xx while more is left. */
static int serve_piece(struct dump *d, uint8_t *resp, size_t *resp_len)
{
	const struct pair *p = d->serving;
	size_t data = p->resp_len - 2, left = data - d->served, k = left > 256 ? 256 : left;

	memcpy(resp, p->resp + d->served, k);
	d->served += k;
	if (d->served < data) {
		resp[k] = 0x61;
		resp[k + 1] = (uint8_t)(data - d->served > 255 ? 0 : data - d->served);
	} else {
		resp[k] = p->resp[data];
		resp[k + 1] = p->resp[data + 1];
		d->serving = NULL;
	}
	*resp_len = k + 2;
	return 0;
}

static int dump_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                         size_t *resp_len)
{
	static const uint8_t not_found[] = { 0x6a, 0x88 };
	struct dump *d = userdata;
	uint8_t key[CARD_APDU_MAX];
	const struct pair *p;
	size_t k;

	if (n < 4 || !card_ins_allowed(apdu[1]))
		TEST_FAIL("%s: forbidden APDU sent (INS %02X)", d->path, apdu[1]);
	ASSERT_TRUE(*resp_len >= 258);
	k = apdu_key(apdu, n, key, d->path);

	if (apdu[1] == 0xc0) {
		if (d->serving)
			return serve_piece(d, resp, resp_len);
		/* After a recorded 61xx the dump's own GET RESPONSE pieces follow it. */
		if (d->chain_next < d->n_pairs && d->pairs[d->chain_next].key[1] == 0xc0) {
			p = &d->pairs[d->chain_next++];
			answer(resp, resp_len, p->resp, p->resp_len);
			return 0;
		}
		TEST_FAIL("%s: GET RESPONSE with nothing pending", d->path);
	}
	d->serving = NULL;
	p = dump_find(d, key, k);
	if (!p) {
		if (apdu[1] == 0xa4)
			TEST_FAIL("%s: the dump has no answer to SELECT", d->path);
		d->unrecorded++;
		snprintf(d->unrecorded_list + strlen(d->unrecorded_list),
		         sizeof(d->unrecorded_list) - strlen(d->unrecorded_list), " %02X%02X%02X",
		         apdu[1], apdu[2], apdu[3]);
		answer(resp, resp_len, not_found, sizeof(not_found));
		return 0;
	}
	if (p->assumed)
		d->assumed++;
	if (p->resp_len > 258) {
		d->serving = p;
		d->served = 0;
		return serve_piece(d, resp, resp_len);
	}
	answer(resp, resp_len, p->resp, p->resp_len);
	return 0;
}

static const char *slot_prefix[SLOT_MAX] = { "sig.", "enc.", "aut." };

/* The reader's value of a field, as FORMAT.md writes it; NULL for a field it does not know. */
static const char *value_of(const struct openpgp_card *c, const struct token *t, int result,
                            const char *name, char *buf, size_t size)
{
	if (streq(name, "aid"))
		return c->aid;
	if (streq(name, "version"))
		return c->version;
	if (streq(name, "manufacturer_id")) {
		snprintf(buf, size, "%04X", c->manufacturer_id);
		return buf;
	}
	if (streq(name, "manufacturer"))
		return c->manufacturer;
	if (streq(name, "serial"))
		return c->serial;
	if (streq(name, "firmware"))
		return c->firmware;
	if (streq(name, "signature_counter")) {
		snprintf(buf, size, "%u", c->signature_counter);
		return buf;
	}
	if (streq(name, "pin_retries")) {
		snprintf(buf, size, "%u %u %u", c->pin_retries[0], c->pin_retries[1],
		         c->pin_retries[2]);
		return buf;
	}
	if (streq(name, "cardholder"))
		return c->cardholder;
	if (streq(name, "url"))
		return c->url[0] ? c->url : "-";
	if (streq(name, "slots")) {
		snprintf(buf, size, "%u", c->key_slots);
		return buf;
	}
	if (streq(name, "error"))
		return c->error[0] ? c->error : "-";
	if (streq(name, "result")) {
		snprintf(buf, size, "%s", result == 0 ? "ok" : strerror(-result));
		return buf;
	}
	if (t && streq(name, "token.kind"))
		return token_kind_to_string(t->kind);
	if (t && streq(name, "token.serial"))
		return t->serial;
	for (int s = 0; s < SLOT_MAX; s++) {
		const struct card_slot *sl = &c->slots[s];
		size_t pl = strlen(slot_prefix[s]);

		if (strncmp(name, slot_prefix[s], pl) != 0)
			continue;
		name += pl;
		if (streq(name, "fingerprint"))
			return sl->fingerprint[0] ? sl->fingerprint : "-";
		if (streq(name, "created")) {
			snprintf(buf, size, "%lld", (long long)sl->created);
			return buf;
		}
		if (streq(name, "algorithm"))
			return sl->algorithm;
		if (streq(name, "touch"))
			return touch_policy_to_string(sl->touch);
		return NULL;
	}
	return NULL;
}

/* "error" may be given as a prefix: the reason's wording after the tag may change. */
static bool value_matches(const char *name, const char *want, const char *got)
{
	if (!got[0])
		got = "-"; /* FORMAT.md: "-" for an empty or absent value */
	if (streq(name, "error") && !streq(want, "-"))
		return strncmp(got, want, strlen(want)) == 0;
	return streq(want, got);
}

static unsigned compare(const struct dump *d, const char *path_name, const struct openpgp_card *c,
                        const struct token *t, int result, bool (*wanted)(const char *name))
{
	unsigned n = 0;

	for (size_t i = 0; i < d->n_fields; i++) {
		const struct field *f = &d->fields[i];
		char buf[128];
		const char *got;

		if (wanted && !wanted(f->name))
			continue;
		got = value_of(c, t, result, f->name, buf, sizeof(buf));
		if (!got)
			TEST_FAIL("%s:%u: unknown field \"%s\"", d->path, f->line, f->name);
		if (!value_matches(f->name, f->value, got))
			TEST_FAIL("%s:%u: %s: %s is \"%s\", the hand-decoded value is \"%s\"",
			          d->path, f->line, path_name, f->name, got, f->value);
		n++;
	}
	return n;
}

/* The fields scdaemon's status lines carry (and the ones it does not: firmware, slots, the
 * token, the read's result). */
static char scd_seen[16][24];
static size_t n_scd_seen;

static bool scd_has(const char *kw)
{
	for (size_t i = 0; i < n_scd_seen; i++)
		if (streq(scd_seen[i], kw))
			return true;
	return false;
}

static bool scd_field(const char *name)
{
	const char *dot = strchr(name, '.');

	if (streq(name, "aid") || streq(name, "version") || streq(name, "serial") ||
	    streq(name, "manufacturer_id") || streq(name, "manufacturer"))
		return scd_has("SERIALNO");
	if (streq(name, "signature_counter"))
		return scd_has("SIG-COUNTER");
	if (streq(name, "pin_retries"))
		return scd_has("CHV-STATUS");
	if (streq(name, "cardholder"))
		return scd_has("DISP-NAME");
	if (streq(name, "url"))
		return scd_has("PUBKEY-URL");
	if (dot && streq(dot, ".fingerprint"))
		return scd_has("KEY-FPR");
	if (dot && streq(dot, ".created"))
		return scd_has("KEY-TIME");
	if (dot && streq(dot, ".algorithm"))
		return scd_has("KEY-ATTR");
	if (dot && streq(dot, ".touch"))
		return scd_has("UIF-1");
	return false;
}

static unsigned replay_scd(const struct dump *d)
{
	struct openpgp_card c = {};

	n_scd_seen = 0;
	for (size_t i = 0; i < d->n_scd; i++) {
		const char *line = d->scd[i];
		size_t kw = strcspn(line, " ");

		if (n_scd_seen < ELEMENTSOF(scd_seen) && kw < sizeof(scd_seen[0])) {
			memcpy(scd_seen[n_scd_seen], line, kw);
			scd_seen[n_scd_seen++][kw] = 0;
		}
		if (scd_parse_status((const uint8_t *)line, strlen(line), &c) < 0)
			TEST_FAIL("%s: scdaemon's line \"%s\" does not parse", d->path, line);
	}
	return compare(d, "scdaemon", &c, NULL, 0, scd_field);
}

static bool has_field(const struct dump *d, const char *name)
{
	for (size_t i = 0; i < d->n_fields; i++)
		if (streq(d->fields[i].name, name))
			return true;
	return false;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_card_file(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 5 && streq(e->d_name + n - 5, ".card");
}

int main(int argc, char **argv)
{
	static struct dump d;
	struct dirent **names;
	unsigned files = 0, families = 0;
	char seen_families[32][32];
	bool synthetic = argc > 1 && streq(argv[1], "synthetic");
	int n;

	if (synthetic)
		subdir = "/synthetic";
	n = scandir(data_dir(), &names, is_card_file, by_name);
	if (n < 0)
		TEST_FAIL("%s: %s", data_dir(), strerror(errno));
	for (int i = 0; i < n; i++) {
		struct card_transport t = { .transmit = dump_transmit, .userdata = &d };
		struct openpgp_card c;
		struct token tok = {};
		unsigned checked, scd_checked = 0;
		char family[32] = "";
		bool known = false;
		int r;

		/* argv[2]: one file only, for a developer chasing one dump */
		if (argc > 2 && !streq(argv[2], names[i]->d_name)) {
			free(names[i]);
			continue;
		}
		dump_load(&d, names[i]->d_name);
		memset(&c, 0xaa, sizeof(c)); /* card_read_openpgp zeroes it first */
		r = card_read_openpgp(&t, &c);
		if (r < 0 && r != -EBADMSG && r != -EIO && r != -EACCES)
			TEST_FAIL("%s: read failed: %s", d.path, strerror(-r));
		pcsc_token_from_card("", r == 0 || c.aid[0] ? &c : NULL, &tok);
		checked = compare(&d, "card_read_openpgp", &c, &tok, r, NULL);
		if (r != 0 && !has_field(&d, "result"))
			TEST_FAIL("%s: read failed (%s: %s) and the file does not expect it",
			          d.path, strerror(-r), c.error);
		if (d.n_scd)
			scd_checked = replay_scd(&d);

		/* the family, from the file name, counted once */
		sscanf(names[i]->d_name, "%31[^-.]", family);
		for (unsigned k = 0; k < families; k++)
			known = known || streq(seen_families[k], family);
		if (!known && families < ELEMENTSOF(seen_families))
			strcpy_trunc(seen_families[families++], sizeof(seen_families[0]), family);

		printf("%-40s %2u fields, %2u via scdaemon; %u assumed, %u unrecorded%s%s%s\n",
		       names[i]->d_name, checked, scd_checked, d.assumed, d.unrecorded,
		       d.unrecorded ? " (" : "", d.unrecorded_list + (d.unrecorded ? 1 : 0),
		       d.unrecorded ? ")" : "");
		dump_free(&d);
		free(names[i]);
		files++;
	}
	free(names);
	printf("%u %s of %u families read\n", files, synthetic ? "synthetic cases" : "real dumps",
	       families);
	/* The corpus is the point: an empty or shrunken one must not pass quietly. */
	if (argc <= 2 && files < (synthetic ? 10u : 8u))
		TEST_FAIL("only %u card files in %s", files, data_dir());
	return 0;
}
