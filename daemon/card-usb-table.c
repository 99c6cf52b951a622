/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The table of known token vendor and product ids (see token-table.h). Yubico's product ids and
 * the interfaces each enables follow yubikit's PID enum (YKS_OTP ... YKP_OTP_FIDO): the product id
 * encodes the enabled USB interfaces. The FIDO-only keys of other makers come from libfido2's
 * udev rules; they get kind "unknown" since keyctl reads no OpenPGP data through FIDO.
 *
 * Does not: touch any device. Keep the table sorted: a unit test checks it.
 */
#include <stdlib.h>

#include "card-usb-table.h"

#define OTP USB_IFACE_OTP
#define FIDO USB_IFACE_FIDO
#define CCID USB_IFACE_CCID

/* clang-format 14 and 19 lay brace-initialiser macros out differently: kept as written. */
/* clang-format off */
#define YUBICO(pid, ifs, name) { 0x1050, pid, TOKEN_KIND_YUBIKEY, ifs, "Yubico", name, true }
#define NITROKEY(pid, ifs, name) { 0x20a0, pid, TOKEN_KIND_NITROKEY, ifs, "Nitrokey", name, true }
/* clang-format on */

static const struct token_model table[] = {
	/* Solo by SoloKeys uses ST's vendor id; the FIDO-only keys of other makers */
	{ 0x0483, 0xa2ca, TOKEN_KIND_UNKNOWN, FIDO, "SoloKeys", "Solo", false },
	{ 0x096e, 0x0850, TOKEN_KIND_UNKNOWN, FIDO, "Feitian", "ePass FIDO", false },
	{ 0x096e, 0x085a, TOKEN_KIND_UNKNOWN, FIDO, "Feitian", "MultiPass FIDO", false },
	{ 0x096e, 0x0866, TOKEN_KIND_UNKNOWN, FIDO, "Feitian", "BioPass FIDO2 K33", false },
	{ 0x096e, 0x0867, TOKEN_KIND_UNKNOWN, FIDO, "Feitian", "BioPass FIDO2 K43", false },
	YUBICO(0x0010, OTP, "YubiKey Standard"),
	YUBICO(0x0110, OTP, "YubiKey NEO"),
	YUBICO(0x0111, OTP | CCID, "YubiKey NEO"),
	YUBICO(0x0112, CCID, "YubiKey NEO"),
	YUBICO(0x0113, FIDO, "YubiKey NEO"),
	YUBICO(0x0114, OTP | FIDO, "YubiKey NEO"),
	YUBICO(0x0115, FIDO | CCID, "YubiKey NEO"),
	YUBICO(0x0116, OTP | FIDO | CCID, "YubiKey NEO"),
	YUBICO(0x0120, FIDO, "Security Key by Yubico"),
	YUBICO(0x0401, OTP, "YubiKey 4/5"),
	YUBICO(0x0402, FIDO, "YubiKey 4/5"),
	YUBICO(0x0403, OTP | FIDO, "YubiKey 4/5"),
	YUBICO(0x0404, CCID, "YubiKey 4/5"),
	YUBICO(0x0405, OTP | CCID, "YubiKey 4/5"),
	YUBICO(0x0406, FIDO | CCID, "YubiKey 4/5"),
	YUBICO(0x0407, OTP | FIDO | CCID, "YubiKey 4/5"),
	YUBICO(0x0410, OTP | FIDO, "YubiKey Plus"),
	{ 0x1209, 0xbeee, TOKEN_KIND_UNKNOWN, FIDO, "SoloKeys", "Solo 2", false },
	{ 0x1d50, 0x60fc, TOKEN_KIND_UNKNOWN, FIDO, "CryptoTrust", "OnlyKey", false },
	NITROKEY(0x4108, CCID, "Nitrokey Pro"),
	NITROKEY(0x4109, CCID, "Nitrokey Storage"),
	NITROKEY(0x4211, CCID, "Nitrokey Start"),
	NITROKEY(0x4230, CCID, "Nitrokey HSM"),
	NITROKEY(0x4287, FIDO, "Nitrokey FIDO U2F"),
	NITROKEY(0x42b1, FIDO, "Nitrokey FIDO2"),
	NITROKEY(0x42b2, FIDO | CCID, "Nitrokey 3"),
	/* Gnuk (free-software OpenPGP token, FSIJ's id): a plain OpenPGP card over CCID */
	{ 0x234b, 0x0000, TOKEN_KIND_OPENPGP_CARD, CCID, "FSIJ", "Gnuk Token", false },
};

static int compare(const void *key, const void *elem)
{
	const struct token_model *a = key, *b = elem;

	if (a->vendor != b->vendor)
		return a->vendor < b->vendor ? -1 : 1;
	if (a->product != b->product)
		return a->product < b->product ? -1 : 1;
	return 0;
}

const struct token_model *token_table_lookup(uint16_t vendor, uint16_t product)
{
	const struct token_model key = { .vendor = vendor, .product = product };

	return bsearch(&key, table, ELEMENTSOF(table), sizeof(table[0]), compare);
}

size_t token_table_get(const struct token_model **ret)
{
	*ret = table;
	return ELEMENTSOF(table);
}

const char *token_table_vendor_name(uint16_t vendor)
{
	for (size_t i = 0; i < ELEMENTSOF(table); i++)
		if (table[i].vendor == vendor)
			return table[i].vendor_name;
	return NULL;
}
