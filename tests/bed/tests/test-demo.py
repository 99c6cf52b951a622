#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tests/bed/demo runs a command with PCSCLITE_CSOCK_NAME and GNUPGHOME set,
a card whose signing subkey expires in 5 days, and stops everything after."""

import os
import subprocess
import time

import keyctlbed as kb
from common import BED, run


def main():
    r = subprocess.run([os.path.join(BED, "demo"), "--", "sh", "-c",
                        'echo "SOCK=$PCSCLITE_CSOCK_NAME"; gpg --with-colons --list-secret-keys; '
                        'pcsc_scan -r; exit 3'], capture_output=True, text=True, timeout=60)
    if r.returncode == 77:
        print(r.stderr)
        raise SystemExit(77)
    assert r.returncode == 3, (r.returncode, r.stderr)
    out = r.stdout
    assert "Virtual PCD 00 00" in out, out
    ssb = [line.split(":") for line in out.splitlines() if line.startswith("ssb:")]
    sig = [f for f in ssb if f[11] == "s"][0]
    assert kb.stub_names_card(sig[14], "D2760001240103040006123456780000"), sig
    assert abs(int(sig[6]) - (time.time() + 5 * 86400)) < 300, sig
    sock = [line[5:] for line in out.splitlines() if line.startswith("SOCK=")][0]
    tmp = os.path.dirname(os.path.dirname(sock))
    assert not os.path.exists(tmp), "demo left its temp dir"
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    assert tmp.encode() not in f.read(), f"pid {pid} of the demo still runs"
            except OSError:
                pass


run(main)
