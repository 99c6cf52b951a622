# SPDX-License-Identifier: LGPL-2.1-or-later
"""The demo's token and keyring, shared by tests/bed/demo (tools/run) and tools/samples (the
sample output in README.md and keyctl-status(1)), so that what the README shows is what the demo
does: a virtual YubiKey whose signing subkey expires in a few days (touch on), a throwaway
keyring whose primary secret is offline (sec#) and whose subkeys are stubs on that card."""


def setup(pcscd, kr, expires_days=5, profile="yubikey5nfc"):
    """Creates the key, inserts the card and writes the stubs. Returns (key, profile, card)."""
    key = kr.create_key(subkeys={"sig": expires_days, "enc": None, "aut": None})
    kr.remove_primary_secret(key["fpr"])
    prof = kr.card_profile(key, base=profile, touch={"sig": "on"})
    card = pcscd.card(prof)
    pcscd.wait_card(True)
    kr.stubs_from_card(key)
    return key, prof, card
