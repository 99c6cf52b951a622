#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ykman reads the virtual YubiKey: with --device SERIAL when pcscd names the
reader like a YubiKey (ykman only auto-detects readers whose name has "Yubico
YubiKey"), and, with ykman 4.x (Debian 12), with --reader on the plain vpcd
reader. ykman 5.x (Debian 13) refuses a reader not named like a YubiKey
unless it is an NFC reader ("PID must be provided for non-NFC connections",
yubikit/support.py read_info), so there that case must fail cleanly."""

import os
import re
import subprocess

from common import pkill_shim, run
import keyctlbed as kb


def ykman(pcscd, *args, ok=True):
    env = dict(os.environ, **pcscd.env)
    env["PATH"] = pkill_shim() + ":" + env["PATH"]  # ykman runs `pkill -9 scdaemon`
    r = subprocess.run([kb.PYTHON, "/usr/bin/ykman"] + list(args), env=env, capture_output=True,
                       text=True, timeout=60)
    if not ok:
        assert r.returncode != 0 and "Traceback" not in r.stderr, (r.returncode, r.stderr)
        return r.stderr
    assert r.returncode == 0, r.stderr
    return r.stdout


def ykman_major():
    r = subprocess.run([kb.PYTHON, "/usr/bin/ykman", "--version"], capture_output=True,
                       text=True, timeout=60)
    m = re.search(r"version:? (\d+)\.", r.stdout)
    assert m, r.stdout + r.stderr
    return int(m.group(1))


def check_info(out):
    # ykman 4 prints one line per field and a touch table; ykman 5 aligns the fields and
    # nests a "Touch policy:" under each key.
    flat = re.sub(r"[ \t]+", " ", out)
    assert "OpenPGP version: 3.4" in flat, out
    assert "Application version: 5.4.3" in flat, out
    assert "PIN tries remaining: 3" in flat and "Reset code tries remaining: 0" in flat, out
    touch = re.findall(r"(?:Signature|Encryption|Decryption) key:?\s*(?:\n\s*Fingerprint:[^\n]*)?"
                       r"(?:\n\s*Touch policy:)?\s*(On|Off)", out)
    assert touch[:2] == ["On", "Off"], (touch, out)


def main():
    if not os.path.exists("/usr/bin/ykman"):
        raise kb.BedUnavailable("ykman not installed")
    with kb.Pcscd() as p:
        card = p.card("yubikey5nfc")
        p.wait_card(True)
        if ykman_major() < 5:
            check_info(ykman(p, "--reader", p.reader_name, "openpgp", "info"))
            out = ykman(p, "--reader", p.reader_name, "info")
            assert "Serial number: 12345678" in out and "YubiKey 5 NFC" in out, out
        else:
            err = ykman(p, "--reader", p.reader_name, "openpgp", "info", ok=False)
            assert "Failed to connect to YubiKey" in err, err
        assert card.forbidden_count() == 0, card.forbidden()
    with kb.Pcscd(friendly_name="Yubico YubiKey OTP+FIDO+CCID") as p:
        p.card("yubikey5nfc")
        p.wait_card(True)
        assert "Serial: 12345678" in ykman(p, "list")
        check_info(ykman(p, "--device", "12345678", "openpgp", "info"))


run(main)
