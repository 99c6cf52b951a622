/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * USB identification of tokens. The descriptor parser is pure and fuzzed (fuzz-card-usb.c): the
 * bytes come from a device, through the kernel, and are checked like any other input: every
 * length against what is left, the configuration's wTotalLength against its contents, exact sizes
 * for the descriptors we read fields from (USB 2.0, 9.6). usb_ident_read_otp() is the one place
 * that uses libykpers-1, whose libusb backend opens the device and detaches the keyboard driver
 * from interface 0 for the few milliseconds of the read, as ykinfo does.
 *
 * Does not: open CCID or FIDO interfaces, or write anything to a device.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ykcore.h>
#include <ykdef.h>
#include <ykstatus.h>

#include "card-usb-table.h"
#include "card-usb.h"

#define USB_DT_DEVICE 0x01
#define USB_DT_CONFIG 0x02
#define USB_DT_INTERFACE 0x04
#define USB_DT_DEVICE_SIZE 18
#define USB_DT_CONFIG_SIZE 9
#define USB_DT_INTERFACE_SIZE 9

#define USB_CLASS_HID 0x03
#define USB_CLASS_CCID 0x0b

#define YUBICO_VID 0x1050

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* One configuration: p points at its descriptor, n is its wTotalLength, checked by the caller. */
static int parse_config(const uint8_t *p, size_t n, bool collect, struct usb_desc *d)
{
	size_t left = n - USB_DT_CONFIG_SIZE;

	p += USB_DT_CONFIG_SIZE;
	while (left > 0) {
		size_t len;

		if (left < 2)
			return -EBADMSG;
		len = p[0];
		if (len < 2 || len > left)
			return -EBADMSG;
		switch (p[1]) {
		case USB_DT_DEVICE:
		case USB_DT_CONFIG:
			return -EBADMSG; /* not inside a configuration */
		case USB_DT_INTERFACE:
			if (len != USB_DT_INTERFACE_SIZE)
				return -EBADMSG;
			if (!collect || p[3] != 0) /* alternate settings repeat an interface */
				break;
			if (d->n_interfaces >= USB_DESC_INTERFACES_MAX)
				return -EMSGSIZE;
			d->interfaces[d->n_interfaces++] = (struct usb_iface_desc){
				.number = p[2],
				.class = p[5],
				.subclass = p[6],
				.protocol = p[7],
			};
			break;
		default:
			break; /* endpoints, HID, CCID class descriptors: not ours to read */
		}
		p += len;
		left -= len;
	}
	return 0;
}

int usb_desc_parse(const uint8_t *p, size_t n, struct usb_desc *ret)
{
	struct usb_desc d = {};
	size_t left = n;
	int r;

	if (left < USB_DT_DEVICE_SIZE || p[0] != USB_DT_DEVICE_SIZE || p[1] != USB_DT_DEVICE)
		return -EBADMSG;
	d.device_class = p[4];
	d.vendor = le16(p + 8);
	d.product = le16(p + 10);
	d.bcd_device = le16(p + 12);
	d.i_serial = p[16];
	p += USB_DT_DEVICE_SIZE;
	left -= USB_DT_DEVICE_SIZE;

	while (left > 0) {
		size_t total;

		if (left < USB_DT_CONFIG_SIZE)
			return -EBADMSG;
		if (p[0] != USB_DT_CONFIG_SIZE || p[1] != USB_DT_CONFIG)
			return -EBADMSG;
		total = le16(p + 2);
		if (total < USB_DT_CONFIG_SIZE || total > left)
			return -EBADMSG;
		if (d.n_configurations == UINT8_MAX)
			return -EMSGSIZE;
		r = parse_config(p, total, d.n_configurations == 0, &d);
		if (r < 0)
			return r;
		d.n_configurations++;
		p += total;
		left -= total;
	}

	*ret = d;
	return 0;
}

unsigned usb_desc_interfaces(const struct usb_desc *d)
{
	unsigned ifs = 0;

	for (size_t i = 0; i < d->n_interfaces; i++) {
		const struct usb_iface_desc *f = &d->interfaces[i];

		if (f->class == USB_CLASS_CCID)
			ifs |= USB_IFACE_CCID;
		else if (f->class == USB_CLASS_HID && f->subclass == 1 && f->protocol == 1)
			ifs |= USB_IFACE_OTP; /* boot keyboard: how YubiKeys type their OTPs */
		else if (f->class == USB_CLASS_HID)
			ifs |= USB_IFACE_FIDO;
	}
	return ifs;
}

int usb_ident_firmware_from_bcd(uint16_t bcd, char *buf, size_t size)
{
	unsigned hi = bcd >> 8, mid = (bcd >> 4) & 0xf, lo = bcd & 0xf;
	int k;

	if ((hi & 0xf) > 9 || (hi >> 4) > 9 || mid > 9 || lo > 9)
		return -EINVAL;
	k = snprintf(buf, size, "%u.%u.%u", (hi >> 4) * 10 + (hi & 0xf), mid, lo);
	if (k < 0 || (size_t)k >= size)
		return -EMSGSIZE;
	return 0;
}

bool usb_ident_has_otp(uint16_t vendor, uint16_t product)
{
	const struct token_model *tm = token_table_lookup(vendor, product);

	return tm && tm->kind == TOKEN_KIND_YUBIKEY && (tm->interfaces & USB_IFACE_OTP);
}

int usb_ident_token(uint16_t vendor, uint16_t product, uint16_t bcd_device,
                    const struct usb_desc *d, const char *usb_serial, bool security_device,
                    struct token *ret)
{
	const struct token_model *tm = token_table_lookup(vendor, product);
	unsigned desc_ifs = d ? usb_desc_interfaces(d) : 0;
	struct token t = {};

	if (!tm && !security_device && !(desc_ifs & USB_IFACE_CCID))
		return -ENOENT;

	t.usb_vendor = vendor;
	t.usb_product = product;
	if (tm) {
		t.kind = tm->kind;
		t.usb_interfaces = tm->interfaces;
		strcpy_trunc(t.model, sizeof(t.model), tm->model);
	} else {
		/* A security device nobody listed: a smartcard-shaped one may hold an OpenPGP card.
		 */
		t.kind = TOKEN_KIND_UNKNOWN;
		t.usb_interfaces = desc_ifs;
	}

	if (vendor == YUBICO_VID &&
	    usb_ident_firmware_from_bcd(bcd_device, t.firmware, sizeof(t.firmware)) >= 0 && tm &&
	    streq(tm->model, "YubiKey 4/5")) {
		/* The 04xx product ids are shared by the YubiKey 4 and 5 series. */
		unsigned major = (unsigned)((bcd_device >> 12) * 10 + ((bcd_device >> 8) & 0xf));

		if (major == 4 || major == 5)
			snprintf(t.model, sizeof(t.model), "YubiKey %u", major);
	}

	/* A serial too long for the struct is dropped, not cut: a cut serial would be wrong. */
	if (usb_serial && strcpy_bounded(t.serial, sizeof(t.serial), usb_serial) < 0)
		t.serial[0] = 0;

	*ret = t;
	return 0;
}

/* ykpers keeps global state (yk_errno aside, its libusb context): one caller at a time. */
static pthread_mutex_t ykpers_lock = PTHREAD_MUTEX_INITIALIZER;

static int ykpers_errno(void)
{
	switch (yk_errno) {
	case YK_ENOKEY:
		return -ENODEV;
	case YK_ENOMEM:
		return -ENOMEM;
	case YK_EUSBERR:
		/* libusb's text for LIBUSB_ERROR_ACCESS; ykpers keeps the code to itself. */
		if (strstr(yk_usb_strerror(), "ccess"))
			return -EACCES;
		return -EIO;
	default:
		return -EIO;
	}
}

/* With ykpers initialized: opens the first key with this product id and reads it. */
static int read_otp(uint16_t product, unsigned *ret_serial, char *ret_firmware,
                    size_t firmware_size)
{
	const int pids[] = { product };
	char firmware[16];
	YK_STATUS *st = NULL;
	YK_KEY *yk = NULL;
	unsigned serial = 0;
	int r, k;

	yk = yk_open_key_vid_pid(YUBICO_VID, pids, 1, 0);
	if (!yk)
		return ykpers_errno();
	st = ykds_alloc();
	if (!st) {
		r = -ENOMEM;
		goto finish;
	}
	if (!yk_get_status(yk, st) || !yk_get_serial(yk, 0, 0, &serial)) {
		r = ykpers_errno();
		goto finish;
	}
	k = snprintf(firmware, sizeof(firmware), "%d.%d.%d", ykds_version_major(st),
	             ykds_version_minor(st), ykds_version_build(st));
	r = strcpy_bounded(ret_firmware, firmware_size, firmware);
	if (k < 0 || (size_t)k >= sizeof(firmware) || r < 0) {
		r = -EMSGSIZE;
		goto finish;
	}
	*ret_serial = serial;
	r = 0;
finish:
	if (st)
		ykds_free(st);
	yk_close_key(yk);
	return r;
}

int usb_ident_read_otp(uint16_t product, const char *devnode, unsigned *ret_serial,
                       char *ret_firmware, size_t firmware_size)
{
	int r;

	if (isempty(devnode))
		return -ENODEV;
	/* libusb opens the usbfs node read-write; failing here says why without touching USB. */
	if (access(devnode, R_OK | W_OK) < 0)
		return errno == EACCES || errno == EPERM ? -EACCES : -ENODEV;

	pthread_mutex_lock(&ykpers_lock);
	if (yk_init()) {
		r = read_otp(product, ret_serial, ret_firmware, firmware_size);
		yk_release();
	} else {
		r = ykpers_errno();
	}
	pthread_mutex_unlock(&ykpers_lock);
	return r;
}
