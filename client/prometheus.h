/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * keyctl-status --format=prometheus: the Prometheus text exposition format (version 0.0.4), for
 * node_exporter's textfile collector. Metric and label names are an interface: they only grow.
 * Does not: write the .prom file atomically (the caller's cron line does: > f.$$ && mv).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "types.h"

/* Writes every metric family with its HELP and TYPE lines. Returns 0, or -EIO. */
int prometheus_render(FILE *out, const struct daemon_info *d, const struct token *tokens,
                      size_t n_tokens, const struct key *keys, size_t n_keys,
                      const struct finding *findings, size_t n_findings, int64_t now);

/* What is written when the daemon did not answer: keyctl_daemon_up 0, so an alert can fire. */
int prometheus_render_down(FILE *out);

/* Writes s as a label value: backslash, double quote and newline escaped, as the format says. */
void prometheus_put_label_value(FILE *out, const char *s);
