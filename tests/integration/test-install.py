#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`meson install --destdir` lays out what a package needs: the three programs, the units in
systemd's user unit directory (pkg-config systemduserunitdir), the udev rules in udev's
rules.d (pkg-config udevdir), the man pages (when scdoc built them), bash completion and the
example configuration; the units' ExecStart= name the installed programs; the installed programs
run (--version); the example configuration, every key uncommented, is accepted by keyctld
without a warning, and keyctl.conf(5) documents every key the example shows."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

BUILDDIR = os.environ["KEYCTL_BUILDDIR"]
SRCDIR = os.environ["KEYCTL_SRCDIR"]
FAILED = []


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name, flush=True)
    if not cond and detail:
        print("     " + str(detail).replace("\n", "\n     "))
    if not cond:
        FAILED.append(name)


def option(name):
    r = subprocess.run(["meson", "introspect", "--buildoptions", BUILDDIR], capture_output=True,
                       text=True, check=True)
    return next(o["value"] for o in json.loads(r.stdout) if o["name"] == name)


def pkg_var(pc, var, prefix):
    r = subprocess.run(["pkg-config", "--define-variable=prefix=" + prefix, "--variable=" + var,
                        pc], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def main():
    for tool in ("meson", "pkg-config"):
        if not shutil.which(tool):
            print("SKIP %s not installed" % tool)
            return 77
    prefix = option("prefix")
    p = lambda *parts: os.path.join(prefix, *parts)  # noqa: E731
    bindir, mandir, datadir = p(option("bindir")), p(option("mandir")), p(option("datadir"))
    unitdir = pkg_var("systemd", "systemduserunitdir", prefix) or p("lib/systemd/user")
    udevdir = pkg_var("udev", "udevdir", prefix) or p("lib/udev")
    r = subprocess.run(["pkg-config", "--define-variable=datadir=" + datadir,
                        "--variable=completionsdir", "bash-completion"], capture_output=True,
                       text=True)
    completions = r.stdout.strip() or os.path.join(datadir, "bash-completion", "completions")
    man = os.path.exists(os.path.join(BUILDDIR, "doc", "keyctld.8"))

    with tempfile.TemporaryDirectory(prefix="keyctl-install-") as dest:
        r = subprocess.run(["meson", "install", "--no-rebuild", "--quiet", "-C", BUILDDIR,
                            "--destdir", dest], capture_output=True, text=True, timeout=300)
        check("meson install --destdir: exit 0", r.returncode == 0, r.stdout + r.stderr)
        if r.returncode != 0:
            return 1
        want = [os.path.join(bindir, b) for b in ("keyctld", "keyctl-status", "keyctl-notify")]
        want += [os.path.join(unitdir, u) for u in
                 ("keyctld.service", "keyctld.socket", "keyctl-notify.service")]
        want += [os.path.join(udevdir, "rules.d", "70-keyctl.rules"),
                 os.path.join(completions, "keyctl-status"),
                 os.path.join(datadir, "doc", "keyctl", "keyctl.conf.example"),
                 os.path.join(datadir, "doc", "keyctl", "polkit.md"),
                 os.path.join(datadir, "doc", "keyctl", "polkit-70-keyctl-pcsc.rules")]
        if man:
            want += [os.path.join(mandir, m) for m in
                     ("man1/keyctl-status.1", "man1/keyctl-notify.1", "man5/keyctl.conf.5",
                      "man8/keyctld.8")]
        else:
            print("     scdoc absent: man pages not built, not checked")
        got = sorted("/" + os.path.relpath(os.path.join(d, f), dest)
                     for d, _, fs in os.walk(dest) for f in fs)
        for w in want:
            check("installed " + w, w in got)
        extra = sorted(set(got) - set(want))
        check("nothing else installed", not extra, extra)
        for b in want[:3]:
            check("%s is executable" % b, os.access(dest + b, os.X_OK))
            r = subprocess.run([dest + b, "--version"], capture_output=True, text=True,
                               timeout=20)
            check("%s --version runs" % os.path.basename(b),
                  r.returncode == 0 and os.path.basename(b) in r.stdout, r.stdout + r.stderr)

        # ExecStart= name the installed programs.
        for unit, exe in (("keyctld.service", "keyctld"), ("keyctl-notify.service",
                                                            "keyctl-notify")):
            try:
                with open(dest + os.path.join(unitdir, unit)) as f:
                    text = f.read()
            except OSError:
                text = ""
            m = re.search(r"^ExecStart=(\S+)", text, re.M)
            check("%s: ExecStart=%s" % (unit, os.path.join(bindir, exe)),
                  m is not None and m.group(1) == os.path.join(bindir, exe),
                  m.group(0) if m else text)
            check("%s: no @placeholder@ left" % unit, not re.search(r"@\w+@", text))
        with open(dest + os.path.join(unitdir, "keyctld.socket")) as f:
            sock = f.read()
        check("keyctld.socket: %t/keyctl/socket, 0600, directory 0700",
              "ListenStream=%t/keyctl/socket" in sock and "SocketMode=0600" in sock and
              "DirectoryMode=0700" in sock, sock)

        # The example: commented defaults that keyctld accepts, each documented.
        example = dest + os.path.join(datadir, "doc", "keyctl", "keyctl.conf.example")
        with open(example) as f:
            lines = f.read().splitlines()
        keys = [m.group(1) for m in (re.match(r"^#([a-z-]+) = ", ln) for ln in lines) if m]
        check("example shows every key commented out (%d keys)" % len(keys), len(keys) >= 12 and
              not any(re.match(r"^[a-z-]+ *=", ln) for ln in lines), keys)
        with open(os.path.join(SRCDIR, "doc", "keyctl.conf.5.scd")) as f:
            manpage = f.read()
        undocumented = [k for k in keys if "*%s =*" % k not in manpage]
        check("keyctl.conf(5) documents every key of the example", not undocumented,
              undocumented)
        tmp = os.path.join(dest, "run")
        os.makedirs(os.path.join(tmp, "gnupg"), mode=0o700)
        os.makedirs(os.path.join(tmp, "runtime"), mode=0o700)
        conf = os.path.join(tmp, "keyctl.conf")
        with open(conf, "w") as f:
            for ln in lines:
                m = re.match(r"^#([a-z-]+ = .*)$", ln)
                if m and not ln.startswith("#socket") and not ln.startswith("#gnupghome"):
                    ln = m.group(1)
                f.write(ln + "\n")
        env = dict(os.environ, XDG_RUNTIME_DIR=os.path.join(tmp, "runtime"),
                   GNUPGHOME=os.path.join(tmp, "gnupg"),
                   PCSCLITE_CSOCK_NAME=os.path.join(tmp, "none", "pcscd.comm"))
        for k in ("NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "JOURNAL_STREAM"):
            env.pop(k, None)
        errf = os.path.join(tmp, "stderr")
        with open(errf, "w") as err:
            d = subprocess.Popen([dest + want[0], "--config", conf], env=env, stderr=err,
                                 stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        try:
            sockpath = os.path.join(tmp, "runtime", "keyctl", "socket")
            end = time.monotonic() + 30
            while time.monotonic() < end and d.poll() is None and not os.path.exists(sockpath):
                time.sleep(0.1)
            running = d.poll() is None and os.path.exists(sockpath)
            d.send_signal(signal.SIGTERM) if d.poll() is None else None
            rc = d.wait(timeout=20)
        finally:
            if d.poll() is None:
                d.kill()
                d.wait()
        with open(errf) as f:
            log = f.read()
        check("the installed keyctld starts with the uncommented example", running and rc == 0,
              "rc=%r\n%s" % (rc, log))
        check("and warns about nothing in it", not re.search(r"(?i)warn|unknown|ignor", log), log)
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
