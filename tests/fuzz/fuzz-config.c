/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* keyctl.conf parser: any bytes give 0 or a negative errno with an error text, never a crash. */
#include <stdio.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config c;
	char err[CONFIG_ERROR_MAX] = "";
	int r;

	config_init(&c);
	r = config_parse(data, size, "fuzz.conf", &c, err, sizeof(err));
	if (r < 0 && !err[0])
		__builtin_trap(); /* every refusal must say why */
	if (r == 0 && c.n_thresholds == 0)
		__builtin_trap();
	return 0;
}
