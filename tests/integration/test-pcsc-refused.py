#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld against a pcscd that refuses it. pcsc-lite 2.x asks polkit about every client and
closes the connection of one it refuses (no active session, a container, an ssh login); here a
socket at the daemon's PCSCLITE_CSOCK_NAME accepts and closes every connection, which is what
the client library sees then. Checks: at most 10 connections in the first 12 s (the retry waits
1 s, doubling to 5 min) and under 1% of a CPU; pcsc_available false with pcsc_error, and a
pcsc-refused warning whose hint points to the polkit document; a YubiKey plugged in (umockdev)
ends the wait at once; and when a real pcscd takes the socket over, the card is read and the
finding clears. Every process is stopped by pid, also on failure.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("KEYCTL_SRCDIR", "."), "tests", "bed"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs, udev  # noqa: E402

BED = udev.keyctld_testbed()
UDEV_ENV = BED.env

from keyctld_proc import Keyctld  # noqa: E402
from testlib import check, cpu_seconds, wait_until, failures  # noqa: E402

SERIAL = "34567890"


def refused_finding(s):
    return next((f for f in (s or {}).get("findings", []) if f["rule"] == "pcsc-refused"), None)


def run(pcscd, kr, key):
    ref = kb.Refuser(pcscd.socket)
    d = Keyctld(dict(kr.env, **UDEV_ENV), label="keyctld-refused")
    try:
        t0 = time.monotonic()
        check(d.start(args=["--log-level=debug"]), "refused: the daemon answers")
        c0 = cpu_seconds(d.pid)
        time.sleep(max(0.0, 12 - (time.monotonic() - t0)))
        c1 = cpu_seconds(d.pid)
        n12 = len([a for a in ref.accepted if a - t0 <= 12])
        span = time.monotonic() - t0
        print(f"     refused: {n12} connections in the first 12 s at "
              f"{[round(a - t0, 1) for a in ref.accepted]}; CPU {c1 - c0:.3f} s in "
              f"{span:.1f} s")
        check(1 <= n12 <= 10, f"refused: at most 10 connections to pcscd in 12 s ({n12})")
        check((c1 - c0) / span < 0.01, f"refused: under 1% of a CPU ({(c1 - c0) / span:.2%})")
        s = d.status()
        f = refused_finding(s)
        check(s is not None and s["daemon"]["pcsc_available"] is False
              and s["daemon"].get("pcsc_error"),
              f"refused: pcsc_available false, pcsc_error says why "
              f"({(s or {}).get('daemon', {}).get('pcsc_error')!r})")
        check(f is not None and f["level"] == "warning" and "polkit.md" in f["hint"],
              f"refused: a pcsc-refused warning pointing to polkit.md ({f})")
        any_key = any(k["fingerprint"] == key["fpr"] for k in (s or {}).get("keys", []))
        check(any_key, "refused: the keys are still listed (pcscd's refusal is one answer)")

        # A token plugged in: the next attempt comes at once, not at the end of the wait.
        time.sleep(max(0.0, 17 - (time.monotonic() - t0)))
        before = len(ref.accepted)
        tp = time.monotonic()
        yk = BED.add("yubikey5nfc", serial=SERIAL)
        ok = wait_until(lambda: len(ref.accepted) > before, 5, step=0.05)
        dt = (ref.accepted[before] - tp) if ok else None
        check(ok and dt < 3, f"a YubiKey plugged in: pcscd is tried again at once "
              f"({dt if dt is None else round(dt, 2)} s; the wait was at 16 s)")
        BED.remove(yk)

        # A real pcscd takes the socket over: a new socket is tried at once and read.
        ref.stop()
        pcscd.start()
        pcscd.card(kr.card_profile(key, base="yubikey5nfc", serial=SERIAL))
        pcscd.wait_card(True)
        s = d.wait(lambda s: s["daemon"]["pcsc_available"] and any(
            t.get("serial") == SERIAL and t["present"] for t in s["tokens"]), 20)
        check(s is not None and refused_finding(s) is None and not s["daemon"].get("pcsc_error"),
              "pcscd lets us in: the card is read, pcsc-refused cleared",
              (s or {}).get("findings"))
        check(d.alive(), "the daemon ran through the refusal")
    finally:
        ref.stop()
        d.stop()
        if failures:
            print("---- keyctld log (tail) ----")
            print(d.log()[-3000:])


def main():
    try:
        pcscd = kb.Pcscd()
        # Made once for its directory and socket path, then stopped: the refuser goes first.
        pcscd.start()
        pcscd.stop()
        with kb.Keyring(pcscd) as kr:
            key = kr.create_key(subkeys={"sig": 30, "enc": 100, "aut": 100})
            run(pcscd, kr, key)
        pcscd.stop()
    except kb.BedUnavailable as e:
        print(f"SKIP: test bed unavailable: {e}")
        return 77
    finally:
        procs.stop_all()
    check(not procs.leftovers(), "no process left behind", procs.leftovers())
    print(f"{len(failures)} failure(s)" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
