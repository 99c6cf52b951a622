/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Varlink wire rules: framing across and within reads, the 64 KiB bound exactly, parsing bounds
 * (depth, trailing bytes, top-level type), call and reply checks, built messages, dispatch tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util.h"
#include "varlink.h"

static void feed_str(struct varlink_buffer *b, const char *s, size_t n)
{
	ASSERT_OK(varlink_buffer_feed(b, s, n));
}

TEST(framing_split)
{
	struct varlink_buffer b;
	const char *m;
	size_t len;
	const char msg[] = "{\"method\":\"io.keyctl.GetStatus\"}";

	varlink_buffer_init(&b, VARLINK_MESSAGE_MAX);
	/* One byte at a time: nothing until the NUL. */
	for (size_t i = 0; i < sizeof(msg) - 1; i++) {
		feed_str(&b, msg + i, 1);
		ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 0);
		ASSERT_EQ(varlink_buffer_pending(&b), i + 1);
	}
	feed_str(&b, "", 1); /* the NUL */
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 1);
	ASSERT_EQ(len, sizeof(msg) - 1);
	ASSERT_STREQ(m, msg);
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 0);
	ASSERT_EQ(varlink_buffer_pending(&b), 0);
	varlink_buffer_done(&b);
}

TEST(framing_two_in_one)
{
	struct varlink_buffer b;
	const char *m;
	size_t len;
	const char two[] = "{\"a\":1}\0{\"b\":2}\0{\"c\"";

	varlink_buffer_init(&b, VARLINK_MESSAGE_MAX);
	feed_str(&b, two, sizeof(two) - 1);
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 1);
	ASSERT_STREQ(m, "{\"a\":1}");
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 1);
	ASSERT_STREQ(m, "{\"b\":2}");
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 0);
	ASSERT_EQ(varlink_buffer_pending(&b), 4);
	feed_str(&b, ":3}", 4); /* with the NUL */
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 1);
	ASSERT_STREQ(m, "{\"c\":3}");
	/* An empty message (a lone NUL) is framed; the parser rejects it. */
	feed_str(&b, "", 1);
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 1);
	ASSERT_EQ(len, 0);
	varlink_buffer_done(&b);
}

TEST(framing_boundary)
{
	struct varlink_buffer b;
	const char *m;
	size_t len, max = VARLINK_MESSAGE_MAX;
	char *big = malloc(max + 2);

	ASSERT_TRUE(big);
	memset(big, ' ', max + 1);

	/* Exactly max bytes and its NUL: accepted, split over two feeds. */
	varlink_buffer_init(&b, max);
	feed_str(&b, big, max / 2);
	feed_str(&b, big, max - max / 2);
	big[max] = 0;
	feed_str(&b, big + max, 1);
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 1);
	ASSERT_EQ(len, max);
	varlink_buffer_done(&b);

	/* max + 1 bytes before the NUL: refused, in one feed... */
	memset(big, ' ', max + 1);
	big[max + 1] = 0;
	varlink_buffer_init(&b, max);
	ASSERT_ERR(varlink_buffer_feed(&b, big, max + 2), EMSGSIZE);
	ASSERT_EQ(varlink_buffer_pending(&b), 0); /* nothing stored */
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 0);
	varlink_buffer_done(&b);

	/* ...and without any NUL: as soon as the open message passes max. */
	varlink_buffer_init(&b, max);
	feed_str(&b, big, max);
	ASSERT_ERR(varlink_buffer_feed(&b, big, 1), EMSGSIZE);
	ASSERT_EQ(varlink_buffer_pending(&b), max);
	varlink_buffer_done(&b);

	/* A complete small message before an oversized one in the same read: the whole read is
	 * refused (the stream is broken anyway), nothing half-stored. */
	varlink_buffer_init(&b, 16);
	ASSERT_ERR(varlink_buffer_feed(&b, "{}\0{\"aaaaaaaaaaaaaaaaaaa\":1}", 28), EMSGSIZE);
	ASSERT_EQ(varlink_buffer_next(&b, &m, &len), 0);
	varlink_buffer_done(&b);
	free(big);
}

TEST(framing_many_small)
{
	struct varlink_buffer b;
	const char *m;
	size_t len;
	unsigned n = 0;

	/* Many messages through a small bound: consumed space is reused, never accumulated. */
	varlink_buffer_init(&b, 64);
	for (int i = 0; i < 10000; i++) {
		feed_str(&b, "{\"x\":true}", 11);
		while (varlink_buffer_next(&b, &m, &len) > 0) {
			ASSERT_STREQ(m, "{\"x\":true}");
			n++;
		}
	}
	ASSERT_EQ(n, 10000);
	ASSERT_TRUE(b.alloc <= 4096);
	varlink_buffer_done(&b);
}

static int parse(const char *s, json_object **ret)
{
	return varlink_message_parse(s, strlen(s), ret);
}

TEST(parse_bounds)
{
	json_object *o = NULL;
	char deep[256];
	size_t i;

	ASSERT_OK(parse("{\"method\":\"io.keyctl.GetStatus\"}", &o));
	json_object_put(o);
	ASSERT_OK(parse(" {} \n", &o)); /* whitespace around the value is fine */
	json_object_put(o);

	ASSERT_ERR(parse("", &o), EBADMSG);
	ASSERT_ERR(parse("[]", &o), EBADMSG);
	ASSERT_ERR(parse("\"method\"", &o), EBADMSG);
	ASSERT_ERR(parse("42", &o), EBADMSG);
	ASSERT_ERR(parse("null", &o), EBADMSG);
	ASSERT_ERR(parse("{} {}", &o), EBADMSG);
	ASSERT_ERR(parse("{}x", &o), EBADMSG);
	ASSERT_ERR(parse("{\"a\":1", &o), EBADMSG);
	ASSERT_ERR(parse("{\"a\":1,}", &o), EBADMSG); /* strict: no trailing comma */
	ASSERT_ERR(parse("{\"a\":\"\xff\xfe\"}", &o), EBADMSG); /* not UTF-8 */

	/* Nesting: 31 levels below the top object parse, 40 do not. */
	i = 0;
	deep[i++] = '{';
	deep[i++] = '"';
	deep[i++] = 'a';
	deep[i++] = '"';
	deep[i++] = ':';
	for (int d = 0; d < 30; d++)
		deep[i++] = '[';
	for (int d = 0; d < 30; d++)
		deep[i++] = ']';
	deep[i++] = '}';
	deep[i] = 0;
	ASSERT_OK(parse(deep, &o));
	json_object_put(o);
	i = 5;
	for (int d = 0; d < 40; d++)
		deep[i++] = '[';
	for (int d = 0; d < 40; d++)
		deep[i++] = ']';
	deep[i++] = '}';
	deep[i] = 0;
	ASSERT_ERR(parse(deep, &o), EBADMSG);
}

static int call_parse(const char *s, struct varlink_call *c, const char **bad, json_object **keep)
{
	int r = parse(s, keep);
	if (r < 0)
		return r;
	return varlink_call_parse(*keep, c, bad);
}

TEST(call_checks)
{
	struct varlink_call c;
	const char *bad = NULL;
	json_object *o = NULL;

	ASSERT_OK(call_parse("{\"method\":\"io.keyctl.Watch\",\"more\":true,\"parameters\":{}}", &c,
	                     &bad, &o));
	ASSERT_STREQ(c.method, "io.keyctl.Watch");
	ASSERT_TRUE(c.more);
	ASSERT_FALSE(c.oneway);
	ASSERT_TRUE(c.parameters != NULL);
	json_object_put(o);

	ASSERT_OK(call_parse("{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":null}", &c,
	                     &bad, &o));
	ASSERT_TRUE(c.parameters == NULL);
	json_object_put(o);

#define BAD(s, field)                                             \
	do {                                                      \
		bad = NULL;                                       \
		ASSERT_ERR(call_parse(s, &c, &bad, &o), EBADMSG); \
		ASSERT_STREQ(bad, field);                         \
		json_object_put(o);                               \
		o = NULL;                                         \
	} while (0)

	BAD("{}", "method");
	BAD("{\"parameters\":{}}", "method");
	BAD("{\"method\":42}", "method");
	BAD("{\"method\":null}", "method");
	BAD("{\"method\":\"GetStatus\"}", "method");
	BAD("{\"method\":\"io.keyctl.getStatus\"}", "method");
	BAD("{\"method\":\"io.keyctl.\"}", "method");
	BAD("{\"method\":\"io..keyctl.Get\"}", "method");
	BAD("{\"method\":\"IO.keyctl.Get\"}", "method");
	BAD("{\"method\":\"io.keyctl.Get-Status\"}", "method");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"parameters\":[]}", "parameters");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"parameters\":\"x\"}", "parameters");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"more\":1}", "more");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"more\":\"true\"}", "more");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"oneway\":0}", "oneway");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"more\":true,\"oneway\":true}", "oneway");
	BAD("{\"method\":\"io.keyctl.GetStatus\",\"extra\":1}", "extra");
#undef BAD
	ASSERT_TRUE(varlink_method_name_valid("org.varlink.service.GetInterfaceDescription"));
	ASSERT_TRUE(varlink_method_name_valid("io.sys-tem.X1"));
	ASSERT_FALSE(varlink_method_name_valid("io.-x.Get"));
	ASSERT_FALSE(varlink_method_name_valid("io.keyctl.Get\xc3\xa9"));
}

TEST(build_and_reply)
{
	_cleanup_(freep) char *m = NULL;
	json_object *o = NULL, *p = json_object_new_object();
	struct varlink_reply rep;
	size_t n;

	json_object_object_add(p, "x", json_object_new_int(1));
	ASSERT_OK(varlink_call_build("io.keyctl.Watch", p, VARLINK_CALL_MORE, &m, &n));
	ASSERT_EQ(m[n - 1], 0);
	ASSERT_EQ(strlen(m), n - 1);
	ASSERT_STREQ(m, "{\"method\":\"io.keyctl.Watch\",\"parameters\":{\"x\":1},\"more\":true}");
	free(TAKE_PTR(m));

	ASSERT_OK(varlink_reply_build(p, true, &m, &n));
	ASSERT_STREQ(m, "{\"parameters\":{\"x\":1},\"continues\":true}");
	ASSERT_OK(varlink_message_parse(m, n - 1, &o));
	ASSERT_OK(varlink_reply_parse(o, &rep));
	ASSERT_TRUE(rep.continues);
	ASSERT_TRUE(rep.error == NULL);
	ASSERT_TRUE(rep.parameters != NULL);
	json_object_put(o);
	free(TAKE_PTR(m));
	json_object_put(p);

	ASSERT_OK(varlink_error_build_string(VARLINK_ERROR_INVALID_PARAMETER, "parameter", "more",
	                                     &m, &n));
	ASSERT_STREQ(m, "{\"error\":\"org.varlink.service.InvalidParameter\","
	                "\"parameters\":{\"parameter\":\"more\"}}");
	ASSERT_OK(varlink_message_parse(m, n - 1, &o));
	ASSERT_OK(varlink_reply_parse(o, &rep));
	ASSERT_STREQ(rep.error, "org.varlink.service.InvalidParameter");
	ASSERT_FALSE(rep.continues);
	json_object_put(o);

	/* Replies: unknown fields ignored, wrong types refused. */
	ASSERT_OK(parse("{\"parameters\":{},\"future\":1}", &o));
	ASSERT_OK(varlink_reply_parse(o, &rep));
	json_object_put(o);
	ASSERT_OK(parse("{\"parameters\":[]}", &o));
	ASSERT_ERR(varlink_reply_parse(o, &rep), EBADMSG);
	json_object_put(o);
	ASSERT_OK(parse("{\"continues\":\"yes\"}", &o));
	ASSERT_ERR(varlink_reply_parse(o, &rep), EBADMSG);
	json_object_put(o);
	ASSERT_OK(parse("{\"error\":17}", &o));
	ASSERT_ERR(varlink_reply_parse(o, &rep), EBADMSG);
	json_object_put(o);
}

struct sample {
	bool b;
	int64_t i;
	uint16_t u16;
	uint8_t u8;
	uint32_t u32;
	char s[8];
};

static const struct varlink_field sample_table[] = {
	{ "b", VARLINK_BOOL, VARLINK_MANDATORY, offsetof(struct sample, b), 0, NULL },
	{ "i", VARLINK_INT64, VARLINK_NULLABLE, offsetof(struct sample, i), 0, NULL },
	{ "u16", VARLINK_UINT16, 0, offsetof(struct sample, u16), 0, NULL },
	{ "u8", VARLINK_UINT8, 0, offsetof(struct sample, u8), 0, NULL },
	{ "u32", VARLINK_UINT32, 0, offsetof(struct sample, u32), 0, NULL },
	{ "s", VARLINK_STRING, 0, offsetof(struct sample, s), sizeof(((struct sample *)0)->s),
	  NULL },
	{},
};

static int dispatch_str(const char *json, unsigned flags, struct sample *s, const char **bad)
{
	json_object *o;
	int r;

	memset(s, 0, sizeof(*s));
	ASSERT_OK(parse(json, &o));
	static char name[32];

	r = varlink_dispatch(o, sample_table, flags, s, NULL, bad);
	/* *bad may point into o (an unknown field's name): keep a copy past the put. */
	if (r < 0 && *bad) {
		strcpy_trunc(name, sizeof(name), *bad);
		*bad = name;
	}
	json_object_put(o);
	return r;
}

TEST(dispatch)
{
	struct sample s;
	const char *bad = NULL;

	ASSERT_OK(dispatch_str("{\"b\":true,\"i\":-5,\"u16\":65535,\"u8\":3,\"u32\":4294967295,"
	                       "\"s\":\"1234567\"}",
	                       0, &s, &bad));
	ASSERT_TRUE(s.b);
	ASSERT_EQ(s.i, -5);
	ASSERT_EQ(s.u16, 65535);
	ASSERT_EQ(s.u8, 3);
	ASSERT_EQ(s.u32, 4294967295u);
	ASSERT_STREQ(s.s, "1234567");
	ASSERT_OK(dispatch_str("{\"b\":false,\"i\":null}", 0, &s, &bad));
	ASSERT_EQ(s.i, 0);

#define BAD(json, err, field)                                     \
	do {                                                      \
		bad = NULL;                                       \
		ASSERT_ERR(dispatch_str(json, 0, &s, &bad), err); \
		ASSERT_STREQ(bad, field);                         \
	} while (0)
	BAD("{}", EBADMSG, "b");
	BAD("{\"b\":null}", EBADMSG, "b");
	BAD("{\"b\":1}", EBADMSG, "b");
	BAD("{\"b\":true,\"i\":1.5}", EBADMSG, "i");
	BAD("{\"b\":true,\"i\":\"1\"}", EBADMSG, "i");
	BAD("{\"b\":true,\"i\":9223372036854775808}", EBADMSG, "i");
	BAD("{\"b\":true,\"u16\":65536}", EBADMSG, "u16");
	BAD("{\"b\":true,\"u16\":-1}", EBADMSG, "u16");
	BAD("{\"b\":true,\"u8\":256}", EBADMSG, "u8");
	BAD("{\"b\":true,\"u32\":4294967296}", EBADMSG, "u32");
	BAD("{\"b\":true,\"s\":\"12345678\"}", EMSGSIZE, "s");
	BAD("{\"b\":true,\"s\":\"a\\u0000b\"}", EBADMSG, "s");
	BAD("{\"b\":true,\"s\":[]}", EBADMSG, "s");
	BAD("{\"b\":true,\"zzz\":1}", EBADMSG, "zzz");
#undef BAD
	ASSERT_OK(dispatch_str("{\"b\":true,\"zzz\":1}", VARLINK_DISPATCH_ALLOW_UNKNOWN, &s, &bad));
}

TEST(interface_embedded)
{
	/* The IDL is compiled in whole, starting at its first comment and naming the interface. */
	ASSERT_TRUE(strstr(varlink_keyctl_interface, "\ninterface io.keyctl\n") != NULL);
	ASSERT_TRUE(strstr(varlink_keyctl_interface, "method Watch() -> (event: Event)") != NULL);
	ASSERT_TRUE(strstr(varlink_keyctl_interface, "error ReloadFailed (reason: string)") !=
	            NULL);
}

/* Non-ASCII UTF-8 in strings (a user id "Jürgen"): accepted and kept byte for byte, while the
 * strict rules still hold around it. json-c 0.18's strict mode alone rejects such bytes (json-c
 * issue 892); this runs on both legs, json-c 0.16 and 0.18. */
TEST(parse_utf8_strict)
{
	json_object *o = NULL, *v;

	ASSERT_OK(parse("{\"uid\":\"J\xc3\xbcrgen \\\"\xc3\xbcn\xc3\xaf"
	                "c\xc3\xb6"
	                "d\xc3\xa9\\\"\"}",
	                &o));
	ASSERT_TRUE(json_object_object_get_ex(o, "uid", &v));
	ASSERT_STREQ(json_object_get_string(v), "J\xc3\xbcrgen \"\xc3\xbcn\xc3\xaf"
	                                        "c\xc3\xb6"
	                                        "d\xc3\xa9\"");
	json_object_put(o);
	ASSERT_OK(parse("{\"\xe2\x82\xac\":[\"\xf0\x9f\x94\x91\"]}", &o)); /* key, 4-byte */
	json_object_put(o);

	ASSERT_ERR(parse("{\"a\":\"\xc3\xbc\",}", &o), EBADMSG); /* trailing comma */
	ASSERT_ERR(parse("{\"a\":'\xc3\xbc'}", &o), EBADMSG); /* single quotes */
	ASSERT_ERR(parse("{\"a\":\"\xc3\xbc\" /* c */}", &o), EBADMSG); /* comment */
	ASSERT_ERR(parse("{\"a\":\xc3\xbc}", &o), EBADMSG); /* outside a string */
	ASSERT_ERR(parse("{\"a\":\"\xc3\"}", &o), EBADMSG); /* cut sequence */
	ASSERT_ERR(parse("{\"a\":\"\xc3\xbc\"} x", &o), EBADMSG); /* trailing garbage */
	ASSERT_ERR(parse("[\"\xc3\xbc\"]", &o), EBADMSG); /* not an object */
}

int main(void)
{
	RUN(framing_split);
	RUN(framing_two_in_one);
	RUN(framing_boundary);
	RUN(framing_many_small);
	RUN(parse_bounds);
	RUN(parse_utf8_strict);
	RUN(call_checks);
	RUN(build_and_reply);
	RUN(dispatch);
	RUN(interface_embedded);
	return 0;
}
