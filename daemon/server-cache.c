/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* See server-cache.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "server-cache.h"
#include "util.h"
#include "varlink.h"

static int build(const struct model *m, enum server_reply kind, json_object **ret)
{
	const struct token *t;
	const struct key *k;
	const struct finding *f;
	size_t nt = model_tokens(m, &t), nk = model_keys(m, &k), nf = model_findings(m, &f);

	switch (kind) {
	case SERVER_REPLY_STATUS:
		return codec_status_to_json(model_daemon_info(m), t, nt, k, nk, f, nf, ret);
	case SERVER_REPLY_TOKENS:
		return codec_tokens_to_json(t, nt, ret);
	case SERVER_REPLY_KEYS:
		return codec_keys_to_json(k, nk, ret);
	case SERVER_REPLY_FINDINGS:
		return codec_findings_to_json(f, nf, ret);
	default:
		return -EINVAL;
	}
}

/* Where the value after `key` starts in msg, or NULL. A key's quotes are never escaped and a
 * string's always are, so the first match is the key (only DaemonInfo has these). */
static char *value_of(char *msg, const char *key)
{
	char *v = strstr(msg, key);

	return v ? v + strlen(key) : NULL;
}

/* Writes `now` over the old second in the built GetStatus reply: the only part of it that moves
 * between model changes. False when it cannot be done in place (a field missing, or the number
 * grew a digit); the caller builds anew. */
static bool patch_now(struct server_cache_entry *e, int64_t now)
{
	char iso[CODEC_TIME_MAX], old[32], num[32];
	char *s = value_of(e->msg, "\"now\":\""), *d = value_of(e->msg, "\"now_epoch\":");
	size_t ni;
	int nn, no;

	if (!s || !d || codec_format_time(now, iso, sizeof(iso)) < 0)
		return false;
	ni = strlen(iso);
	nn = snprintf(num, sizeof(num), "%" PRId64, now);
	no = snprintf(old, sizeof(old), "%" PRId64, e->now);
	if (strncmp(d, old, (size_t)no) != 0 || nn != no || strspn(d + no, "0123456789") != 0 ||
	    (size_t)(e->n - (size_t)(s - e->msg)) <= ni || s[ni] != '"' || memchr(s, '"', ni))
		return false;
	memcpy(s, iso, ni);
	memcpy(d, num, (size_t)nn);
	e->now = now;
	return true;
}

int server_cache_get(struct server_cache *c, const struct model *m, enum server_reply kind,
                     const char **ret, size_t *ret_n)
{
	struct server_cache_entry *e;
	_cleanup_(json_object_putp) json_object *p = NULL;
	char *msg = NULL;
	uint64_t gen = model_generation(m);
	/* Only GetStatus carries the clock; the others stay valid across seconds. */
	int64_t now = kind == SERVER_REPLY_STATUS ? model_daemon_info(m)->now : 0;
	size_t n;
	int r;

	if ((unsigned)kind >= SERVER_REPLY_MAX)
		return -EINVAL;
	e = &c->e[kind];
	if (e->msg && e->generation == gen && e->now == now) {
		c->hits++;
		*ret = e->msg;
		*ret_n = e->n;
		return 0;
	}
	if (e->msg && e->generation == gen && kind == SERVER_REPLY_STATUS && patch_now(e, now)) {
		c->patches++;
		*ret = e->msg;
		*ret_n = e->n;
		return 0;
	}
	r = build(m, kind, &p);
	if (r >= 0)
		r = varlink_reply_build(p, false, &msg, &n);
	if (r < 0)
		return r;
	free(e->msg);
	*e = (struct server_cache_entry){ .msg = msg, .n = n, .generation = gen, .now = now };
	c->builds++;
	*ret = e->msg;
	*ret_n = e->n;
	return 0;
}

void server_cache_done(struct server_cache *c)
{
	for (size_t i = 0; i < SERVER_REPLY_MAX; i++)
		free(c->e[i].msg);
	*c = (struct server_cache){};
}
