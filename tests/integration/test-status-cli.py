#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl-status without keyctld: the "not running" message and exit 3 (missing socket, stale
socket, no path at all), --quiet, Prometheus's daemon_up 0, --help, --version, usage errors; then
against a fake Varlink server that answers GetStatus with a fixed reply: the table, --json, the
Prometheus text and the exit codes. Every process started here is waited for or killed by pid."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

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


def not_running_message(path):
    return ("keyctl-status: keyctld is not running (no socket at %s). Start it with: "
            "systemctl --user start keyctld.socket (or run keyctld in a terminal)\n" % path)


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
    check("stale socket exits 3 with the message", rc == 3 and err == not_running_message(stale),
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


# ---- a fake keyctld: one GetStatus reply, the same for every connection ----

NOW = int(time.time())
DAY = 86400


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def subkey(fpr, caps, expires, secret, token, level, primary=False):
    s = {"fingerprint": fpr, "keygrip": "0" * 40, "algorithm": "ed25519",
         "capabilities": caps, "is_primary": primary, "created": iso(NOW - 300 * DAY),
         "created_epoch": NOW - 300 * DAY, "revoked": False, "expired": False,
         "disabled": False, "secret": secret, "card_serial": "", "token_id": token,
         "level": level}
    if expires:
        s["expires"] = iso(expires)
        s["expires_epoch"] = expires
    return s


def reply(sign_level, finding_level):
    key = "0123456789ABCDEF0123456789ABCDEF01234567"
    sub_s = "7A3B9C1D2E3F4A5B7A3B9C1D2E3F4A5B7A3B9C1D"
    return {
        "daemon": {"version": "0.1.0", "started": iso(NOW - 3600), "started_epoch": NOW - 3600,
                   "now": iso(NOW), "now_epoch": NOW, "pcsc_available": True,
                   "gnupghome": "/home/alice/.gnupg", "keyring_stale": False,
                   "keyring_error": "", "keyring_refreshed": iso(NOW - 60),
                   "keyring_refreshed_epoch": NOW - 60},
        "tokens": [{
            "id": "yubikey-12345678", "kind": "yubikey", "model": "YubiKey 5 NFC",
            "serial": "12345678", "firmware": "5.4.3", "usb_interfaces": ["otp", "fido", "ccid"],
            "usb_vendor": 0x1050, "usb_product": 0x0407,
            "reader": "Yubico YubiKey OTP+FIDO+CCID 00 00", "present": True,
            "first_seen": iso(NOW - 10 * DAY), "first_seen_epoch": NOW - 10 * DAY,
            "last_seen": iso(NOW), "last_seen_epoch": NOW,
            "openpgp": {
                "aid": "D2760001240103040006" + "00BC614E" + "0000", "version": "3.4",
                "manufacturer_id": 6, "manufacturer": "Yubico", "serial": "00BC614E",
                "firmware": "5.4.3",
                "slots": [
                    {"slot": "sign", "fingerprint": sub_s, "algorithm": "ed25519",
                     "touch": "on"},
                    {"slot": "encrypt", "fingerprint": "", "algorithm": "", "touch": "off"},
                    {"slot": "authenticate", "fingerprint": "", "algorithm": "",
                     "touch": "off"}],
                "signature_counter": 42, "pin_retries": {"pw1": 3, "rc": 0, "pw3": 3},
                "url": "", "cardholder": ""},
            "read_path": "pcsc", "counter_went_down": False, "error": ""}],
        "keys": [{
            "fingerprint": key, "uid": "Alice \"Quoted\" <alice@example.org>", "revoked": False,
            "expired": False, "disabled": False, "has_secret": True, "tracked": False,
            "level": sign_level,
            "subkeys": [
                subkey(key, ["certify"], 0, "none", "", "ok", primary=True),
                subkey(sub_s, ["sign"], NOW + 5 * DAY - 3600, "card", "yubikey-12345678",
                       sign_level)]}],
        "findings": [{"rule": "subkey-expiring", "level": finding_level,
                      "message": "Subkey 7A3B9C1D2E3F4A5B expires in 5 days.", "key": key,
                      "subkey": sub_s, "token": "", "hint": "gpg --quick-set-expire ..."}],
    }


class FakeDaemon:
    def __init__(self, path, params):
        self.params = params
        self.compact = False  # keyctld's own form: {"parameters":...} without blanks
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(8)
        self.calls = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                buf = b""
                while b"\0" not in buf:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                if b"\0" not in buf:
                    continue
                call = json.loads(buf.split(b"\0")[0])
                self.calls.append(call.get("method"))
                if call.get("method") == "io.keyctl.GetStatus":
                    msg = {"parameters": self.params}
                elif call.get("method") == "io.keyctl.Watch" and call.get("more"):
                    # A state, one change, then the daemon "goes away".
                    state = dict(self.params, type="state")
                    token = dict(self.params["tokens"][0], present=False)
                    for ev in (state, {"type": "token-changed", "token": token}):
                        conn.sendall(json.dumps({"parameters": {"event": ev},
                                                 "continues": True}).encode() + b"\0")
                    continue
                else:
                    msg = {"error": "org.varlink.service.MethodNotFound",
                           "parameters": {"method": call.get("method")}}
                sep = (",", ":") if self.compact else None
                conn.sendall(json.dumps(msg, separators=sep).encode() + b"\0")

    def close(self):
        self.sock.close()


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


def main():
    with tempfile.TemporaryDirectory(prefix="keyctl-status-") as tmp:
        test_no_daemon(tmp)
        test_options()
        test_fake_daemon(tmp)
    if FAILED:
        print("%d failed: %s" % (len(FAILED), ", ".join(FAILED)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
