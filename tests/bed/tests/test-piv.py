#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bed's PIV application, read by real clients through the real pcscd: ykman's
`piv info` and `piv certificates export` (ykman 4 on Debian 12, 5 on Debian 13) find every
slot's certificate with the subject, issuer and dates the profile made, the CHUID with its
expiration date, and GET METADATA's answers; no command that needs a PIN reaches the card
(firmware 5.4.3 >= 5.3: ykman asks GET METADATA instead of an empty VERIFY; 5.2.7 answers it
6D00). A long object comes in 61xx/GET RESPONSE parts; after PIV, OpenPGP answers again once
selected. A card without PIV (Nitrokey 3) answers 6A82 to its SELECT."""

import datetime
import os
import re
import subprocess

from common import pkill_shim, run
import keyctlbed as kb
from keyctlbed.piv_certs import CA_SUBJECT


def ykman(pcscd, *args):
    env = dict(os.environ, **pcscd.env)
    env["PATH"] = pkill_shim() + ":" + env["PATH"]  # ykman runs `pkill -9 scdaemon`
    r = subprocess.run([kb.PYTHON, "/usr/bin/ykman", "--device", "12345678"] + list(args),
                       env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def ykman_major():
    r = subprocess.run([kb.PYTHON, "/usr/bin/ykman", "--version"], capture_output=True,
                       text=True, timeout=60)
    return int(re.search(r"version:? (\d+)\.", r.stdout).group(1))


def utc(epoch, major):
    d = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return d.isoformat() if major >= 5 else d.strftime("%Y-%m-%d %H:%M:%S")


def check_info(out, slots, major):
    # ykman 4: "Slot 9a:" and tab-separated fields; ykman 5: "Slot 9A (AUTHENTICATION):",
    # aligned fields, ISO dates with their offset.
    flat = re.sub(r"[ \t]+", " ", out)
    assert re.search(r"PIV version:? 5\.4\.3", flat), out
    # The CHUID as ykman writes it: tag 35, "20300101".
    assert "35083230333030313031" in flat.replace(" ", "").lower(), out
    blocks = re.split(r"\nSlot ", flat)
    for name, s in slots.items():
        block = [b for b in blocks if b.lower().startswith(name)]
        assert len(block) == 1, (name, out)
        block = block[0]
        assert f"Subject DN: {s['subject']}" in block, (name, block)
        assert f"Issuer DN: {s['issuer_dn']}" in block, (name, block)
        assert f"Not after: {utc(s['not_after'], major)}" in block, (name, block)
        assert f"Not before: {utc(s['not_before'], major)}" in block, (name, block)


def check_chaining(pcscd, slots):
    # Short Le: the 9D certificate (P-384, > 256 bytes) comes in 61xx parts, then OpenPGP.
    ans = pcscd.transmit(["00A4040005A000000308", "00CB3FFF055C035FC10B00", "00C0000000",
                          "00A4040006D27600012401", "00CA004F00"])
    assert ans[0] == ("61114f0600001000010079074f05a000000308", 0x9000), ans[0]
    assert ans[1][1] & 0xFF00 == 0x6100 and ans[2][1] == 0x9000, ans
    obj = bytes.fromhex(ans[1][0] + ans[2][0])
    assert bytes.fromhex(slots["9d"]["der"]) in obj and obj.endswith(b"\x71\x01\x00\xfe\x00"), obj.hex()
    assert ans[3][1] == 0x9000 and ans[4][0].startswith("d276000124"), ans


def check_metadata(pcscd, slots):
    ans = pcscd.transmit(["00A4040005A000000308", "00F7009C00", "00F7008500", "00F7008000"])
    md = bytes.fromhex(ans[1][0])
    # 01 algorithm 07 (RSA 2048), 02 PIN policy always (03), touch always (02), 03 generated,
    # 04 the public key (more than a short answer holds: 61xx)
    assert ans[1][1] & 0xFF00 == 0x6100 and md.startswith(bytes.fromhex("010107020203020301010482")), md.hex()
    assert ans[2][1] == 0x6A88, ans[2]  # a retired slot without a key
    assert ans[3] == ("0101ff0501000602" "0303", 0x9000), ans[3]


def main():
    if not os.path.exists("/usr/bin/ykman"):
        raise kb.BedUnavailable("ykman not installed")
    prof = kb.profiles.load("yubikey5nfc")
    major = ykman_major()
    if major >= 5:  # ykman 4.0.9 raises NotSupportedError on a compressed one (not caught)
        prof["piv"]["slots"]["83"] = {"algorithm": "rsa2048", "subject": "CN=compressed",
                                      "issuer": CA_SUBJECT, "compressed": True}
    with kb.Pcscd(friendly_name="Yubico YubiKey OTP+FIDO+CCID") as p:
        card = p.card(prof)
        p.wait_card(True)
        slots = card.profile["piv"]["slots"]
        assert slots["9c"]["self_signed"] is True and slots["9a"]["self_signed"] is False
        check_chaining(p, slots)
        check_metadata(p, slots)
        card.reset_counters()
        check_info(ykman(p, "piv", "info").decode(), slots, major)
        for name in [n for n in ("9c", "82", "83") if n in slots]:  # a ykman run each: ~1 s
            der = ykman(p, "piv", "certificates", "export", "--format", "DER", name, "-")
            assert der == bytes.fromhex(slots[name]["der"]), name
        assert card.forbidden_count() == 0, card.forbidden()
        assert 0xF7 in [a[1] for a in card.apdus()], "ykman asked no GET METADATA"
        card.update(firmware="5.2.7")  # GET METADATA came with 5.3 (yubikit's require_version)
        assert p.transmit(["00A4040005A000000308", "00F7009A00"])[1][1] == 0x6D00
        card.swap("nitrokey3", wait=True)
        assert p.transmit(["00A4040005A000000308"])[0][1] == 0x6A82
        assert p.transmit(["00A4040006D27600012401"])[0][1] == 0x9000


run(main)
