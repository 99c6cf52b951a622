/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <libnotify/notify.h>
#include <stdio.h>
#include "config-build.h"
int main(void)
{
	printf("keyctl-notify %s\n", PACKAGE_VERSION);
	return 0;
}
