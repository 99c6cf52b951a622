#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""ykman 4.x reads the virtual YubiKey: with --reader on the plain vpcd
reader, and with --device SERIAL when pcscd names the reader like a
YubiKey (ykman only auto-detects readers whose name has "Yubico YubiKey")."""

import os
import subprocess

from common import pkill_shim, run
import keyctlbed as kb


def ykman(pcscd, *args):
    env = dict(os.environ, **pcscd.env)
    env["PATH"] = pkill_shim() + ":" + env["PATH"]  # ykman runs `pkill -9 scdaemon`
    r = subprocess.run([kb.PYTHON, "/usr/bin/ykman"] + list(args), env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def check_info(out):
    assert "OpenPGP version: 3.4" in out, out
    assert "Application version: 5.4.3" in out, out
    assert "PIN tries remaining: 3" in out and "Reset code tries remaining: 0" in out
    assert "Signature key           On" in out and "Encryption key          Off" in out, out


def main():
    if not os.path.exists("/usr/bin/ykman"):
        raise kb.BedUnavailable("ykman not installed")
    with kb.Pcscd() as p:
        card = p.card("yubikey5nfc")
        p.wait_card(True)
        check_info(ykman(p, "--reader", p.reader_name, "openpgp", "info"))
        out = ykman(p, "--reader", p.reader_name, "info")
        assert "Serial number: 12345678" in out and "YubiKey 5 NFC" in out, out
        assert card.forbidden_count() == 0, card.forbidden()
    with kb.Pcscd(friendly_name="Yubico YubiKey OTP+FIDO+CCID") as p:
        p.card("yubikey5nfc")
        p.wait_card(True)
        assert "Serial: 12345678" in ykman(p, "list")
        check_info(ykman(p, "--device", "12345678", "openpgp", "info"))


run(main)
