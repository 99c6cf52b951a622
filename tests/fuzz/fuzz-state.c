/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's remembered-tokens file: any bytes parse or are refused, and what parses formats
 * and parses again to the same tokens. */
#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct token a[TOKENS_MAX], b[TOKENS_MAX];
	char *text = NULL;
	int n, m;

	n = state_parse(data, size, a, TOKENS_MAX);
	if (n <= 0)
		return 0;
	if (state_format(a, (size_t)n, &text) < 0)
		return 0;
	m = state_parse((const uint8_t *)text, strlen(text), b, TOKENS_MAX);
	if (m != n || memcmp(a, b, (size_t)n * sizeof(struct token)) != 0)
		__builtin_trap();
	free(text);
	return 0;
}
