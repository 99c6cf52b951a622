/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one table of USB tokens keyctl knows by vendor and product id: what kind of token each is,
 * its maker's and model's names and the USB interfaces (OTP, FIDO, CCID) that product id enables.
 * udev-rules/70-keyctl.rules grants access to the entries with `uaccess` set, and a unit test
 * checks the two agree, so the ids live in one place.
 *
 * Does not: look at devices (card-usb.c does), or know firmware-dependent names (card-usb.c
 * turns "YubiKey 4/5" into "YubiKey 5" from the firmware).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "types.h"

struct token_model {
	uint16_t vendor, product;
	enum token_kind kind;
	unsigned interfaces; /* USB_IFACE_* this product id enables */
	const char *vendor_name; /* "Yubico" */
	const char *model; /* "YubiKey NEO" */
	bool uaccess; /* 70-keyctl.rules tags its nodes uaccess and starts keyctld.service */
};

/* The entry for vendor:product, or NULL. */
const struct token_model *token_table_lookup(uint16_t vendor, uint16_t product);
/* All entries, sorted by (vendor, product), unique. Returns their number. */
size_t token_table_get(const struct token_model **ret);
/* The maker's name for a vendor id in the table, or NULL. */
const char *token_table_vendor_name(uint16_t vendor);
