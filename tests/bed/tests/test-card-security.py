#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What SELECT, another application, a reset and a second connection do to a verified PIN on
the bed's card in use, for each applet whose rules it copies (keyctlbed/openpgp_security.py
cites each rule's source): seen through a real pcscd, as a program beside gpg would cause it.

The access status is read as a terminal reads it, VERIFY without data (9000 verified, 63Cx
not: OpenPGP card 3.4, 7.2.2)."""

from common import run
import keyctlbed as kb
from keyctlbed import openpgp_apdu as A, profiles
from keyctlbed.openpgp_pcsc import session
from keyctlbed.openpgp_security import RULES

SEL = A.SELECT_OPENPGP
LOGIN = [A.verify(0x81, "123456"), A.verify(0x82, "123456"), A.verify(0x83, "12345678")]
STATUS = [A.verify(0x81), A.verify(0x82), A.verify(0x83)]
NAMES = ("pw1_81", "pw1_82", "pw3")


def verified(sws):
    """The references a VERIFY-without-data triple says are verified."""
    return {n for n, sw in zip(NAMES, sws) if sw == 0x9000}


def expect_after(rule):
    return set(NAMES) - set(rule)


def sws(results):
    return [sw for _, sw in results]


def check_select_again(p, card, applet):
    out = sws(p.transmit([SEL] + LOGIN + [SEL] + STATUS))
    assert out[:4] == [0x9000] * 4, out
    want = expect_after(RULES[applet]["select_openpgp"])
    assert verified(out[5:]) == want, (applet, "select again", out[5:], want)
    print(f"{applet}: SELECT OpenPGP again keeps {sorted(want) or 'nothing'}")


def check_select_other(p, card, applet):
    """Another application selected, then OpenPGP again (the only way back to its PINs)."""
    rules = RULES[applet]
    aid = rules["other_aids"][0] if rules["other_aids"] else "A000000308"
    sel_other = A.apdu(0x00, 0xA4, 0x04, 0x00, bytes.fromhex(aid))
    out = sws(p.transmit([SEL] + LOGIN + [sel_other, SEL] + STATUS))
    assert out[4] == (0x9000 if rules["other_aids"] else 0x6A82), (applet, out)
    want = expect_after(set(rules["select_other"]) | set(rules["select_openpgp"]))
    assert verified(out[6:]) == want, (applet, "select other", out[6:], want)
    print(f"{applet}: SELECT {aid} ({'held' if rules['other_aids'] else 'absent'}), then "
          f"OpenPGP: keeps {sorted(want) or 'nothing'}")


def check_reset(p, card, applet, how):
    steps = [("connect", "a")] + [("send", "a", x) for x in [SEL] + LOGIN]
    steps += [("disconnect", "a", how), ("connect", "b")]
    steps += [("send", "b", x) for x in [SEL] + STATUS]
    card.reset_counters()
    out = sws(session(p, steps))
    assert out[:4] == [0x9000] * 4 and verified(out[5:]) == set(), (applet, how, out)
    events = [e[1] for e in card.stats()["events"]]
    assert ("reset" if how == "reset" else "power off") in events, events
    print(f"{applet}: SCardDisconnect({how}) reaches the card ({events[-2:]}), PINs forgotten")


def check_second_connection(p, card, applet):
    """A second shared connection that only reads keeps the first one's PINs; one that
    SELECTs OpenPGP (as keyctld does at insertion) obeys the SELECT rule."""
    steps = [("connect", "a")] + [("send", "a", x) for x in [SEL] + LOGIN]
    steps += [("connect", "b"), ("send", "b", "00CA004F00"), ("disconnect", "b", "leave")]
    steps += [("send", "a", x) for x in STATUS]
    steps += [("connect", "c"), ("send", "c", SEL), ("send", "c", "00CA004F00")]
    steps += [("send", "a", x) for x in STATUS]
    out = sws(session(p, steps))
    assert verified(out[5:8]) == set(NAMES), (applet, "second connection reads", out)
    want = expect_after(RULES[applet]["select_openpgp"])
    assert verified(out[10:13]) == want, (applet, "second connection selects", out, want)
    print(f"{applet}: a second connection reading keeps every PIN; one that SELECTs keeps "
          f"{sorted(want) or 'nothing'}")


def check_gnuk_mf(p, card):
    """Gnuk: a SELECT of the MF (3F00) is the one SELECT that clears its PINs."""
    sel_mf = A.apdu(0x00, 0xA4, 0x00, 0x0C, bytes.fromhex("3F00"))
    out = sws(p.transmit([SEL] + LOGIN + [sel_mf, SEL] + STATUS))
    assert verified(out[6:]) == set(), out
    print("gnuk: SELECT MF clears every PIN")


def main():
    with kb.Pcscd() as p:
        for applet in ("yubikey", "nitrokey3", "gnuk", "smartpgp"):
            prof = profiles.load("yubikey5nfc" if applet == "yubikey" else "nitrokey3")
            prof["applet"] = applet
            card = p.card(prof)
            p.wait_card(True)
            check_select_again(p, card, applet)
            check_select_other(p, card, applet)
            check_second_connection(p, card, applet)
            for how in ("reset", "unpower"):
                check_reset(p, card, applet, how)
            if applet == "gnuk":
                check_gnuk_mf(p, card)
            assert card.live_profile()["pin_retries"] == prof["pin_retries"], "no retry spent"
            card.stop()
            p.wait_card(False)


run(main)
