/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A sighting is what one source (PC/SC, USB) sees of a token under its own handle; model.c keeps
 * them, model-merge.c pairs and merges them. Private to those two files.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "model.h"

#define SIGHTINGS_MAX (2 * TOKENS_MAX)

struct sighting {
	enum sighting_source src;
	char handle[READER_NAME_MAX + 64];
	struct token t;
	/* USB only: the serial of the card this device was last merged with, when its own USB
	 * serial is not that (not a YubiKey) or absent. Names the device while its card is out of
	 * sight (pcscd gone); kept as long as the device reports the same USB serial. */
	char card_serial[SERIAL_MAX];
};

/* Pairs each USB sighting with the PC/SC sighting of the same token; partner[i] (n entries) is
 * the index of i's partner, -1 when none. A paired USB sighting learns its card's serial. */
void sightings_pair(struct sighting *sightings, size_t n, ssize_t *partner);
/* A PC/SC sighting of the same card again: the PIV application is read only at insertion
 * (watch-pcsc-worker.c), so a later read that did not ask (none) or found the card in use keeps
 * what the last read found, in *t. */
void piv_keep(const struct piv_app *old, struct piv_app *t);
/* Merges one USB and/or one PC/SC sighting (either may be NULL, not both) into *ret. */
void token_merge(const struct sighting *usb, const struct sighting *pcsc, struct token *ret);
