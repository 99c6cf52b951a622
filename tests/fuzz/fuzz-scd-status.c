/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer harness for scd_parse_status(): one status line per input, or several separated by
 * newlines merged into one card, as scdaemon's answers are. Checks that every string field of
 * the card stays NUL-terminated within its size.
 */
#include <stdint.h>
#include <string.h>

#include "card-scd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct openpgp_card c;

	memset(&c, 0, sizeof(c));
	while (size > 0) {
		const uint8_t *nl = memchr(data, '\n', size);
		size_t n = nl ? (size_t)(nl - data) : size;

		(void)scd_parse_status(data, n, &c);
		data += n;
		size -= n;
		if (nl) {
			data++;
			size--;
		}
	}
	if (!memchr(c.aid, 0, sizeof(c.aid)) || !memchr(c.serial, 0, sizeof(c.serial)) ||
	    !memchr(c.version, 0, sizeof(c.version)) ||
	    !memchr(c.manufacturer, 0, sizeof(c.manufacturer)) ||
	    !memchr(c.url, 0, sizeof(c.url)) || !memchr(c.cardholder, 0, sizeof(c.cardholder)))
		__builtin_trap();
	for (int i = 0; i < SLOT_MAX; i++)
		if (!memchr(c.slots[i].fingerprint, 0, FPR_HEX_MAX) ||
		    !memchr(c.slots[i].algorithm, 0, ALGO_NAME_MAX))
			__builtin_trap();
	return 0;
}
