#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`gpg --card-status` (GnuPG's scdaemon: disable-ccid, pcsc-shared, the
isolated pcscd) reads every shipped profile exactly as the profile says,
and never sends a forbidden command."""

from common import run
import keyctlbed as kb
from keyctlbed import profiles


def colons(text):
    out = {}
    for line in text.splitlines():
        f = line.split(":")
        out.setdefault(f[0], f[1:])
    return out


def check(pcscd, name):
    prof = profiles.load(name)
    card = pcscd.card(prof)
    pcscd.wait_card(True)
    with kb.Keyring(pcscd) as k:
        c = colons(k.gpg("--card-status", "--with-colons").stdout.decode())
    slots = prof.get("slots", {})
    assert c["serial"][0] == prof["serial"], (c["serial"], prof["serial"])
    assert int(c["vendor"][0], 16) == profiles.manufacturer(prof), c["vendor"]
    assert c["version"][0] == "%02d%02d" % tuple(int(x) for x in prof["version"].split("."))
    want = [slots.get(s, {}).get("fingerprint", "") for s in ("sig", "enc", "aut")]
    assert c["fpr"][:3] == want, (c["fpr"], want)
    times = [str(slots[s]["created"]) if s in slots else "" for s in ("sig", "enc", "aut")]
    got = [t if t != "0" else "" for t in c["fprtime"][:3]]
    assert got == times, (got, times)
    assert int(c["sigcount"][0]) == prof["signature_counter"]
    r = prof["pin_retries"]
    assert c["pinretry"][:3] == [str(r["pw1"]), str(r["rc"]), str(r["pw3"])], c["pinretry"]
    assert card.forbidden_count() == 0, card.forbidden()
    print(f"{name}: serial {c['serial'][0]} vendor {c['vendor'][:2]} ok, "
          f"{len(card.commands())} APDUs")
    card.stop()
    pcscd.wait_card(False)


def main():
    with kb.Pcscd() as p:
        for name in profiles.shipped():
            check(p, name)


run(main)
