# SPDX-License-Identifier: LGPL-2.1-or-later
"""The security status of the bed's OpenPGP card: PINs, retry counters, and what
SELECT, another application and a reset do to a verified PIN on each applet.

What it does: VERIFY (OpenPGP card 3.4, 7.2.2) for PW1 in mode 81 (signing) and
82 (the rest) and PW3 (83), with the retry counters of C4 kept in the profile
("pin_retries", so GET DATA and the test see them move), 63Cx on a wrong PIN,
6983 once blocked, the status on a VERIFY without data, and P1=FF to reset it.
The rules per applet (profile key "applet") say which access states each event
clears; each is cited from the applet's source or, for the closed YubiKey
firmware, from what GnuPG's scdaemon does to cope with it.

What it does not do: APDU framing, keys, touch (openpgp_use.py); CHANGE
REFERENCE DATA, RESET RETRY COUNTER, KDF (refused by the card, 6982).
"""

PW1_SIGN, PW1_OTHER, PW3 = "pw1_81", "pw1_82", "pw3"
ALL = (PW1_SIGN, PW1_OTHER, PW3)
PW1 = (PW1_SIGN, PW1_OTHER)
REFS = {0x81: PW1_SIGN, 0x82: PW1_OTHER, 0x83: PW3}

# Other applications' AIDs, to SELECT on the same card.
AID_YUBICO_OATH = "A0000005272101"
AID_PIV = "A000000308"
AID_YUBICO_MGMT = "A000000527471117"
AID_YUBICO_OTP = "A0000005272001"
AID_TRUSSED_ADMIN = "A00000084700000001"

RULES = {
    # YubiKey firmware is closed; what it does is what GnuPG had to code around.
    # gnupg scd/app-openpgp.c do_reselect(): after re-SELECTing OpenPGP on a YubiKey it sets
    # did_chv1 = did_chv2 = did_chv3 = 0, i.e. the card forgot every verified PIN: a SELECT of
    # OpenPGP, even while it is selected, clears PW1 and PW3. scd/app.c
    # check_external_interference(): with pcsc-shared on a YubiKey scdaemon reads 4F before each
    # use, because another program's SELECT of another application (OATH, PIV: the Yubico
    # Authenticator case, yubioath-flutter#617) leaves OpenPGP deselected and its PINs gone.
    "yubikey": {"select_openpgp": ALL, "select_other": ALL, "reset": ALL,
                "other_aids": [AID_YUBICO_MGMT, AID_YUBICO_OTP, AID_YUBICO_OATH, AID_PIV]},
    # Nitrokey 3, opcard-rs (github:Nitrokey/opcard-rs, 2d9170d8): src/command.rs select()
    # clears only cur_do and keyrefs, so a SELECT of OpenPGP again keeps the PINs; src/card.rs
    # deselect() calls reset(), which clears state.volatile (the PINs), when apdu-dispatch
    # selects another application (PIV, secrets, admin); the volatile state is RAM: gone at
    # power off.
    "nitrokey3": {"select_openpgp": (), "select_other": ALL, "reset": ALL,
                  "other_aids": [AID_PIV, AID_YUBICO_OATH, AID_TRUSSED_ADMIN]},
    # Gnuk (github:TheStaticTurtle/gnuk, a mirror of gniibe's, 710fabc3): src/openpgp.c
    # cmd_select_file() sets file_selection for the OpenPGP AID and nothing else (PINs kept);
    # any other AID answers GPG_NO_FILE (6A82) before touching anything; only a SELECT of the
    # MF (3F00) calls ac_fini(), which clears every PIN. Power off: usb-ccid.c ccid_power_off()
    # signals EV_EXIT, gpg_fini() calls ac_fini().
    "gnuk": {"select_openpgp": (), "select_other": (), "select_mf": ALL, "reset": ALL,
             "other_aids": []},
    # SmartPGP (github:ANSSI-FR/SmartPGP, 8e7ebfdc): SmartPGPApplet.java process() calls
    # clearConnection() on every SELECT of the applet (user_pin, user_puk and admin_pin
    # reset), again or after another; Transients.java keeps the PW1 modes 81/82 in
    # CLEAR_ON_DESELECT arrays, so selecting another applet drops PW1 (PW3's OwnerPIN waits for
    # the SELECT that must come before SmartPGP answers again, which clears it). Java Card
    # transient state is cleared at card reset.
    "smartpgp": {"select_openpgp": ALL, "select_other": PW1, "reset": ALL,
                 "other_aids": [AID_PIV]},
}

DEFAULT_PINS = {"pw1": "123456", "pw3": "12345678"}
MIN_LEN = {"pw1": 6, "pw3": 8}  # OpenPGP card 3.4, 4.3.1


class Security:
    """The volatile access status of one card and the persistent counters in its profile."""

    def __init__(self, profile):
        self.profile = profile
        self.state = set()

    @property
    def rules(self):
        return RULES[self.profile.get("applet", "yubikey")]

    def clear(self, refs):
        self.state.difference_update(refs)

    def event(self, what):
        """A rule's event happened ("select_openpgp", "select_other", "select_mf", "reset")."""
        self.clear(self.rules.get(what, ()))

    def has(self, ref):
        return ref in self.state

    def retries(self, pin):
        return int(self.profile.setdefault("pin_retries", {}).get(pin, 3))

    def set_retries(self, pin, n):
        self.profile.setdefault("pin_retries", {})[pin] = n

    def verify(self, p1, p2, data):
        """VERIFY; returns the status word (OpenPGP card 3.4, 7.2.2)."""
        ref = REFS.get(p2)
        if ref is None or p1 not in (0x00, 0xFF):
            return 0x6A86
        if p1 == 0xFF:  # reset the access status of this reference
            self.state.discard(ref)
            return 0x9000
        pin = "pw3" if ref == PW3 else "pw1"
        left = self.retries(pin)
        if not data:  # the status: verified, or the tries left
            if ref in self.state:
                return 0x9000
            return 0x6983 if left == 0 else 0x63C0 | left
        if left == 0:
            return 0x6983
        want = self.profile.get("pins", {}).get(pin, DEFAULT_PINS[pin])
        if len(data) < MIN_LEN[pin] or bytes(data) != want.encode():
            self.state.discard(ref)
            self.set_retries(pin, left - 1)
            return 0x63C0 | (left - 1)
        self.set_retries(pin, int(self.profile.get("pin_retries_max", {}).get(pin, 3)))
        self.state.add(ref)
        return 0x9000

    def after_signature(self):
        """C4's first byte 00 (pw1_valid_once): PW1 is good for one PSO:CDS only
        (OpenPGP card 3.4, 4.4.1 DO C4)."""
        if self.profile.get("pw1_valid_once", True):
            self.state.discard(PW1_SIGN)
