/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How sightings of one physical token become one token: which USB sighting goes with which PC/SC
 * sighting, and the merged token with its stable id. Pure: the model calls it on every rebuild.
 *
 * Does not: keep tokens, emit events, or know which tokens were there before (model.c).
 */
#include <stdio.h>
#include <string.h>

#include "model-merge.h"

/* The serial a sighting names its token by: a USB device's card's, once learned. */
static const char *sighting_serial(const struct sighting *s)
{
	return *s->card_serial ? s->card_serial : s->t.serial;
}

static bool serials_match(const struct sighting *a, const struct sighting *b)
{
	const char *x = sighting_serial(a), *y = sighting_serial(b);

	return *x && *y && streq(x, y);
}

static uint32_t hash_string(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a: only to make a serial-less id stable per handle */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

/* Merges one USB and/or one PC/SC sighting into a token. */
void token_merge(const struct sighting *usb, const struct sighting *pcsc, struct token *ret)
{
	const struct sighting *any = usb ? usb : pcsc;

	memset(ret, 0, sizeof(*ret));
	if (usb) {
		memcpy(ret, &usb->t, sizeof(*ret));
		memcpy(ret->serial, usb->card_serial, sizeof(usb->card_serial));
		if (!*ret->serial)
			memcpy(ret->serial, usb->t.serial, sizeof(ret->serial));
		ret->has_openpgp = false;
		memset(&ret->openpgp, 0, sizeof(ret->openpgp));
		memset(ret->reader, 0, sizeof(ret->reader));
		ret->read_path = READ_PATH_NONE;
	}
	if (pcsc) {
		const struct token *p = &pcsc->t;

		if (!usb) {
			memcpy(ret, p, sizeof(*ret));
		} else {
			memcpy(ret->reader, p->reader, sizeof(ret->reader));
			ret->has_openpgp = p->has_openpgp;
			memcpy(&ret->openpgp, &p->openpgp, sizeof(ret->openpgp));
			ret->read_path = p->read_path;
			memcpy(&ret->piv, &p->piv, sizeof(ret->piv));
			/* Only a YubiKey's USB serial is its card's serial; other makers' USB
			 * serials are not, and the card's is the one GnuPG and people use. */
			if (!*ret->serial || (ret->kind != TOKEN_KIND_YUBIKEY && *p->serial)) {
				memcpy(ret->serial, p->serial, sizeof(ret->serial));
				ret->serial_shared = p->serial_shared;
			}
			if (!*ret->firmware)
				memcpy(ret->firmware, p->firmware, sizeof(ret->firmware));
			if (!*ret->model)
				memcpy(ret->model, p->model, sizeof(ret->model));
			/* The card's error says more than the USB side's (often a permission). */
			if (*p->error)
				memcpy(ret->error, p->error, sizeof(ret->error));
			memcpy(ret->gpg_error, p->gpg_error, sizeof(ret->gpg_error));
		}
	}

	memset(ret->id, 0, sizeof(ret->id));
	if (*ret->serial && ret->serial_shared)
		/* Two cards with the same default serial stay two tokens: the reader names which.
		 */
		snprintf(ret->id, sizeof(ret->id), "%s-%s-r%08x", token_kind_to_string(ret->kind),
		         ret->serial, hash_string((pcsc ? pcsc : any)->handle));
	else if (*ret->serial)
		snprintf(ret->id, sizeof(ret->id), "%s-%s", token_kind_to_string(ret->kind),
		         ret->serial);
	else
		snprintf(ret->id, sizeof(ret->id), "%s-%c%08x", token_kind_to_string(ret->kind),
		         any->src == SIGHTING_USB ? 'u' : 'r', hash_string(any->handle));
}

void piv_keep(const struct piv_app *old, struct piv_app *t)
{
	if ((t->state == PIV_READ_NONE || t->state == PIV_READ_IN_USE) &&
	    (old->state == PIV_READ_OK || old->state == PIV_READ_ERROR))
		memcpy(t, old, sizeof(*t));
}

/* Pairs each USB sighting with the PC/SC sighting of the same token: same kind and serial, or,
 * when one side has no serial yet, the only unpaired pair of that kind. partner[i] is the index
 * of i's partner, -1 when none. */
void sightings_pair(struct sighting *sightings, size_t n, ssize_t *partner)
{
	for (size_t i = 0; i < n; i++)
		partner[i] = -1;
	for (size_t i = 0; i < n; i++) {
		if (sightings[i].src != SIGHTING_USB)
			continue;
		for (size_t j = 0; j < n; j++)
			if (sightings[j].src == SIGHTING_PCSC && partner[j] < 0 &&
			    sightings[j].t.kind == sightings[i].t.kind &&
			    serials_match(&sightings[i], &sightings[j])) {
				partner[i] = (ssize_t)j;
				partner[j] = (ssize_t)i;
				break;
			}
	}
	for (int kind = 0; kind < TOKEN_KIND_MAX; kind++) {
		ssize_t u = -1, p = -1;
		unsigned nu = 0, np = 0;

		for (size_t i = 0; i < n; i++) {
			const struct sighting *s = &sightings[i];

			if ((int)s->t.kind != kind || partner[i] >= 0)
				continue;
			if (s->src == SIGHTING_USB)
				u = (ssize_t)i, nu++;
			else
				p = (ssize_t)i, np++;
		}
		if (nu == 1 && np == 1 && kind != TOKEN_KIND_UNKNOWN &&
		    (kind != TOKEN_KIND_YUBIKEY || !*sighting_serial(&sightings[u]) ||
		     !*sightings[p].t.serial)) {
			partner[u] = p;
			partner[p] = u;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct sighting *s = &sightings[i];
		const char *card;

		if (s->src != SIGHTING_USB || partner[i] < 0)
			continue;
		card = sightings[partner[i]].t.serial;
		if (*card && (s->t.kind != TOKEN_KIND_YUBIKEY || !*s->t.serial))
			strcpy_trunc(s->card_serial, sizeof(s->card_serial), card);
	}
}
