# SPDX-License-Identifier: LGPL-2.1-or-later
"""The commands a card *in use* answers, for a profile with an "applet": VERIFY,
PSO:COMPUTE DIGITAL SIGNATURE, PSO:DECIPHER, INTERNAL AUTHENTICATE, PUT DATA
(DA) and the key import of gpg's keytocard (PUT DATA odd, DB, 4D), with the
signature counter and the touch a slot's UIF asks for.

What it does: access conditions (OpenPGP card 3.4, 7.2: PSO:CDS needs PW1 in
mode 81, PSO:DECIPHER and INTERNAL AUTHENTICATE mode 82, PUT DATA PW3), writes
into the card's profile (slots' algorithm, fingerprint, created, private, touch;
the signature counter), and waits for a touch through a hook the emulator sets.

What it does not do: framing and command chaining (openpgp_card.py), PIN
rules (openpgp_security.py), the mathematics (openpgp_crypto.py), GENERATE
(47 80) and PIN changes (still refused, 6982).
"""

import time

from . import openpgp_crypto as crypto
from .openpgp_security import PW1_SIGN, PW1_OTHER, PW3

# A touch answers a "cached" slot without another touch for 15 s (ykman openpgp keys
# set-touch: "Cached: touch required, cached for 15s after use"). Kept per slot here: Yubico
# does not say whether a touch for one slot serves another.
TOUCH_CACHE_S = 15.0
# A card waits this long for the touch, then refuses; a profile's "touch_timeout_s" shortens it
# for tests. With what, per applet ("touch_timeout_sw" in a profile overrides it):
# - YubiKey: 6982, security status not satisfied, after its 15 s. Yubico documents no OpenPGP
#   status for it; its firmware answers 6982 for a touch that did not come in PIV
#   (Yubico/yubico-piv-tool#185: "Failed sign command with code 6982" after the 15 s of
#   blinking, Yubico's maintainer confirming the touch; smallstep/crypto#1076), and GnuPG 2.2's
#   scdaemon has no code of its own for a YubiKey's touch. gpg then says "Bad PIN" (scd/apdu.h
#   SW_CHV_WRONG 0x6982, scd/iso7816.c map_sw).
# - Nitrokey 3 answers the same (opcard-rs 2d9170d8, src/command/pso.rs: 6982 when
#   confirm_user_present(15_000) fails; its FIXME notes the spec's 6600); the bed keeps 6985,
#   which tests/bed/tests/test-card-ops.py asserts, for the applets other than the YubiKey.
# - OpenPGP card 3.4 (7.4) reserves 6600, "security-related issues", for UIF: GnuPG maps it to
#   "Timeout" (scd/apdu.h SW_ACK_TIMEOUT, gnupg bd15aa34, for Gnuk's button).
TOUCH_TIMEOUT_S = 15.0
TOUCH_TIMEOUT_SW = {"yubikey": 0x6982}
TOUCH_TIMEOUT_SW_OTHER = 0x6985

# PUT DATA tags writable with PW3 -> (slot, field) or profile key (OpenPGP card 3.4, 4.4.2).
SLOT_DO = {0xC7: ("sig", "fingerprint"), 0xC8: ("enc", "fingerprint"), 0xC9: ("aut", "fingerprint"),
           0xCE: ("sig", "created"), 0xCF: ("enc", "created"), 0xD0: ("aut", "created"),
           0xC1: ("sig", "algorithm"), 0xC2: ("enc", "algorithm"), 0xC3: ("aut", "algorithm"),
           0xD6: ("sig", "touch"), 0xD7: ("enc", "touch"), 0xD8: ("aut", "touch")}
TEXT_DO = {0x5E: "login", 0x5F50: "url"}
TOUCH_NAMES = {0: "off", 1: "on", 2: "fixed", 3: "cached", 4: "cached-fixed"}


def algorithm_name(attr):
    """The profile's algorithm name for algorithm attributes (C1-C3) as gpg writes them:
    RSA by modulus size, ECC by OID, a trailing format byte (FF: with public key) ignored."""
    from .openpgp_card import ALGORITHMS  # no cycle at import time
    attr = bytes(attr)
    if attr[:1] == b"\x01" and len(attr) >= 5:
        return f"rsa{int.from_bytes(attr[1:3], 'big')}"
    for name, (value, _kind) in ALGORITHMS.items():
        if attr == value or attr[:-1] == value:
            return name
    raise crypto.CardError(0x6A80)


class CardUse:
    """Mixed into OpenPGPCard. Needs self.profile, self.sec (Security), self.slot_rw(name)."""

    wait_for_touch = None  # set by the emulator: f(timeout) -> True when touched

    def use_command(self, ins, p1, p2, data):
        """(data, sw) for a command of a card in use, or None when `ins` is not one."""
        handler = {0x20: self.do_verify, 0x2A: self.do_pso, 0x88: self.do_internal_auth,
                   0xDA: self.do_put_data, 0xDB: self.do_put_data_odd}.get(ins)
        if handler is None:
            return None
        try:
            return handler(p1, p2, bytes(data))
        except crypto.CardError as e:
            return b"", e.sw

    def do_verify(self, p1, p2, data):
        return b"", self.sec.verify(p1, p2, data)

    def do_pso(self, p1, p2, data):
        if (p1, p2) == (0x9E, 0x9A):
            return self.compute_signature(data)
        if (p1, p2) == (0x80, 0x86):
            self.need(PW1_OTHER)
            algo, private = self.key_of("enc")
            self.touch_for("enc")
            return crypto.decipher(algo, private, data), 0x9000
        return b"", 0x6A86

    def compute_signature(self, data):
        self.need(PW1_SIGN)
        try:
            algo, private = self.key_of("sig")
            self.touch_for("sig")
            sig = crypto.sign(algo, private, data)
        finally:  # opcard-rs pso.rs: PW1 "valid once" is spent whether or not it signed
            self.sec.after_signature()
        n = int(self.profile.get("signature_counter", 0))
        self.profile["signature_counter"] = min(n + 1, 0xFFFFFF)
        return sig, 0x9000

    def do_internal_auth(self, p1, p2, data):
        if (p1, p2) != (0x00, 0x00):
            return b"", 0x6A86
        self.need(PW1_OTHER)
        algo, private = self.key_of("aut")
        self.touch_for("aut")
        return crypto.sign(algo, private, data), 0x9000

    def need(self, ref):
        if not self.sec.has(ref):
            raise crypto.CardError(0x6982)

    def key_of(self, name):
        s = self.slot_rw(name)
        if "private" not in s:
            raise crypto.CardError(0x6A88)
        return s.get("algorithm", "rsa2048"), s["private"]

    # ---- touch ---------------------------------------------------------
    def touch_for(self, name):
        """Hold the answer until a touch when the slot's UIF asks for one (YubiKey D6-D8)."""
        mode = self.slot_rw(name).get("touch", "off")
        if mode == "off":
            return
        touched = self.__dict__.setdefault("last_touch", {})
        if mode.startswith("cached") and time.monotonic() - touched.get(name, -1e9) < TOUCH_CACHE_S:
            return
        timeout = float(self.profile.get("touch_timeout_s", TOUCH_TIMEOUT_S))
        if self.wait_for_touch is None or not self.wait_for_touch(timeout):
            default = TOUCH_TIMEOUT_SW.get(self.profile.get("applet"), TOUCH_TIMEOUT_SW_OTHER)
            raise crypto.CardError(int(self.profile.get("touch_timeout_sw", default)))
        touched[name] = time.monotonic()

    # ---- PUT DATA --------------------------------------------------------
    def do_put_data(self, p1, p2, data):
        self.need(PW3)
        tag = p1 << 8 | p2
        if tag in SLOT_DO:
            self.put_slot_do(tag, data)
        elif tag in TEXT_DO:
            self.profile[TEXT_DO[tag]] = data.decode(errors="replace")
        elif tag == 0x5B:
            self.profile.setdefault("cardholder", {})["name"] = data.decode(errors="replace")
        elif tag == 0xC4:  # only its first byte is writable: PW1 valid for one signature
            self.profile["pw1_valid_once"] = data[:1] == b"\x00"
        else:
            return b"", 0x6A88
        return b"", 0x9000

    def put_slot_do(self, tag, data):
        name, field = SLOT_DO[tag]
        s = self.slot_rw(name)
        if field == "fingerprint":
            if len(data) != 20:
                raise crypto.CardError(0x6700)
            s["fingerprint"] = data.hex().upper()
        elif field == "created":
            if len(data) != 4:
                raise crypto.CardError(0x6700)
            s["created"] = int.from_bytes(data, "big")
        elif field == "touch":
            s["touch"] = TOUCH_NAMES.get(data[0] if data else -1, "off")
        else:
            algo = algorithm_name(data)
            if algo != s.get("algorithm"):  # new attributes: the old key is gone
                for k in ("private", "public", "fingerprint", "created"):
                    s.pop(k, None)
            s["algorithm"] = algo

    def do_put_data_odd(self, p1, p2, data):
        """Key import: 4D extended header list (OpenPGP card 3.4, 4.4.3.12)."""
        if (p1, p2) != (0x3F, 0xFF):
            return b"", 0x6A86
        self.need(PW3)
        name, fields = crypto.parse_import(data)
        s = self.slot_rw(name)
        algo = s.get("algorithm", "rsa2048")
        private = crypto.private_from_import(algo, fields)
        s["private"] = private
        s["public"] = crypto.public_of(algo, private)
        s["imported"] = True
        if name == "sig":  # a new signature key restarts the counter (OpenPGP card 3.4, 4.4.3.9)
            self.profile["signature_counter"] = 0
        return b"", 0x9000
