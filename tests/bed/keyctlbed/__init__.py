# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl test bed: isolated pcscd + virtual OpenPGP cards, throwaway GnuPG
keyrings, umockdev udev devices, a private session bus with a mock
notification daemon, and a pcscd socket that refuses every client.  See tests/bed/README.md."""

from .procs import BedUnavailable, assert_no_leftovers, leftovers, stop_all, PYTHON  # noqa: F401
from .pcscd import Pcscd  # noqa: F401
from .card import VirtualCard  # noqa: F401
from . import profiles  # noqa: F401
from .keyring import Keyring, make_pubring, key_material, stub_names_card  # noqa: F401
from .session_bus import SessionBus  # noqa: F401
from . import udev  # noqa: F401
from .refuser import Refuser  # noqa: F401
