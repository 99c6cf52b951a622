/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The one table of OpenPGP card manufacturer ids (the AID's bytes 9-10, OpenPGP card 3.4, 4.2.1)
 * and their names. Both read paths (our own PC/SC read and scdaemon's) name the maker from the id
 * through it, so a card is called the same whichever path read it, and scdaemon's own name (which
 * in GnuPG 2.2 lacks makers added later) is never shown.
 *
 * Does not: read cards.
 */
#include <stdio.h>

#include "card-openpgp.h"

const char *card_manufacturer_name(uint16_t id)
{
	/* GnuPG's table (scd/app-openpgp.c, app_openpgp_manufacturer), so the names match what
	 * `gpg --card-status` prints. */
	switch (id) {
	case 0x0001:
		return "PPC Card Systems";
	case 0x0002:
		return "Prism";
	case 0x0003:
		return "OpenFortress";
	case 0x0004:
		return "Wewid";
	case 0x0005:
		return "ZeitControl";
	case 0x0006:
		return "Yubico";
	case 0x0007:
		return "OpenKMS";
	case 0x0008:
		return "LogoEmail";
	case 0x0009:
		return "Fidesmo";
	case 0x000a:
		return "VivoKey";
	case 0x000b:
		return "Feitian Technologies";
	case 0x000d:
		return "Dangerous Things";
	case 0x000e:
		return "Excelsecu";
	case 0x000f:
		return "Nitrokey";
	case 0x002a:
		return "Magrathea";
	case 0x0042:
		return "GnuPG e.V.";
	case 0x1337:
		return "Warsaw Hackerspace";
	case 0x2342:
		return "warpzone";
	case 0x4354:
		return "Confidential Technologies";
	case 0x5343:
		return "SSE Carte à puce";
	case 0x5443:
		return "TIF-IT e.V.";
	case 0x63af:
		return "Trustica";
	case 0xba53:
		return "c-base e.V.";
	case 0xbd0e:
		return "Paranoidlabs";
	case 0xf1d0:
		return "CanoKeys";
	case 0xf517:
		return "FSIJ";
	case 0xf5ec:
		return "F-Secure";
	case 0x0000:
	case 0xffff:
		return "test card"; /* OpenPGP card 3.4, 4.2.1 */
	default:
		/* 0xFF00-0xFFFE: serial numbers the card made up itself. */
		return (id & 0xff00) == 0xff00 ? "unmanaged S/N range" : "unknown";
	}
}

void card_manufacturer_format(uint16_t id, char *ret, size_t size)
{
	const char *name = card_manufacturer_name(id);

	/* An id nobody has registered yet is shown with its number, so a user can look it up
	 * and a report says which maker it was. */
	if (streq(name, "unknown"))
		snprintf(ret, size, "unknown (0x%04X)", id);
	else
		strcpy_trunc(ret, size, name);
}
