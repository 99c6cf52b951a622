/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches git's global config files (git-config.h: GIT_CONFIG_GLOBAL, else
 * $XDG_CONFIG_HOME/git/config and ~/.gitconfig) through inotify on their directories, and on the
 * directory of a symlink's target (a dotfiles repository), and calls back 200 ms after the last
 * change. The keyring listing reads the files (watch-keyring.c), off the loop thread.
 *
 * A directory that does not exist yet (~/.config/git, or GIT_CONFIG_GLOBAL's) is waited for
 * (path-wait.h) and watched once it appears; one that is removed is waited for again.
 *
 * Does not: read the files, or follow a symlink made after the start to a new directory.
 */
#pragma once

#include <systemd/sd-event.h>

struct git_watch;
typedef void (*git_watch_fn)(struct git_watch *w, void *userdata);

/* Watches what exists of the config files' directories; none at all is not an error. */
int git_watch_new(sd_event *e, git_watch_fn fn, void *userdata, struct git_watch **ret);
struct git_watch *git_watch_free(struct git_watch *w);
static inline void git_watch_freep(struct git_watch **w)
{
	if (*w)
		git_watch_free(*w);
}
