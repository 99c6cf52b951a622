/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include "config-build.h"
int main(void)
{
	printf("keyctl-status %s\n", PACKAGE_VERSION);
	return 3;
}
