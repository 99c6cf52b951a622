/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One OpenPGP card read over PC/SC on a thread of its own, with a bound on silence; the PC/SC
 * error mapping; the pure helpers from reader name and card data to a token. Used by
 * watch-pcsc.c; with it, the only files that include <winscard.h>.
 *
 * Does not: watch readers, or keep any state between reads.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <winscard.h>

#include "types.h"

#define READ_SILENCE_USEC (5 * 1000000ULL) /* no answer for this long: give up on the read */

/* SCARD_* to -errno: -ENODEV card or reader gone, -ECONNRESET reset by another program,
 * -EBUSY held exclusively, -ESHUTDOWN pcscd gone, -EIO the rest. */
int pcsc_rv_to_errno(LONG rv);
/* pcscd itself went away (or its context is no longer valid). */
bool pcsc_rv_service_gone(LONG rv);

/* A read left running after its caller gave up: it still holds the reader. */
struct card_pcsc_read;

/*
 * Reads the card in reader on a job thread, giving up when stopping(userdata) turns true, after
 * READ_SILENCE_USEC without an answer or 30 s in all. Returns the read's result (0, -ENOENT no
 * OpenPGP application, -errno), or -ETIMEDOUT when the card stopped answering: the job is then
 * left to end on its own and *ret_stuck set. *ret holds what was read, *ret_sw the last status
 * word. With ret_piv, the PIV application is read too, in the same transaction, and OpenPGP
 * selected again (card-piv.h); its errors stay in *ret_piv, the result is the OpenPGP read's.
 */
int card_pcsc_read(const char *reader, bool (*stopping)(void *), void *userdata,
                   struct openpgp_card *ret, struct piv_app *ret_piv, uint16_t *ret_sw,
                   struct card_pcsc_read **ret_stuck);
bool card_pcsc_read_finished(struct card_pcsc_read *j);
void card_pcsc_read_unref(struct card_pcsc_read *j);

/* A sentence for a failed read (r and the last status word) into buf. */
void card_pcsc_error_text(int r, uint16_t sw, char *buf, size_t size);

/* Fills kind, serial, model, usb_interfaces and firmware of *t from the card data and the
 * reader name (c may be NULL: a card without OpenPGP; YubiKeys: the decimal device serial is the
 * BCD AID serial). */
void pcsc_token_from_card(const char *reader, const struct openpgp_card *c, struct token *t);
/* Parses "Yubico YubiKey OTP+FIDO+CCID 00 00" into USB_IFACE_* bits; 0 when not a YubiKey. */
unsigned pcsc_yubikey_interfaces(const char *reader);
