/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Identifies a USB token: its raw descriptors (the sysfs `descriptors` file) and the token table
 * give kind, model, enabled interfaces and, for Yubico, the firmware (bcdDevice); libykpers-1
 * reads a YubiKey's serial and firmware through the OTP interface when that is enabled and ours
 * to open.
 *
 * Does not: watch devices (watch-udev.c) or talk to the CCID interface (watch-pcsc.c).
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "types.h"

#define USB_DESC_INTERFACES_MAX 32

struct usb_iface_desc {
	uint8_t number, class, subclass, protocol;
};

/* What keyctl needs from a device's descriptors (USB 2.0, 9.6.1, 9.6.3, 9.6.5). */
struct usb_desc {
	uint16_t vendor, product, bcd_device;
	uint8_t device_class;
	uint8_t i_serial; /* string index of the serial number; 0: none */
	uint8_t n_configurations; /* configurations found in the bytes */
	size_t n_interfaces; /* of the first configuration, alternate setting 0 */
	struct usb_iface_desc interfaces[USB_DESC_INTERFACES_MAX];
};

/*
 * Parses a device descriptor followed by zero or more configuration descriptors, each with its
 * interface, endpoint and class descriptors (the layout of sysfs `descriptors`). Multi-byte
 * fields are little-endian. Returns 0, -EBADMSG on malformed input, -EMSGSIZE over
 * USB_DESC_INTERFACES_MAX interfaces. Pure: no I/O; ret is written only on success.
 */
int usb_desc_parse(const uint8_t *p, size_t n, struct usb_desc *ret);

/* USB_IFACE_* guessed from interface classes: CCID (0x0b), a boot keyboard (the OTP interface)
 * and any other HID (taken for FIDO). */
unsigned usb_desc_interfaces(const struct usb_desc *d);

/* Yubico's bcdDevice is the firmware version: 0x0543 -> "5.4.3". -EINVAL if not BCD. */
int usb_ident_firmware_from_bcd(uint16_t bcd, char *buf, size_t size);

/*
 * Fills kind, model, firmware, usb_interfaces, usb_vendor, usb_product and serial of a token
 * seen on USB, from the table and what sysfs gave: d may be NULL (no descriptors readable),
 * usb_serial the `serial` attribute or NULL. The table's interfaces win over the descriptors'
 * (they are what the product id enables). security_device: udev tagged it so (systemd's
 * 60-fido-id.rules). Returns 0, or -ENOENT when neither the table, the tag nor the descriptors (a
 * CCID interface) make it a token. Pure.
 */
int usb_ident_token(uint16_t vendor, uint16_t product, uint16_t bcd_device,
                    const struct usb_desc *d, const char *usb_serial, bool security_device,
                    struct token *ret);

/* Whether a YubiKey's OTP interface can tell its serial (the table says OTP is enabled). */
bool usb_ident_has_otp(uint16_t vendor, uint16_t product);

/*
 * Reads a YubiKey's serial and firmware through its OTP interface with libykpers-1, which opens
 * the first YubiKey with this product id through libusb (devnode: /dev/bus/usb/BBB/DDD, checked
 * for access first). Blocks for USB control transfers (ykpers' own timeouts, about a second):
 * never call it on the event loop. Returns 0, -EACCES (no permission on devnode), -ENODEV (no
 * such key), -EIO (the key did not answer).
 */
int usb_ident_read_otp(uint16_t product, const char *devnode, unsigned *ret_serial,
                       char *ret_firmware, size_t firmware_size);

/* The text a token carries when its OTP interface could not be read for lack of permission. */
#define USB_IDENT_EACCES_TEXT \
	"no permission to read the YubiKey's OTP interface (install udev-rules/70-keyctl.rules)"
