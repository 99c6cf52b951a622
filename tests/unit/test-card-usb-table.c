/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The token table: lookups, order and uniqueness, and that udev-rules/70-keyctl.rules grants
 * access to exactly the table's uaccess entries (the ids live in one place).
 */
#include <libgen.h>
#include <stdio.h>

#include "test.h"
#include "card-usb-table.h"

TEST(lookup)
{
	const struct token_model *t = token_table_lookup(0x1050, 0x0407);

	ASSERT_TRUE(t);
	ASSERT_EQ(t->kind, TOKEN_KIND_YUBIKEY);
	ASSERT_EQ(t->interfaces, USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID);
	ASSERT_STREQ(t->vendor_name, "Yubico");

	t = token_table_lookup(0x1050, 0x0120);
	ASSERT_TRUE(t);
	ASSERT_STREQ(t->model, "Security Key by Yubico");
	ASSERT_EQ(t->interfaces, USB_IFACE_FIDO);

	t = token_table_lookup(0x1050, 0x0111);
	ASSERT_TRUE(t);
	ASSERT_EQ(t->interfaces, USB_IFACE_OTP | USB_IFACE_CCID);

	t = token_table_lookup(0x20a0, 0x42b2);
	ASSERT_TRUE(t);
	ASSERT_EQ(t->kind, TOKEN_KIND_NITROKEY);
	ASSERT_STREQ(t->model, "Nitrokey 3");
	ASSERT_EQ(t->interfaces, USB_IFACE_FIDO | USB_IFACE_CCID);

	t = token_table_lookup(0x234b, 0x0000);
	ASSERT_TRUE(t);
	ASSERT_EQ(t->kind, TOKEN_KIND_OPENPGP_CARD);

	ASSERT_FALSE(token_table_lookup(0x1050, 0x0408));
	ASSERT_FALSE(token_table_lookup(0x046d, 0xc52b)); /* a mouse receiver */
	ASSERT_FALSE(token_table_lookup(0, 0));
	ASSERT_FALSE(token_table_lookup(0xffff, 0xffff));

	ASSERT_STREQ(token_table_vendor_name(0x20a0), "Nitrokey");
	ASSERT_FALSE(token_table_vendor_name(0x046d));
}

/* yubikit's PID enum: the low bits of 0x04xx are the enabled interfaces' mode. */
TEST(yubikey_pids)
{
	static const struct {
		uint16_t pid;
		unsigned ifs;
	} pids[] = {
		{ 0x0010, USB_IFACE_OTP },
		{ 0x0110, USB_IFACE_OTP },
		{ 0x0112, USB_IFACE_CCID },
		{ 0x0113, USB_IFACE_FIDO },
		{ 0x0114, USB_IFACE_OTP | USB_IFACE_FIDO },
		{ 0x0115, USB_IFACE_FIDO | USB_IFACE_CCID },
		{ 0x0116, USB_IFACE_OTP | USB_IFACE_FIDO | USB_IFACE_CCID },
		{ 0x0401, USB_IFACE_OTP },
		{ 0x0402, USB_IFACE_FIDO },
		{ 0x0403, USB_IFACE_OTP | USB_IFACE_FIDO },
		{ 0x0404, USB_IFACE_CCID },
		{ 0x0405, USB_IFACE_OTP | USB_IFACE_CCID },
		{ 0x0406, USB_IFACE_FIDO | USB_IFACE_CCID },
		{ 0x0410, USB_IFACE_OTP | USB_IFACE_FIDO },
	};

	for (size_t i = 0; i < ELEMENTSOF(pids); i++) {
		const struct token_model *t = token_table_lookup(0x1050, pids[i].pid);

		ASSERT_TRUE(t);
		ASSERT_EQ(t->kind, TOKEN_KIND_YUBIKEY);
		ASSERT_EQ(t->interfaces, pids[i].ifs);
	}
}

TEST(sorted_unique)
{
	const struct token_model *t;
	size_t n = token_table_get(&t);

	ASSERT_TRUE(n > 20);
	for (size_t i = 0; i < n; i++) {
		ASSERT_TRUE(t[i].vendor_name && *t[i].vendor_name);
		ASSERT_TRUE(t[i].model && *t[i].model);
		ASSERT_TRUE(t[i].interfaces != 0);
		ASSERT_TRUE(t[i].kind < TOKEN_KIND_MAX);
		/* the rules give YubiKeys and Nitrokeys, and only them, to the seat's user */
		ASSERT_EQ(t[i].uaccess,
		          t[i].kind == TOKEN_KIND_YUBIKEY || t[i].kind == TOKEN_KIND_NITROKEY);
		ASSERT_TRUE(token_table_lookup(t[i].vendor, t[i].product) == &t[i]);
		if (i > 0) {
			uint32_t a = (uint32_t)t[i - 1].vendor << 16 | t[i - 1].product;
			uint32_t b = (uint32_t)t[i].vendor << 16 | t[i].product;

			if (a >= b)
				TEST_FAIL("table not sorted or not unique at %04x:%04x",
				          t[i].vendor, t[i].product);
		}
	}
}

static FILE *rules_open(void)
{
	char path[4096];
	const char *srcdir = getenv("KEYCTL_SRCDIR");
	FILE *f;

	if (srcdir) {
		snprintf(path, sizeof(path), "%s/udev-rules/70-keyctl.rules", srcdir);
	} else {
		/* __FILE__ is relative to the build directory, where meson runs its tests */
		char here[4096];

		snprintf(here, sizeof(here), "%s", __FILE__);
		snprintf(path, sizeof(path), "%s/../../udev-rules/70-keyctl.rules", dirname(here));
	}
	f = fopen(path, "re");
	if (!f)
		TEST_FAIL("cannot open %s (set KEYCTL_SRCDIR)", path);
	return f;
}

enum section { SECTION_NONE, SECTION_USB, SECTION_HIDRAW };

struct seen {
	bool usb, hidraw;
};

TEST(rules_match_table)
{
	const struct token_model *t;
	size_t n = token_table_get(&t), n_usb = 0, n_hidraw = 0;
	struct seen *seen = calloc(n, sizeof(*seen));
	enum section section = SECTION_NONE;
	char line[1024];
	FILE *f = rules_open();

	ASSERT_TRUE(seen);
	while (fgets(line, sizeof(line), f)) {
		unsigned vid, pid;
		const struct token_model *m;

		if (strstr(line, "LABEL=\"keyctl_usb\""))
			section = SECTION_USB;
		else if (strstr(line, "LABEL=\"keyctl_hidraw\""))
			section = SECTION_HIDRAW;
		else if (strstr(line, "LABEL=\"keyctl_end\""))
			section = SECTION_NONE;

		if (section == SECTION_USB &&
		    sscanf(line,
		           "SUBSYSTEM==\"usb\", ATTR{idVendor}==\"%4x\", ATTR{idProduct}==\"%4x\"",
		           &vid, &pid) == 2) {
			m = token_table_lookup((uint16_t)vid, (uint16_t)pid);
			if (!m || !m->uaccess || seen[m - t].usb)
				TEST_FAIL("usb rule for %04x:%04x: not in the table, or twice", vid,
				          pid);
			ASSERT_TRUE(strstr(line, "TAG+=\"uaccess\""));
			ASSERT_TRUE(strstr(line, "TAG+=\"systemd\""));
			ASSERT_TRUE(strstr(line, "ENV{SYSTEMD_USER_WANTS}+=\"keyctld.service\""));
			seen[m - t].usb = true;
			n_usb++;
		} else if (section == SECTION_HIDRAW &&
		           sscanf(line, "ATTRS{idVendor}==\"%4x\", ATTRS{idProduct}==\"%4x\"", &vid,
		                  &pid) == 2) {
			m = token_table_lookup((uint16_t)vid, (uint16_t)pid);
			if (!m || !m->uaccess || seen[m - t].hidraw)
				TEST_FAIL("hidraw rule for %04x:%04x: not in the table, or twice",
				          vid, pid);
			ASSERT_TRUE(strstr(line, "TAG+=\"uaccess\""));
			ASSERT_FALSE(strstr(line, "SYSTEMD_USER_WANTS"));
			seen[m - t].hidraw = true;
			n_hidraw++;
		} else if (line[0] != '#' && strstr(line, "idVendor")) {
			TEST_FAIL("rule outside the expected form: %s", line);
		}
	}
	fclose(f);

	for (size_t i = 0; i < n; i++)
		if (t[i].uaccess && (!seen[i].usb || !seen[i].hidraw))
			TEST_FAIL("%04x:%04x (%s) has no rule: run tools/gen-udev-rules",
			          t[i].vendor, t[i].product, t[i].model);
	ASSERT_TRUE(n_usb > 0);
	ASSERT_EQ(n_usb, n_hidraw);
	free(seen);
}

int main(void)
{
	RUN(lookup);
	RUN(yubikey_pids);
	RUN(sorted_unique);
	RUN(rules_match_table);
	return 0;
}
