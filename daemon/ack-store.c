/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Acknowledged findings kept across restarts: acks.json's strict parser and its text, and the
 * store the daemon keeps them in. The file is written whole and atomically on every change (a
 * few kilobytes at most, on a user's command or when an ack is forgotten), on the loop thread.
 *
 * Does not: apply an ack to a finding (audit-ack.c), or decide when to save (the callers).
 */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ack-store.h"
#include "codec.h"
#include "fileio.h"
#include "varlink.h"

#define ACK_FORMAT_VERSION 1

static struct ack_store *current;

bool ack_id_valid(const char *id)
{
	size_t n = strnlen(id, FINDING_ID_MAX);

	if (n == 0 || n >= FINDING_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = id[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("-_.:@", c)))
			return false;
	}
	return true;
}

static const struct ack *find(const struct ack *acks, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (streq(acks[i].id, id))
			return &acks[i];
	return NULL;
}

/* One {"id": ..., "level": ...} object, nothing else in it. */
static int parse_one(json_object *o, struct ack *ret)
{
	json_object *id, *level;
	const char *s;
	int l;

	if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) != 2 ||
	    !json_object_object_get_ex(o, "id", &id) ||
	    !json_object_object_get_ex(o, "level", &level) ||
	    !json_object_is_type(id, json_type_string) ||
	    !json_object_is_type(level, json_type_string))
		return -EBADMSG;
	if ((size_t)json_object_get_string_len(id) >= sizeof(ret->id))
		return -EMSGSIZE;
	s = json_object_get_string(id);
	if (strlen(s) != (size_t)json_object_get_string_len(id) || !ack_id_valid(s))
		return -EBADMSG;
	l = level_from_string(json_object_get_string(level));
	/* An ok finding is nothing to acknowledge. */
	if (l <= LEVEL_OK)
		return -EBADMSG;
	strcpy_trunc(ret->id, sizeof(ret->id), s);
	ret->level = (enum level)l;
	return 0;
}

int ack_parse(const uint8_t *p, size_t n, struct ack *ret, size_t max)
{
	_cleanup_(json_object_putp) json_object *o = NULL;
	json_object *acks;
	size_t k;
	int r;

	r = codec_state_file(p, n, ACK_FILE_MAX, ACK_FORMAT_VERSION, "acks", &o, &acks);
	if (r < 0)
		return r;
	k = json_object_array_length(acks);
	if (k > max || k > ACKS_MAX)
		return -EMSGSIZE;
	for (size_t i = 0; i < k; i++) {
		r = parse_one(json_object_array_get_idx(acks, i), &ret[i]);
		if (r < 0)
			return r;
		if (find(ret, i, ret[i].id))
			return -EBADMSG;
	}
	return (int)k;
}

int ack_format(const struct ack *acks, size_t n, char **ret)
{
	_cleanup_(json_object_putp) json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();
	char *s;

	if (!o || !a ||
	    json_object_object_add(o, "version", json_object_new_int(ACK_FORMAT_VERSION)) < 0 ||
	    json_object_object_add(o, "acks", a) < 0) {
		json_object_put(a);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		json_object *x = json_object_new_object();

		if (!x || json_object_array_add(a, x) < 0) {
			json_object_put(x);
			return -ENOMEM;
		}
		if (varlink_json_add(x, "id", json_object_new_string(acks[i].id)) < 0 ||
		    varlink_json_add(x, "level",
		                     json_object_new_string(level_to_string(acks[i].level))) < 0)
			return -ENOMEM;
	}
	s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
	if (!s)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int ack_store_new(const char *dir, char *ret_error, size_t errsize, struct ack_store **ret)
{
	struct ack_store *s = calloc(1, sizeof(*s));
	_cleanup_(freep) uint8_t *buf = NULL;
	size_t n = 0;
	int r;

	if (!s)
		return -ENOMEM;
	ret_error[0] = 0;
	if (snprintf(s->path, sizeof(s->path), "%s/acks.json", dir) >= (int)sizeof(s->path)) {
		free(s);
		return -ENAMETOOLONG;
	}
	r = file_read_bounded(s->path, ACK_FILE_MAX, &buf, &n);
	if (r < 0 && r != -ENOENT)
		snprintf(ret_error, errsize, "%s: %s", s->path, strerror(-r));
	if (r >= 0) {
		r = ack_parse(buf, n, s->acks, ACKS_MAX);
		if (r < 0)
			snprintf(ret_error, errsize, "%s: not a keyctl acks file (%s)", s->path,
			         strerror(-r));
		s->n = r < 0 ? 0 : (size_t)r;
	}
	*ret = s;
	return 0;
}

struct ack_store *ack_store_free(struct ack_store *s)
{
	if (s && current == s)
		current = NULL;
	free(s);
	return NULL;
}

const struct ack *ack_store_find(const struct ack_store *s, const char *id)
{
	return find(s->acks, s->n, id);
}

int ack_store_add(struct ack_store *s, const char *id, enum level level)
{
	struct ack *a = (struct ack *)find(s->acks, s->n, id);

	if (!a) {
		if (s->n >= ACKS_MAX)
			return -ENOSPC;
		a = &s->acks[s->n++];
		strcpy_trunc(a->id, sizeof(a->id), id);
	}
	a->level = level;
	s->dirty = true;
	return 0;
}

int ack_store_remove(struct ack_store *s, const char *id)
{
	const struct ack *a = find(s->acks, s->n, id);
	size_t i;

	if (!a)
		return -ENOENT;
	i = (size_t)(a - s->acks);
	memmove(&s->acks[i], &s->acks[i + 1], (s->n - i - 1) * sizeof(struct ack));
	s->n--;
	s->dirty = true;
	return 0;
}

int ack_store_save(struct ack_store *s)
{
	_cleanup_(freep) char *text = NULL;
	int r;

	if (isempty(s->path))
		return 0;
	r = ack_format(s->acks, s->n, &text);
	if (r < 0)
		return r;
	r = file_write_atomic(s->path, text, strlen(text));
	if (r < 0)
		return r;
	s->dirty = false;
	return 0;
}

void ack_store_set_current(struct ack_store *s)
{
	current = s;
}

struct ack_store *ack_store_current(void)
{
	return current;
}
