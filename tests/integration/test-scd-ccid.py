#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""GnuPG 2.4's real scdaemon with its own CCID driver on (no disable-ccid in scdaemon.conf) and a
card that keyctld reads through pcscd: that scdaemon never asks pcscd (Debian #1102717), so gpg
answers "No such device" while keyctl sees the card. Checks that gpg really fails here, that
keyctld raises scdaemon-ccid-conflict for that token with scdaemon's words and a hint naming the
file and `gpgconf --kill scdaemon`; that following the hint clears it and gpg then reads the card;
that removing disable-ccid again brings it back (the card is asked anew); and that the daemon's
own reads stay on pcscd throughout. Skipped (77) where GnuPG is older than 2.4, whose scdaemon
falls back to pcscd by itself. Every process is stopped by pid, also on failure."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402
from testlib import check, finish  # noqa: E402

RULE = "scdaemon-ccid-conflict"


def finding(s):
    return next((f for f in (s or {}).get("findings", []) if f["rule"] == RULE), None)


def card_token(s):
    return next((t for t in (s or {}).get("tokens", []) if t.get("openpgp")), None)


def gnupg_version():
    out = subprocess.run(["gpg", "--version"], capture_output=True, text=True).stdout
    m = re.search(r"gpg \(GnuPG\) (\d+)\.(\d+)", out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def write_conf(kr, disable_ccid):
    with open(os.path.join(kr.home, "scdaemon.conf"), "w") as f:
        f.write("pcsc-shared\n" + ("disable-ccid\n" if disable_ccid else ""))
        f.write(f"log-file {kr.home}/scd.log\n")
    subprocess.run(["gpgconf", "--homedir", kr.home, "--kill", "scdaemon"], env=kr._env(),
                   capture_output=True, timeout=30)


def main():
    if gnupg_version() < (2, 4):
        print("skip: GnuPG %d.%d's scdaemon falls back to pcscd by itself" % gnupg_version())
        sys.exit(77)
    try:
        p = kb.Pcscd().start()
    except kb.BedUnavailable as e:
        print(f"skip: {e}")
        sys.exit(77)
    kr = kb.Keyring(p)
    key = kr.create_key()
    p.card(kr.card_profile(key))
    conf = os.path.join(kr.home, "scdaemon.conf")
    write_conf(kr, disable_ccid=False)
    r = kr.gpg("--card-status", check=False)
    err = r.stderr.decode(errors="replace")
    check(r.returncode != 0 and "No such device" in err,
          "the premise: this scdaemon, its CCID driver on, finds no card (%r)" % err.strip())

    d = Keyctld(dict(kr.env))
    check(d.start(), "keyctld answers")
    s = d.wait(lambda s: finding(s) is not None, 30)
    f, t = finding(s), card_token(s)
    check(f is not None and t is not None and f["level"] == "warning" and f["token"] == t["id"],
          "a scdaemon-ccid-conflict warning for the card's token (%s)" % (f,))
    check(f is not None and "No such device" in f["message"],
          "its message carries scdaemon's words")
    check(f is not None and f"{conf}, then run: gpgconf --kill scdaemon" in f["hint"]
          and '"disable-ccid"' in f["hint"], "its hint names the line, the file and the command")
    check(t is not None and t.get("read_path") == "pcsc" and not t.get("error"),
          "keyctld itself read the card through pcscd (read_path %r)" % (t or {}).get("read_path"))

    # The hint, followed as a user would.
    with open(conf, "a") as fh:
        fh.write("disable-ccid\n")
    subprocess.run(["gpgconf", "--homedir", kr.home, "--kill", "scdaemon"], env=kr._env(),
                   capture_output=True, timeout=30)
    s = d.wait(lambda s: finding(s) is None, 30)
    check(s is not None, "disable-ccid written: the finding clears")
    r = kr.gpg("--card-status", check=False)
    check(r.returncode == 0 and "Application ID" in r.stdout.decode(errors="replace"),
          "and gpg reads the card now (rc %d)" % r.returncode)
    check(card_token(d.status()) is not None, "the token is still listed with its card data")

    # Back to the driver on: the card is asked again, the finding returns.
    write_conf(kr, disable_ccid=False)
    s = d.wait(lambda s: finding(s) is not None, 30)
    check(s is not None, "disable-ccid removed again: the finding is back")
    check(d.stop() == 0, "keyctld exits 0 on SIGTERM")
    kr.stop()
    finish()


try:
    main()
finally:
    procs.stop_all()
