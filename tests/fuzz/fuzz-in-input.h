/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* For harnesses whose parser returns strings that must come from the input. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* Whether s occurs in the size bytes at data, in either case. */
static inline bool in_input(const uint8_t *data, size_t size, const char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0; i + len <= size; i++)
		if (strncasecmp((const char *)data + i, s, len) == 0)
			return true;
	return false;
}
