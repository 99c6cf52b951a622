/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Placeholder translation unit so the client library is never empty while the clients grow.
 */
#include "types.h"
