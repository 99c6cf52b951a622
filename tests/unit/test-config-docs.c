/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The keyctl.conf examples users copy, loaded as printed through the real parser (strict, as
 * keyctld reads it) and required to give no warning: README.md's ```ini blocks, the literal
 * blocks of keyctl.conf(5) (doc/keyctl.conf.5.scd) and doc/keyctl.conf.example whole.
 * Issue 31: the README's example, with comments after its values, stopped keyctld.
 * Does not: check what the prose around an example says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "test.h"

#define DOC_MAX (256u * 1024u)

static char *read_doc(const char *rel)
{
	FILE *f = test_open_src(rel);
	char *buf;
	size_t n;

	buf = malloc(DOC_MAX + 1);
	ASSERT_TRUE(buf);
	n = fread(buf, 1, DOC_MAX, f);
	ASSERT_TRUE(feof(f));
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* Parses one example as keyctld would; a refusal or a warning fails with the doc's line. */
static void load_example(const char *doc, unsigned line, const char *text, size_t n)
{
	struct config c;
	char err[CONFIG_ERROR_MAX] = "";
	int r;

	config_init(&c);
	r = config_parse((const uint8_t *)text, n, "keyctl.conf", 0, &c, err, sizeof(err));
	if (r < 0)
		TEST_FAIL("%s:%u: the example is refused: %s", doc, line, err);
	if (c.n_warnings > 0)
		TEST_FAIL("%s:%u: the example gives a warning: %s", doc, line, c.warnings[0].text);
}

/* Each block between a line that is opener (after blanks) and a line that is "```": returns how
 * many were loaded. */
static unsigned load_blocks(const char *doc, const char *opener)
{
	char *text = read_doc(doc), *block = NULL, *p = text;
	unsigned line = 0, start = 0, count = 0;

	while (*p) {
		char *eol = strchr(p, '\n'), *t = p;
		size_t len = eol ? (size_t)(eol - p) : strlen(p);

		line++;
		while (*t == ' ' || *t == '\t')
			t++;
		len -= (size_t)(t - p);
		if (!block && len == strlen(opener) && strncmp(t, opener, len) == 0) {
			block = eol ? eol + 1 : p + strlen(p);
			start = line;
		} else if (block && len == 3 && strncmp(t, "```", 3) == 0) {
			load_example(doc, start, block, (size_t)(p - block));
			block = NULL;
			count++;
		}
		p = eol ? eol + 1 : p + strlen(p);
	}
	if (block)
		TEST_FAIL("%s:%u: example block not closed", doc, start);
	free(text);
	return count;
}

TEST(readme)
{
	ASSERT_TRUE(load_blocks("README.md", "```ini") >= 1);
}

TEST(man_page)
{
	ASSERT_TRUE(load_blocks("doc/keyctl.conf.5.scd", "```") >= 1);
}

TEST(example_file)
{
	char *text = read_doc("doc/keyctl.conf.example");

	load_example("doc/keyctl.conf.example", 1, text, strlen(text));
	free(text);
}

int main(void)
{
	RUN(readme);
	RUN(man_page);
	RUN(example_file);
	return 0;
}
