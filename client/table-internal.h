/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the two halves of the human report share: table.c (the report) and table-event.c (one
 * line per Watch event). Private to the files of table.h.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "table.h"

#define SGR_RESET "\033[0m"
#define SGR_BOLD "\033[1m"
#define SGR_DIM "\033[2m"
#define SGR_RED "\033[31m"
#define SGR_GREEN "\033[32m"
#define SGR_YELLOW "\033[33m"
#define SGR_CYAN "\033[36m"
#define SGR_BOLD_RED "\033[1;31m"

struct ctx {
	FILE *out;
	bool color;
	size_t width;
	int64_t now;
	const struct token *tokens;
	size_t n_tokens;
	const struct key *keys;
	size_t n_keys;
};

/* text in colour sgr when c->color, else plain. */
void table_put_colored(const struct ctx *c, const char *sgr, const char *text);
const char *table_level_name(enum level l);
/* table-piv.c: a token's PIV certificates and CHUID, or why they were not read; nothing for a
 * token without PIV. */
void table_render_piv(const struct ctx *c, const struct token *t);
/* The width findings wrap to (COLUMNS, the terminal's, or 80 when out is no terminal). */
size_t table_out_width(FILE *out);
