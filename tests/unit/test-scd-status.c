/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Unit test of scd_parse_status(): the status lines scdaemon (GnuPG 2.2.40, recorded from the
 * test bed's virtual YubiKey) sends for SERIALNO and GETATTR, plus truncated, overlong and
 * malformed variants, and the pure token helpers of watch-pcsc.c.
 */
#include <errno.h>
#include <string.h>

#include "card-pcsc.h"
#include "card-scd.h"
#include "test.h"

static int parse(const char *line, struct openpgp_card *c)
{
	return scd_parse_status((const uint8_t *)line, strlen(line), c);
}

/* The transcript of `SCD SERIALNO openpgp` + GETATTRs against profile yubikey5nfc. */
static const char *const recorded[] = {
	"SERIALNO D2760001240103040006123456780000",
	"MANUFACTURER 6 Yubico",
	"KEY-FPR 1 3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E",
	"KEY-FPR 2 8A1B2C3D4E5F60718293A4B5C6D7E8F901234567",
	"KEY-FPR 3 F0E1D2C3B4A5968778695A4B3C2D1E0F11223344",
	"KEY-TIME 1 1700000000",
	"KEY-TIME 2 1700000100",
	"KEY-TIME 3 1700000200",
	"SIG-COUNTER 42",
	"CHV-STATUS +1+127+127+127+3+0+3",
	"DISP-NAME Tester<<Alice",
	"PUBKEY-URL https://keys.example.org/alice.asc",
	"KEY-ATTR 1 22 Ed25519",
	"KEY-ATTR 2 18 Curve25519",
	"KEY-ATTR 3 22 Ed25519",
};

TEST(recorded)
{
	struct openpgp_card c;

	memset(&c, 0, sizeof(c));
	for (size_t i = 0; i < sizeof(recorded) / sizeof(recorded[0]); i++)
		ASSERT_OK(parse(recorded[i], &c));
	ASSERT_STREQ(c.aid, "D2760001240103040006123456780000");
	ASSERT_STREQ(c.version, "3.4");
	ASSERT_EQ(c.manufacturer_id, 0x0006);
	ASSERT_STREQ(c.manufacturer, "Yubico");
	ASSERT_STREQ(c.serial, "12345678");
	ASSERT_STREQ(c.slots[SLOT_SIGN].fingerprint, "3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E");
	ASSERT_STREQ(c.slots[SLOT_AUTH].fingerprint, "F0E1D2C3B4A5968778695A4B3C2D1E0F11223344");
	ASSERT_EQ(c.slots[SLOT_ENCRYPT].created, 1700000100);
	ASSERT_EQ(c.signature_counter, 42);
	ASSERT_EQ(c.pin_retries[0], 3);
	ASSERT_EQ(c.pin_retries[1], 0);
	ASSERT_EQ(c.pin_retries[2], 3);
	ASSERT_STREQ(c.cardholder, "Tester Alice");
	ASSERT_STREQ(c.url, "https://keys.example.org/alice.asc");
	ASSERT_STREQ(c.slots[SLOT_SIGN].algorithm, "ed25519");
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].algorithm, "cv25519");
}

TEST(variants)
{
	struct openpgp_card c;

	memset(&c, 0, sizeof(c));
	ASSERT_OK(parse("KEY-ATTR 1 1 rsa4096 17 0", &c));
	ASSERT_STREQ(c.slots[SLOT_SIGN].algorithm, "rsa4096");
	ASSERT_OK(parse("KEY-ATTR 2 18 nistp256", &c));
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].algorithm, "nistp256");
	ASSERT_OK(parse("KEY-ATTR 3 19 NIST+P-384", &c));
	ASSERT_STREQ(c.slots[SLOT_AUTH].algorithm, "nistp384");
	/* UIF: raw DO bytes, percent-plus escaped; 0x20 (button feature) shows as '+'. */
	ASSERT_OK(parse("UIF-1 %01+", &c));
	ASSERT_EQ(c.slots[SLOT_SIGN].touch, TOUCH_ON);
	ASSERT_OK(parse("UIF-3 %04+", &c));
	ASSERT_EQ(c.slots[SLOT_AUTH].touch, TOUCH_CACHED_FIXED);
	ASSERT_OK(parse("UIF-2 %00+", &c));
	ASSERT_EQ(c.slots[SLOT_ENCRYPT].touch, TOUCH_OFF);
	/* Escapes in text, lower-case hex, a v5 fingerprint. */
	ASSERT_OK(parse("DISP-NAME M%C3%BCller<<J%25rg+X", &c));
	ASSERT_STREQ(c.cardholder, "M\xc3\xbcller J%rg X");
	ASSERT_OK(parse("SERIALNO d276000124010200000fdeadbeef0000", &c));
	ASSERT_STREQ(c.serial, "DEADBEEF");
	ASSERT_STREQ(c.version, "2.0");
	ASSERT_EQ(c.manufacturer_id, 0x000F);
	ASSERT_OK(parse("KEY-FPR 2 "
	                "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
	                &c));
	ASSERT_STREQ(c.slots[SLOT_ENCRYPT].fingerprint,
	             "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF");
	/* Keywords we never asked for are ignored, not errors. */
	ASSERT_OK(parse("EXTCAP gc=1+ki=1", &c));
	ASSERT_OK(parse("$DISPSERIALNO 12+345+678", &c));
}

TEST(malformed)
{
	struct openpgp_card c;
	char big[400];

	memset(&c, 0, sizeof(c));
	ASSERT_ERR(parse("", &c), EBADMSG);
	ASSERT_ERR(parse("   ", &c), EBADMSG);
	/* truncated */
	ASSERT_ERR(parse("SERIALNO D27600012401030400061234567800", &c), EBADMSG);
	ASSERT_ERR(parse("SERIALNO", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-FPR 1 3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-FPR 1", &c), EBADMSG);
	ASSERT_ERR(parse("CHV-STATUS +1+127+127+127+3+0", &c), EBADMSG);
	ASSERT_ERR(parse("UIF-1 %0", &c), EBADMSG);
	ASSERT_ERR(parse("UIF-1 %01", &c), EBADMSG);
	/* overlong */
	ASSERT_ERR(parse("CHV-STATUS +1+127+127+127+3+0+3+9", &c), EBADMSG);
	ASSERT_ERR(parse("SIG-COUNTER 4294967296", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-FPR 1 3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E00", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-FPR 1 3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E extra", &c), EBADMSG);
	ASSERT_ERR(parse("UIF-1 %01%20%20", &c), EBADMSG);
	memset(big, 'a', sizeof(big) - 1);
	memcpy(big, "DISP-NAME ", 10);
	big[sizeof(big) - 1] = 0;
	ASSERT_ERR(parse(big, &c), EMSGSIZE);
	/* wrong values */
	ASSERT_ERR(parse("SERIALNO D2760001240203040006123456780000", &c),
	           EBADMSG); /* not OpenPGP */
	ASSERT_ERR(parse("SERIALNO D276000124010304000612345678000G", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-FPR 4 3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-FPR 0 3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-TIME 1 -5", &c), EBADMSG);
	ASSERT_ERR(parse("SIG-COUNTER 4x", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-ATTR 1 99 Ed25519", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-ATTR 1 1 rsa", &c), EBADMSG);
	ASSERT_ERR(parse("KEY-ATTR 1 22 Ed%0025519", &c), EBADMSG);
	ASSERT_ERR(parse("DISP-NAME a%0Ab", &c), EBADMSG);
	ASSERT_ERR(parse("DISP-NAME a%zzb", &c), EBADMSG);
	ASSERT_ERR(parse("CHV-STATUS +1+127+127+127+3+0+300", &c), EBADMSG);
	ASSERT_ERR(parse("MANUFACTURER 65536 X", &c), EBADMSG);
}

/* A DISP-NAME of 128 bytes and more: too long, as over PC/SC (issue 32: its DO 5B was rebuilt
 * with the length byte 0x80, which reads as malformed TLV). 127 bytes took the short form. */
TEST(disp_name_too_long)
{
	static const size_t lengths[] = { 64, 127, 128, 255, 256, 900 };
	struct openpgp_card c;
	char line[16 + 900];

	for (size_t i = 0; i < ELEMENTSOF(lengths); i++) {
		memset(&c, 0, sizeof(c));
		memcpy(line, "DISP-NAME ", 10);
		memset(line + 10, 'a', lengths[i]);
		line[10 + lengths[i]] = 0;
		ASSERT_ERR(parse(line, &c), EMSGSIZE);
		ASSERT_STREQ(c.error, "65: cardholder name too long (over 63 bytes)");
	}
	/* the longest that fits, and Latin-1 converted before it is measured */
	memset(&c, 0, sizeof(c));
	memset(line + 10, 'a', 63);
	line[10 + 63] = 0;
	ASSERT_OK(parse(line, &c));
	ASSERT_EQ(strlen(c.cardholder), 63);
	ASSERT_ERR(parse("DISP-NAME %E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9"
	                 "%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9%E9",
	                 &c),
	           EMSGSIZE);
}

/* The rules both read paths share (issue: the scdaemon path failed on a UIF byte our own read
 * calls unknown, and took scdaemon's maker name, "unknown" in GnuPG 2.2 for Nitrokey). */
TEST(same_rules_as_card_read)
{
	struct openpgp_card c;

	memset(&c, 0, sizeof(c));
	ASSERT_OK(parse("UIF-2 %05+", &c));
	ASSERT_EQ(c.slots[1].touch, TOUCH_UNKNOWN);
	ASSERT_OK(parse("MANUFACTURER 15 unknown", &c));
	ASSERT_STREQ(c.manufacturer, "Nitrokey");
	ASSERT_OK(parse("MANUFACTURER 49152 Someone+New", &c));
	ASSERT_STREQ(c.manufacturer, "unknown (0xC000)");
	/* the URL rule of card_parse_url(): printable ASCII without spaces */
	ASSERT_ERR(parse("PUBKEY-URL https://a+b", &c), EBADMSG);
	ASSERT_OK(parse("PUBKEY-URL https://k.example/a", &c));
	ASSERT_STREQ(c.url, "https://k.example/a");
}

TEST(token_from_card)
{
	struct openpgp_card c;
	struct token t;

	ASSERT_EQ(pcsc_yubikey_interfaces("Yubico YubiKey OTP+FIDO+CCID 00 00"),
	          USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID);
	ASSERT_EQ(pcsc_yubikey_interfaces("Yubico YubiKey CCID 01 00"), USB_IFACE_CCID);
	ASSERT_EQ(pcsc_yubikey_interfaces("Yubico YubiKey FIDO+CCID 00 00"),
	          USB_IFACE_FIDO | USB_IFACE_CCID);
	ASSERT_EQ(pcsc_yubikey_interfaces("Virtual PCD 00 00"), 0);
	ASSERT_EQ(pcsc_yubikey_interfaces("Yubico YubiKey"), 0);

	memset(&c, 0, sizeof(c));
	ASSERT_OK(parse("SERIALNO D2760001240103040006005123450000", &c));
	strcpy(c.firmware, "5.4.3");
	memset(&t, 0, sizeof(t));
	pcsc_token_from_card("Yubico YubiKey OTP+FIDO+CCID 00 00", &c, &t);
	ASSERT_EQ(t.kind, TOKEN_KIND_YUBIKEY);
	ASSERT_STREQ(t.serial, "512345");
	ASSERT_STREQ(t.model, "YubiKey");
	ASSERT_STREQ(t.firmware, "5.4.3");
	ASSERT_EQ(t.usb_interfaces, USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID);

	memset(&c, 0, sizeof(c));
	ASSERT_OK(parse("SERIALNO D276000124010304000F0A1B2C3D0000", &c));
	memset(&t, 0, sizeof(t));
	pcsc_token_from_card("Nitrokey Nitrokey 3 [CCID/ICCD Interface] 00 00", &c, &t);
	ASSERT_EQ(t.kind, TOKEN_KIND_NITROKEY);
	ASSERT_STREQ(t.serial, "0A1B2C3D");
	ASSERT_STREQ(t.model, "");

	memset(&c, 0, sizeof(c));
	ASSERT_OK(parse("SERIALNO D27600012401030400050000A0010000", &c));
	memset(&t, 0, sizeof(t));
	pcsc_token_from_card("Virtual PCD 00 00", &c, &t);
	ASSERT_EQ(t.kind, TOKEN_KIND_OPENPGP_CARD);
	ASSERT_STREQ(t.serial, "0000A001");

	/* No OpenPGP application on a YubiKey: kind and model from the reader name only. */
	memset(&t, 0, sizeof(t));
	pcsc_token_from_card("Yubico YubiKey OTP+FIDO+CCID 00 00", NULL, &t);
	ASSERT_EQ(t.kind, TOKEN_KIND_YUBIKEY);
	ASSERT_STREQ(t.serial, "");
}

int main(void)
{
	RUN(recorded);
	RUN(variants);
	RUN(malformed);
	RUN(same_rules_as_card_read);
	RUN(disp_name_too_long);
	RUN(token_from_card);
	return 0;
}
