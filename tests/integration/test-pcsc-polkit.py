#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld against the distribution's own pcscd with its polkit check on (pcsc-lite 2.x as
Debian 13 ships it) where no polkit daemon answers, as in a container or an ssh login: pcscd
refuses the client. Checks that keyctld says so (pcsc_available false, pcsc_error naming the
refusal, a pcsc-refused warning whose hint names polkit), keeps listing the keys, and retries
with backoff rather than in a loop (few connections in 8 s, little CPU); then the same pcscd
restarted with --disable-polkit lets it in: the card is read and the finding clears. Skipped
(77) where pcscd has no polkit check (Debian 12's pcsc-lite 1.9). Every process is stopped by
pid, also on failure."""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402
from testlib import check, cpu_seconds, finish  # noqa: E402


def refused_finding(s):
    return next((f for f in (s or {}).get("findings", []) if f["rule"] == "pcsc-refused"), None)


def main():
    h = subprocess.run(["/usr/sbin/pcscd", "--help"], capture_output=True, text=True)
    if "--disable-polkit" not in h.stdout + h.stderr:
        print("skip: this pcscd has no polkit check (pcsc-lite < 2.0 or built without it)")
        sys.exit(77)
    try:
        p = kb.Pcscd(polkit=True).start()
    except kb.BedUnavailable as e:
        print(f"skip: {e}")
        sys.exit(77)
    kr = kb.Keyring(p)
    key = kr.create_key()
    p.card(kr.card_profile(key))
    d = Keyctld(dict(kr.env))
    check(d.start(), "keyctld answers beside a refusing pcscd")
    s = d.wait(lambda s: refused_finding(s) is not None and s["keys"], 30)
    check(s is not None and not s["daemon"].get("pcsc_available")
          and s["daemon"].get("pcsc_error"),
          "refused by the real pcscd: pcsc_available false, pcsc_error says why (%r)"
          % ((s or {}).get("daemon", {}).get("pcsc_error"),))
    f = refused_finding(s)
    check(f is not None and f["level"] == "warning" and "polkit" in (f.get("hint") or ""),
          "a pcsc-refused warning whose hint names polkit (%s)" % (f,))
    check(s is not None and any(k["fingerprint"] == key["fpr"] for k in s["keys"]),
          "the keys are listed all the same")
    log_before = p.read_log().count("\n")
    cpu0 = cpu_seconds(d.pid)
    time.sleep(8)
    cpu = cpu_seconds(d.pid) - cpu0
    check(d.alive() and cpu < 0.5, "8 s refused: alive, %.2f CPU-s (no retry loop)" % cpu)
    lines = p.read_log().count("\n") - log_before
    print(f"     pcscd wrote {lines} log lines in those 8 s")

    # The same pcscd, its polkit check off: keyctld gets in on its own (socket watch, backoff).
    p.polkit = False
    p.restart()
    s = d.wait(lambda s: refused_finding(s) is None and any(
        t.get("openpgp") for t in s["tokens"]), 60)
    check(s is not None and s["daemon"].get("pcsc_available") and
          not s["daemon"].get("pcsc_error"),
          "pcscd lets us in: the card is read, pcsc-refused cleared")
    check(d.stop() == 0, "keyctld exits 0 on SIGTERM")
    kr.stop()
    finish()


try:
    main()
finally:
    procs.stop_all()
