/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Varlink wire rules over json-c: NUL framing with a hard size bound, bounded parsing, the checks
 * on calls and replies (https://varlink.org/Method-Call), message building, and the dispatch
 * tables codec*.c use to check every field's type.
 *
 * Does not: do I/O, allocate per byte, or know keyctl's methods and types.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "varlink.h"

void varlink_buffer_init(struct varlink_buffer *b, size_t max)
{
	*b = (struct varlink_buffer){ .max = max };
}

void varlink_buffer_done(struct varlink_buffer *b)
{
	free(b->data);
	varlink_buffer_init(b, b->max);
}

size_t varlink_buffer_pending(const struct varlink_buffer *b)
{
	return b->open;
}

int varlink_buffer_feed(struct varlink_buffer *b, const void *p, size_t n)
{
	const char *s = p;
	size_t open = b->open, off = 0;

	/* Check every message in p against the bound before storing a byte of it. */
	while (off < n) {
		const char *nul = memchr(s + off, 0, n - off);
		size_t seg = nul ? (size_t)(nul - (s + off)) : n - off;

		if (open > b->max || seg > b->max - open)
			return -EMSGSIZE;
		if (!nul) {
			open += seg;
			break;
		}
		open = 0;
		off += seg + 1;
	}

	if (n == 0)
		return 0;

	/* Make room: move what is left to the front, then grow. */
	if (b->start > 0 && b->alloc - b->end < n) {
		memmove(b->data, b->data + b->start, b->end - b->start);
		b->end -= b->start;
		b->start = 0;
	}
	if (b->alloc - b->end < n) {
		size_t need = b->end + n, a = MAX(b->alloc, (size_t)4096);
		char *d;

		while (a < need)
			a *= 2;
		d = realloc(b->data, a);
		if (!d)
			return -ENOMEM;
		b->data = d;
		b->alloc = a;
	}
	memcpy(b->data + b->end, p, n);
	b->end += n;
	b->open = open;
	return 0;
}

int varlink_buffer_next(struct varlink_buffer *b, const char **ret_msg, size_t *ret_len)
{
	size_t avail = b->end - b->start;
	const char *m, *nul;

	if (b->scanned >= avail)
		return 0;
	m = b->data + b->start;
	nul = memchr(m + b->scanned, 0, avail - b->scanned);
	if (!nul) {
		b->scanned = avail;
		return 0;
	}
	*ret_msg = m;
	*ret_len = nul - m;
	b->start += *ret_len + 1;
	b->scanned = 0;
	if (b->start == b->end) {
		/* The message stays readable until the next feed: only the indices are reset. */
		b->start = b->end = 0;
	}
	return 1;
}

/* One whole JSON value with the given tokener flags, nothing but whitespace after it. */
static int parse_whole(const char *msg, size_t len, int flags, json_object **ret)
{
	struct json_tokener *tok = json_tokener_new_ex(VARLINK_DEPTH_MAX);
	json_object *o;
	size_t end;

	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, flags);
	o = json_tokener_parse_ex(tok, msg, (int)len);
	if (!o || json_tokener_get_error(tok) != json_tokener_success) {
		json_object_put(o);
		json_tokener_free(tok);
		return -EBADMSG;
	}
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	for (; end < len; end++)
		if (!strchr(" \t\r\n", msg[end])) {
			json_object_put(o);
			return -EBADMSG;
		}
	*ret = o;
	return 0;
}

/*
 * Strict (no trailing commas, comments or single-quoted values; json-c's strict mode still lets
 * single-quoted keys and NaN through, in 0.16 and 0.18 alike) and valid UTF-8. json-c 0.18's strict
 * mode rejects every byte of 0x80 and above inside strings, valid UTF-8 too (json-c issue 892: the
 * control-character test sees a signed char), so a message with such bytes is judged twice: its
 * syntax strictly on a copy whose non-ASCII bytes are all 'x' (they can only stand inside strings,
 * where 'x' is as good; outside them 'x' is an error too), and its UTF-8 and values by the lenient
 * parser on the original.
 */
int varlink_message_parse(const char *msg, size_t len, json_object **ret)
{
	const int strict = JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8;
	_cleanup_(freep) char *ascii = NULL;
	json_object *o = NULL;
	bool wide = false;
	int r;

	if (len > INT32_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < len && !wide; i++)
		wide = (unsigned char)msg[i] >= 0x80;
	if (wide) {
		ascii = malloc(len);
		if (!ascii)
			return -ENOMEM;
		for (size_t i = 0; i < len; i++)
			ascii[i] = (unsigned char)msg[i] >= 0x80 ? 'x' : msg[i];
		r = parse_whole(ascii, len, strict, &o);
		json_object_put(o);
		o = NULL;
		if (r < 0)
			return r;
	}
	r = parse_whole(msg, len, wide ? JSON_TOKENER_VALIDATE_UTF8 : strict, &o);
	if (r < 0)
		return r;
	if (!json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return -EBADMSG;
	}
	*ret = o;
	return 0;
}

static bool is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool is_alnum(char c)
{
	return is_lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* Varlink interface names: reverse domain, at least two labels, each [a-z0-9] with inner '-',
 * starting with a letter for the first label (https://varlink.org/Interface-Definition). */
bool varlink_interface_name_valid(const char *iface, size_t len)
{
	size_t labels = 0, i = 0;

	if (len == 0 || len > VARLINK_METHOD_MAX)
		return false;
	if (!(iface[0] >= 'a' && iface[0] <= 'z'))
		return false;
	while (i < len) {
		size_t st = i;

		while (i < len && (is_lower_alnum(iface[i]) || iface[i] == '-'))
			i++;
		if (i == st || iface[st] == '-' || iface[i - 1] == '-')
			return false;
		labels++;
		if (i < len) {
			if (iface[i] != '.')
				return false;
			i++;
			if (i == len)
				return false;
		}
	}
	return labels >= 2;
}

bool varlink_method_name_valid(const char *method)
{
	size_t len = strnlen(method, VARLINK_METHOD_MAX + 1);
	const char *dot;

	if (len > VARLINK_METHOD_MAX)
		return false;
	dot = memrchr(method, '.', len);
	if (!dot || !varlink_interface_name_valid(method, dot - method))
		return false;
	if (!(dot[1] >= 'A' && dot[1] <= 'Z'))
		return false;
	for (const char *c = dot + 2; *c; c++)
		if (!is_alnum(*c))
			return false;
	return true;
}

int varlink_call_parse(json_object *msg, struct varlink_call *ret, const char **ret_bad_field)
{
	struct varlink_call c = {};
	const char *bad = NULL;
	bool have_method = false;

	json_object_object_foreach (msg, k, v) {
		if (streq(k, "method")) {
			if (!json_object_is_type(v, json_type_string) ||
			    !varlink_method_name_valid(json_object_get_string(v))) {
				bad = k;
				break;
			}
			c.method = json_object_get_string(v);
			have_method = true;
		} else if (streq(k, "parameters")) {
			if (v && !json_object_is_type(v, json_type_object)) {
				bad = k;
				break;
			}
			c.parameters = v;
		} else if (streq(k, "more") || streq(k, "oneway") || streq(k, "upgrade")) {
			bool *f = k[0] == 'm' ? &c.more : k[0] == 'o' ? &c.oneway : &c.upgrade;

			if (v && !json_object_is_type(v, json_type_boolean)) {
				bad = k;
				break;
			}
			*f = v && json_object_get_boolean(v);
		} else {
			bad = k;
			break;
		}
	}
	if (!bad && !have_method)
		bad = "method";
	/* "more" and "oneway" contradict each other: no reply at all, or several. */
	if (!bad && c.more && c.oneway)
		bad = "oneway";
	if (bad) {
		if (ret_bad_field)
			*ret_bad_field = bad;
		return -EBADMSG;
	}
	*ret = c;
	return 0;
}

int varlink_reply_parse(json_object *msg, struct varlink_reply *ret)
{
	struct varlink_reply r = {};
	json_object *v;

	if (json_object_object_get_ex(msg, "parameters", &v) && v) {
		if (!json_object_is_type(v, json_type_object))
			return -EBADMSG;
		r.parameters = v;
	}
	if (json_object_object_get_ex(msg, "continues", &v) && v) {
		if (!json_object_is_type(v, json_type_boolean))
			return -EBADMSG;
		r.continues = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(msg, "error", &v) && v) {
		const char *e;

		if (!json_object_is_type(v, json_type_string))
			return -EBADMSG;
		e = json_object_get_string(v);
		/* An error name is "interface.Name", the same shape as a method's. */
		if (!varlink_method_name_valid(e))
			return -EBADMSG;
		r.error = e;
		/* An error ends the call, whatever else the message claims. */
		r.continues = false;
	}
	*ret = r;
	return 0;
}

static int build(json_object *o, char **ret, size_t *ret_size)
{
	const char *s;
	size_t len;
	char *buf;

	s = json_object_to_json_string_length(
	        o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
	if (!s)
		return -ENOMEM;
	buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, s, len + 1); /* with its NUL: the frame terminator */
	*ret = buf;
	*ret_size = len + 1;
	return 0;
}

int varlink_json_add(json_object *o, const char *k, json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, k, v) < 0) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int add_params(json_object *o, json_object *params)
{
	return varlink_json_add(o, "parameters",
	                        params ? json_object_get(params) : json_object_new_object());
}

int varlink_call_build(const char *method, json_object *params, unsigned flags, char **ret,
                       size_t *ret_size)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || varlink_json_add(o, "method", json_object_new_string(method)) < 0 ||
	    add_params(o, params) < 0)
		return -ENOMEM;
	if ((flags & VARLINK_CALL_MORE) &&
	    varlink_json_add(o, "more", json_object_new_boolean(1)) < 0)
		return -ENOMEM;
	if ((flags & VARLINK_CALL_ONEWAY) &&
	    varlink_json_add(o, "oneway", json_object_new_boolean(1)) < 0)
		return -ENOMEM;
	return build(o, ret, ret_size);
}

int varlink_reply_build(json_object *params, bool continues, char **ret, size_t *ret_size)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || add_params(o, params) < 0)
		return -ENOMEM;
	if (continues && varlink_json_add(o, "continues", json_object_new_boolean(1)) < 0)
		return -ENOMEM;
	return build(o, ret, ret_size);
}

int varlink_error_build(const char *error, json_object *params, char **ret, size_t *ret_size)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();

	if (!o || varlink_json_add(o, "error", json_object_new_string(error)) < 0 ||
	    add_params(o, params) < 0)
		return -ENOMEM;
	return build(o, ret, ret_size);
}

int varlink_error_build_string(const char *error, const char *field, const char *value, char **ret,
                               size_t *ret_size)
{
	_cleanup_(json_object_putp) json_object *p = json_object_new_object();

	if (!p || varlink_json_add(p, field, json_object_new_string(value)) < 0)
		return -ENOMEM;
	return varlink_error_build(error, p, ret, ret_size);
}

int varlink_json_int64(json_object *v, int64_t *ret)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return -EBADMSG;
	/* json-c keeps integers past INT64_MAX as uint64 and clamps get_int64(): reject those. */
	x = json_object_get_int64(v);
	if (x == INT64_MAX && json_object_get_uint64(v) != (uint64_t)INT64_MAX)
		return -EBADMSG;
	*ret = x;
	return 0;
}

static int dispatch_one(const struct varlink_field *f, json_object *v, void *base, void *userdata)
{
	void *p = (uint8_t *)base + f->offset;
	int64_t x;
	int r;

	switch (f->type) {
	case VARLINK_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return -EBADMSG;
		*(bool *)p = json_object_get_boolean(v);
		return 0;
	case VARLINK_INT64:
		return varlink_json_int64(v, p);
	case VARLINK_UINT32:
	case VARLINK_UINT16:
	case VARLINK_UINT8: {
		int64_t max = f->type == VARLINK_UINT32   ? UINT32_MAX
		              : f->type == VARLINK_UINT16 ? UINT16_MAX
		                                          : UINT8_MAX;

		r = varlink_json_int64(v, &x);
		if (r < 0)
			return r;
		if (x < 0 || x > max)
			return -EBADMSG;
		if (f->type == VARLINK_UINT32)
			*(uint32_t *)p = (uint32_t)x;
		else if (f->type == VARLINK_UINT16)
			*(uint16_t *)p = (uint16_t)x;
		else
			*(uint8_t *)p = (uint8_t)x;
		return 0;
	}
	case VARLINK_STRING: {
		const char *s;
		int len;

		if (!json_object_is_type(v, json_type_string))
			return -EBADMSG;
		s = json_object_get_string(v);
		len = json_object_get_string_len(v);
		/* An embedded NUL ("\u0000") would cut the string silently: reject it. */
		if ((size_t)len != strlen(s))
			return -EBADMSG;
		if ((size_t)len >= f->size)
			return -EMSGSIZE;
		memcpy(p, s, (size_t)len + 1);
		return 0;
	}
	case VARLINK_CUSTOM:
		return f->callback(v, p, userdata);
	}
	return -EINVAL;
}

int varlink_dispatch(json_object *obj, const struct varlink_field *table, unsigned flags,
                     void *base, void *userdata, const char **ret_bad_field)
{
	const struct varlink_field *f;
	int r;

	if (!obj || !json_object_is_type(obj, json_type_object)) {
		if (ret_bad_field)
			*ret_bad_field = NULL;
		return -EBADMSG;
	}

	if (!(flags & VARLINK_DISPATCH_ALLOW_UNKNOWN)) {
		json_object_object_foreach (obj, k, v) {
			(void)v;
			for (f = table; f->name; f++)
				if (streq(f->name, k))
					break;
			if (!f->name) {
				if (ret_bad_field)
					*ret_bad_field = k;
				return -EBADMSG;
			}
		}
	}

	for (f = table; f->name; f++) {
		json_object *v = NULL;
		bool present = json_object_object_get_ex(obj, f->name, &v);

		if (present && !v && !(f->flags & VARLINK_NULLABLE))
			r = -EBADMSG;
		else if (!v)
			r = (f->flags & VARLINK_MANDATORY) ? -EBADMSG : 0;
		else
			r = dispatch_one(f, v, base, userdata);
		if (r < 0) {
			if (ret_bad_field)
				*ret_bad_field = f->name;
			return r;
		}
	}
	return 0;
}
