# SPDX-License-Identifier: LGPL-2.1-or-later
"""Card profiles: JSON dicts describing one OpenPGP card (see
tests/bed/profiles/*.json and README.md for the fields).  load() accepts a
dict, a path, or a bare name of a shipped profile ("yubikey5nfc").
"""

import copy
import json
import os

PROFILE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "profiles")

MANUFACTURER_NAMES = {0x0005: "ZeitControl", 0x0006: "Yubico", 0x000F: "Nitrokey",
                      0xFF00: "test card"}


def path_of(name):
    return os.path.join(PROFILE_DIR, name + ".json")


def shipped():
    return sorted(f[:-5] for f in os.listdir(PROFILE_DIR) if f.endswith(".json"))


def load(profile):
    """A deep copy of the profile as a dict."""
    if isinstance(profile, dict):
        return copy.deepcopy(profile)
    p = profile if os.path.exists(profile) else path_of(profile)
    with open(p) as f:
        return json.load(f)


def manufacturer(profile):
    return int(str(profile["manufacturer"]), 0)


def serial_for_gpg(profile):
    """The serial number as `gpg --card-status` prints it."""
    return profile["serial"].upper()


def openpgp_serialno(profile):
    """The full AID as hex, the way scdaemon names the card (SERIALNO)."""
    from .openpgp_card import OpenPGPCard
    return OpenPGPCard(profile).aid().hex().upper()
