#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fault injection and counters of the virtual card, seen through PC/SC."""

import time

from common import run
import keyctlbed as kb

SELECT = "00A4040006D27600012401"


def main():
    with kb.Pcscd() as p:
        card = p.card("yubikey5nfc")
        p.wait_card(True)

        # Forbidden commands are refused and counted; reads are not.
        res = p.transmit([SELECT, "0020008106313233343536", "00CA006E00",
                          "002A9E9A0401020304", "00478000020B600"[:-1] + "00"])
        assert [sw for _, sw in res] == [0x9000, 0x6982, 0x6100 | (res[2][1] & 0xFF), 0x6982,
                                         0x6982], res
        assert card.forbidden_count() == 3, card.forbidden()
        assert card.commands()[:5] == [0xA4, 0x20, 0xCA, 0x2A, 0x47]
        # Read public key (47 81) is not forbidden.
        res = p.transmit([SELECT, "0047810002B60000"])
        assert res[1][1] == 0x9000 and res[1][0].startswith("7f49"), res
        assert card.forbidden_count() == 3

        # GET RESPONSE chaining: short Le gets 61xx, extended Le gets it whole.
        res = p.transmit([SELECT, "00CA006E00", "00C0000000"])
        assert res[1][1] & 0xFF00 == 0x6100 and res[2][1] == 0x9000, res
        whole = p.transmit([SELECT, "00CA006E000000"])[1]
        assert whole[1] == 0x9000 and whole[0] == res[1][0] + res[2][0]

        # Wrong status word for GET DATA.
        card.wrong_status(0x6A88)
        assert p.transmit([SELECT, "00CA004F00"])[1][1] == 0x6A88
        card.wrong_status(None)

        # Truncated TLV inside application related data: C5 overruns.
        card.truncated_tlv(True)
        data = p.transmit([SELECT, "00CA006E000000"])[1][0]
        assert "c53c" in data and len(data) < len(whole[0]), data
        card.truncated_tlv(False)

        # Slow card.
        card.slow(300)
        t = time.monotonic()
        p.transmit([SELECT, "00CA004F00"])
        assert time.monotonic() - t >= 0.6
        card.slow(0)

        # Card pulled in the middle of a transaction.
        card.yank_after(2)
        try:
            p.transmit([SELECT, "00CA004F00", "00CA006E00", "00CA006500"])
            raise AssertionError("transmit after yank succeeded")
        except RuntimeError as e:
            print("yanked:", e)
        p.wait_card(False)
        card.reinsert(gap=0, wait=True)
        assert p.transmit([SELECT])[0][1] == 0x9000

        # Silent card: the APDU never gets an answer until the card is removed.
        card.silent(True)
        try:
            p.transmit([SELECT], timeout=2)
            raise AssertionError("silent card answered")
        except Exception as e:
            print("silent:", type(e).__name__)
        card.remove()
        card.silent(False)
        p.wait_card(False)
        card.insert(wait=True)
        assert p.transmit([SELECT])[0][1] == 0x9000

        # Runtime profile change.
        card.update(signature_counter=1234)
        res = p.transmit([SELECT, "00CA007A00"])
        assert res[1][0] == "93030004d2", res


run(main)
