#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""umockdev-fork.c makes umockdev's preload safe across fork(): umockdev-fork-probe (threads in
umockdev's wrapped path calls, a thread forking children that open() before they exit, as
keyctld's gpgme children do) under umockdev-wrapper gets a child stuck without the preload (the
hazard the tests under umockdev met: keyctld's keyring listing never came back), and none in
500 forks with it. Exits 77 without umockdev-wrapper."""
import os
import shutil
import subprocess
import sys

PROBE = os.environ.get("UMOCKDEV_FORK_PROBE", "")
SHIM = os.environ.get("KEYCTL_UMOCKDEV_FORK", "")
failed = []


def run(preload):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if preload:
        env["LD_PRELOAD"] = SHIM
    r = subprocess.run(["umockdev-wrapper", PROBE], env=env, capture_output=True, text=True,
                       timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failed.append(what)


def main():
    if not shutil.which("umockdev-wrapper"):
        print("SKIP: umockdev-wrapper not installed")
        return 77
    rc, out = run(False)
    check(rc == 1, f"without the preload a forked child gets stuck (the hazard): {out}")
    for i in range(2):
        rc, out = run(True)
        check(rc == 0, f"with umockdev-fork's preload, run {i + 1}: {out}")
    return 1 if failed else 0


sys.exit(main())
