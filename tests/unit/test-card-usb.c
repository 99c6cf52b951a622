/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usb-ident: the descriptor parser on valid, truncated, overlong and nested input; firmware from
 * bcdDevice; tokens from the table and descriptors; the OTP reader's refusals before any USB I/O.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "card-usb.h"

struct buf {
	uint8_t b[2048];
	size_t n;
	size_t config_at; /* where the open configuration descriptor starts */
};

static void put(struct buf *b, const uint8_t *p, size_t n)
{
	ASSERT_TRUE(b->n + n <= sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void device(struct buf *b, uint16_t vid, uint16_t pid, uint16_t bcd)
{
	const uint8_t d[18] = { 18,         1,        0x00,       0x02,     0,          0,
		                0,          64,       vid & 0xff, vid >> 8, pid & 0xff, pid >> 8,
		                bcd & 0xff, bcd >> 8, 1,          2,        3,          1 };
	put(b, d, sizeof(d));
}

static void config_begin(struct buf *b, uint8_t n_ifaces)
{
	const uint8_t c[9] = { 9, 2, 0, 0, n_ifaces, 1, 0, 0x80, 15 };

	b->config_at = b->n;
	put(b, c, sizeof(c));
}

static void config_end(struct buf *b)
{
	size_t total = b->n - b->config_at;

	b->b[b->config_at + 2] = total & 0xff;
	b->b[b->config_at + 3] = (uint8_t)(total >> 8);
}

static void iface(struct buf *b, uint8_t num, uint8_t alt, uint8_t cls, uint8_t sub, uint8_t proto)
{
	const uint8_t i[9] = { 9, 4, num, alt, 1, cls, sub, proto, 0 };
	const uint8_t ep[7] = { 7, 5, 0x81, 3, 8, 0, 10 };

	put(b, i, sizeof(i));
	if (cls == 0x03) {
		const uint8_t hid[9] = { 9, 0x21, 0x11, 0x01, 0, 1, 0x22, 71, 0 };
		put(b, hid, sizeof(hid));
	} else if (cls == 0x0b) {
		uint8_t ccid[54] = { 54, 0x21 };
		put(b, ccid, sizeof(ccid));
	}
	put(b, ep, sizeof(ep));
}

/* A YubiKey 5 with OTP+FIDO+CCID enabled, as its sysfs `descriptors` reads. */
static void yubikey5(struct buf *b)
{
	memset(b, 0, sizeof(*b));
	device(b, 0x1050, 0x0407, 0x0543);
	config_begin(b, 3);
	iface(b, 0, 0, 0x03, 1, 1);
	iface(b, 1, 0, 0x03, 0, 0);
	iface(b, 2, 0, 0x0b, 0, 0);
	config_end(b);
}

TEST(parse_valid)
{
	struct buf b;
	struct usb_desc d;

	yubikey5(&b);
	ASSERT_OK(usb_desc_parse(b.b, b.n, &d));
	ASSERT_EQ(d.vendor, 0x1050);
	ASSERT_EQ(d.product, 0x0407);
	ASSERT_EQ(d.bcd_device, 0x0543);
	ASSERT_EQ(d.i_serial, 3);
	ASSERT_EQ(d.n_configurations, 1);
	ASSERT_EQ(d.n_interfaces, 3);
	ASSERT_EQ(d.interfaces[2].number, 2);
	ASSERT_EQ(d.interfaces[2].class, 0x0b);
	ASSERT_EQ(usb_desc_interfaces(&d), USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID);

	/* The device descriptor alone: a device not configured yet. */
	ASSERT_OK(usb_desc_parse(b.b, 18, &d));
	ASSERT_EQ(d.n_configurations, 0);
	ASSERT_EQ(d.n_interfaces, 0);
	ASSERT_EQ(usb_desc_interfaces(&d), 0);
}

TEST(parse_alternates_and_configs)
{
	struct buf b = {};
	struct usb_desc d;

	device(&b, 0x20a0, 0x42b2, 0x0106);
	config_begin(&b, 2);
	iface(&b, 0, 0, 0x0b, 0, 0);
	iface(&b, 1, 0, 0x03, 0, 0);
	iface(&b, 1, 1, 0x03, 1, 1); /* alternate setting: the same interface again */
	config_end(&b);
	config_begin(&b, 1); /* a second configuration: read, checked, not collected */
	iface(&b, 0, 0, 0x03, 1, 1);
	config_end(&b);

	ASSERT_OK(usb_desc_parse(b.b, b.n, &d));
	ASSERT_EQ(d.n_configurations, 2);
	ASSERT_EQ(d.n_interfaces, 2);
	ASSERT_EQ(usb_desc_interfaces(&d), USB_IFACE_FIDO | USB_IFACE_CCID);
}

TEST(parse_truncated)
{
	struct buf b;
	struct usb_desc d = { .vendor = 0x4242 };

	yubikey5(&b);
	for (size_t k = 0; k < b.n; k++) {
		int r = usb_desc_parse(b.b, k, &d);

		if (k == 18)
			ASSERT_OK(r);
		else if (r != -EBADMSG)
			TEST_FAIL("prefix of %zu bytes: %d", k, r);
	}
	/* ret untouched on failure */
	d.vendor = 0x4242;
	ASSERT_ERR(usb_desc_parse(b.b, b.n - 1, &d), EBADMSG);
	ASSERT_EQ(d.vendor, 0x4242);
	ASSERT_ERR(usb_desc_parse(NULL, 0, &d), EBADMSG);
}

TEST(parse_overlong)
{
	struct buf b;
	struct usb_desc d;

	/* trailing bytes after the configuration */
	for (size_t extra = 1; extra <= 9; extra++) {
		yubikey5(&b);
		memset(b.b + b.n, 0x09, extra);
		ASSERT_ERR(usb_desc_parse(b.b, b.n + extra, &d), EBADMSG);
	}

	/* wTotalLength beyond the bytes, and below a configuration's own size */
	yubikey5(&b);
	b.b[18 + 2]++;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);
	yubikey5(&b);
	b.b[18 + 2] = 8;
	b.b[18 + 3] = 0;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);

	/* wTotalLength ending inside a descriptor: the endpoint crosses it */
	yubikey5(&b);
	b.b[18 + 2]--;
	ASSERT_ERR(usb_desc_parse(b.b, b.n - 1, &d), EBADMSG);

	/* the device descriptor's own length */
	yubikey5(&b);
	b.b[0] = 19;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);
	yubikey5(&b);
	b.b[1] = 2;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);

	/* an interface descriptor of the wrong size; a zero and a one-byte length */
	yubikey5(&b);
	b.b[18 + 9] = 10;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);
	yubikey5(&b);
	b.b[18 + 9] = 0;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);
	yubikey5(&b);
	b.b[18 + 9] = 1;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);
	/* a descriptor longer than its configuration */
	yubikey5(&b);
	b.b[18 + 9 + 9] = 0xff;
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);
}

TEST(parse_nested)
{
	struct buf b = {};
	struct usb_desc d;

	/* a configuration inside a configuration */
	device(&b, 0x1050, 0x0407, 0x0543);
	config_begin(&b, 1);
	{
		const uint8_t c[9] = { 9, 2, 9, 0, 1, 1, 0, 0x80, 15 };
		put(&b, c, sizeof(c));
	}
	iface(&b, 0, 0, 0x0b, 0, 0);
	config_end(&b);
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);

	/* a device descriptor inside a configuration */
	memset(&b, 0, sizeof(b));
	device(&b, 0x1050, 0x0407, 0x0543);
	config_begin(&b, 1);
	device(&b, 0x1050, 0x0407, 0x0543);
	config_end(&b);
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EBADMSG);

	/* too many interfaces: rejected, not cut */
	memset(&b, 0, sizeof(b));
	device(&b, 0x1050, 0x0407, 0x0543);
	config_begin(&b, USB_DESC_INTERFACES_MAX + 1);
	for (unsigned i = 0; i <= USB_DESC_INTERFACES_MAX; i++)
		iface(&b, (uint8_t)i, 0, 0xff, 0, 0);
	config_end(&b);
	ASSERT_ERR(usb_desc_parse(b.b, b.n, &d), EMSGSIZE);
}

TEST(firmware_from_bcd)
{
	char fw[16];

	ASSERT_OK(usb_ident_firmware_from_bcd(0x0543, fw, sizeof(fw)));
	ASSERT_STREQ(fw, "5.4.3");
	ASSERT_OK(usb_ident_firmware_from_bcd(0x0437, fw, sizeof(fw)));
	ASSERT_STREQ(fw, "4.3.7");
	ASSERT_OK(usb_ident_firmware_from_bcd(0x1234, fw, sizeof(fw)));
	ASSERT_STREQ(fw, "12.3.4");
	ASSERT_ERR(usb_ident_firmware_from_bcd(0x05a3, fw, sizeof(fw)), EINVAL);
	ASSERT_ERR(usb_ident_firmware_from_bcd(0xa543, fw, sizeof(fw)), EINVAL);
	ASSERT_ERR(usb_ident_firmware_from_bcd(0x0543, fw, 5), EMSGSIZE);
}

TEST(token)
{
	struct buf b;
	struct usb_desc d;
	struct token t;

	yubikey5(&b);
	ASSERT_OK(usb_desc_parse(b.b, b.n, &d));
	ASSERT_OK(usb_ident_token(0x1050, 0x0407, 0x0543, &d, NULL, false, &t));
	ASSERT_EQ(t.kind, TOKEN_KIND_YUBIKEY);
	ASSERT_STREQ(t.model, "YubiKey 5");
	ASSERT_STREQ(t.firmware, "5.4.3");
	ASSERT_STREQ(t.serial, "");
	ASSERT_EQ(t.usb_interfaces, USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID);
	ASSERT_EQ(t.usb_vendor, 0x1050);
	ASSERT_EQ(t.usb_product, 0x0407);

	/* the table's interfaces win: descriptors of another mode do not widen them */
	ASSERT_OK(usb_ident_token(0x1050, 0x0404, 0x0437, &d, "12345678", false, &t));
	ASSERT_STREQ(t.model, "YubiKey 4");
	ASSERT_STREQ(t.serial, "12345678");
	ASSERT_EQ(t.usb_interfaces, USB_IFACE_CCID);

	ASSERT_OK(usb_ident_token(0x1050, 0x0116, 0x0340, NULL, NULL, false, &t));
	ASSERT_STREQ(t.model, "YubiKey NEO");
	ASSERT_STREQ(t.firmware, "3.4.0");

	/* non-Yubico bcdDevice is not a firmware version */
	ASSERT_OK(usb_ident_token(0x20a0, 0x42b2, 0x0106, NULL, "0E6B6C61D48B48B1", false, &t));
	ASSERT_EQ(t.kind, TOKEN_KIND_NITROKEY);
	ASSERT_STREQ(t.model, "Nitrokey 3");
	ASSERT_STREQ(t.firmware, "");
	ASSERT_STREQ(t.serial, "0E6B6C61D48B48B1");

	/* a serial longer than SERIAL_MAX is dropped, not cut */
	ASSERT_OK(usb_ident_token(0x20a0, 0x42b2, 0x0106, NULL,
	                          "0123456789abcdef0123456789abcdef0123456789", false, &t));
	ASSERT_STREQ(t.serial, "");

	/* unknown ids: a token only when tagged by udev or smartcard-shaped */
	ASSERT_ERR(usb_ident_token(0x046d, 0xc52b, 0x1201, NULL, NULL, false, &t), ENOENT);
	ASSERT_OK(usb_ident_token(0x046d, 0xc52b, 0x1201, NULL, NULL, true, &t));
	ASSERT_EQ(t.kind, TOKEN_KIND_UNKNOWN);
	memset(&b, 0, sizeof(b));
	device(&b, 0x04e6, 0x5816, 0x0100);
	config_begin(&b, 1);
	iface(&b, 0, 0, 0x0b, 0, 0);
	config_end(&b);
	ASSERT_OK(usb_desc_parse(b.b, b.n, &d));
	ASSERT_OK(usb_ident_token(0x04e6, 0x5816, 0x0100, &d, NULL, false, &t));
	ASSERT_EQ(t.kind, TOKEN_KIND_UNKNOWN);
	ASSERT_EQ(t.usb_interfaces, USB_IFACE_CCID);

	ASSERT_TRUE(usb_ident_has_otp(0x1050, 0x0407));
	ASSERT_FALSE(usb_ident_has_otp(0x1050, 0x0406));
	ASSERT_FALSE(usb_ident_has_otp(0x20a0, 0x42b2));
}

TEST(read_otp_refusals)
{
	char fw[16] = "untouched";
	unsigned serial = 42;
	char path[] = "/tmp/test-usb-ident-XXXXXX";
	int fd;

	ASSERT_ERR(usb_ident_read_otp(0x0407, NULL, &serial, fw, sizeof(fw)), ENODEV);
	ASSERT_ERR(usb_ident_read_otp(0x0407, "", &serial, fw, sizeof(fw)), ENODEV);
	ASSERT_ERR(
	        usb_ident_read_otp(0x0407, "/nonexistent/bus/usb/001/002", &serial, fw, sizeof(fw)),
	        ENODEV);
	if (geteuid() != 0) {
		/* root passes any access check: the permission path needs an ordinary user */
		fd = mkstemp(path);
		ASSERT_TRUE(fd >= 0);
		close(fd);
		ASSERT_OK(chmod(path, 0400));
		ASSERT_ERR(usb_ident_read_otp(0x0407, path, &serial, fw, sizeof(fw)), EACCES);
		unlink(path);
	}
	ASSERT_STREQ(fw, "untouched");
	ASSERT_EQ(serial, 42);
}

int main(void)
{
	RUN(parse_valid);
	RUN(parse_alternates_and_configs);
	RUN(parse_truncated);
	RUN(parse_overlong);
	RUN(parse_nested);
	RUN(firmware_from_bcd);
	RUN(token);
	RUN(read_otp_refusals);
	return 0;
}
