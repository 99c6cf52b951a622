/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The daemon's acknowledged-findings file: any bytes parse or are refused, and what parses
 * formats and parses again to the same acks. */
#include <stdlib.h>
#include <string.h>

#include "ack-store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ack a[ACKS_MAX], b[ACKS_MAX];
	char *text = NULL;
	int n, m;

	memset(a, 0, sizeof(a));
	memset(b, 0, sizeof(b));
	n = ack_parse(data, size, a, ACKS_MAX);
	if (n <= 0)
		return 0;
	if (ack_format(a, (size_t)n, &text) < 0)
		return 0;
	m = ack_parse((const uint8_t *)text, strlen(text), b, ACKS_MAX);
	if (m != n || memcmp(a, b, (size_t)n * sizeof(struct ack)) != 0)
		__builtin_trap();
	free(text);
	return 0;
}
