/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* keyctl.conf parser, strict and lenient: any bytes give 0 or a negative errno with an error text,
 * never a crash; lenient refuses nothing strict takes. Then the same bytes as a threshold list. */
#include <stdio.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char err[CONFIG_ERROR_MAX] = "";
	unsigned v[CONFIG_THRESHOLDS_MAX], n = 0;
	int r, l;

	config_init(&c);
	r = config_parse(data, size, "fuzz.conf", 0, &c, err, sizeof(err));
	if (r < 0 && !err[0])
		__builtin_trap(); /* every refusal must say why */
	if (r == 0 && c.n_thresholds == 0)
		__builtin_trap();
	config_init(&c);
	l = config_parse(data, size, "fuzz.conf", CONFIG_LENIENT, &c, err, sizeof(err));
	if ((r == 0 && l < 0) ||
	    (l == 0 && (c.n_thresholds == 0 || c.critical_days > c.warning_days)))
		__builtin_trap();
	err[0] = 0;
	r = config_parse_thresholds(data, size, v, &n, err, sizeof(err));
	if ((r < 0 && !err[0]) || (r == 0 && (n == 0 || n > CONFIG_THRESHOLDS_MAX)))
		__builtin_trap();
	for (unsigned i = 1; r == 0 && i < n; i++)
		if (v[i] >= v[i - 1])
			__builtin_trap();
	return 0;
}
