/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Varlink wire rules (https://varlink.org/Method-Call): JSON objects, each terminated by a NUL
 * byte, over a stream socket. This header is the framing (bytes in, whole messages out), the
 * parsing of one message with bounds, the checks on a call and a reply, the building of calls,
 * replies and errors, and a small dispatch-table helper that type-checks JSON fields into C
 * structs the way sd_json_dispatch() does, so that a later move to sd-varlink touches one file.
 *
 * Does not: read or write sockets (client.c, daemon/server.c), know keyctl's types (codec*.c).
 */
#pragma once

#include <json-c/json.h>

/* For _cleanup_: drops our reference to a json-c object, NULL allowed. */
static inline void json_object_putp(json_object **o)
{
	if (*o)
		json_object_put(*o);
}
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest message a peer may send us, excluding its NUL. Calls are small; a bigger one is
 * an attack or a bug. */
#define VARLINK_MESSAGE_MAX (64u * 1024u)
/* Replies carry the whole state (thousands of keys); clients accept up to this. */
#define VARLINK_REPLY_MAX (16u * 1024u * 1024u)
/* JSON nesting bound for parsing; keyctl's deepest reply is 6 levels. */
#define VARLINK_DEPTH_MAX 32
/* Longest "interface.Method" we look at; the spec bounds nothing, we do. */
#define VARLINK_METHOD_MAX 256

#define VARLINK_INTERFACE "io.keyctl"
#define VARLINK_SERVICE_INTERFACE "org.varlink.service"

/* Standard errors (org.varlink.service interface, https://varlink.org/Service). */
#define VARLINK_ERROR_INTERFACE_NOT_FOUND "org.varlink.service.InterfaceNotFound"
#define VARLINK_ERROR_METHOD_NOT_FOUND "org.varlink.service.MethodNotFound"
#define VARLINK_ERROR_METHOD_NOT_IMPLEMENTED "org.varlink.service.MethodNotImplemented"
#define VARLINK_ERROR_INVALID_PARAMETER "org.varlink.service.InvalidParameter"
#define VARLINK_ERROR_EXPECTED_MORE "org.varlink.service.ExpectedMore"
/* keyctl's own errors, declared in io.keyctl.varlink. */
#define KEYCTL_ERROR_NOT_AVAILABLE "io.keyctl.NotAvailable"
#define KEYCTL_ERROR_RELOAD_FAILED "io.keyctl.ReloadFailed"
#define KEYCTL_ERROR_MESSAGE_TOO_LARGE "io.keyctl.MessageTooLarge"
#define KEYCTL_ERROR_TOO_MANY_CLIENTS "io.keyctl.TooManyClients"
#define KEYCTL_ERROR_TOO_MANY_WATCHERS "io.keyctl.TooManyWatchers"

/* io.keyctl.varlink, embedded at build time (the text GetInterfaceDescription returns). */
extern const char varlink_keyctl_interface[];

/*
 * Framing. The buffer holds complete messages not yet taken and at most one incomplete tail.
 * Feed it what read() returned, then take messages with varlink_buffer_next() until it says 0.
 */
struct varlink_buffer {
	char *data;
	size_t alloc; /* bytes allocated at data */
	size_t start; /* first byte not yet taken */
	size_t end; /* one past the last byte stored */
	size_t scanned; /* bytes from start known to contain no NUL */
	size_t open; /* bytes stored after the last NUL: the message still open */
	size_t max; /* largest message accepted, excluding its NUL */
};

/* max: VARLINK_MESSAGE_MAX for a service, VARLINK_REPLY_MAX for a client. Allocates nothing. */
void varlink_buffer_init(struct varlink_buffer *b, size_t max);
void varlink_buffer_done(struct varlink_buffer *b);
/* Appends n bytes. Returns 0, -EMSGSIZE when a message (complete or still open) would exceed
 * max (nothing of p is stored then, and the stream is beyond repair), or -ENOMEM. */
int varlink_buffer_feed(struct varlink_buffer *b, const void *p, size_t n);
/* Returns 1 with the next message (NUL-terminated, pointer valid until the next feed or next
 * call; *ret_len excludes the NUL), or 0 when no complete message is buffered. */
int varlink_buffer_next(struct varlink_buffer *b, const char **ret_msg, size_t *ret_len);
/* Bytes of an incomplete message waiting for its NUL (for idle timeouts). */
size_t varlink_buffer_pending(const struct varlink_buffer *b);

/* Parses one message (len bytes, no NUL inside) into a JSON object. -EBADMSG for invalid JSON,
 * nesting deeper than VARLINK_DEPTH_MAX, anything after the value but whitespace, or a top
 * level that is not an object; -ENOMEM. */
int varlink_message_parse(const char *msg, size_t len, json_object **ret);

/* A call, as received. Pointers borrow from the parsed message. */
struct varlink_call {
	const char *method; /* "io.keyctl.GetStatus": interface, '.', method name */
	json_object *parameters; /* an object; NULL when the call had none */
	bool more, oneway, upgrade;
};

/*
 * Checks a call message: "method" a string naming "interface.Method" (interface: reverse domain
 * of [a-z0-9-] labels, method: [A-Z][A-Za-z0-9]*), "parameters" an object or null or absent,
 * "more"/"oneway"/"upgrade" booleans. Unknown top-level fields are rejected, as systemd's
 * sd-varlink does: the call frame is fixed by the spec and a stray field means a broken peer.
 * Returns 0, or -EBADMSG with the offending field in *ret_bad_field (may be NULL).
 */
int varlink_call_parse(json_object *msg, struct varlink_call *ret, const char **ret_bad_field);

/* A reply, as received by a client. Pointers borrow from the parsed message. */
struct varlink_reply {
	json_object *parameters; /* an object; NULL when absent */
	const char *error; /* NULL for a reply, the error name for an error */
	bool continues;
};
/* Checks a reply message. Unknown top-level fields are ignored (forward compatibility for
 * clients). Returns 0 or -EBADMSG. */
int varlink_reply_parse(json_object *msg, struct varlink_reply *ret);

/* Splits "io.keyctl.GetStatus" at its last dot; true when both parts are well formed. */
bool varlink_method_name_valid(const char *method);
bool varlink_interface_name_valid(const char *iface, size_t len);

/*
 * Building messages. Each returns a malloc'd buffer holding the JSON text and its NUL
 * terminator, and in *ret_size the number of bytes to send, the NUL included. params is borrowed
 * (never consumed) and may be NULL for an empty object.
 */
#define VARLINK_CALL_MORE 0x1u
#define VARLINK_CALL_ONEWAY 0x2u
int varlink_call_build(const char *method, json_object *params, unsigned flags, char **ret,
                       size_t *ret_size);
int varlink_reply_build(json_object *params, bool continues, char **ret, size_t *ret_size);
int varlink_error_build(const char *error, json_object *params, char **ret, size_t *ret_size);
/* An error whose parameters are one string field: {"parameter": "name"}, {"reason": "..."}. */
int varlink_error_build_string(const char *error, const char *field, const char *value, char **ret,
                               size_t *ret_size);

/*
 * Dispatch tables: one entry per field of a JSON object, checked and stored into a C struct at
 * base + offset. A table ends with an entry whose name is NULL.
 */
enum varlink_type {
	VARLINK_BOOL, /* bool */
	VARLINK_INT64, /* int64_t; any JSON integer in range */
	VARLINK_UINT32, /* uint32_t (also unsigned) */
	VARLINK_UINT16, /* uint16_t */
	VARLINK_UINT8, /* uint8_t */
	VARLINK_STRING, /* char[size]; longer strings are -EMSGSIZE, never cut */
	VARLINK_CUSTOM, /* callback(v, base + offset, userdata) checks and stores */
};

#define VARLINK_MANDATORY 0x1u /* absent is -EBADMSG */
#define VARLINK_NULLABLE 0x2u /* JSON null accepted and treated as absent */

typedef int (*varlink_dispatch_fn)(json_object *v, void *field, void *userdata);

struct varlink_field {
	const char *name;
	enum varlink_type type;
	unsigned flags;
	size_t offset;
	size_t size; /* VARLINK_STRING: the buffer's size */
	varlink_dispatch_fn callback;
};

#define VARLINK_DISPATCH_ALLOW_UNKNOWN 0x1u /* ignore fields the table does not name */

/*
 * Checks every field of obj against table and stores it into base. Fields absent from obj are
 * left untouched (zero them first). Returns 0; -EBADMSG for a wrong type, a missing mandatory
 * field or (without ALLOW_UNKNOWN) an unknown one; -EMSGSIZE for an overlong string; or what a
 * callback returned. *ret_bad_field (may be NULL) names the field at fault.
 */
int varlink_dispatch(json_object *obj, const struct varlink_field *table, unsigned flags,
                     void *base, void *userdata, const char **ret_bad_field);

/* A JSON integer as int64_t: -EBADMSG for another type or a value past INT64_MAX. */
int varlink_json_int64(json_object *v, int64_t *ret);
/* Adds v to o as k and takes v, also on failure. Returns 0, or -ENOMEM, also for a NULL v, so
 * that a json_object_new_*() can be passed straight in. */
int varlink_json_add(json_object *o, const char *k, json_object *v);
