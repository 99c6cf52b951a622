#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the SYNTHETIC card files beside it: one per quirk class of real tokens for which no
public bytes were found (or which a real dump shows only in part). These are not real devices'
answers and every file says so ("@ synthetic ..."); the real dumps are one folder up.

Each case is built here from a description, encoded per OpenPGP card 3.4 independently of the C
reader, and carries the values expected from it ("= field value"). test-card-corpus replays them
exactly as it replays the real dumps.

Run it after changing a case and commit its output:  tests/data/cards/synthetic/generate.py
"""
import importlib.util
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
SELECT = "00 A4 04 00 06 D2 76 00 01 24 01 00"
ALGO = {
    "rsa2048": "010800002000",
    "rsa4096": "011000002000",
    "ed25519": "162B06010401DA470F01",
    "cv25519": "122B060104019755010501",
    "nistp256": "132A8648CE3D030107",
}
TOUCH = {"off": 0, "on": 1, "fixed": 2, "cached": 3, "cached-fixed": 4}
NAMES = {0x0006: "Yubico", 0x000F: "Nitrokey", 0x0000: "test card", 0xF517: "FSIJ",
         0xF1D0: "CanoKeys", 0x0005: "ZeitControl"}
SLOTS = ("sig", "enc", "aut")


# The BER-TLV encoder of the transcripts' generator: one Python encoder for the test data, apart
# from the C reader it checks.
_spec = importlib.util.spec_from_file_location(
    "gen_transcripts", os.path.join(HERE, "..", "..", "gen-transcripts.py"))
_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gen)
tlv, hx = _gen.tlv, _gen.hx


FPRS = ["3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E", "8A1B2C3D4E5F60718293A4B5C6D7E8F901234567",
        "F0E1D2C3B4A5968778695A4B3C2D1E0F11223344", "0102030405060708090A0B0C0D0E0F1011121314"]
TIMES = [1700000000, 1700000100, 1700000200, 1700000300]


class Card:
    """A card's state, and the DOs it answers with."""

    def __init__(self, manufacturer=0x0006, serial="00512345", rfu="0000", version=(3, 4),
                 slots=3, fpr_len=20, algos=("ed25519", "cv25519", "ed25519"),
                 touch=("on", "off", "cached-fixed"), retries=(3, 0, 3), pw_first=0x00,
                 counter=42, name="Tester<<Alice", url="https://keys.example.org/alice.asc",
                 empty=()):
        self.manufacturer, self.serial, self.rfu, self.version = manufacturer, serial, rfu, version
        self.slots, self.fpr_len, self.algos, self.touch = slots, fpr_len, algos, touch
        self.retries, self.pw_first, self.counter, self.name, self.url = (
            retries, pw_first, counter, name, url)
        self.empty = empty  # slot indexes without a key

    def aid(self):
        return (bytes.fromhex("D27600012401") + bytes(self.version)
                + self.manufacturer.to_bytes(2, "big") + bytes.fromhex(self.serial)
                + bytes.fromhex(self.rfu))

    def fpr(self, i):
        if i in self.empty:
            return b"\0" * self.fpr_len
        f = bytes.fromhex(FPRS[i])
        return (f * 2)[:self.fpr_len]

    def c4(self):
        r = self.retries
        return bytes([self.pw_first, 0x7F, 0x7F, 0x7F, r[0], r[1], r[2]])

    def c5(self):
        return b"".join(self.fpr(i) for i in range(self.slots))

    def cd(self):
        return b"".join(struct.pack(">I", 0 if i in self.empty else TIMES[i])
                        for i in range(self.slots))

    def uif(self, i):
        return bytes([TOUCH[self.touch[i]] if self.touch[i] in TOUCH else int(self.touch[i]),
                      0x20])

    def discretionary(self, uif=True, members=("C1", "C2", "C3", "C4", "C5", "C6", "CD")):
        body = tlv(0xC0, bytes.fromhex("7D000BFE080000FF0000"))
        for i, tag in enumerate((0xC1, 0xC2, 0xC3)):
            if f"C{i + 1}" in members:
                body += tlv(tag, bytes.fromhex(ALGO[self.algos[i]]))
        if "C4" in members:
            body += tlv(0xC4, self.c4())
        if "C5" in members:
            body += tlv(0xC5, self.c5())
        if "C6" in members:
            body += tlv(0xC6, b"\0" * (self.slots * self.fpr_len))
        if "CD" in members:
            body += tlv(0xCD, self.cd())
        if uif:
            for i, tag in enumerate((0xD6, 0xD7, 0xD8)):
                body += tlv(tag, self.uif(i))
            if self.slots == 4:
                body += tlv(0xD9, bytes([0x00, 0x20]))
        return body

    def app_related(self, outer=True, wrap73=True, f7f74=bytes.fromhex("810120"), hist=None,
                    extra=b"", **kw):
        body = tlv(0x4F, self.aid())
        body += tlv(0x5F52, hist if hist is not None else bytes.fromhex("0073000080059000"))
        if f7f74 is not None:
            body += tlv(0x7F74, f7f74)
        disc = self.discretionary(**kw) + extra
        body += tlv(0x73, disc) if wrap73 else disc
        return tlv(0x6E, body) if outer else body

    def security(self, wrapped=True):
        b = tlv(0x93, self.counter.to_bytes(3, "big"))
        return tlv(0x7A, b) if wrapped else b

    def cardholder(self, wrapped=True):
        b = tlv(0x5B, self.name.encode("latin-1")) + tlv(0x5F2D, b"en") + tlv(0x5F35, b"2")
        return tlv(0x65, b) if wrapped else b

    def expected(self, touch=True, firmware=None):
        e = {
            "aid": self.aid().hex().upper(),
            "version": f"{self.version[0]}.{self.version[1]}",
            "manufacturer_id": f"{self.manufacturer:04X}",
            "manufacturer": NAMES.get(self.manufacturer, f"unknown (0x{self.manufacturer:04X})"),
            "serial": self.serial.upper(),
            "slots": str(self.slots),
            "pin_retries": " ".join(str(x) for x in self.retries),
            "signature_counter": str(self.counter),
            "cardholder": self.name.replace("<<", " ").replace("<", " ").strip(),
            "url": self.url or "-",
        }
        if firmware is not None:
            e["firmware"] = firmware
        for i, s in enumerate(SLOTS):
            e[s + ".fingerprint"] = "-" if i in self.empty else self.fpr(i).hex().upper()
            e[s + ".created"] = "0" if i in self.empty else str(TIMES[i])
            e[s + ".algorithm"] = self.algos[i]
            if touch:
                e[s + ".touch"] = self.touch[i] if self.touch[i] in TOUCH else "unknown"
        return e


class File:
    def __init__(self, name, why, family):
        self.name = name
        self.lines = [f"# SYNTHETIC: built by generate.py, not a real device's answer.",
                      f"@ synthetic {why}", f"@ family {family}"]

    def comment(self, text):
        self.lines.append("# " + text)

    def pair(self, cmd, data=b"", sw=0x9000):
        self.lines.append("> " + cmd)
        self.lines.append("< " + hx(data + sw.to_bytes(2, "big")))

    def raw(self, cmd, resp):
        self.lines.append("> " + cmd)
        self.lines.append("< " + hx(resp))

    def expect(self, fields):
        for k, v in fields.items():
            self.lines.append(f"= {k} {v if v != '' else '-'}")

    def optional(self, card, wrapped=True, firmware=None):
        if firmware is not None:
            self.pair("00 F1 00 00 00", bytes.fromhex(firmware))
        self.pair("00 CA 00 7A 00", card.security(wrapped))
        self.pair("00 CA 00 65 00", card.cardholder(wrapped))
        self.pair("00 CA 5F 50 00", card.url.encode())

    def write(self):
        with open(os.path.join(HERE, self.name + ".card"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def main():
    # YubiKey >= 5.2: four slots (attestation key 4th) in C5/C6/CD, D9 beside D6-D8; serial BCD.
    yk = Card(slots=4)
    f = File("yubikey5-four-slots", "YubiKey >= 5.2 shape: C5/C6 of 80 bytes and CD of 16 (the "
             "attestation key is the 4th slot), D6-D9 in 6E, BCD serial 00512345", "yubikey5")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", yk.app_related())
    f.optional(yk, firmware="050403")
    f.expect(yk.expected(firmware="5.4.3") | {"token.kind": "yubikey", "token.serial": "512345"})
    f.write()

    # Version 5 fingerprints: 32 bytes each (OpenPGP card 3.5 draft / crypto refresh).
    v5 = Card(manufacturer=0xF517, serial="00C0FFEE", fpr_len=32, touch=("off",) * 3)
    f = File("v5-fingerprints", "32-byte (v5) fingerprints: C5 of 96 bytes", "gnuk")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", v5.app_related())
    f.optional(v5)
    f.expect(v5.expected() | {"token.kind": "openpgp-card", "token.serial": "00C0FFEE"})
    f.write()

    # Nitrokey Pro / ZeitControl 2.x: 6E without its outer tag; 7A as a bare 93; 65 bare.
    nk = Card(manufacturer=0x0005, serial="0000A1B2", algos=("rsa2048", "rsa2048", "rsa2048"),
              touch=("unknown",) * 3, url="")
    f = File("bare-6e-bare-93", "6E answered without its outer tag (Nitrokey Pro, ZeitControl "
             "2.x), 7A as a bare 93, 65 without its tag, no D6-D8 (6A88 each)", "zeitcontrol")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", nk.app_related(outer=False, uif=False, f7f74=None))
    for tag in ("D6", "D7", "D8"):
        f.pair(f"00 CA 00 {tag} 00", sw=0x6A88)
    f.optional(nk, wrapped=False)
    f.expect(nk.expected() | {"token.kind": "openpgp-card"})
    f.write()

    # Old YubiKeys (NEO, 4): no 73 wrapper, and C4, C5, CD and the UIF not in 6E: asked for one
    # by one; C4 answered bare with 0xFF as its first byte; GET VERSION refused.
    neo = Card(manufacturer=0x0006, serial="03012345", version=(2, 0), pw_first=0xFF,
               algos=("rsa2048", "rsa2048", "rsa2048"), touch=("off", "off", "on"))
    f = File("no-73-wrapper", "old YubiKey shape: 6E without the 73 wrapper and without C4, C5, "
             "CD, D6-D8, which are asked for one by one (C4 bare, first byte FF; C5 wrapped)",
             "yubikey-neo")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", neo.app_related(wrap73=False, uif=False, f7f74=None,
                                             members=("C1", "C2", "C3")))
    f.pair("00 CA 00 C4 00", neo.c4())
    f.pair("00 CA 00 C5 00", tlv(0xC5, neo.c5()))
    f.pair("00 CA 00 CD 00", neo.cd())
    for i, tag in enumerate(("D6", "D7", "D8")):
        f.pair(f"00 CA 00 {tag} 00", tlv(int(tag, 16), neo.uif(i)))
    f.pair("00 F1 00 00 00", sw=0x6D00)
    f.optional(neo)
    f.expect(neo.expected(firmware="") | {"token.serial": "3012345"})
    f.write()

    # 7F74 (general feature management) in three forms: as the spec has it, with a bare value,
    # and empty; and an unknown tag in 73. None of them may stop the read.
    for form, value in (("spec", bytes.fromhex("810120")), ("bare-value", b"\x20"),
                        ("empty", b"")):
        c = Card(manufacturer=0xF1D0, serial="1A2B3C4D")
        f = File(f"7f74-{form}", f"7F74 in its {form} form; an unknown tag FA in 73",
                 "canokey")
        f.pair(SELECT)
        f.pair("00 CA 00 6E 00", c.app_related(f7f74=value, extra=tlv(0xFA, b"\x01\x02")))
        f.optional(c)
        f.expect(c.expected())
        f.write()

    # SmartPGP unpersonalised: RFU bytes of the AID set, the default serial 00000000.
    sp = Card(manufacturer=0x0000, serial="00000000", rfu="1234", empty=(0, 1, 2),
              touch=("unknown",) * 3, algos=("rsa2048",) * 3, retries=(3, 0, 3), counter=0,
              name="", url="")
    f = File("aid-rfu-default-serial", "unpersonalised card: AID RFU bytes 1234, default serial "
             "00000000, manufacturer 0000 (early Nitrokey 3 firmware, SmartPGP), no keys",
             "smartpgp")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", sp.app_related(uif=False, f7f74=None))
    for tag in ("D6", "D7", "D8"):
        f.pair(f"00 CA 00 {tag} 00", sw=0x6A88)
    f.optional(sp)
    f.expect(sp.expected() | {"token.kind": "openpgp-card", "token.serial": "00000000"})
    f.write()

    # Historical bytes that are not what ISO 7816-4 says (Ledger, NEO): skipped.
    hb = Card(manufacturer=0x000F, serial="000A1B2C", touch=("unknown",) * 3)
    f = File("historical-malformed", "5F52 whose compact-TLV inside claims more than it has",
             "ledger")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", hb.app_related(hist=bytes.fromhex("0031F573C00140"), uif=False))
    for tag in ("D6", "D7", "D8"):
        f.pair(f"00 CA 00 {tag} 00", sw=0x6A88)
    f.optional(hb)
    f.expect(hb.expected() | {"token.kind": "nitrokey"})
    f.write()

    # YubiKey 5.7.4 answers GET DATA C5 alone with 6B00: the reader takes C5 from 6E.
    y7 = Card(serial="00512346")
    f = File("yubikey-574-c5-6b00", "YubiKey 5.7.4 shape: C5 in 6E, GET DATA C5 alone 6B00 "
             "(recorded, and not needed)", "yubikey5")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", y7.app_related())
    f.pair("00 CA 00 C5 00", sw=0x6B00)
    f.optional(y7, firmware="050704")
    f.expect(y7.expected(firmware="5.7.4"))
    f.write()

    # A card with neither C5 in 6E nor on its own: a clear error, the rest kept.
    nf = Card(manufacturer=0x000F, serial="000A1B2D", touch=("unknown",) * 3)
    f = File("no-fingerprints", "C5 neither in 6E nor on its own (6B00)", "nitrokey3")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", nf.app_related(uif=False, members=("C1", "C2", "C3", "C4", "CD")))
    f.pair("00 CA 00 C5 00", sw=0x6B00)
    for tag in ("D6", "D7", "D8"):
        f.pair(f"00 CA 00 {tag} 00", sw=0x6A88)
    f.optional(nf)
    e = nf.expected()
    for s in SLOTS:
        e[s + ".fingerprint"] = "-"
    e["slots"] = "0"
    f.expect(e | {"result": "Bad message",
                  "error": "C5 not in 6E, and GET DATA C5 answered 6B00"})
    f.write()

    # SELECT refused: terminated, not usable, memory failure.
    for sw, text in ((0x6285, "SELECT answered 6285: the OpenPGP application is terminated"),
                     (0x6985, "SELECT answered 6985"),
                     (0x6581, "SELECT answered 6581: the card reports a memory failure")):
        f = File(f"select-{sw:04x}", f"SELECT answered {sw:04X}", "yubikey5")
        f.pair(SELECT, sw=sw)
        f.expect({"result": "Input/output error", "error": text, "slots": "0"})
        f.write()

    # Truncated C5 inside 73, and a 73 running past 6E: what came before the cut stays.
    tc = Card(manufacturer=0x000F, serial="000A1B2E", touch=("unknown",) * 3)
    body = tlv(0x4F, tc.aid()) + tlv(0x73, tc.discretionary(uif=False,
                                                            members=("C1", "C2", "C3", "C4")))
    cut = tlv(0x4F, tc.aid()) + bytes([0x73, 0x81, 0xF0]) + tc.discretionary(
        uif=False, members=("C1", "C2", "C3", "C4"))
    f = File("73-past-6e", "73 claims 240 bytes and has fewer: C1-C4 before the cut are read, C5 "
             "asked for alone", "nitrokey-pro")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", tlv(0x6E, cut))
    f.pair("00 CA 00 C5 00", tlv(0xC5, tc.c5()))
    f.pair("00 CA 00 CD 00", sw=0x6A88)
    for tag in ("D6", "D7", "D8"):
        f.pair(f"00 CA 00 {tag} 00", sw=0x6A88)
    f.optional(tc)
    e = tc.expected()
    for s in SLOTS:
        e[s + ".created"] = "0"
    f.expect(e | {"result": "ok", "error": "6E: the item at byte 18 (tag 73) runs past its end"})
    f.write()
    del body

    # 6E longer than 255 bytes, recorded as the card sent it: 256 bytes + 61xx, GET RESPONSE.
    lg = Card(manufacturer=0x0006, serial="00512347", slots=4, name="A" * 40 + "<<B")
    data = lg.app_related(extra=tlv(0xFB, b"\0" * 40))
    f = File("6e-chained", f"6E of {len(data)} bytes as 256 + 61{len(data) - 256:02X} and GET "
             "RESPONSE", "yubikey5")
    f.pair(SELECT)
    f.raw("00 CA 00 6E 00", data[:256] + bytes([0x61, len(data) - 256]))
    f.pair(f"00 C0 00 00 {len(data) - 256:02X}", data[256:])
    f.optional(lg, firmware="050201")
    f.expect(lg.expected(firmware="5.2.1"))
    f.write()

    # A UIF byte no spec defines yet: touch unknown, the read fine.
    ub = Card(serial="00512348", touch=("5", "on", "off"))
    f = File("uif-unknown-byte", "D6 policy byte 05, which no spec defines", "yubikey5")
    f.pair(SELECT)
    f.pair("00 CA 00 6E 00", ub.app_related())
    f.optional(ub, firmware="050403")
    f.expect(ub.expected(firmware="5.4.3") | {"result": "ok", "error": "-"})
    f.write()


def fuzz_seeds():
    """Seeds the card-openpgp and tlv fuzzers with every card file, real and synthetic: the
    answers in the file's order (fuzz-card-openpgp.c's transport format: per APDU a 2-byte
    data length, the data, SW1 SW2; longer answers cut into 256-byte pieces with 61xx), and
    each 6E on its own."""
    corpus = os.path.join(HERE, "..", "..", "..", "fuzz", "corpus")
    for d in (HERE, os.path.dirname(HERE)):
        for name in sorted(os.listdir(d)):
            if not name.endswith(".card"):
                continue
            seed, cmd = b"", None
            for line in open(os.path.join(d, name)):
                if line.startswith(">"):
                    cmd = bytes.fromhex(line[1:].split("#")[0])
                elif line.startswith("<"):
                    resp = bytes.fromhex(line.lstrip("<~").split("#")[0])
                    data, sw = resp[:-2], resp[-2:]
                    while len(data) > 256:
                        left = len(data) - 256
                        seed += (256).to_bytes(2, "big") + data[:256] + bytes([0x61, min(left, 255)])
                        data = data[256:]
                    seed += len(data).to_bytes(2, "big") + data + sw
                    if cmd and cmd[1] == 0xCA and cmd[2:4] == b"\x00\x6e" and data:
                        with open(os.path.join(corpus, "tlv", "card-" + name[:-5] + "-6e"),
                                  "wb") as f:
                            f.write(data)
            with open(os.path.join(corpus, "card-openpgp", "card-" + name[:-5]), "wb") as f:
                f.write(seed)


if __name__ == "__main__":
    main()
    fuzz_seeds()
