# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pure model of a YubiKey's PIV application (NIST SP 800-73-4 plus Yubico's extensions),
the second application on the bed's virtual card (openpgp_card.py selects it).

What it does: answers, from profile["piv"] (piv_certs.materialize() made its
certificates), SELECT of the PIV AID (A0 00 00 03 08, with or without the PIX) with the
application property template a YubiKey 5 sends; GET DATA (00 CB 3F FF, 5C 03 5F C1 xx)
with 53-wrapped objects: the CHUID (5FC102), the certificates of 9A (5FC105), 9C (5FC10A),
9D (5FC10B), 9E (5FC101) and the retired 82-95 (5FC10D-5FC120), 6A82 for any other or an
empty one (the CCC, ykman's PIVMAN data 5FFF00); Yubico's GET VERSION (FD), GET SERIAL
(F8) and, on firmware >= 5.3, GET METADATA (F7) of a slot (algorithm, PIN and touch
policy, origin, public key), of the PIN, PUK (retries, default) and management key; 6A88
for a slot without a key, 6D00 below 5.3 (ykman's NotSupported path). Long answers go
through openpgp_card.py's 61xx/GET RESPONSE chaining, as OpenPGP's do.

Sources: yubikit/piv.py (Yubico/yubikey-manager: object ids, metadata tags, algorithm
ids), applets/piv/piv.c in canokeys/canokey-core (the SELECT answer "compatible with
Yubikey 5", GET METADATA's layout), SP 800-73-4 part 1 table 3 (the object ids).

What it does not do: VERIFY, GENERAL AUTHENTICATE, PUT DATA, key generation or import:
a reader must not send them (openpgp_card.py records and refuses them, 6982).
"""

from . import piv_certs
from .openpgp_card import tlv

AID_PIV = bytes.fromhex("A000000308")
# canokey-core piv_select(): 61 11 4F 06 <PIX> 79 07 4F 05 <RID>
SELECT_ANSWER = bytes.fromhex("6111" "4F06000010000100" "7907" "4F05A000000308")

SLOT_OBJECTS = {"9a": 0x5FC105, "9c": 0x5FC10A, "9d": 0x5FC10B, "9e": 0x5FC101}
SLOT_OBJECTS.update({f"{0x82 + i:02x}": 0x5FC10D + i for i in range(20)})  # retired 82-95
OBJECT_SLOTS = {v: k for k, v in SLOT_OBJECTS.items()}
CHUID = 0x5FC102

# yubikit/piv.py KEY_TYPE, PIN_POLICY, TOUCH_POLICY
KEY_TYPES = {"rsa1024": 0x06, "rsa2048": 0x07, "rsa3072": 0x05, "rsa4096": 0x16,
             "nistp256": 0x11, "nistp384": 0x14, "ed25519": 0xE0, "x25519": 0xE1}
PIN_POLICY = {"default": 0, "never": 1, "once": 2, "always": 3, "match-once": 4,
              "match-always": 5}
TOUCH_POLICY = {"default": 0, "never": 1, "always": 2, "cached": 3}


class PivApplication:
    def __init__(self, card):
        self.card = card  # openpgp_card.OpenPGPCard: its profile, firmware and serial

    @property
    def piv(self):
        return self.card.profile.get("piv") or {}

    def owns(self, aid):
        """A SELECT of the PIV AID (the RID alone, as ykman sends it, or with the PIX) on a
        card whose profile has a PIV application."""
        return bytes(aid[:5]) == AID_PIV and bool(self.piv)

    def select(self):
        return SELECT_ANSWER, 0x9000

    def dispatch(self, ins, p1, p2, data):
        if ins == 0xCB and p1 == 0x3F and p2 == 0xFF:
            return self.get_data(bytes(data))
        if ins == 0xFD:
            return bytes(self.card.firmware()), 0x9000
        if ins == 0xF8:
            return int(self.card.profile.get("yubikey", {}).get("serial", 0)).to_bytes(4, "big"), 0x9000
        if ins == 0xF7 and self.card.firmware() >= (5, 3, 0):
            return self.metadata(p2) if p1 == 0 else (b"", 0x6B00)
        return b"", 0x6D00

    def get_data(self, data):
        # 5C 03 5F C1 xx (or 5C 01 7E, the discovery object: not kept, 6A82)
        if len(data) < 2 or data[0] != 0x5C or data[1] != len(data) - 2:
            return b"", 0x6A80
        oid = int.from_bytes(data[2:], "big")
        if self.card.wrong_status is not None:
            return b"", self.card.wrong_status
        if oid == CHUID:
            value = piv_certs.chuid(self.piv)
        elif oid in OBJECT_SLOTS:
            spec = self.piv.get("slots", {}).get(OBJECT_SLOTS[oid])
            value = self.object_of(spec)
        else:
            value = bytes.fromhex(self.piv.get("objects", {}).get(f"{oid:06x}", "")) or None
        if value is None:
            return b"", 0x6A82
        return tlv(0x53, value), 0x9000

    @staticmethod
    def object_of(spec):
        if not spec or spec.get("empty"):
            return None
        if "object" in spec:  # raw bytes as given: a bad certificate, an odd CertInfo
            return bytes.fromhex(spec["object"])
        return piv_certs.certificate_object(spec)

    def metadata(self, ref):
        if ref in (0x80, 0x81):  # PIN, PUK: 01 FF, 05 default?, 06 total remaining
            r = self.piv.get("retries", {}).get("pin" if ref == 0x80 else "puk", [3, 3])
            return (tlv(0x01, b"\xff") + tlv(0x05, b"\x00") + tlv(0x06, bytes(r))), 0x9000
        if ref == 0x9B:  # management key: 3DES, touch never, not the default one
            return tlv(0x01, b"\x03") + tlv(0x02, b"\x00\x01") + tlv(0x05, b"\x00"), 0x9000
        spec = self.piv.get("slots", {}).get(f"{ref:02x}")
        if not spec or "public" not in spec or spec.get("no_key"):
            return b"", 0x6A88
        policy = bytes([PIN_POLICY[spec.get("pin", "once")], TOUCH_POLICY[spec.get("touch", "never")]])
        origin = b"\x01" if spec.get("origin", "generated") == "generated" else b"\x02"
        body = tlv(0x01, bytes([KEY_TYPES[spec.get("algorithm", "nistp256")]])) + tlv(0x02, policy)
        return body + tlv(0x03, origin) + tlv(0x04, bytes.fromhex(spec["public"])), 0x9000
