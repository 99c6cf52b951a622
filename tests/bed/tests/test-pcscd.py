#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Isolated pcscd + vpcd + virtual card: detection, two beds side by side,
insert/remove latency, restart on the same socket path, pcsc_scan."""

import os
import subprocess

from common import run
import keyctlbed as kb


def main():
    with kb.Pcscd() as a, kb.Pcscd() as b:
        assert a.socket != b.socket
        ca = a.card("yubikey5nfc", insert=False)
        cb = b.card("nitrokey3")
        d = cb.pcscd.wait_card(True)
        assert a.status()[a.reader_name] is None, "card of bed B visible in bed A"
        print(f"insertion seen after {d * 1000:.0f} ms")
        ca.insert()
        d = a.wait_card(True)
        print(f"insertion seen after {d * 1000:.0f} ms")
        assert d < 1.5
        assert a.status()[a.reader_name].startswith("3bfd1300008131fe15")
        # pcsc_scan from pcsc-tools lists our readers.
        r = subprocess.run(["pcsc_scan", "-r"], env=dict(os.environ, **a.env),
                           capture_output=True, text=True, timeout=10)
        assert a.reader_name in r.stdout, r.stdout
        # APDUs go through; SELECT + GET DATA 4F give the AID.
        res = a.transmit(["00A4040006D27600012401", "00CA004F00"])
        assert res[0][1] == 0x9000 and res[1][0].upper().startswith("D2760001240103040006"), res
        d = ca.remove(wait=True)
        print(f"removal seen after {d * 1000:.0f} ms")
        sock = a.socket
        ca.insert()
        a.wait_card(True)
        a.restart()
        assert a.socket == sock and os.path.exists(sock)
        d = a.wait_card(True, timeout=5)
        print(f"after restart, card seen after {d * 1000:.0f} ms")
        ca.swap("blank", wait=True)
        assert a.transmit(["00A4040006D27600012401", "00CA004F00"])[1][0].upper() == \
            "D276000124010304FF00000000010000"
    kb.assert_no_leftovers()


run(main)
