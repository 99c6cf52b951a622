/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The server's methods: io.keyctl (GetStatus, GetTokens, GetKeys, GetFindings, Reload,
 * CheckUpstream, Ack, Unack, Watch)
 * and org.varlink.service (GetInfo, GetInterfaceDescription), answered from the model's getters,
 * and the dispatch of one parsed call to them (client_process).
 *
 * Does not: read or write sockets (server.c queues what these build), or change the model: Ack
 * and Unack change the acks (ack-store.h) and have the model derive its findings again.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ack-store.h"
#include "codec.h"
#include "config-build.h"
#include "log.h"
#include "server-internal.h"
#include "server.h"
#include "varlink.h"

/* org.varlink.service, as https://varlink.org/Service defines it, for GetInterfaceDescription. */
static const char service_interface[] =
        "# The Varlink Service Interface is provided by every varlink service. It\n"
        "# describes the service and the interfaces it implements.\n"
        "interface org.varlink.service\n"
        "\n"
        "# Get a list of all the interfaces a service provides and information\n"
        "# about the implementation.\n"
        "method GetInfo() -> (\n"
        "\tvendor: string,\n"
        "\tproduct: string,\n"
        "\tversion: string,\n"
        "\turl: string,\n"
        "\tinterfaces: []string\n"
        ")\n"
        "\n"
        "# Get the description of an interface that is implemented by this service.\n"
        "method GetInterfaceDescription(interface: string) -> (description: string)\n"
        "\n"
        "# The requested interface was not found.\n"
        "error InterfaceNotFound (interface: string)\n"
        "\n"
        "# The requested method was not found\n"
        "error MethodNotFound (method: string)\n"
        "\n"
        "# The interface defines the requested method, but the service does not\n"
        "# implement it.\n"
        "error MethodNotImplemented (method: string)\n"
        "\n"
        "# One of the passed parameters is invalid.\n"
        "error InvalidParameter (parameter: string)\n"
        "\n"
        "# Client is denied access\n"
        "error PermissionDenied ()\n"
        "\n"
        "# Method is expected to be called with 'more' set to true, but wasn't\n"
        "error ExpectedMore ()\n";

static int reply_json(struct client *c, const struct varlink_call *call, int r, json_object *p)
{
	_cleanup_(json_object_putp) json_object *params = p;

	if (r < 0)
		return r;
	if (call->oneway)
		return 0;
	return client_reply(c, params, false);
}

/* The read methods answer from the reply cache (server-cache.h). */
static int reply_cached(struct client *c, const struct varlink_call *call, enum server_reply kind)
{
	const char *msg;
	size_t n;
	int r;

	if (call->oneway)
		return 0;
	r = server_cache_get(&c->server->cache, c->server->model, kind, &msg, &n);
	if (r < 0)
		return r;
	return client_send(c, msg, n);
}

static int method_get_status(struct client *c, const struct varlink_call *call)
{
	return reply_cached(c, call, SERVER_REPLY_STATUS);
}

static int method_get_tokens(struct client *c, const struct varlink_call *call)
{
	return reply_cached(c, call, SERVER_REPLY_TOKENS);
}

static int method_get_keys(struct client *c, const struct varlink_call *call)
{
	return reply_cached(c, call, SERVER_REPLY_KEYS);
}

static int method_get_findings(struct client *c, const struct varlink_call *call)
{
	return reply_cached(c, call, SERVER_REPLY_FINDINGS);
}

struct reload_param {
	bool full;
};

static const struct varlink_field reload_param_table[] = {
	{ "full", VARLINK_BOOL, VARLINK_NULLABLE, offsetof(struct reload_param, full), sizeof(bool),
	  NULL },
	{},
};

/* The answer waits for the reload's end (server_reload_done()): main.c runs one reload for
 * every call that comes within a second of the last one. */
static int method_reload(struct client *c, const struct varlink_call *call)
{
	struct server *srv = c->server;
	struct reload_param rp = {};
	const char *bad = NULL;
	int r;

	if (call->parameters &&
	    varlink_dispatch(call->parameters, reload_param_table, 0, &rp, NULL, &bad) < 0)
		return call->oneway ? 0
		                    : client_error(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter",
		                                   bad ? bad : "full");
	if (!srv->reload)
		return call->oneway ? 0
		                    : client_error(c, KEYCTL_ERROR_NOT_AVAILABLE, "reason",
		                                   "reloading is not supported by this daemon");
	r = srv->reload(srv->reload_userdata, rp.full);
	if (call->oneway)
		return 0;
	if (r < 0)
		return client_error(c, KEYCTL_ERROR_RELOAD_FAILED, "reason", strerror(-r));
	c->reload_waiting++;
	return 0;
}

/* The answer waits for the check's end (server_upstream_done()); the loop goes on meanwhile. */
static int method_check_upstream(struct client *c, const struct varlink_call *call)
{
	struct server *srv = c->server;
	char reason[ERROR_TEXT_MAX] = "";
	int r;

	if (!srv->upstream)
		return call->oneway ? 0
		                    : client_error(c, KEYCTL_ERROR_NOT_AVAILABLE, "reason",
		                                   "upstream checks are off ([upstream] check)");
	r = srv->upstream(srv->upstream_userdata, reason, sizeof(reason));
	if (call->oneway)
		return 0;
	if (r < 0)
		return client_error(c, KEYCTL_ERROR_NOT_AVAILABLE, "reason",
		                    isempty(reason) ? strerror(-r) : reason);
	c->upstream_waiting = true;
	return 0;
}

struct ack_param {
	char id[FINDING_ID_MAX];
};

static const struct varlink_field ack_param_table[] = {
	{ "id", VARLINK_STRING, VARLINK_MANDATORY, offsetof(struct ack_param, id),
	  sizeof(((struct ack_param *)0)->id), NULL },
	{},
};

/* The level of the finding with id among the model's, or -ENOENT. */
static int finding_level(const struct model *m, const char *id)
{
	const struct finding *f;
	size_t n = model_findings(m, &f);
	char fid[FINDING_ID_MAX];
	int level = -ENOENT;

	for (size_t i = 0; i < n; i++) {
		finding_id(&f[i], fid, sizeof(fid));
		if (streq(fid, id))
			level = MAX(level, (int)f[i].level);
	}
	return level;
}

/* Saves the acks after a change, or undoes it (undo) when they cannot be saved: an ack that would
 * not survive a restart is refused. Then the findings are derived again with it. */
static int acks_commit(struct client *c, const struct varlink_call *call, struct ack_store *s,
                       void (*undo)(struct ack_store *s, const struct ack *old),
                       const struct ack *old)
{
	int r = ack_store_save(s);

	if (r < 0) {
		undo(s, old);
		log_warning_errno(r, "Failed to save %s: %m", s->path);
		return call->oneway ? 0
		                    : client_error(c, KEYCTL_ERROR_NOT_AVAILABLE, "reason",
		                                   strerror(-r));
	}
	r = model_update(c->server->model);
	if (r < 0)
		log_warning_errno(r, "Failed to apply the acknowledgements, ignoring: %m");
	return call->oneway ? 0 : client_reply(c, NULL, false);
}

static void undo_add(struct ack_store *s, const struct ack *old)
{
	(void)ack_store_remove(s, old->id);
}

static void undo_remove(struct ack_store *s, const struct ack *old)
{
	(void)ack_store_add(s, old->id, old->level);
}

/* Ack and Unack's id, checked. Returns 1 with the store to change, else the call is answered
 * already: that answer's 0 or -errno. */
static int ack_call_begin(struct client *c, const struct varlink_call *call, struct ack_param *ap,
                          struct ack_store **ret)
{
	if (!call->parameters ||
	    varlink_dispatch(call->parameters, ack_param_table, 0, ap, NULL, NULL) < 0 ||
	    !ack_id_valid(ap->id))
		return call->oneway ? 0
		                    : client_error(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter",
		                                   "id");
	*ret = ack_store_current();
	if (!*ret)
		return call->oneway ? 0
		                    : client_error(c, KEYCTL_ERROR_NOT_AVAILABLE, "reason",
		                                   "acknowledgements are not kept: keyctld has no "
		                                   "state directory");
	return 1;
}

static int method_ack(struct client *c, const struct varlink_call *call)
{
	struct ack_param ap = {};
	struct ack_store *s = NULL;
	struct ack old = {};
	int level, r;

	r = ack_call_begin(c, call, &ap, &s);
	if (r <= 0)
		return r;
	/* Acknowledged already: its level in the model is ok now, and the ack stands. */
	if (ack_store_find(s, ap.id))
		return call->oneway ? 0 : client_reply(c, NULL, false);
	level = finding_level(c->server->model, ap.id);
	if (level < 0)
		return call->oneway ? 0
		                    : client_error(c, KEYCTL_ERROR_NO_SUCH_FINDING, "id", ap.id);
	if (level == LEVEL_OK)
		level = LEVEL_NOTICE;
	r = ack_store_add(s, ap.id, (enum level)level);
	if (r == -ENOSPC)
		return call->oneway ? 0 : client_error_max(c, KEYCTL_ERROR_TOO_MANY_ACKS, ACKS_MAX);
	if (r < 0)
		return r;
	strcpy_trunc(old.id, sizeof(old.id), ap.id);
	return acks_commit(c, call, s, undo_add, &old);
}

static int method_unack(struct client *c, const struct varlink_call *call)
{
	struct ack_param ap = {};
	struct ack_store *s = NULL;
	const struct ack *a;
	struct ack old;
	int r;

	r = ack_call_begin(c, call, &ap, &s);
	if (r <= 0)
		return r;
	a = ack_store_find(s, ap.id);
	if (!a)
		return call->oneway ? 0
		                    : client_error(c, KEYCTL_ERROR_NO_SUCH_FINDING, "id", ap.id);
	old = *a;
	r = ack_store_remove(s, ap.id);
	if (r < 0)
		return r;
	return acks_commit(c, call, s, undo_remove, &old);
}

static int method_watch(struct client *c, const struct varlink_call *call)
{
	const struct model *m = c->server->model;
	const struct token *t;
	const struct key *k;
	const struct finding *f;
	size_t nt, nk, nf;
	_cleanup_(json_object_putp) json_object *p = NULL;
	int r;

	if (!call->more)
		return call->oneway ? 0 : client_error(c, VARLINK_ERROR_EXPECTED_MORE, NULL, NULL);
	/* Refused, the connection stays an ordinary one: it may retry later, or ask something
	 * else. A watcher that does not read its events gives its slot up first. */
	if (c->server->n_watching >= c->server->max_watchers && !server_evict_watcher(c->server))
		return call->oneway ? 0
		                    : client_error_max(c, KEYCTL_ERROR_TOO_MANY_WATCHERS,
		                                       c->server->max_watchers);
	nt = model_tokens(m, &t);
	nk = model_keys(m, &k);
	nf = model_findings(m, &f);
	r = codec_event_state_to_json(model_daemon_info(m), t, nt, k, nk, f, nf, &p);
	if (r < 0)
		return r;
	client_watch_begin(c);
	return client_reply(c, p, true);
}

static int method_get_info(struct client *c, const struct varlink_call *call)
{
	_cleanup_(json_object_putp) json_object *p = json_object_new_object();
	json_object *a = json_object_new_array();

	if (!p || !a || json_object_object_add(p, "interfaces", a) < 0) {
		json_object_put(a);
		return -ENOMEM;
	}
	if (json_object_array_add(a, json_object_new_string(VARLINK_INTERFACE)) < 0 ||
	    json_object_array_add(a, json_object_new_string(VARLINK_SERVICE_INTERFACE)) < 0 ||
	    json_object_object_add(p, "vendor", json_object_new_string("keyctl")) < 0 ||
	    json_object_object_add(p, "product", json_object_new_string("keyctld")) < 0 ||
	    json_object_object_add(p, "version", json_object_new_string(PACKAGE_VERSION)) < 0 ||
	    json_object_object_add(p, "url", json_object_new_string(SERVER_URL)) < 0)
		return -ENOMEM;
	return reply_json(c, call, 0, TAKE_PTR(p));
}

struct iface_param {
	char interface[VARLINK_METHOD_MAX + 1];
};

static const struct varlink_field iface_param_table[] = {
	{ "interface", VARLINK_STRING, VARLINK_MANDATORY, offsetof(struct iface_param, interface),
	  sizeof(((struct iface_param *)0)->interface), NULL },
	{},
};

static int method_get_interface_description(struct client *c, const struct varlink_call *call)
{
	struct iface_param ip = {};
	const char *text;
	json_object *p;

	if (varlink_dispatch(call->parameters, iface_param_table, 0, &ip, NULL, NULL) < 0)
		return call->oneway ? 0
		                    : client_error(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter",
		                                   "interface");
	if (streq(ip.interface, VARLINK_INTERFACE))
		text = varlink_keyctl_interface;
	else if (streq(ip.interface, VARLINK_SERVICE_INTERFACE))
		text = service_interface;
	else
		return call->oneway ? 0
		                    : client_error(c, VARLINK_ERROR_INTERFACE_NOT_FOUND,
		                                   "interface", ip.interface);
	p = json_object_new_object();
	if (!p || json_object_object_add(p, "description", json_object_new_string(text)) < 0) {
		json_object_put(p);
		return -ENOMEM;
	}
	return reply_json(c, call, 0, p);
}

struct method {
	const char *name;
	int (*fn)(struct client *c, const struct varlink_call *call);
	bool takes_parameters; /* checks them itself; the others take none */
	bool waits_for_start; /* answers from the model: parked until server_release() */
};

static const struct method methods[] = {
	{ "io.keyctl.GetStatus", method_get_status, false, true },
	{ "io.keyctl.GetTokens", method_get_tokens, false, true },
	{ "io.keyctl.GetKeys", method_get_keys, false, true },
	{ "io.keyctl.GetFindings", method_get_findings, false, true },
	{ "io.keyctl.Reload", method_reload, true, true },
	{ "io.keyctl.CheckUpstream", method_check_upstream, false, true },
	{ "io.keyctl.Ack", method_ack, true, true },
	{ "io.keyctl.Unack", method_unack, true, true },
	{ "io.keyctl.Watch", method_watch, false, true },
	{ "org.varlink.service.GetInfo", method_get_info, false, false },
	{ "org.varlink.service.GetInterfaceDescription", method_get_interface_description, true,
	  false },
	{},
};

static bool interface_is(const char *method, size_t len, const char *interface)
{
	return strlen(interface) == len && strncmp(method, interface, len) == 0;
}

static const struct varlink_field no_params[] = { {} };

/* An io.keyctl or org.varlink.service call of no method we have, or of another interface. */
static int reply_unknown(struct client *c, const struct varlink_call *call)
{
	/* varlink_call_parse() checked the name: it has a dot. The interface is all before the
	 * last one, compared whole ("io.Foo" is not a method of io.keyctl). */
	const char *dot = strrchr(call->method, '.');
	size_t il = (size_t)(dot - call->method);

	if (call->oneway)
		return 0;
	if (!interface_is(call->method, il, VARLINK_INTERFACE) &&
	    !interface_is(call->method, il, VARLINK_SERVICE_INTERFACE)) {
		char iface[VARLINK_METHOD_MAX + 1];

		strcpy_trunc(iface, MIN(sizeof(iface), il + 1), call->method);
		return client_error(c, VARLINK_ERROR_INTERFACE_NOT_FOUND, "interface", iface);
	}
	return client_error(c, VARLINK_ERROR_METHOD_NOT_FOUND, "method", call->method);
}

/* Keeps the message (len bytes) for later; the connection is not read until it is handled. */
static int client_park(struct client *c, const char *msg, size_t len)
{
	c->parked = malloc(len);
	if (!c->parked)
		return -ENOMEM;
	memcpy(c->parked, msg, len);
	c->parked_len = len;
	return 0;
}

/* Handles one message. Returns 0, or -errno when the client must be closed now. */
int client_process(struct client *c, const char *msg, size_t len)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	struct varlink_call call;
	const char *bad = NULL;
	const struct method *m;
	bool parsed;
	int r;

	/* A watching connection is a one-way street: Varlink's "more" call owns it until the end.
	 */
	if (c->watching)
		return client_fail(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter", "method");

	r = varlink_message_parse(msg, len, &o);
	if (r == -ENOMEM)
		return r;
	parsed = r >= 0 && varlink_call_parse(o, &call, &bad) >= 0;
	/* Behind a Reload every answer waits for the Reload's (replies go out in order); another
	 * Reload joins it. */
	if (c->reload_waiting > 0 && (!parsed || !streq(call.method, "io.keyctl.Reload")))
		return client_park(c, msg, len);
	if (r < 0) {
		log_debug("Client sent a message that is not a JSON object, closing");
		return client_fail(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter", "method");
	}
	if (!parsed) {
		log_debug("Client sent an invalid call (field '%s'), closing", bad);
		return client_fail(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter", bad);
	}
	if (call.upgrade)
		return call.oneway ? 0
		                   : client_error(c, VARLINK_ERROR_INVALID_PARAMETER, "parameter",
		                                  "upgrade");

	for (m = methods; m->name; m++)
		if (streq(m->name, call.method))
			break;
	if (!m->name)
		return reply_unknown(c, &call);
	if (m->waits_for_start && c->server->held)
		return client_park(c, msg, len);
	if (!m->takes_parameters && call.parameters) {
		bad = NULL;
		if (varlink_dispatch(call.parameters, no_params, 0, NULL, NULL, &bad) < 0)
			return call.oneway ? 0
			                   : client_error(c, VARLINK_ERROR_INVALID_PARAMETER,
			                                  "parameter", bad ? bad : "parameters");
	}
	return m->fn(c, &call);
}
