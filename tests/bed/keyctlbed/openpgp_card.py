# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pure model of an OpenPGP card application (OpenPGP card 3.4) plus the
parts of the Yubico management/OTP applications that ykman needs.

What it does: turns one command APDU into one response APDU, from a card
profile (see profiles.py).  Every card answers what a *reader* needs: SELECT,
GET DATA, GET RESPONSE (61xx chaining), GET VERSION (Yubico), and "read public
key" (GENERATE ASYMMETRIC KEY PAIR with P1=81).  A profile without "applet"
answers every command that would change the card or use a key (VERIFY, PSO,
GENERATE with P1=80, PUT DATA, ...) with 6982.  A profile with "applet"
("yubikey", "nitrokey3", "gnuk", "smartpgp") is a card in use: VERIFY, PSO,
INTERNAL AUTHENTICATE, PUT DATA and key import with command chaining
(openpgp_use.py), with that applet's PIN rules (openpgp_security.py).  Either
way such commands are logged in `forbidden`: a reader must never send them.

What it does not do: no I/O, no secure messaging, no key generation.
"""

import struct

from .openpgp_security import RULES, Security
from .openpgp_use import CardUse

AID_OPENPGP_PREFIX = bytes.fromhex("D27600012401")
AID_YUBICO_MGMT = bytes.fromhex("A000000527471117")
AID_YUBICO_OTP = bytes.fromhex("A0000005272001")

# INS that modify the card or use a private key: a reader must never send them. The record
# of them (`forbidden`) is kept for every card; only an "applet" card answers the first five.
FORBIDDEN_INS = {
    0x20: "VERIFY",
    0x2A: "PSO",
    0x88: "INTERNAL AUTHENTICATE",
    0xDA: "PUT DATA",
    0xDB: "PUT DATA (odd)",
    0x24: "CHANGE REFERENCE DATA",
    0x2C: "RESET RETRY COUNTER",
    0xE6: "TERMINATE DF",
    0x44: "ACTIVATE FILE",
    0xF2: "SET PIN RETRIES (Yubico)",
    0xFB: "GET ATTESTATION (Yubico)",
    0x1C: "WRITE CONFIG (Yubico mgmt)",
    0x16: "SET MODE (Yubico mgmt)",
}
USE_INS = (0x20, 0x2A, 0x88, 0xDA, 0xDB)

ALGORITHMS = {
    # name: (algorithm attributes DO C1-C3 value, kind)
    "rsa2048": (bytes.fromhex("010800002000"), "rsa"),
    "rsa3072": (bytes.fromhex("010C00002000"), "rsa"),
    "rsa4096": (bytes.fromhex("011000002000"), "rsa"),
    "ed25519": (bytes.fromhex("162B06010401DA470F01"), "ecc"),
    "cv25519": (bytes.fromhex("122B060104019755010501"), "ecc"),
    "nistp256": (bytes.fromhex("132A8648CE3D030107"), "ecc"),
}
ECDH_NISTP256 = bytes.fromhex("122A8648CE3D030107")

TOUCH = {"off": 0, "on": 1, "fixed": 2, "cached": 3, "cached-fixed": 4}
SLOTS = ("sig", "enc", "aut")
CRT = {bytes.fromhex("B600"): "sig", bytes.fromhex("B800"): "enc",
       bytes.fromhex("A400"): "aut", bytes.fromhex("B6"): "sig"}


def ber_len(n):
    if n < 0x80:
        return bytes([n])
    if n < 0x100:
        return bytes([0x81, n])
    return bytes([0x82, n >> 8, n & 0xFF])


def tlv(tag, value, fake_len=None):
    t = tag.to_bytes(2, "big") if tag > 0xFF else bytes([tag])
    return t + ber_len(len(value) if fake_len is None else fake_len) + value


def parse_apdu(b):
    """Returns (cla, ins, p1, p2, data, le, extended); le None when absent,
    256/65536 for a zero Le."""
    if len(b) < 4:
        raise ValueError("short APDU")
    cla, ins, p1, p2 = b[0], b[1], b[2], b[3]
    rest = b[4:]
    if not rest:
        return cla, ins, p1, p2, b"", None, False
    if len(rest) == 1:
        return cla, ins, p1, p2, b"", rest[0] or 256, False
    if rest[0] != 0:
        lc = rest[0]
        data = rest[1:1 + lc]
        if len(rest) == 1 + lc:
            return cla, ins, p1, p2, data, None, False
        if len(rest) == 2 + lc:
            return cla, ins, p1, p2, data, rest[-1] or 256, False
        raise ValueError("bad short APDU length")
    if len(rest) == 3:
        return cla, ins, p1, p2, b"", (rest[1] << 8 | rest[2]) or 65536, True
    lc = rest[1] << 8 | rest[2]
    data = rest[3:3 + lc]
    if len(rest) == 3 + lc:
        return cla, ins, p1, p2, data, None, True
    if len(rest) == 5 + lc:
        return cla, ins, p1, p2, data, (rest[-2] << 8 | rest[-1]) or 65536, True
    raise ValueError("bad extended APDU length")


def sw(code):
    return struct.pack(">H", code)


class OpenPGPCard(CardUse):
    """One card.  `profile` is a dict (profiles.load()); a card in use writes into
    it (keys, counters).  Faults are plain attributes the emulator sets:
    truncated_tlv (bool), wrong_status (int SW for GET DATA or None); and one in the
    profile, "hold_on" (hold())."""

    def __init__(self, profile):
        self.sec = Security(profile)
        self.profile = profile
        self.truncated_tlv = False
        self.wrong_status = None
        self.log = []          # (cla, ins, p1, p2, data hex) of every APDU
        self.phases = []       # the test phase each APDU of `log` came in
        self.phase = ""
        self.forbidden = []    # same, for forbidden ones
        from .piv_card import PivApplication  # here: piv_card.py imports this module's tlv()
        self.piv = PivApplication(self)  # answers only for a profile with "piv"
        self.reset()

    @property
    def profile(self):
        return self._profile

    @profile.setter
    def profile(self, value):
        self._profile = value
        self.sec.profile = value

    @property
    def applet(self):
        """The applet whose behaviour a card in use copies, or None for a read-only card."""
        a = self.profile.get("applet")
        return a if a in RULES else None

    # ---- state ---------------------------------------------------------
    def reset(self):
        """Power off, power on or a warm reset: nothing selected, PINs forgotten."""
        self.selected = None
        self.pending = b""
        self.chain = None
        self.sec.event("reset")

    def note(self, cla, ins, p1, p2, what):
        self.log.append((cla, ins, p1, p2, what))
        self.phases.append(self.phase)

    def slot_rw(self, name):
        return self.profile.setdefault("slots", {}).setdefault(name, {})

    @property
    def is_yubikey(self):
        return int(str(self.profile["manufacturer"]), 0) == 0x0006

    def atr(self):
        return bytes.fromhex(self.profile["atr"])

    # ---- data objects --------------------------------------------------
    def aid(self):
        p = self.profile
        maj, minor = (int(x) for x in p.get("version", "3.4").split("."))
        manu = int(str(p["manufacturer"]), 0)
        serial = bytes.fromhex(p["serial"])
        assert len(serial) == 4
        return AID_OPENPGP_PREFIX + bytes([maj, minor]) + manu.to_bytes(2, "big") + serial + b"\0\0"

    def slot(self, name):
        return self.profile.get("slots", {}).get(name) or {}

    def algo_attr(self, name):
        s = self.slot(name)
        default = "rsa2048"
        a = s.get("algorithm", default)
        if name == "enc" and a == "nistp256":
            return ECDH_NISTP256
        return ALGORITHMS[a][0]

    def key_slots(self):
        # YubiKey >= 5.2 keeps an attestation key as a 4th slot in C5/C6/CD
        # (tests/data/cards/yubikey5-*.card): "attestation_slot": true in the profile.
        return SLOTS + ("att",) if self.profile.get("attestation_slot") else SLOTS

    def fingerprints(self):
        return b"".join(bytes.fromhex(self.slot(n).get("fingerprint", "00" * 20))
                        for n in self.key_slots())

    def ca_fingerprints(self):
        cas = self.profile.get("ca_fingerprints", [])
        return b"".join(bytes.fromhex(cas[i]) if i < len(cas) else b"\0" * 20
                        for i in range(len(self.key_slots())))

    def times(self):
        return b"".join(struct.pack(">I", int(self.slot(n).get("created", 0)))
                        for n in self.key_slots())

    def pw_status(self):
        r = self.profile.get("pin_retries", {})
        single = 0x00 if self.profile.get("pw1_valid_once", True) else 0x01
        return bytes([single, 0x7F, 0x7F, 0x7F, r.get("pw1", 3), r.get("rc", 0), r.get("pw3", 3)])

    def uif(self, name):
        t = self.slot(name).get("touch", "off") if name != "att" else self.profile.get("attestation_touch", "off")
        return bytes([TOUCH[t], 0x20])

    def key_info(self):
        out = b""
        for i, n in enumerate(SLOTS, 1):
            s = self.slot(n)
            status = 0 if not s.get("fingerprint") else (2 if s.get("imported", True) else 1)
            out += bytes([i, status])
        # Real YubiKey 5 (tests/data/cards/yubikey5-*.card): DE ends 81 02, the attestation
        # key Yubico imported; ykman 5 looks it up (KeyError KEY_REF.ATT without it).
        if "att" in self.key_slots():
            out += bytes([0x81, 0x02])
        return out

    def historical(self):
        return bytes.fromhex(self.profile.get("historical", "0073000080059000"))

    def ext_caps(self):
        return bytes.fromhex(self.profile.get("ext_caps", "7D000BFE080000FF0000"))

    def ext_len_info(self):
        return bytes.fromhex("0202080002020800")

    def discretionary(self):
        body = tlv(0xC0, self.ext_caps())
        body += tlv(0xC1, self.algo_attr("sig")) + tlv(0xC2, self.algo_attr("enc")) + tlv(0xC3, self.algo_attr("aut"))
        if "att" in self.key_slots():
            body += tlv(0xDA, self.algo_attr("att"))  # as the real dumps: RSA 2048
        body += tlv(0xC4, self.pw_status())
        if self.truncated_tlv:
            # C5 claims 60 bytes but only 20 follow: the length overruns its parent.
            body += tlv(0xC5, self.fingerprints()[:20], fake_len=60)
            return body
        body += tlv(0xC5, self.fingerprints()) + tlv(0xC6, self.ca_fingerprints()) + tlv(0xCD, self.times())
        body += tlv(0xDE, self.key_info())
        if self.is_yubikey:
            body += tlv(0x7F66, self.ext_len_info())
            body += tlv(0xD6, self.uif("sig")) + tlv(0xD7, self.uif("enc")) + tlv(0xD8, self.uif("aut"))
            if self.supports_attestation():
                body += tlv(0xD9, self.uif("att"))
        return body

    def supports_attestation(self):
        return self.is_yubikey and self.firmware() >= (5, 2, 1)

    def firmware(self):
        return tuple(int(x) for x in self.profile.get("firmware", "0.0.0").split("."))

    def cardholder(self):
        ch = self.profile.get("cardholder", {})
        return tlv(0x65, tlv(0x5B, ch.get("name", "").encode()) + tlv(0x5F2D, ch.get("lang", "").encode())
                   + tlv(0x5F35, ch.get("sex", "9").encode()))

    def security_support(self):
        return tlv(0x7A, tlv(0x93, int(self.profile.get("signature_counter", 0)).to_bytes(3, "big")))

    def get_data(self, tag):
        p = self.profile
        ch = p.get("cardholder", {})
        table = {
            0x004F: lambda: self.aid(),
            0x005E: lambda: p.get("login", "").encode(),
            0x0065: lambda: self.cardholder()[2:],
            # With its own tag (YubiKey) or without (Nitrokey Pro, Ledger): "outer_6e_tag".
            0x006E: lambda: (tlv(0x6E, self.app_related_value())
                             if p.get("outer_6e_tag") else self.app_related_value()),
            0x007A: lambda: self.security_support()[2:],
            0x005B: lambda: ch.get("name", "").encode(),
            0x5F2D: lambda: ch.get("lang", "").encode(),
            0x5F35: lambda: ch.get("sex", "9").encode(),
            0x5F50: lambda: p.get("url", "").encode(),
            0x5F52: lambda: self.historical(),
            0x0093: lambda: int(p.get("signature_counter", 0)).to_bytes(3, "big"),
            0x00C0: lambda: self.ext_caps(),
            0x00C4: lambda: self.pw_status(),
            0x00C5: lambda: self.fingerprints(),
            0x00C6: lambda: self.ca_fingerprints(),
            0x00CD: lambda: self.times(),
            0x00DE: lambda: self.key_info(),
            0x7F66: lambda: self.ext_len_info(),
            0x0101: lambda: b"", 0x0102: lambda: b"", 0x0103: lambda: b"", 0x0104: lambda: b"",
        }
        if self.ext_caps()[0] & 0x01:
            table[0x00F9] = lambda: tlv(0x81, b"\x00")
        if self.is_yubikey:
            table[0x7F74] = lambda: bytes.fromhex("810120")
            table[0x00D6] = lambda: self.uif("sig")
            table[0x00D7] = lambda: self.uif("enc")
            table[0x00D8] = lambda: self.uif("aut")
            if self.supports_attestation():
                table[0x00D9] = lambda: self.uif("att")
        if "att" in self.key_slots():
            table[0x00DA] = lambda: self.algo_attr("att")
        f = table.get(tag)
        if f is None:
            return b"", 0x6A88
        return f(), 0x9000

    def app_related_value(self):
        body = tlv(0x4F, self.aid()) + tlv(0x5F52, self.historical())
        if self.is_yubikey:
            body += tlv(0x7F74, bytes.fromhex("810120"))
        return body + tlv(0x73, self.discretionary())

    def public_key(self, name):
        s = self.slot(name)
        if not s.get("fingerprint") and "private" not in s:
            return b"", 0x6A88
        kind = ALGORITHMS[s.get("algorithm", "rsa2048")][1]
        pub = s.get("public")
        if kind == "rsa":
            if pub:
                n, e = bytes.fromhex(pub["n"]), bytes.fromhex(pub["e"])
            else:  # deterministic fake modulus: fine for a keygrip, useless for crypto
                import hashlib
                seed = bytes.fromhex(s["fingerprint"])
                bits = {"rsa2048": 256, "rsa3072": 384, "rsa4096": 512}[s.get("algorithm", "rsa2048")]
                n = b"".join(hashlib.sha256(seed + bytes([i])).digest() for i in range(bits // 32))
                n = bytes([n[0] | 0x80]) + n[1:-1] + bytes([n[-1] | 1])
                e = b"\x01\x00\x01"
            return tlv(0x7F49, tlv(0x81, n) + tlv(0x82, e)), 0x9000
        if pub:
            q = bytes.fromhex(pub)
        else:
            import hashlib
            q = hashlib.sha256(bytes.fromhex(s["fingerprint"])).digest()
            if s.get("algorithm") == "nistp256":
                q = b"\x04" + q + hashlib.sha256(q).digest()
        return tlv(0x7F49, tlv(0x86, q)), 0x9000

    # ---- dispatch ------------------------------------------------------
    def process(self, apdu):
        """One command APDU in, one response APDU out (bytes)."""
        try:
            cla, ins, p1, p2, data, le, ext = parse_apdu(apdu)
        except ValueError:
            return sw(0x6700)
        self.note(cla, ins, p1, p2, data.hex())
        if self.hold(ins, p1, p2):
            return b""
        if ins in FORBIDDEN_INS or (ins == 0x47 and p1 != 0x81):
            self.forbidden.append((cla, ins, p1, p2, data.hex()))
            if not self.applet or ins not in USE_INS:
                return sw(0x6982)
        if ins == 0xC0:
            return self.send_pending(le or 256)
        data = self.chained(cla, ins, p1, p2, data)
        if data is None:
            return sw(0x9000)
        data_out, code = self.dispatch(cla & ~0x10, ins, p1, p2, data)
        if code != 0x9000:
            self.pending = b""
            return sw(code)
        limit = le if le is not None else (256 if data_out else 0)
        mr = int(self.profile.get("max_response", 0))
        if mr:
            limit = min(limit, mr)
        if len(data_out) <= limit:
            self.pending = b""
            return data_out + sw(0x9000)
        self.pending = data_out[limit:]
        return data_out[:limit] + sw(0x6100 | min(len(self.pending), 256) & 0xFF)

    def hold(self, ins, p1, p2):
        """The "hold_on" fault (card.hold_on()): the first command with that INS (and P1-P2)
        gets no answer while the card holds it ("holding" in the profile), through the
        emulator's wait hook (a touch's), until card.release_hold() or "max_s". True when the
        command is to go unanswered for good (an empty response: vpcd passes on no status
        word); False, also after a "late" hold, to answer it as usual. Fires once."""
        h = self.profile.get("hold_on")
        if not h or ins != int(h["ins"]) or h.get("p1p2") not in (None, p1 << 8 | p2):
            return False
        del self.profile["hold_on"]
        self.profile["holding"] = {"ins": ins, "p1p2": p1 << 8 | p2}
        try:
            if self.wait_for_touch is not None:
                self.wait_for_touch(float(h.get("max_s", 60)))
        finally:
            self.profile.pop("holding", None)
        return not h.get("late")

    def chained(self, cla, ins, p1, p2, data):
        """Command chaining (ISO 7816-4 5.1.1, CLA bit 10; gpg sends the key import this way):
        None while more is to come, else the whole data. A read-only card drops the parts."""
        if cla & 0x10:
            if self.applet:
                head = (ins, p1, p2)
                before = self.chain[1] if self.chain and self.chain[0] == head else b""
                self.chain = (head, before + bytes(data))
            return None
        if self.chain and self.chain[0] == (ins, p1, p2):
            data = self.chain[1] + bytes(data)
        self.chain = None
        return data

    def send_pending(self, le):
        if not self.pending:
            return sw(0x6985)
        mr = int(self.profile.get("max_response", 0))
        n = min(le, mr) if mr else le
        chunk, self.pending = self.pending[:n], self.pending[n:]
        if self.pending:
            return chunk + sw(0x6100 | min(len(self.pending), 256) & 0xFF)
        return chunk + sw(0x9000)

    def dispatch(self, cla, ins, p1, p2, data):
        if ins == 0xA4 and p1 == 0x04:
            return self.select_in_use(data) if self.applet else self.select(data)
        if ins == 0xA4 and self.applet and "select_mf" in self.sec.rules and data == b"\x3f\x00":
            self.sec.event("select_mf")  # Gnuk: SELECT of the MF by its file id
            self.selected = None
            return b"", 0x9000
        if self.selected == "openpgp":
            if ins == 0xCA:
                if self.wrong_status is not None:
                    return b"", self.wrong_status
                return self.get_data(p1 << 8 | p2)
            if ins == 0x47 and p1 == 0x81:
                name = CRT.get(bytes(data[:2])) or CRT.get(bytes(data[:1]))
                if name is None:
                    return b"", 0x6A80
                return self.public_key(name)
            if ins == 0xF1 and self.is_yubikey:
                return bytes(self.firmware()), 0x9000
            used = self.use_command(ins, p1, p2, data) if self.applet else None
            return used if used is not None else (b"", 0x6D00)
        if self.selected == "piv":
            return self.piv.dispatch(ins, p1, p2, data)
        if self.selected == "mgmt":
            if ins == 0x1D:
                return self.yubikey_device_info(), 0x9000
            return b"", 0x6D00
        if self.selected == "otp":
            if ins == 0x01 and p1 == 0x10:  # read serial
                return int(self.profile.get("yubikey", {}).get("serial", 0)).to_bytes(4, "big"), 0x9000
            return b"", 0x6D00
        return b"", 0x6D00

    def select_in_use(self, aid):
        """SELECT on a card in use: the applet's rule for a SELECT of OpenPGP and of another
        application it holds; an AID it does not hold answers 6A82 and changes nothing: no
        application was deselected (opcard-rs, Gnuk; a Java Card hands such a SELECT to the
        selected applet as an ordinary command, which keeps its state too)."""
        aid = bytes(aid)
        rules = self.sec.rules
        if aid[:6] == AID_OPENPGP_PREFIX:
            self.sec.event("select_openpgp")
            self.selected = "openpgp"
            return b"", 0x9000
        if self.piv.owns(aid):
            self.sec.event("select_other")
            self.selected = "piv"
            return self.piv.select()
        if aid.hex().upper() not in rules["other_aids"]:
            return b"", 0x6A82
        self.sec.event("select_other")
        if aid in (AID_YUBICO_MGMT, AID_YUBICO_OTP):
            return self.select(aid)
        self.selected = "other"
        return b"", 0x9000

    def select(self, aid):
        aid = bytes(aid)
        if aid[:6] == AID_OPENPGP_PREFIX:
            self.selected = "openpgp"
            return b"", 0x9000
        if self.piv.owns(aid):
            self.selected = "piv"  # OpenPGP deselected, as on a YubiKey (openpgp_security.py)
            return self.piv.select()
        if self.is_yubikey and aid == AID_YUBICO_MGMT:
            self.selected = "mgmt"
            return ".".join(str(x) for x in self.firmware()).encode(), 0x9000
        if self.is_yubikey and aid == AID_YUBICO_OTP:
            self.selected = "otp"
            return bytes(self.firmware()) + bytes([1, 0, 0]), 0x9000
        self.selected = None
        return b"", 0x6A82

    def yubikey_device_info(self):
        yk = self.profile.get("yubikey", {})
        caps = int(yk.get("usb_supported", 0x023B))
        body = tlv(0x01, caps.to_bytes(2, "big"))
        body += tlv(0x02, int(yk.get("serial", 0)).to_bytes(4, "big"))
        body += tlv(0x03, int(yk.get("usb_enabled", caps)).to_bytes(2, "big"))
        body += tlv(0x04, bytes([int(yk.get("form_factor", 1))]))
        body += tlv(0x05, bytes(self.firmware()))
        body += tlv(0x06, b"\x00\x00") + tlv(0x07, b"\x0f") + tlv(0x08, b"\x00")
        body += tlv(0x0A, b"\x00")
        if "nfc_supported" in yk:
            body += tlv(0x0D, int(yk["nfc_supported"]).to_bytes(2, "big"))
            body += tlv(0x0E, int(yk.get("nfc_enabled", yk["nfc_supported"])).to_bytes(2, "big"))
        return bytes([len(body)]) + body
