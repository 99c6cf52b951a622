#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Keyring helpers: expiries, expired and revoked subkeys, offline primary
(sec#) and card stubs (ssb> with the card serial) made by the real
`gpg --card-status` against a card built from the keyring."""

import time

from common import run
import keyctlbed as kb

DAY = 86400


def records(k, kind):
    return [f for f in k.list_secret() if f[0] == kind]


def main():
    now = time.time()
    with kb.Pcscd() as p, kb.Keyring(p) as k:
        key = k.create_key(subkeys={"sig": 5, "enc": None, "aut": -10})
        k.remove_primary_secret(key["fpr"])
        prof = k.card_profile(key, serial="87654321")
        card = p.card(prof)
        p.wait_card(True)
        k.stubs_from_card(key)
        sec = records(k, "sec")
        assert len(sec) == 1 and sec[0][14] == "#", sec  # sec#: no secret primary
        ssb = records(k, "ssb")
        assert [s[11] for s in ssb] == ["s", "e", "a"], ssb
        aid = kb.profiles.openpgp_serialno(prof)
        assert all(kb.stub_names_card(s[14], aid) for s in ssb), (aid, ssb)  # ssb>: on card
        assert abs(int(ssb[0][6]) - (now + 5 * DAY)) < 120, ssb[0]
        assert ssb[1][6] == "", ssb[1]
        assert ssb[2][1] == "e" and int(ssb[2][6]) < now, ssb[2]  # expired
        assert card.forbidden_count() == 0, card.forbidden()
        # The card's slots are the keyring's subkeys.
        st = k.gpg("--card-status", "--with-colons").stdout.decode()
        assert f"fpr:{key['sig']}:{key['enc']}:{key['aut']}:" in st, st

    with kb.Keyring() as k:
        key = k.create_key(subkeys={"sig": 30, "enc": 30})
        k.revoke_subkey(key["fpr"], key["sig"])
        ssb = records(k, "ssb")
        assert ssb[0][1] == "r" and ssb[1][1] != "r", ssb
        assert records(k, "sec")[0][14] in ("", "+"), "primary secret should be present"


run(main)
