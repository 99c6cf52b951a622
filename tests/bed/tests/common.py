# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared glue for the bed's own tests: puts tests/bed on sys.path and maps
BedUnavailable to exit status 77 (meson's SKIP)."""

import os
import signal
import sys
import traceback

BED = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BED)

import keyctlbed  # noqa: E402,F401

SHIM = None


def pkill_shim():
    """A directory with a do-nothing `pkill`, to put first on PATH for ykman."""
    global SHIM
    if SHIM is None:
        SHIM = keyctlbed.procs.tmpdir("keyctlbed-shim-")
        with open(os.path.join(SHIM, "pkill"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(SHIM, "pkill"), 0o755)
    return SHIM


def run(main):
    # meson kills timed-out tests with SIGTERM: turn it into SystemExit so the
    # bed's atexit cleanup stops everything by pid.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        main()
    except keyctlbed.BedUnavailable as e:
        print(f"SKIP: {e}")
        keyctlbed.stop_all()
        sys.exit(77)
    except Exception:
        traceback.print_exc()
        keyctlbed.stop_all()
        sys.exit(1)
    keyctlbed.stop_all()
    keyctlbed.assert_no_leftovers()
    print("PASS")
    sys.exit(0)
