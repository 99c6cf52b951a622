/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * git's global configuration, as far as signing goes: `user.signingkey` and `gpg.format`, read
 * from GIT_CONFIG_GLOBAL, else $XDG_CONFIG_HOME/git/config (~/.config/git/config) and then
 * ~/.gitconfig (the later file wins, as in git). The parser follows git-config(1)'s syntax:
 * [section] and [section "subsection"] headers (a variable may follow on the same line), names
 * case-insensitive, `name = value` or a bare `name`, double quotes, the escapes \" \\ \n \t \b,
 * a backslash at the end of a line continuing the value, and `#` or `;` comments.
 *
 * Without user.signingkey, when commit.gpgSign or tag.gpgSign is true, git signs as its
 * committer identity ("Name <email>" from committer.* or user.*), which gpg matches as a part of
 * a user id: that identity is the key git signs with then.
 *
 * Does not: spawn git, follow [include] or [includeIf], read the system or repository
 * configuration, or read the identity from the environment (GIT_COMMITTER_*, EMAIL) or the
 * passwd entry (a missing user.name matches by "<email>" alone).
 */
#pragma once

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define GIT_CONFIG_MAX (256u * 1024u)
#define GIT_SIGNING_KEY_MAX 256
#define GIT_CONFIG_PATHS_MAX 2

/* The last value of section.name (no subsection; both compared case-insensitively) into buf:
 * 1 when found ("" for a bare `name`), 0 when not (buf ""), -EBADMSG when p is not a valid
 * config (as git would refuse it), -EMSGSIZE when the value does not fit. Pure; never reads
 * past n. */
int git_config_get(const uint8_t *p, size_t n, const char *section, const char *name, char *buf,
                   size_t size);

/* The global config files git reads, in order (the later wins), from the environment: 1 or 2
 * paths. Returns the count, or -ENOENT when neither HOME nor GIT_CONFIG_GLOBAL is set. */
int git_config_paths(char paths[static GIT_CONFIG_PATHS_MAX][PATH_MAX]);

/* What git hands gpg --local-user for the files paths (in git's order, the later wins): 1 and
 * user.signingkey in buf, or without it "Name <email>" when commit.gpgSign or tag.gpgSign is true;
 * 0 when git signs with no OpenPGP key (gpg.format not openpgp, nothing set; buf ""); -EMSGSIZE
 * when it does not fit, or -errno of an unreadable or malformed file. */
int git_config_signing(const char *const *paths, size_t n_paths, char *buf, size_t size);

/* The same for the global files git reads (git_config_paths()). */
int git_signing_key(char *buf, size_t size);
