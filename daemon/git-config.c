/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * git's global configuration: a pure parser of its ini-like syntax (git-config(1), "Syntax"),
 * the paths git reads, and the signing key it names. See git-config.h for what is left out.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fileio.h"
#include "git-config.h"
#include "util.h"

/* Longer section and variable names are valid but never ours: kept apart by `long`. */
#define NAME_MAX_LEN 32

struct cursor {
	const uint8_t *p;
	size_t left;
};

struct name {
	char s[NAME_MAX_LEN + 1];
	size_t len;
	bool overlong;
};

static int peek(const struct cursor *c)
{
	return c->left > 0 ? c->p[0] : -1;
}

static int take(struct cursor *c)
{
	int ch = peek(c);

	if (ch >= 0) {
		c->p++;
		c->left--;
	}
	/* git reads "\r\n" as "\n". */
	if (ch == '\r' && peek(c) == '\n') {
		c->p++;
		c->left--;
		ch = '\n';
	}
	return ch;
}

static void skip_blanks(struct cursor *c)
{
	while (peek(c) == ' ' || peek(c) == '\t' ||
	       (peek(c) == '\r' && c->left > 1 && c->p[1] != '\n'))
		take(c);
}

static void skip_line(struct cursor *c)
{
	int ch;

	do
		ch = take(c);
	while (ch >= 0 && ch != '\n');
}

static void name_add(struct name *n, int ch)
{
	if (n->len >= NAME_MAX_LEN) {
		n->overlong = true;
		return;
	}
	n->s[n->len++] = (char)tolower(ch);
	n->s[n->len] = 0;
}

static bool name_is(const struct name *n, const char *s)
{
	return !n->overlong && strcasecmp(n->s, s) == 0;
}

/* "[name]" or "[name \"sub\"]": the cursor is on '['. *ret_sub: a subsection was given. */
static int parse_header(struct cursor *c, struct name *ret, bool *ret_sub)
{
	int ch;

	memset(ret, 0, sizeof(*ret));
	*ret_sub = false;
	take(c);
	while ((ch = peek(c)) >= 0 && (isalnum(ch) || ch == '-' || ch == '.'))
		name_add(ret, take(c));
	if (ret->len == 0 && !ret->overlong)
		return -EBADMSG;
	if (ch == ' ' || ch == '\t') {
		skip_blanks(c);
		if (take(c) != '"')
			return -EBADMSG;
		for (;;) {
			ch = take(c);
			if (ch < 0 || ch == '\n')
				return -EBADMSG;
			if (ch == '"')
				break;
			if (ch == '\\' && ((ch = take(c)) < 0 || ch == '\n'))
				return -EBADMSG;
		}
		*ret_sub = true;
	}
	return take(c) == ']' ? 0 : -EBADMSG;
}

/* Appends ch to buf (when given) at *len, counting either way. */
static int value_add(char *buf, size_t size, size_t *len, char ch)
{
	if (buf) {
		if (*len + 1 >= size)
			return -EMSGSIZE;
		buf[*len] = ch;
		buf[*len + 1] = 0;
	}
	(*len)++;
	return 0;
}

static int escape(int ch)
{
	switch (ch) {
	case 't':
		return '\t';
	case 'b':
		return '\b';
	case 'n':
		return '\n';
	case '\\':
	case '"':
		return ch;
	default:
		return -1;
	}
}

/* A value after '=', up to and including its end of line, as git's parse_value() reads it:
 * blanks before it dropped, blanks after it (outside quotes) dropped, blanks inside kept. */
static int parse_value(struct cursor *c, char *buf, size_t size)
{
	size_t len = 0, spaces = 0;
	bool quote = false, comment = false;
	int ch, r;

	if (buf)
		buf[0] = 0;
	for (;;) {
		ch = take(c);
		if (ch < 0 || ch == '\n')
			return quote ? -EBADMSG : 0;
		if (comment)
			continue;
		if (!quote && (ch == ' ' || ch == '\t' || ch == '\r')) {
			spaces += len > 0;
			continue;
		}
		if (!quote && (ch == '#' || ch == ';')) {
			comment = true;
			continue;
		}
		for (; spaces > 0; spaces--)
			if ((r = value_add(buf, size, &len, ' ')) < 0)
				return r;
		if (ch == '"') {
			quote = !quote;
			continue;
		}
		if (ch == '\\') {
			ch = take(c);
			if (ch == '\n')
				continue; /* the value goes on on the next line */
			if ((ch = escape(ch)) < 0)
				return -EBADMSG;
		}
		if ((r = value_add(buf, size, &len, (char)ch)) < 0)
			return r;
	}
}

/* What follows a variable's name, up to and including its end of line: " = value", or nothing
 * (a bare name is boolean true, "" here). buf NULL: check only. */
static int parse_assignment(struct cursor *c, char *buf, size_t size)
{
	int ch;

	skip_blanks(c);
	ch = peek(c);
	if (ch < 0 || ch == '\n' || ch == '\r' || ch == '#' || ch == ';') {
		skip_line(c);
		if (buf)
			buf[0] = 0;
		return 0;
	}
	if (ch != '=')
		return -EBADMSG;
	take(c);
	return parse_value(c, buf, size);
}

/* One line's item at the cursor (past blanks): 1 and the variable's value in buf when it is
 * section.name, else 0; the section in *sec and *sub is updated on a header. */
static int parse_item(struct cursor *c, struct name *sec, bool *sub, bool *in_section,
                      const char *section, const char *name, char *buf, size_t size)
{
	struct name var = { .len = 0 };
	int ch = peek(c), r;
	bool want;

	if (ch == '\n' || ch == '\r' || ch == '#' || ch == ';') {
		skip_line(c);
		return 0;
	}
	if (ch == '[') {
		*in_section = true;
		return parse_header(c, sec, sub);
	}
	if (!isalpha(ch) || !*in_section)
		return -EBADMSG;
	while ((ch = peek(c)) >= 0 && (isalnum(ch) || ch == '-'))
		name_add(&var, take(c));
	want = !*sub && name_is(sec, section) && name_is(&var, name);
	r = parse_assignment(c, want ? buf : NULL, size);
	if (r < 0)
		return r;
	return want;
}

int git_config_get(const uint8_t *p, size_t n, const char *section, const char *name, char *buf,
                   size_t size)
{
	struct cursor c = { .p = p, .left = n };
	struct name sec = { .len = 0 };
	bool in_section = false, sub = false, found = false;
	_cleanup_(freep) char *tmp = NULL;
	int r;

	if (size == 0)
		return -EMSGSIZE;
	buf[0] = 0;
	if (n > 0 && memchr(p, 0, n))
		return -EBADMSG;
	/* The last value wins, and a later line may still make the file invalid: copy to tmp. */
	tmp = malloc(size);
	if (!tmp)
		return -ENOMEM;
	tmp[0] = 0;
	if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0) {
		c.p += 3;
		c.left -= 3;
	}
	for (;;) {
		skip_blanks(&c);
		if (c.left == 0)
			break;
		r = parse_item(&c, &sec, &sub, &in_section, section, name, tmp, size);
		if (r < 0) {
			buf[0] = 0; /* ret_ values only on success */
			return r;
		}
		if (r > 0) {
			memcpy(buf, tmp, strlen(tmp) + 1);
			found = true;
		}
	}
	return found;
}

int git_config_paths(char paths[static GIT_CONFIG_PATHS_MAX][PATH_MAX])
{
	const char *global = getenv("GIT_CONFIG_GLOBAL");
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	int n = 0;

	if (global)
		return strcpy_bounded(paths[0], PATH_MAX, global) < 0 ? -ENAMETOOLONG : 1;
	if (isempty(home))
		return -ENOENT;
	/* git reads the XDG file first, so ~/.gitconfig wins where both set a variable. */
	if (!isempty(xdg) && snprintf(paths[n], PATH_MAX, "%s/git/config", xdg) < PATH_MAX)
		n++;
	else if (isempty(xdg) &&
	         snprintf(paths[n], PATH_MAX, "%s/.config/git/config", home) < PATH_MAX)
		n++;
	if (snprintf(paths[n], PATH_MAX, "%s/.gitconfig", home) < PATH_MAX)
		n++;
	return n;
}

/* What git's global files say about signing; each field stays as it was when a file sets none,
 * so that reading the files in order leaves the values git uses. */
struct git_signing {
	char key[GIT_SIGNING_KEY_MAX], format[16], commit_sign[16], tag_sign[16];
	char user_name[GIT_SIGNING_KEY_MAX], user_email[GIT_SIGNING_KEY_MAX];
	char committer_name[GIT_SIGNING_KEY_MAX], committer_email[GIT_SIGNING_KEY_MAX];
	bool set[8]; /* by git_fields' index: some file sets it */
};

#define FIELD(f) offsetof(struct git_signing, f), sizeof(((struct git_signing *)0)->f)
static const struct {
	const char *section, *name;
	size_t offset, size;
} git_fields[] = {
	{ "user", "signingkey", FIELD(key) },
	{ "gpg", "format", FIELD(format) },
	{ "commit", "gpgsign", FIELD(commit_sign) },
	{ "tag", "gpgsign", FIELD(tag_sign) },
	{ "user", "name", FIELD(user_name) },
	{ "user", "email", FIELD(user_email) },
	{ "committer", "name", FIELD(committer_name) },
	{ "committer", "email", FIELD(committer_email) },
};

static int read_one(const char *path, struct git_signing *g)
{
	_cleanup_(freep) uint8_t *data = NULL;
	size_t n = 0;
	int r;

	r = file_read_bounded(path, GIT_CONFIG_MAX, &data, &n);
	if (r == -ENOENT || r == -ENOTDIR)
		return 0;
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(git_fields); i++) {
		char v[GIT_SIGNING_KEY_MAX], *dst = (char *)g + git_fields[i].offset;

		r = git_config_get(data, n, git_fields[i].section, git_fields[i].name, v,
		                   sizeof(v));
		/* A value too long to be one we know (a format, a boolean) is none we know. */
		if (r == -EMSGSIZE)
			r = 1, strcpy(v, "?");
		if (r < 0)
			return r;
		if (r > 0 && strcpy_bounded(dst, git_fields[i].size, v) < 0)
			strcpy(dst, "?");
		g->set[i] = g->set[i] || r > 0;
	}
	return 0;
}

/* git_config_bool(): true, yes, on, a non-zero number, or a bare name (""); unset is false. */
static bool git_bool(const char *v, bool unset)
{
	char *end;

	if (unset)
		return false;
	if (isempty(v) || strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 ||
	    strcasecmp(v, "on") == 0)
		return true;
	return strtol(v, &end, 10) != 0 && *end == 0;
}

int git_config_signing(const char *const *paths, size_t n_paths, char *buf, size_t size)
{
	struct git_signing g = {};
	const char *name, *email;
	int r;

	_Static_assert(ELEMENTSOF(git_fields) == ELEMENTSOF(g.set), "a flag per field");
	buf[0] = 0;
	for (size_t i = 0; i < n_paths; i++) {
		r = read_one(paths[i], &g);
		if (r < 0)
			return r;
	}
	if (!isempty(g.format) && !streq(g.format, "openpgp"))
		return 0;
	if (!isempty(g.key))
		return strcpy_bounded(buf, size, g.key) < 0 ? -EMSGSIZE : 1;
	if (!git_bool(g.commit_sign, !g.set[2]) && !git_bool(g.tag_sign, !g.set[3]))
		return 0;
	/* git then passes its committer identity, "Name <email>", to gpg --local-user
	 * (gpg-interface.c, get_signing_key()), which gpg matches as a part of a user id. */
	name = !isempty(g.committer_name) ? g.committer_name : g.user_name;
	email = !isempty(g.committer_email) ? g.committer_email : g.user_email;
	if (isempty(email))
		return 0;
	r = snprintf(buf, size, isempty(name) ? "%s<%s>" : "%s <%s>", name, email);
	if (r < 0 || (size_t)r >= size) {
		buf[0] = 0;
		return -EMSGSIZE;
	}
	return 1;
}

int git_signing_key(char *buf, size_t size)
{
	char paths[GIT_CONFIG_PATHS_MAX][PATH_MAX];
	const char *p[GIT_CONFIG_PATHS_MAX];
	int n;

	buf[0] = 0;
	n = git_config_paths(paths);
	if (n < 0)
		return n == -ENOENT ? 0 : n;
	for (int i = 0; i < n; i++)
		p[i] = paths[i];
	return git_config_signing(p, (size_t)n, buf, size);
}
