#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A test that fails half-way (exception) or is killed (SIGTERM) leaves no
bed process running: pcscd, card emulator, gpg-agent, scdaemon, dbus."""

import os
import signal
import subprocess
import sys
import time

from common import BED, run
import keyctlbed as kb

CHILD = r"""
import os, sys, time
sys.path.insert(0, %r)
import signal
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
import keyctlbed as kb
p = kb.Pcscd().start()
k = kb.Keyring(p)
key = k.create_key()
c = p.card(k.card_profile(key))
p.wait_card()
k.card_status()
k.scdaemon_pid()
b = kb.SessionBus().start()
pids = [x[1] for x in kb.leftovers()]
print(" ".join(map(str, pids)), flush=True)
if sys.argv[1] == "raise":
    raise RuntimeError("test failed half-way")
time.sleep(60)
""" % BED


def pids_of(mode):
    p = subprocess.Popen([kb.PYTHON, "-c", CHILD, mode], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    pids = [int(x) for x in p.stdout.readline().split()]
    assert len(pids) >= 6, (pids, p.stderr.read() if p.poll() is not None else "")
    if mode == "term":
        os.kill(p.pid, signal.SIGTERM)
    p.wait(30)
    return pids


def main():
    for mode in ("raise", "term"):
        pids = pids_of(mode)
        time.sleep(0.2)
        alive = [pid for pid in pids if kb.procs.alive(pid)]
        assert not alive, f"{mode}: still alive: {alive}"
        print(f"{mode}: {len(pids)} processes, all gone")


run(main)
