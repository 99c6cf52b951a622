#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The systemd user units as installed, and the runtime contract they rely on.

- `systemd-analyze --user verify` on every installed unit (ExecStart rewritten to the DESTDIR
  binaries, since verify checks that the command exists), with no warning at all; a unit with a
  typo is shown to fail the same check.
- `systemd-analyze security --offline=true` on keyctld.service: the exposure score is printed and
  must be 2.0 or lower.
- The watchdog: keyctld with WATCHDOG_USEC=2 s and WATCHDOG_PID=its own pid sends WATCHDOG=1 on
  NOTIFY_SOCKET again and again (the unit's WatchdogSec= relies on it).
- Socket activation as keyctld.socket does it: a listening socket on fd 3, LISTEN_FDS=1,
  LISTEN_PID=the daemon's pid; io.keyctl.GetStatus answers on that socket, the daemon binds no
  socket of its own, and the socket is still there after the daemon exits.
Every process is stopped by pid."""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

KEYCTLD = os.environ["KEYCTLD"]
BUILDDIR = os.environ["KEYCTL_BUILDDIR"]
FAILED = []
MAX_EXPOSURE = 2.0


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name, flush=True)
    if not cond and detail:
        print("     " + str(detail).replace("\n", "\n     "))
    if not cond:
        FAILED.append(name)


def meson_option(name):
    r = subprocess.run(["meson", "introspect", "--buildoptions", BUILDDIR], capture_output=True,
                       text=True, check=True)
    return next(o["value"] for o in json.loads(r.stdout) if o["name"] == name)


def install(dest):
    r = subprocess.run(["meson", "install", "--no-rebuild", "--quiet", "-C", BUILDDIR,
                        "--destdir", dest], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print("FAIL meson install --destdir\n" + r.stdout + r.stderr)
        sys.exit(1)


def user_unit_dir(prefix):
    r = subprocess.run(["pkg-config", "--define-variable=prefix=" + prefix,
                        "--variable=systemduserunitdir", "systemd"], capture_output=True,
                       text=True)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else \
        os.path.join(prefix, "lib/systemd/user")


def analyze(args, env_extra=None):
    env = dict(os.environ, SYSTEMD_PAGER="", SYSTEMD_COLORS="0", **(env_extra or {}))
    return subprocess.run(["systemd-analyze"] + args, capture_output=True, text=True, env=env,
                          timeout=120)


def test_verify(tmp):
    dest = os.path.join(tmp, "dest")
    install(dest)
    prefix = meson_option("prefix")
    bindir = os.path.join(prefix, meson_option("bindir"))
    unitdir = dest + user_unit_dir(prefix)
    units = sorted(os.listdir(unitdir)) if os.path.isdir(unitdir) else []
    check("three units installed in %s" % unitdir,
          units == ["keyctl-notify.service", "keyctld.service", "keyctld.socket"], units)

    # verify checks that ExecStart= exists: point it at the DESTDIR copies.
    staged = os.path.join(tmp, "units")
    os.mkdir(staged)
    for u in units:
        with open(os.path.join(unitdir, u)) as f:
            text = f.read()
        text = re.sub(r"^(Exec[A-Za-z]*=[-@:+!]*)" + re.escape(bindir + "/"),
                      lambda m: m.group(1) + dest + bindir + "/", text, flags=re.M)
        with open(os.path.join(staged, u), "w") as f:
            f.write(text)
    runtime = os.path.join(tmp, "runtime")
    os.mkdir(runtime, 0o700)
    env = {"XDG_RUNTIME_DIR": runtime}
    paths = [os.path.join(staged, u) for u in units]
    r = analyze(["--user", "verify", "--man=no"] + paths, env)
    check("systemd-analyze --user verify: exit 0, no warning", r.returncode == 0 and
          r.stdout + r.stderr == "", "rc=%d\n%s%s" % (r.returncode, r.stdout, r.stderr))

    # The same check sees a typo and a missing binary.
    bad = os.path.join(staged, "keyctld.service")
    with open(bad) as f:
        text = f.read()
    with open(bad, "w") as f:
        f.write(text.replace("NoNewPrivileges=yes", "NoNewPrivilege=yes")
                .replace(dest + bindir + "/keyctld", dest + bindir + "/keyctld-missing"))
    r = analyze(["--user", "verify", "--man=no"] + paths, env)
    out = r.stdout + r.stderr
    check("verify catches an unknown key", "NoNewPrivilege" in out, out)
    check("verify catches a missing ExecStart binary",
          r.returncode != 0 and "keyctld-missing" in out, out)

    # The installed units name the installed binaries.
    for u, exe in (("keyctld.service", "keyctld"), ("keyctl-notify.service", "keyctl-notify")):
        with open(os.path.join(unitdir, u)) as f:
            m = re.search(r"^ExecStart=(\S+)", f.read(), re.M)
        path = m.group(1) if m else ""
        check("%s ExecStart=%s is the installed %s" % (u, path, exe),
              path == os.path.join(bindir, exe) and os.access(dest + path, os.X_OK), path)


def test_exposure():
    unit = os.path.join(BUILDDIR, "systemd", "keyctld.service")
    r = analyze(["security", "--offline=true", unit])
    m = re.search(r"Overall exposure level for keyctld\.service: (\d+\.\d+)", r.stdout)
    score = float(m.group(1)) if m else 99.0
    print("     exposure of keyctld.service (systemd-analyze security --offline): %.1f" % score)
    weak = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("\u2717")]
    print("     options still scored as exposed: " + " ".join(weak))
    check("exposure %.1f <= %.1f" % (score, MAX_EXPOSURE), m is not None and
          score <= MAX_EXPOSURE, r.stdout[-2000:] + r.stderr)
    r = analyze(["security", "--offline=true", "--threshold=%d" % int(MAX_EXPOSURE * 10), unit])
    check("systemd-analyze --threshold=20 agrees (exit 0)", r.returncode == 0, r.stderr)

    # The scorer does move: the same unit without its sandbox scores far worse.
    with tempfile.TemporaryDirectory(prefix="keyctl-units-") as tmp:
        bare = os.path.join(tmp, "keyctld.service")
        with open(unit) as f:
            keep = [line for line in f if not re.match(
                r"(Protect|Private|Restrict|SystemCall|NoNew|Memory|Lock|Capability|"
                r"IPAddress|UMask|Keyring|Proc)", line)]
        with open(bare, "w") as f:
            f.writelines(keep)
        r = analyze(["security", "--offline=true", bare])
        m = re.search(r"Overall exposure level for keyctld\.service: (\d+\.\d+)", r.stdout)
        check("the unsandboxed unit scores above 9 (%s)" % (m.group(1) if m else "?"),
              m is not None and float(m.group(1)) > 9.0, r.stdout[-500:])


class Daemon:
    """keyctld forked so that its own pid can be put in WATCHDOG_PID/LISTEN_PID before exec,
    with fd 3 optionally the passed socket. Stopped by pid."""

    def __init__(self, tmp, env_extra, listen_sock=None, pid_vars=()):
        self.stderr_path = os.path.join(tmp, "stderr")
        env = {k: v for k, v in os.environ.items()
               if k not in ("LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC",
                            "WATCHDOG_PID", "NOTIFY_SOCKET", "JOURNAL_STREAM")}
        for d in ("config", "gnupg", "runtime"):
            os.makedirs(os.path.join(tmp, d), mode=0o700, exist_ok=True)
        env.update(XDG_CONFIG_HOME=os.path.join(tmp, "config"), XDG_STATE_HOME=os.path.join(tmp, "state"),
                   XDG_RUNTIME_DIR=os.path.join(tmp, "runtime"),
                   GNUPGHOME=os.path.join(tmp, "gnupg"),
                   PCSCLITE_CSOCK_NAME=os.path.join(tmp, "no-pcscd", "pcscd.comm"))
        env.update(env_extra)
        err = os.open(self.stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(err, 2)
                if listen_sock is not None:
                    # dup2() onto itself keeps CLOEXEC: clear it explicitly.
                    os.dup2(listen_sock.fileno(), 3)
                    os.set_inheritable(3, True)
                for var in pid_vars:
                    env[var] = str(os.getpid())
                os.execve(KEYCTLD, [KEYCTLD], env)
            finally:
                os._exit(127)
        os.close(err)
        self.pid = pid
        self.rc = None

    def poll(self):
        if self.rc is None:
            p, status = os.waitpid(self.pid, os.WNOHANG)
            if p:
                self.rc = os.waitstatus_to_exitcode(status)
        return self.rc

    def wait(self, timeout):
        end = time.monotonic() + timeout
        while self.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        return self.rc

    def stop(self, sig=signal.SIGKILL):
        if self.poll() is None:
            os.kill(self.pid, sig)
            if self.wait(10) is None:
                os.kill(self.pid, signal.SIGKILL)
                self.wait(10)

    def log(self):
        with open(self.stderr_path) as f:
            return f.read()


def test_watchdog():
    with tempfile.TemporaryDirectory(prefix="keyctl-units-") as tmp:
        npath = os.path.join(tmp, "notify")
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ns.bind(npath)
        d = Daemon(tmp, {"NOTIFY_SOCKET": npath, "WATCHDOG_USEC": "2000000"},
                   pid_vars=("WATCHDOG_PID",))
        try:
            pings, ready, t_first = 0, False, None
            end = time.monotonic() + 30
            while pings < 4 and time.monotonic() < end:
                ns.settimeout(max(0.05, end - time.monotonic()))
                try:
                    msg = ns.recv(4096).decode().split("\n")
                except socket.timeout:
                    break
                ready = ready or "READY=1" in msg
                if "WATCHDOG=1" in msg:
                    pings += 1
                    t_first = t_first or time.monotonic()
            span = time.monotonic() - t_first if t_first else 0
            print("     %d WATCHDOG=1 pings, the last %.1f s after the first (interval 2 s)" %
                  (pings, span))
            check("READY=1 before the pings", ready)
            check("WATCHDOG=1 keeps arriving with WATCHDOG_USEC=2s (4 pings)", pings >= 4,
                  d.log())
            check("daemon alive while pinging", d.poll() is None, d.log())
        finally:
            d.stop()
            ns.close()

        # WATCHDOG_PID names another process: the daemon must not ping for it.
        ns = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        os.unlink(npath)
        ns.bind(npath)
        d = Daemon(tmp, {"NOTIFY_SOCKET": npath, "WATCHDOG_USEC": "2000000",
                         "WATCHDOG_PID": "1"})
        try:
            seen = []
            end = time.monotonic() + 6
            while time.monotonic() < end:
                ns.settimeout(max(0.05, end - time.monotonic()))
                try:
                    seen += ns.recv(4096).decode().split("\n")
                except socket.timeout:
                    break
            check("no WATCHDOG=1 when WATCHDOG_PID is not ours (READY seen: %s)" %
                  ("READY=1" in seen), "WATCHDOG=1" not in seen and "READY=1" in seen, seen)
        finally:
            d.stop()
            ns.close()


def varlink_call(path, method, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(json.dumps({"method": method, "parameters": {}}).encode() + b"\0")
        buf = b""
        while not buf.endswith(b"\0"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    return json.loads(buf.rstrip(b"\0").decode())


def test_socket_activation():
    with tempfile.TemporaryDirectory(prefix="keyctl-units-") as tmp:
        # What keyctld.socket makes: %t/keyctl/ 0700, the socket 0600, listening.
        sockdir = os.path.join(tmp, "systemd-runtime", "keyctl")
        os.makedirs(sockdir, mode=0o700)
        path = os.path.join(sockdir, "socket")
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(path)
        os.chmod(path, 0o600)
        ls.listen(16)
        d = Daemon(tmp, {"LISTEN_FDS": "1"}, listen_sock=ls, pid_vars=("LISTEN_PID",))
        try:
            reply, err = None, None
            end = time.monotonic() + 30
            while time.monotonic() < end and d.poll() is None:
                try:
                    reply = varlink_call(path, "io.keyctl.GetStatus")
                    break
                except (OSError, ValueError) as e:
                    err = e
                    time.sleep(0.1)
            params = (reply or {}).get("parameters", {})
            daemon = params.get("daemon", {})
            check("GetStatus answers on the passed socket", "error" not in (reply or {}) and
                  daemon.get("version", "") != "", "%r %r\n%s" % (reply, err, d.log()))
            check("GetStatus reports our GNUPGHOME", daemon.get("gnupghome") ==
                  os.path.join(tmp, "gnupg"), daemon)
            check("GetStatus: tokens and keys are lists", isinstance(params.get("tokens"), list)
                  and isinstance(params.get("keys"), list), params)
            own = os.path.join(tmp, "runtime", "keyctl", "socket")
            check("no socket of its own at $XDG_RUNTIME_DIR/keyctl/socket", not
                  os.path.exists(own))
            d.stop(signal.SIGTERM)
            check("SIGTERM: exit 0", d.rc == 0, "rc=%r\n%s" % (d.rc, d.log()))
            check("the passed socket survives the daemon (the socket unit owns it)",
                  os.path.exists(path))
        finally:
            d.stop()
            ls.close()

        # LISTEN_PID of another process: the fds are not for us; the daemon binds its own.
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(os.path.join(tmp, "other"))
        ls.listen(1)
        d = Daemon(tmp, {"LISTEN_FDS": "1", "LISTEN_PID": "1"}, listen_sock=ls)
        try:
            own = os.path.join(tmp, "runtime", "keyctl", "socket")
            reply = None
            end = time.monotonic() + 30
            while time.monotonic() < end and d.poll() is None and reply is None:
                try:
                    reply = varlink_call(own, "io.keyctl.GetStatus")
                except (OSError, ValueError):
                    time.sleep(0.1)
            check("LISTEN_PID not ours: serves its own socket instead",
                  reply is not None and "parameters" in reply, d.log())
        finally:
            d.stop()
            ls.close()


def main():
    for tool in ("systemd-analyze", "pkg-config", "meson"):
        if not shutil.which(tool):
            print("SKIP %s not installed" % tool)
            return 77
    with tempfile.TemporaryDirectory(prefix="keyctl-units-") as tmp:
        test_verify(tmp)
    test_exposure()
    test_watchdog()
    test_socket_activation()
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
