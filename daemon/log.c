/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Log sink selection and formatting. Under systemd (JOURNAL_STREAM names our stderr) messages go
 * to the journal through sd_journal_send so that fields like MESSAGE_ID stay structured; in a
 * terminal they go to stderr as "keyctld: message".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "log.h"

#define LOG_LINE_MAX 2048

static enum log_target log_target = LOG_TARGET_STDERR;
static int log_max_level = LOG_INFO;

/* JOURNAL_STREAM is "dev:ino" of the journal stream systemd connected to our stderr; it only
 * counts when stderr still is that stream (a shell may have redirected it). */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_setup(enum log_target target)
{
	if (target == LOG_TARGET_AUTO)
		target = stderr_is_journal() ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
	log_target = target;
}

void log_set_max_level(int prio)
{
	log_max_level = prio;
}

int log_get_max_level(void)
{
	return log_max_level;
}

/* Expands %m to strerror(error) ourselves: errno is not what the caller means by then. Without
 * an error code (log_info() and the like pass 0) there is nothing to expand, and "Success" in a
 * failure message would mislead; tools/check-log-calls keeps such calls out of the tree. */
static void format_message(char *buf, size_t size, int error, const char *fmt, va_list ap)
{
	char fmt2[LOG_LINE_MAX];
	const char *err = error == 0 ? "no error code" : strerror(error < 0 ? -error : error);
	size_t j = 0;

	for (size_t i = 0; fmt[i] && j + 1 < sizeof(fmt2); i++) {
		if (fmt[i] == '%' && fmt[i + 1] == 'm') {
			for (size_t k = 0; err[k] && j + 1 < sizeof(fmt2); k++) {
				if (err[k] == '%' && j + 2 < sizeof(fmt2))
					fmt2[j++] = '%';
				fmt2[j++] = err[k];
			}
			i++;
			continue;
		}
		if (fmt[i] == '%' && fmt[i + 1] == '%' && j + 2 < sizeof(fmt2)) {
			fmt2[j++] = fmt[i++];
		}
		fmt2[j++] = fmt[i];
	}
	fmt2[j] = 0;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(buf, size, fmt2, ap);
#pragma GCC diagnostic pop
}

static void emit(int prio, const char *message_id, const char *const *fields, const char *msg)
{
	if (log_target == LOG_TARGET_JOURNAL) {
		struct iovec iov[16];
		char prio_field[16], mid_field[64], msg_field[LOG_LINE_MAX + 8];
		size_t n = 0;

		snprintf(prio_field, sizeof(prio_field), "PRIORITY=%d", prio);
		snprintf(msg_field, sizeof(msg_field), "MESSAGE=%s", msg);
		iov[n++] = (struct iovec){ prio_field, strlen(prio_field) };
		iov[n++] = (struct iovec){ msg_field, strlen(msg_field) };
		if (message_id) {
			snprintf(mid_field, sizeof(mid_field), "MESSAGE_ID=%s", message_id);
			iov[n++] = (struct iovec){ mid_field, strlen(mid_field) };
		}
		for (size_t i = 0; fields && fields[i] && n < ELEMENTSOF(iov); i++)
			iov[n++] = (struct iovec){ (void *)fields[i], strlen(fields[i]) };
		if (sd_journal_sendv(iov, (int)n) >= 0)
			return;
		/* journald away: fall through to stderr, which systemd also collects */
	}

	/* Worker threads log too (PC/SC, the state writer): one line stays one line. */
	flockfile(stderr);
	fprintf(stderr, "keyctld: %s", msg);
	if (log_max_level >= LOG_DEBUG && message_id)
		fprintf(stderr, " [MESSAGE_ID=%s]", message_id);
	for (size_t i = 0; fields && fields[i]; i++)
		fprintf(stderr, "%s%s", i == 0 ? " (" : ", ", fields[i]);
	fprintf(stderr, "%s\n", fields && fields[0] ? ")" : "");
	funlockfile(stderr);
}

int log_internal(int prio, int error, const char *fmt, ...)
{
	int saved = errno;

	if (prio <= log_max_level) {
		char msg[LOG_LINE_MAX];
		va_list ap;

		va_start(ap, fmt);
		format_message(msg, sizeof(msg), error, fmt, ap);
		va_end(ap);
		emit(prio, NULL, NULL, msg);
	}
	errno = saved;
	return error > 0 ? -error : error;
}

void log_struct(int prio, const char *message_id, const char *const *fields, const char *fmt, ...)
{
	char msg[LOG_LINE_MAX];
	va_list ap;

	if (prio > log_max_level)
		return;
	va_start(ap, fmt);
	format_message(msg, sizeof(msg), 0, fmt, ap);
	va_end(ap);
	emit(prio, message_id, fields, msg);
}
