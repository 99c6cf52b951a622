/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * USB descriptors (sysfs `descriptors`, written by the device): any bytes give 0 or -EBADMSG /
 * -EMSGSIZE, never a read past the end; what parses yields a token the rest of keyctl can hold.
 */
#include <stdio.h>

#include "card-usb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct usb_desc d;
	struct token t;
	int r;

	r = usb_desc_parse(data, size, &d);
	if (r < 0) {
		if (r != -EBADMSG && r != -EMSGSIZE)
			__builtin_trap();
		return 0;
	}
	if (d.n_interfaces > USB_DESC_INTERFACES_MAX || (d.n_interfaces && !d.n_configurations))
		__builtin_trap();
	if (usb_desc_interfaces(&d) & ~(USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID))
		__builtin_trap();
	r = usb_ident_token(d.vendor, d.product, d.bcd_device, &d, NULL, false, &t);
	if (r >= 0 && (!memchr(t.model, 0, sizeof(t.model)) ||
	               !memchr(t.firmware, 0, sizeof(t.firmware)) || t.usb_vendor != d.vendor))
		__builtin_trap();
	return 0;
}
