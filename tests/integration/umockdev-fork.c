/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Makes umockdev's preload safe across fork() for the tests that run keyctld under
 * umockdev-wrapper: loaded with it (LD_PRELOAD, by keyctlbed.udev.reexec()), it holds umockdev's
 * trap_path_lock across fork().
 *
 * Why: every path call umockdev wraps (open, stat, opendir, ...) takes trap_path_lock. gpgme
 * forks gpg from keyctld's keyring thread, and its child open()s /dev/null before exec; when
 * another thread of keyctld held the lock at the fork (the udev enumeration at start, a
 * hotplug, an inotify watch), the child inherited it locked and waited forever: keyctld's
 * listing then failed after 60 s, every check after it with it (doc/coexistence.md; seen in
 * test-lock-on-removal and test-pcsc-refused, about once in 40 starts under load). With the
 * lock taken in fork()'s prepare handler, the fork waits until no thread is inside umockdev's
 * wrapper, and both sides release it.
 *
 * Does nothing where umockdev's preload is not loaded (no trap_path_lock symbol).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t *trap_lock;

static void lock_before_fork(void)
{
	pthread_mutex_lock(trap_lock);
}

static void unlock_after_fork(void)
{
	pthread_mutex_unlock(trap_lock);
}

__attribute__((constructor)) static void umockdev_fork_init(void)
{
	trap_lock = dlsym(RTLD_DEFAULT, "trap_path_lock");
	if (trap_lock)
		(void)pthread_atfork(lock_before_fork, unlock_after_fork, unlock_after_fork);
}
