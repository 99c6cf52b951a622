/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reads the OpenPGP card application (OpenPGP card 3.4) through a struct card_transport: SELECT
 * by AID unless it is selected already (openpgp_selected()), GET DATA 6E, then one by one whatever
 * 6E lacked (4F, C4, C5, CD, C1-C3, D6-D8: old cards keep them outside), Yubico's GET VERSION on
 * YubiKeys, and the optional 7A, 65, 5F50, with 61xx/6Cxx handling for cards that answer in pieces.
 * card-do.c turns the bytes into struct openpgp_card. Over scdaemon (t->get_data_only) the
 * application is scdaemon's to select: only GET DATA and GET RESPONSE are sent, so both read paths
 * share every parser.
 *
 * A broken answer is noted in ret->error ("C5: 50 bytes, not 3 or 4 fingerprints") and the rest
 * is still read; only a missing AID, PW status or fingerprint list fails the read.
 *
 * Does not: send anything that is not in card_ins_allowed() (no VERIFY, no PUT DATA, never a
 * PIN), know PC/SC, hold transactions, retry, or log. Status words are mapped to errno here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "card-openpgp.h"

#define SW_OK 0x9000
#define SHORT_RESPONSE_MAX (256 + 2)
#define MANUFACTURER_YUBICO 0x0006

bool card_ins_allowed(uint8_t ins)
{
	switch (ins) {
	case 0xa4: /* SELECT */
	case 0xca: /* GET DATA */
	case 0xcb: /* GET DATA (odd) */
	case 0xc0: /* GET RESPONSE */
	case 0xf1: /* Yubico GET VERSION */
		return true;
	default:
		return false;
	}
}

static bool ins_allowed_on(const struct card_transport *t, uint8_t ins)
{
	if (t->get_data_only)
		return ins == 0xca || ins == 0xcb || ins == 0xc0;
	return card_ins_allowed(ins);
}

int card_sw_to_errno(uint16_t sw)
{
	switch (sw) {
	case SW_OK:
		return 0;
	case 0x6a82: /* file or application not found */
	case 0x6a88: /* referenced data not found */
		return -ENOENT;
	case 0x6982: /* security status not satisfied */
		return -EACCES;
	default:
		return -EIO;
	}
}

/* The one place that hands bytes to the transport: everything sent passes the whitelist. */
static int transmit_checked(const struct card_transport *t, const uint8_t *apdu, size_t n,
                            uint8_t *resp, size_t *resp_len)
{
	size_t len = *resp_len;
	int r;

	if (n < 4 || n > CARD_APDU_MAX)
		return -EINVAL;
	/* CLA bit 0x10 is command chaining, which only writes use; secure messaging neither. */
	if (apdu[0] != 0x00 || !ins_allowed_on(t, apdu[1]))
		return -EPERM;

	r = t->transmit(t->userdata, apdu, n, resp, &len);
	if (r < 0)
		return r;
	if (len < 2 || len > *resp_len)
		return -EBADMSG;
	*resp_len = len;
	return 0;
}

int card_exchange(const struct card_transport *t, const uint8_t *apdu, size_t n, uint8_t *buf,
                  size_t size, size_t *ret_len, uint16_t *ret_sw)
{
	uint8_t cmd[CARD_APDU_MAX], resp[SHORT_RESPONSE_MAX];
	bool resent = false, empty_61 = false;
	size_t cmd_len = n, used = 0;
	int r;

	if (n < 4 || n > sizeof(cmd))
		return -EINVAL;
	memcpy(cmd, apdu, n);

	for (;;) {
		size_t len = sizeof(resp), data_len;
		uint8_t sw1, sw2;

		r = transmit_checked(t, cmd, cmd_len, resp, &len);
		if (r < 0)
			return r;
		data_len = len - 2;
		sw1 = resp[data_len];
		sw2 = resp[data_len + 1];

		/* 6Cxx: wrong Le, xx is the right one (ISO 7816-4, 5.1.3). Every command we send
		 * ends with its Le byte. Once only: a card that keeps asking is broken. */
		if (sw1 == 0x6c && !resent && cmd_len > 4) {
			cmd[cmd_len - 1] = sw2;
			resent = true;
			continue;
		}

		if (data_len > size - used)
			return -EMSGSIZE;
		if (data_len > 0)
			memcpy(buf + used, resp, data_len);
		used += data_len;

		if (sw1 == 0x61) {
			/* Every GET RESPONSE must bring data, or a card could keep us here forever;
			 * only the first answer (T=0 style) may be a bare 61xx. */
			if (data_len == 0) {
				if (empty_61)
					return -EBADMSG;
				empty_61 = true;
			}
			cmd[0] = 0x00;
			cmd[1] = 0xc0;
			cmd[2] = 0x00;
			cmd[3] = 0x00;
			cmd[4] = sw2;
			cmd_len = 5;
			continue;
		}

		*ret_len = used;
		*ret_sw = (uint16_t)(sw1 << 8 | sw2);
		return 0;
	}
}

/* GET DATA with Le=00 (256): every card supports short APDUs; longer answers come as 61xx.
 * Returns transport errors, or 0 with the status word in *ret_sw. */
static int get_data(const struct card_transport *t, uint16_t tag, uint8_t *buf, size_t size,
                    size_t *ret_len, uint16_t *ret_sw)
{
	const uint8_t apdu[] = { 0x00, 0xca, tag >> 8, tag & 0xff, 0x00 };

	return card_exchange(t, apdu, sizeof(apdu), buf, size, ret_len, ret_sw);
}

/* What a status word says about a DO that is not there, in a few words. */
static const char *sw_text(uint16_t sw)
{
	switch (sw) {
	case 0x6a88:
	case 0x6a82:
		return "not found";
	case 0x6b00:
		return "wrong parameters";
	case 0x6d00:
		return "instruction not supported";
	case 0x6982:
		return "security status not satisfied";
	case 0x6581:
		return "memory failure";
	default:
		return "refused";
	}
}

static int select_application(const struct card_transport *t, struct openpgp_card *c)
{
	uint8_t apdu[5 + CARD_AID_PREFIX_LEN + 1] = { 0x00, 0xa4, 0x04, 0x00, CARD_AID_PREFIX_LEN };
	uint8_t buf[CARD_RESPONSE_MAX];
	size_t len;
	uint16_t sw;
	int r;

	memcpy(apdu + 5, card_openpgp_aid_prefix, CARD_AID_PREFIX_LEN);
	apdu[sizeof(apdu) - 1] = 0x00;
	r = card_exchange(t, apdu, sizeof(apdu), buf, sizeof(buf), &len, &sw);
	if (r < 0)
		return r;
	switch (sw) {
	case SW_OK:
		return 0;
	case 0x6a82:
	case 0x6a88:
		return -ENOENT; /* no OpenPGP application: a card like any other */
	case 0x6285:
		return card_note_error(c, -EIO,
		                       "SELECT answered 6285: the OpenPGP application is "
		                       "terminated (a factory reset starts it anew)");
	case 0x6985:
		return card_note_error(c, -EIO,
		                       "SELECT answered 6985: the OpenPGP application "
		                       "cannot be used now (blocked or not activated)");
	case 0x6581:
		return card_note_error(c, -EIO,
		                       "SELECT answered 6581: the card reports a memory "
		                       "failure");
	default:
		return card_note_error(c, -EIO, "SELECT answered %04X", sw);
	}
}

/* Yubico's GET VERSION inside the OpenPGP application answers three BCD bytes (yubikit's
 * openpgp.py, _read_version). A card that does not know it keeps firmware "". */
static int read_yubico_version(const struct card_transport *t, struct openpgp_card *c)
{
	static const uint8_t apdu[] = { 0x00, 0xf1, 0x00, 0x00, 0x00 };
	uint8_t buf[SHORT_RESPONSE_MAX];
	unsigned v[3];
	size_t len;
	uint16_t sw;
	int r;

	r = card_exchange(t, apdu, sizeof(apdu), buf, sizeof(buf), &len, &sw);
	if (r < 0)
		return r;
	if (sw != SW_OK || len != 3)
		return 0;
	for (size_t i = 0; i < 3; i++) {
		if ((buf[i] >> 4) > 9 || (buf[i] & 0xf) > 9)
			return 0;
		v[i] = (buf[i] >> 4) * 10u + (buf[i] & 0xfu);
	}
	snprintf(c->firmware, sizeof(c->firmware), "%u.%u.%u", v[0], v[1], v[2]);
	return 0;
}

/* One DO asked for on its own: its answer, wrapped in its tag or bare, goes through the same
 * parser as the members of 6E. A status word other than 9000 means the card does not have it
 * (6A88, but also 6B00 or 6D00 from cards that predate 3.x): absent, not an error, except for
 * a mandatory DO, which is noted. Only transport errors are returned. */
static int read_one(const struct card_transport *t, uint16_t tag, bool mandatory,
                    struct openpgp_card *c, struct card_dos *dos)
{
	uint8_t buf[CARD_RESPONSE_MAX];
	const uint8_t *p = buf;
	size_t len;
	uint16_t sw;
	int r;

	r = get_data(t, tag, buf, sizeof(buf), &len, &sw);
	if (r == -EMSGSIZE || r == -EBADMSG) {
		card_note_error(c, r, "%02X: %s", tag,
		                r == -EMSGSIZE ? "answer longer than 4096 bytes"
		                               : "answer in pieces that never end");
		return 0;
	}
	if (r < 0)
		return r;
	if (sw != SW_OK) {
		if (mandatory)
			card_note_error(c, -ENOENT,
			                "%02X not in 6E, and GET DATA %02X answered %04X "
			                "(%s)",
			                tag, tag, sw, sw_text(sw));
		return 0;
	}
	card_unwrap(tag, &p, &len);
	(void)card_parse_do(tag, p, len, c, dos);
	return 0;
}

/* The optional DOs outside 6E: absent on some cards, read when there; a broken one is noted
 * and the card is still read. */
static const struct {
	uint16_t tag;
	int (*parse)(const uint8_t *p, size_t n, struct openpgp_card *c);
} optional_dos[] = {
	{ 0x007a, card_parse_security_template }, /* signature counter */
	{ 0x0065, card_parse_cardholder },
	{ 0x5f50, card_parse_url },
};

static int read_optional(const struct card_transport *t, struct openpgp_card *c)
{
	uint8_t buf[CARD_RESPONSE_MAX];
	size_t len;
	uint16_t sw;
	int r;

	for (size_t i = 0; i < ELEMENTSOF(optional_dos); i++) {
		r = get_data(t, optional_dos[i].tag, buf, sizeof(buf), &len, &sw);
		if (r == -EMSGSIZE || r == -EBADMSG) {
			card_note_error(c, r, "%02X: answer too long or in endless pieces",
			                optional_dos[i].tag);
			continue;
		}
		if (r < 0)
			return r;
		if (sw == SW_OK)
			(void)optional_dos[i].parse(buf, len, c);
	}
	return 0;
}

/* The members of 6E that some cards keep outside it, and whether the read fails without them. */
static const struct {
	uint16_t tag;
	bool mandatory;
} members[] = {
	{ 0x004f, true },  { 0x00c4, true },  { 0x00c5, true },  { 0x00cd, false },
	{ 0x00c1, false }, { 0x00c2, false }, { 0x00c3, false }, { 0x00d6, false },
	{ 0x00d7, false }, { 0x00d8, false },
};

static int read_application_data(const struct card_transport *t, struct openpgp_card *c,
                                 struct card_dos *dos)
{
	uint8_t buf[CARD_RESPONSE_MAX];
	size_t len;
	uint16_t sw;
	int r;

	r = get_data(t, 0x006e, buf, sizeof(buf), &len, &sw);
	if (r == -EMSGSIZE || r == -EBADMSG)
		return card_note_error(c, r, "6E: %s",
		                       r == -EMSGSIZE ? "answer longer than 4096 bytes"
		                                      : "answer in pieces that never end");
	if (r < 0)
		return r;
	if (sw == 0x6982)
		return card_note_error(c, -EACCES, "GET DATA 6E answered 6982 (%s)", sw_text(sw));
	if (sw != SW_OK) {
		/* The application is there (SELECT said so): its members are asked for one by
		 * one, and the read fails only if the mandatory ones are missing too. */
		card_note_error(c, 0, "GET DATA 6E answered %04X (%s)", sw, sw_text(sw));
		return 0;
	}
	(void)card_parse_application_data(buf, len, c, dos);
	return 0;
}

/*
 * Whether OpenPGP is the application selected now: its AID answers GET DATA 4F (yubikit reads
 * it so, openpgp.py get_aid). A SELECT, even of OpenPGP again, can make a card forget a PIN that
 * a program verified: SmartPGP clears every PW on process() of a SELECT (SmartPGPApplet.java,
 * clearConnection), and GnuPG assumes a YubiKey does (scd/app-openpgp.c do_reselect() zeroes
 * did_chv1..3). With scdaemon in pcsc-shared mode, the user's next signature then fails "Bad PIN"
 * until scdaemon restarts: the bed showed it for a Reload {full}. So keyctld selects only when
 * another application, or none, is selected, and the PIN state is already gone. Another
 * application refuses INS CA (PIV reads with CB, OATH and OTP know neither): a SELECT follows.
 */
static bool openpgp_selected(const struct card_transport *t)
{
	uint8_t buf[CARD_RESPONSE_MAX];
	const uint8_t *p = buf;
	size_t len;
	uint16_t sw;

	if (get_data(t, 0x004f, buf, sizeof(buf), &len, &sw) < 0 || sw != SW_OK)
		return false;
	card_unwrap(0x004f, &p, &len);
	return len == 16 && memcmp(p, card_openpgp_aid_prefix, CARD_AID_PREFIX_LEN) == 0;
}

int card_read_openpgp(const struct card_transport *t, struct openpgp_card *ret)
{
	struct card_dos dos = {};
	int r;

	memset(ret, 0, sizeof(*ret));

	if (!t->get_data_only && !openpgp_selected(t)) {
		r = select_application(t, ret);
		if (r < 0)
			return r;
	}
	r = read_application_data(t, ret, &dos);
	if (r < 0)
		return r;
	for (size_t i = 0; i < ELEMENTSOF(members); i++) {
		if (dos.seen & card_do_bit(members[i].tag))
			continue;
		r = read_one(t, members[i].tag, members[i].mandatory, ret, &dos);
		if (r < 0)
			return r;
	}

	if (ret->manufacturer_id == MANUFACTURER_YUBICO && !t->get_data_only) {
		r = read_yubico_version(t, ret);
		if (r < 0)
			return r;
	}
	r = read_optional(t, ret);
	if (r < 0)
		return r;

	/* Without these the card cannot be matched to keys or warned about: a failed read,
	 * with what was read kept and the reason in ret->error. */
	if ((dos.valid & CARD_DO_MANDATORY) != CARD_DO_MANDATORY)
		return card_note_error(ret, -EBADMSG, "no %s",
		                       !(dos.valid & CARD_DO_AID)   ? "AID (4F)"
		                       : !(dos.valid & CARD_DO_FPR) ? "fingerprints (C5)"
		                                                    : "PW status (C4)");
	return 0;
}
