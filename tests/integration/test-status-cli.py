#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl-status without keyctld: the "not running" message and exit 3 (missing socket, stale
socket, no path at all), --quiet, Prometheus's daemon_up 0, --help, --version, usage errors; each
kind of wrong path named as such (no such file, a part not a directory, a regular file, a
directory, a stale socket, permission denied) and a socket of another program (gpg-agent's
greeting, one that says nothing, a Varlink service without io.keyctl) named "does not answer as
keyctld", each within 3 s, --watch included (issue 31 item 5); then against a fake Varlink
server that answers GetStatus with a fixed reply: the table, --json, the Prometheus text and the
exit codes. Every process started here is waited for or killed by pid."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

from fake_keyctld import Alien, FakeDaemon, reply, touch_events, touch_pending

STATUS = sys.argv[1] if len(sys.argv) > 1 else os.environ["KEYCTL_STATUS"]
FAILED = []


def run(args, env_extra=None, drop=(), timeout=20):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    p = subprocess.run([STATUS] + args, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name)
    if not cond:
        print("     " + detail.replace("\n", "\n     "))
        FAILED.append(name)


START_HINT = (". Start it with: systemctl --user start keyctld.socket (or run keyctld in a "
              "terminal)\n")
# What keyctl-status may take to tell a wrong path or another program's socket.
BOUND_S = 3.0


def not_running_message(path):
    return "keyctl-status: keyctld is not running (no socket at %s)" % path + START_HINT


def stale_message(path):
    return ("keyctl-status: stale socket: keyctld is not running (nobody listens on %s)" % path
            + START_HINT)


def timed(args, env_extra=None, timeout=10):
    """run(), with its time; rc None when it did not end in timeout s (then it was killed)."""
    t = time.monotonic()
    try:
        rc, out, err = run(args, env_extra, timeout=timeout)
    except subprocess.TimeoutExpired:
        rc, out, err = None, "", "did not end in %d s" % timeout
    return rc, out, err, time.monotonic() - t


def check_named(name, args, path, said, prometheus=False):
    """keyctl-status ARGS at path: exit 3, exactly said on stderr, within BOUND_S."""
    rc, out, err, dt = timed(args, {"KEYCTL_SOCKET": path})
    out_ok = out.endswith("keyctl_daemon_up 0\n") if prometheus else out == ""
    check("%s, %s: exit 3 in %.1f s with its own message" % (name, " ".join(args) or "table", dt),
          rc == 3 and err == said and out_ok and dt < BOUND_S,
          "rc=%r %.1f s out=%r err=%r\nwant err=%r" % (rc, dt, out[-200:], err, said))


def test_no_daemon(tmp):
    missing = os.path.join(tmp, "nonexistent", "socket")

    rc, out, err = run([], {"KEYCTL_SOCKET": missing})
    check("missing socket exits 3", rc == 3, "rc=%d" % rc)
    check("missing socket says how to start it", err == not_running_message(missing), err)
    check("missing socket prints nothing on stdout", out == "", out)

    rc, out, err = run(["--socket=" + missing], {"KEYCTL_SOCKET": "/elsewhere"})
    check("--socket wins over KEYCTL_SOCKET", rc == 3 and err == not_running_message(missing),
          err)

    rc, out, err = run([], {"XDG_RUNTIME_DIR": tmp}, drop=("KEYCTL_SOCKET",))
    default = os.path.join(tmp, "keyctl", "socket")
    check("default path under XDG_RUNTIME_DIR", rc == 3 and err == not_running_message(default),
          err)

    # A socket file nobody listens on: ECONNREFUSED, the leftover of a crashed daemon.
    stale = os.path.join(tmp, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()
    rc, out, err = run([], {"KEYCTL_SOCKET": stale})
    check("stale socket exits 3 with the message", rc == 3 and err == stale_message(stale),
          "rc=%d %s" % (rc, err))

    rc, out, err = run(["--quiet"], {"KEYCTL_SOCKET": missing})
    check("--quiet: exit 3 and silent", rc == 3 and out == "" and err == "",
          "rc=%d out=%r err=%r" % (rc, out, err))

    rc, out, err = run(["--format=prometheus"], {"KEYCTL_SOCKET": missing})
    check("prometheus without daemon: keyctl_daemon_up 0",
          rc == 3 and out.endswith("keyctl_daemon_up 0\n") and "# TYPE keyctl_daemon_up gauge"
          in out, out)

    rc, out, err = run([], drop=("KEYCTL_SOCKET", "XDG_RUNTIME_DIR"))
    check("no path known: exit 3, names the variables",
          rc == 3 and "KEYCTL_SOCKET" in err and "XDG_RUNTIME_DIR" in err, err)


MODES = ([], ["--watch"], ["--json"], ["--watch", "--json"])


def test_wrong_paths(tmp):
    """Each kind of path that is not keyctld's socket, said as what it is."""
    d = os.path.join(tmp, "wrong")
    os.mkdir(d)
    regular = os.path.join(d, "regular")
    open(regular, "w").close()
    stale = os.path.join(d, "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()
    missing = os.path.join(d, "missing")
    cases = [
        ("missing", missing, not_running_message(missing)),
        ("a part not a directory", regular + "/socket",
         "keyctl-status: no socket at %s/socket: a part of that path is not a directory\n"
         % regular),
        ("a regular file", regular,
         "keyctl-status: %s is a regular file, not keyctld's socket\n" % regular),
        ("a directory", d, "keyctl-status: %s is a directory, not keyctld's socket\n" % d),
        ("a stale socket", stale, stale_message(stale)),
    ]
    for name, path, said in cases:
        for args in MODES:
            check_named(name, args, path, said)
        check_named(name, ["--format=prometheus"], path, said, prometheus=True)
    test_permission_denied(d)


def test_permission_denied(d):
    """A socket we may not write to (a daemon of root's, 0600, reached by nobody)."""
    if os.getuid() != 0:
        print("     (not root: the permission-denied case skipped)")
        return
    import pwd
    nobody = pwd.getpwnam("nobody")
    as_nobody = ["setpriv", "--reuid=%d" % nobody.pw_uid, "--regid=%d" % nobody.pw_gid,
                 "--clear-groups"]
    if subprocess.run(as_nobody + [STATUS, "--version"], capture_output=True).returncode != 0:
        print("     (keyctl-status cannot run as nobody here: permission denied skipped)")
        return
    os.chmod(d, 0o755)
    path = os.path.join(d, "root-only.sock")
    fake = FakeDaemon(path, reply("ok", "ok"))
    os.chmod(path, 0o600)
    said = ("keyctl-status: permission denied on %s: keyctld answers only the user who runs "
            "it\n" % path)
    try:
        for args in ([], ["--watch"]):
            t = time.monotonic()
            p = subprocess.run(as_nobody + [STATUS, "--socket=" + path] + args,
                               capture_output=True, text=True, timeout=10)
            dt = time.monotonic() - t
            check("permission denied, %s: exit 3 in %.1f s, said" % (" ".join(args) or "table",
                                                                     dt),
                  p.returncode == 3 and p.stderr == said and dt < BOUND_S,
                  "rc=%r err=%r" % (p.returncode, p.stderr))
    finally:
        fake.close()


def test_other_programs(tmp):
    """Sockets that accept but are not keyctld's: exit 3 within 3 s, never a 25 s wait or a
    --watch that prints nothing for ever."""
    other = "; is it another program's socket?\n"
    cases = [
        ("greet", "gpg-agent's greeting",
         ' does not answer as keyctld: it said "OK Pleased to meet you", which is not Varlink'),
        ("silent", "a socket that says nothing",
         " does not answer as keyctld: no Varlink answer within 2 s"),
        ("varlink", "another Varlink service",
         " does not answer as keyctld: a Varlink service without io.keyctl"),
    ]
    for mode, name, said in cases:
        path = os.path.join(tmp, "alien-%s.sock" % mode)
        alien = Alien(path, mode)
        try:
            said = "keyctl-status: " + path + said + other
            for args in MODES:
                check_named(name, args, path, said)
            check_named(name, ["--format=prometheus"], path, said, prometheus=True)
            rc, out, err, dt = timed(["--quiet"], {"KEYCTL_SOCKET": path})
            check("%s, --quiet: exit 3, silent, in %.1f s" % (name, dt),
                  rc == 3 and out == "" and err == "" and dt < BOUND_S,
                  "rc=%r out=%r err=%r" % (rc, out, err))
        finally:
            alien.close()


def test_options():
    rc, out, err = run(["--version"])
    check("--version", rc == 0 and out.startswith("keyctl-status ") and err == "", out + err)

    rc, out, err = run(["--help"])
    check("--help", rc == 0 and out.startswith("Usage: keyctl-status") and "--warn-days" in out
          and "--format" in out, out)

    for bad in (["--format=xml"], ["--color=sometimes"], ["--warn-days=-1"], ["--warn-days=x"],
                ["--bogus"], ["extra"], ["--watch", "--format=prometheus"]):
        rc, out, err = run(bad, {"KEYCTL_SOCKET": "/nonexistent"})
        check("usage error %s exits 3" % " ".join(bad), rc == 3 and err != "" and out == "",
              "rc=%d err=%r" % (rc, err))


def test_fake_daemon(tmp):
    path = os.path.join(tmp, "fake.sock")
    params = reply("warning", "warning")
    d = FakeDaemon(path, params)
    env = {"KEYCTL_SOCKET": path}
    try:
        rc, out, err = run([], env)
        check("table: exit 1 for a warning", rc == 1, "rc=%d err=%s" % (rc, err))
        check("table: no colour when not a terminal", "\033[" not in out, out)
        check("table: token line",
              "  YubiKey 5 NFC #12345678  present  firmware 5.4.3\n" in out, out)
        check("table: slot matched to the key",
              "    sign        2E3F4A5B7A3B9C1D  ed25519  touch on  "
              "Alice \"Quoted\" <alice@example.org>\n" in out, out)
        check("table: subkey in 5 days on the YubiKey",
              "on YubiKey 5 NFC #12345678" in out and "  in 5 days  warning\n" in out, out)
        check("table: sec# primary", "    [C]  ed25519  offline (sec#)" in out, out)
        check("table: finding and hint",
              "  warning   Subkey 7A3B9C1D2E3F4A5B expires in 5 days.\n"
              "            hint: gpg --quick-set-expire ...\n" in out, out)
        check("table: fits in 100 columns", max(len(l) for l in out.splitlines()) <= 100, out)

        rc, out, err = run(["--color=always"], env)
        check("--color=always colours", rc == 1 and "\033[1mTOKENS\033[0m" in out, out)
        rc, out, err = run(["--color=auto"], dict(env, NO_COLOR="1"))
        check("NO_COLOR and auto: none", "\033[" not in out, out)

        rc, out, err = run(["--json"], env)
        check("--json: exit 1", rc == 1, "rc=%d" % rc)
        try:
            check("--json: the reply as it came", json.loads(out) == params, out)
        except ValueError:
            check("--json: valid JSON", False, out)
        # In keyctld's own compact form the parameters are passed on as they came, byte for
        # byte; the spaced form above took the fallback (printed from the parsed tree).
        # A field this client does not know, with an escape json-c would not write back
        # (\u00e9): only a pass-through prints it as it came.
        d.compact = True
        d.params = dict(params, note="caf\u00e9")
        rc, out, err = run(["--json"], env)
        check("--json: keyctld's text passed through", rc == 1 and
              out == json.dumps(d.params, separators=(",", ":")) + "\n" and
              "caf\\u00e9" in out, out[:200])
        d.compact = False
        d.params = params

        rc, out, err = run(["--format=prometheus"], env)
        check("prometheus: up and days",
              rc == 1 and "keyctl_daemon_up 1\n" in out and
              'usage="sign",uid="Alice \\"Quoted\\" <alice@example.org>"} 5\n' in out, out)

        rc, out, err = run(["--quiet"], env)
        check("--quiet with a daemon: exit 1, silent", rc == 1 and out == "" and err == "",
              "rc=%d %r %r" % (rc, out, err))

        rc, out, err = run(["--quiet", "--warn-days=4"], env)
        check("--warn-days=4: still 1 (daemon says warning)", rc == 1, "rc=%d" % rc)

        rc, out, err = run(["--watch"], env)
        lines = out.splitlines()
        check("--watch: a line per event, exit 3 when the daemon goes",
              rc == 3 and len(lines) == 2 and
              lines[0].endswith(" state: 1 token (1 present), 1 key, 1 finding; warning") and
              lines[1].endswith(" token changed: YubiKey 5 NFC #12345678, absent") and
              "closed the connection" in err, "rc=%d out=%r err=%r" % (rc, out, err))

        rc, out, err = run(["--watch", "--json"], env)
        lines = out.splitlines()
        check("--watch --json: JSON lines",
              rc == 3 and len(lines) == 2 and json.loads(lines[0])["event"]["type"] == "state"
              and json.loads(lines[1])["event"]["token"]["present"] is False, out)
    finally:
        d.close()
        os.unlink(path)

    d = FakeDaemon(path, reply("notice", "notice"))
    try:
        rc, out, err = run(["--quiet"], env)
        check("notice only: exit 0", rc == 0, "rc=%d" % rc)
        rc, out, err = run(["--quiet", "--warn-days=4"], env)
        check("--warn-days=4 and 5 days left: exit 0", rc == 0, "rc=%d" % rc)
        rc, out, err = run(["--quiet", "--warn-days=5"], env)
        check("--warn-days=5 and 5 days left: exit 1", rc == 1, "rc=%d" % rc)
    finally:
        d.close()
        os.unlink(path)

    d = FakeDaemon(path, reply("critical", "expired"))
    try:
        rc, out, err = run(["--quiet"], env)
        check("critical: exit 2", rc == 2, "rc=%d" % rc)
    finally:
        d.close()
        os.unlink(path)

    bad = reply("ok", "ok")
    bad["keys"][0]["level"] = "purple"
    d = FakeDaemon(path, bad)
    try:
        rc, out, err = run([], env)
        check("malformed reply: exit 3 with a message",
              rc == 3 and out == "" and "malformed" in err, "rc=%d %s" % (rc, err))
    finally:
        d.close()
        os.unlink(path)


def test_touch(tmp):
    """Issue 34, item 1: a token waiting for a touch, as the table, --json, Prometheus and
    --watch show it."""
    path = os.path.join(tmp, "fake-touch.sock")
    params = reply("ok", "ok")
    token = params["tokens"][0]
    waiting = dict(params, tokens=[dict(token, touch_pending=touch_pending())])
    d = FakeDaemon(path, waiting, events=touch_events(token, requester=""))
    env = {"KEYCTL_SOCKET": path}
    try:
        rc, out, err = run([], env)
        check("touch: the token's line says it waits, and for what",
              "  YubiKey 5 NFC #12345678  present  waiting for touch (signing key; likely git)"
              "  firmware 5.4.3\n" in out, "rc=%d out=%r err=%r" % (rc, out, err))
        rc, out, err = run(["--json"], env)
        tp = json.loads(out)["tokens"][0].get("touch_pending") if out else None
        check("touch: --json carries touch_pending",
              tp == touch_pending() and tp["application"] == "openpgp" and
              tp["slot"] == "sig" and tp["requester"] == "git", out[:300])
        rc, out, err = run(["--format=prometheus"], env)
        check("touch: the Prometheus gauge is 1",
              "# TYPE keyctl_token_touch_pending gauge\n"
              'keyctl_token_touch_pending{token="yubikey-12345678",application="openpgp",'
              'slot="sig"} 1\n' in out, out)

        rc, out, err = run(["--watch"], env)
        lines = out.splitlines()
        check("touch: --watch prints the wait and its end",
              rc == 3 and len(lines) == 3 and
              lines[1].endswith(" touch pending: YubiKey 5 NFC #12345678, waiting for touch "
                                "(signing key)") and
              lines[2].endswith(" touch done: YubiKey 5 NFC #12345678, touched"),
              "rc=%d out=%r err=%r" % (rc, out, err))
        rc, out, err = run(["--watch", "--json"], env)
        evs = [json.loads(l)["event"] for l in out.splitlines()]
        check("touch: --watch --json passes both events on",
              rc == 3 and [e["type"] for e in evs] == ["state", "touch-pending", "touch-done"]
              and evs[1]["token"]["touch_pending"]["slot"] == "sig" and
              "touch_pending" not in evs[2]["token"] and evs[2]["touch_end"] == "touched", out)
    finally:
        d.close()
        os.unlink(path)

    # Not waiting: no words, no touch_pending, the gauge at 0.
    d = FakeDaemon(path, params)
    try:
        rc, out, err = run([], env)
        check("touch: no words while not waiting", "waiting for touch" not in out, out)
        rc, out, err = run(["--format=prometheus"], env)
        check("touch: the gauge is 0 while not waiting",
              'keyctl_token_touch_pending{token="yubikey-12345678",application="",slot=""} 0\n'
              in out, out)
    finally:
        d.close()
        os.unlink(path)


def test_color_and_quiet_watch(tmp):
    """Issue 31, item 6: a bare --color is --color=always (as ls and grep take it), with or
    without NO_COLOR; --watch with --quiet is refused as a usage error (exit 3), said."""
    path = os.path.join(tmp, "fake-color.sock")
    d = FakeDaemon(path, reply("warning", "warning"))
    env = {"KEYCTL_SOCKET": path}
    try:
        rc, out, err = run(["--color"], env)
        check("bare --color colours", rc == 1 and "\033[1mTOKENS\033[0m" in out and err == "",
              "rc=%d err=%r" % (rc, err))
        rc, out, err = run(["--color"], dict(env, NO_COLOR="1"))
        check("bare --color wins over NO_COLOR", rc == 1 and "\033[1mTOKENS\033[0m" in out,
              "rc=%d err=%r" % (rc, err))
        rc, out, err = run(["--colour"], env)
        check("bare --colour colours", rc == 1 and "\033[1mTOKENS\033[0m" in out,
              "rc=%d err=%r" % (rc, err))
    finally:
        d.close()
        os.unlink(path)
    for bad in (["--watch", "-q"], ["-q", "--watch"], ["-wq"], ["--watch", "--quiet", "--json"]):
        rc, out, err = run(bad, {"KEYCTL_SOCKET": "/nonexistent"})
        check("%s: usage error, exit 3" % " ".join(bad),
              rc == 3 and out == "" and err == "keyctl-status: --quiet goes with a status (its "
              "exit code), not --watch, which only prints\n", "rc=%d err=%r" % (rc, err))
    rc, out, err = run(["--ack=x", "--watch"], {"KEYCTL_SOCKET": "/nonexistent"})
    check("--ack with --watch: usage error, exit 3", rc == 3 and "--ack" in err,
          "rc=%d err=%r" % (rc, err))


def main():
    with tempfile.TemporaryDirectory(prefix="keyctl-status-") as tmp:
        test_no_daemon(tmp)
        test_wrong_paths(tmp)
        test_other_programs(tmp)
        test_options()
        test_fake_daemon(tmp)
        test_touch(tmp)
        test_color_and_quiet_watch(tmp)
    if FAILED:
        print("%d failed: %s" % (len(FAILED), ", ".join(FAILED)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
