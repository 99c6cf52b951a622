/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's logging: the journal (with structured fields) when it runs under systemd, stderr
 * otherwise. Every log_*_errno() returns its negative errno, so that the one place that handles an
 * error can log it and return in one statement. Does not: rate-limit or buffer.
 */
#pragma once

#include <stdarg.h>
#include <syslog.h>

#include "util.h"

enum log_target {
	LOG_TARGET_AUTO,
	LOG_TARGET_STDERR,
	LOG_TARGET_JOURNAL,
};

void log_setup(enum log_target target);
void log_set_max_level(int prio);
int log_get_max_level(void);

/* Returns -abs(error) (or 0 when error is 0); %m in format prints strerror(error), or "no error
 * code" when error is 0 (which the log_*() without _errno pass: use %m only with _errno). */
int log_internal(int prio, int error, const char *fmt, ...) _printf_(3, 4);

/* Logs MESSAGE plus MESSAGE_ID and extra "KEY=value" fields (NULL-terminated array); stderr
 * gets the message with the fields appended. */
void log_struct(int prio, const char *message_id, const char *const *fields, const char *fmt, ...)
        _printf_(4, 5);

#define log_full_errno(prio, error, ...) log_internal(prio, error, __VA_ARGS__)
#define log_debug(...) ((void)log_internal(LOG_DEBUG, 0, __VA_ARGS__))
#define log_info(...) ((void)log_internal(LOG_INFO, 0, __VA_ARGS__))
#define log_notice(...) ((void)log_internal(LOG_NOTICE, 0, __VA_ARGS__))
#define log_warning(...) ((void)log_internal(LOG_WARNING, 0, __VA_ARGS__))
#define log_error(...) ((void)log_internal(LOG_ERR, 0, __VA_ARGS__))
#define log_debug_errno(e, ...) log_internal(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...) log_internal(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_internal(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...) log_internal(LOG_ERR, e, __VA_ARGS__)
