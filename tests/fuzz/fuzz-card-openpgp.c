/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * OpenPGP card reader: the input goes whole to each card_parse_*() function, and then serves as
 * the card's answers to card_read_openpgp() through a fake transport. Input format for the
 * transport, per APDU: a big-endian 2-byte data length (> 256: the transport fails), the data, SW1
 * SW2; running out of input is an unplugged card. Traps on any APDU outside the read-only
 * whitelist, and on any string in the result that is not terminated inside its field.
 */
#include <errno.h>
#include <string.h>

#include "card-openpgp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fake_card {
	const uint8_t *p;
	size_t left;
};

static int fake_transmit(void *userdata, const uint8_t *apdu, size_t n, uint8_t *resp,
                         size_t *resp_len)
{
	struct fake_card *f = userdata;
	size_t len;

	if (n < 4 || n > CARD_APDU_MAX || apdu[0] != 0x00 || !card_ins_allowed(apdu[1]))
		__builtin_trap(); /* never anything that writes or verifies */
	if (f->left < 2)
		return -ENODEV;
	len = (size_t)f->p[0] << 8 | f->p[1];
	f->p += 2;
	f->left -= 2;
	if (len > 256)
		return len & 1 ? -ECONNRESET : -EIO;
	if (f->left < len + 2)
		return -ENODEV;
	if (len + 2 > *resp_len)
		__builtin_trap(); /* callers give room for a whole short answer */
	memcpy(resp, f->p, len + 2);
	*resp_len = len + 2;
	f->p += len + 2;
	f->left -= len + 2;
	return 0;
}

#define TERMINATED(field) (strnlen((field), sizeof(field)) < sizeof(field))

static void check(const struct openpgp_card *c)
{
	if (!TERMINATED(c->aid) || !TERMINATED(c->version) || !TERMINATED(c->manufacturer) ||
	    !TERMINATED(c->serial) || !TERMINATED(c->firmware) || !TERMINATED(c->url) ||
	    !TERMINATED(c->cardholder) || !TERMINATED(c->error) || c->key_slots > 4)
		__builtin_trap();
	for (int s = 0; s < SLOT_MAX; s++)
		if (!TERMINATED(c->slots[s].fingerprint) || !TERMINATED(c->slots[s].algorithm) ||
		    c->slots[s].touch >= TOUCH_MAX)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fake_card f = { .p = data, .left = size };
	struct card_transport t = { .transmit = fake_transmit, .userdata = &f };
	struct openpgp_card c;
	char algo[ALGO_NAME_MAX];
	int r;

	memset(&c, 0, sizeof(c));
	(void)card_parse_aid(data, size, &c);
	(void)card_parse_application_data(data, size, &c, NULL);
	(void)card_parse_security_template(data, size, &c);
	(void)card_parse_cardholder(data, size, &c);
	(void)card_parse_url(data, size, &c);
	check(&c);
	if (size > 0 && card_parse_algorithm(data, size, algo) == 0 && !TERMINATED(algo))
		__builtin_trap();

	r = card_read_openpgp(&t, &c);
	if (r > 0)
		__builtin_trap();
	check(&c);
	return 0;
}
