# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fake servers on a unix socket for the clients' tests, each serving on a thread of the test:
FakeDaemon, a keyctld that answers GetInfo, then GetStatus with a fixed reply or Watch with that
state (then the events it is given, touch_events() for a touch wait); Alien, a socket of another program (one that greets in its own protocol, as gpg-agent
does, one that says nothing, one that speaks Varlink but not io.keyctl). close() stops each."""

import json
import socket
import threading
import time

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


GET_INFO = {"vendor": "keyctl", "product": "keyctld", "version": "0.1.0",
            "url": "https://example.org/keyctl",
            "interfaces": ["org.varlink.service", "io.keyctl"]}


class Listener:
    """A listening unix socket at path whose connections go to self.handle(conn), one after the
    other, on a thread of its own; close() ends it."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(16)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.handle(conn)

    def close(self):
        # shutdown() wakes the thread blocked in accept() (close() alone does not, on Linux):
        # it ends here, before another listener may be given the same descriptor number.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=10)


def touch_pending(application="openpgp", slot="sig", requester="git", since=None):
    """A TouchPending as keyctld sends it."""
    since = NOW if since is None else since
    return {"application": application, "slot": slot, "since": iso(since),
            "since_epoch": since, "since_usec": 250000, "requester": requester}


def touch_events(token, pause=0.0, **kw):
    """A touch-pending of token (TouchPending from touch_pending(**kw)), then its touch-done
    ("touched") pause seconds later: events for FakeDaemon's Watch."""
    waiting = dict(token, touch_pending=touch_pending(**kw))
    return [{"type": "touch-pending", "token": waiting},
            {"pause": pause},
            {"type": "touch-done", "token": dict(token), "touch_end": "touched"}]


class FakeDaemon(Listener):
    def __init__(self, path, params, watch_stays=False, events=None):
        """events: what Watch sends after the state, instead of a token-changed (its token
        absent); an entry {"pause": s} waits s seconds instead. With watch_stays, the
        connection is held open after them until the client goes."""
        self.params = params
        self.watch_stays = watch_stays
        self.events = events
        self.compact = False  # keyctld's own form: {"parameters":...} without blanks
        self.calls = []
        super().__init__(path)

    def handle(self, conn):
        with conn:
            call = self.next_call(conn)
            if call and call.get("method") == "org.varlink.service.GetInfo":
                # The clients' first question: who are you?
                conn.sendall(json.dumps({"parameters": GET_INFO}).encode() + b"\0")
                call = self.next_call(conn)
            if not call:
                return
            self.calls.append(call.get("method"))
            if call.get("method") == "io.keyctl.GetStatus":
                msg = {"parameters": self.params}
            elif call.get("method") == "io.keyctl.Watch" and self.watch_stays:
                # The state (and the events), then nothing until the client goes, as a daemon
                # at rest.
                self.send_events(conn, [dict(self.params, type="state")] + (self.events or []))
                while conn.recv(65536):
                    pass
                return
            elif call.get("method") == "io.keyctl.Watch" and call.get("more"):
                # A state, the changes, then the daemon "goes away".
                token = dict(self.params["tokens"][0], present=False)
                events = self.events
                if events is None:
                    events = [{"type": "token-changed", "token": token}]
                self.send_events(conn, [dict(self.params, type="state")] + events)
                return
            else:
                msg = {"error": "org.varlink.service.MethodNotFound",
                       "parameters": {"method": call.get("method")}}
            sep = (",", ":") if self.compact else None
            conn.sendall(json.dumps(msg, separators=sep).encode() + b"\0")

    @staticmethod
    def send_events(conn, events):
        for ev in events:
            if "pause" in ev:
                time.sleep(ev["pause"])
                continue
            conn.sendall(json.dumps({"parameters": {"event": ev},
                                     "continues": True}).encode() + b"\0")

    @staticmethod
    def next_call(conn):
        buf = b""
        while b"\0" not in buf:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            buf += chunk
        return json.loads(buf.split(b"\0")[0])



class Alien(Listener):
    """A socket of another program: "greet" says GREETING on each connection as gpg-agent does
    (its Assuan greeting), "silent" accepts and says nothing, "varlink" answers GetInfo as a
    Varlink service that is not keyctld. Each connection is held until the client closes it."""

    GREETING = b"OK Pleased to meet you\n"
    OTHER_INFO = {"vendor": "Example", "product": "hostnamed", "version": "1", "url": "",
                  "interfaces": ["org.varlink.service", "io.example.Hostname"]}

    def __init__(self, path, mode):
        self.mode = mode
        super().__init__(path)

    def handle(self, conn):
        threading.Thread(target=self.hold, args=(conn,), daemon=True).start()

    def hold(self, conn):
        with conn:
            try:
                if self.mode == "greet":
                    conn.sendall(self.GREETING)
                buf = b""
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    buf += chunk
                    if self.mode == "varlink" and b"\0" in buf:
                        buf = buf.split(b"\0", 1)[1]
                        conn.sendall(json.dumps({"parameters": self.OTHER_INFO}).encode() +
                                     b"\0")
            except OSError:
                return

    def close(self):
        # shutdown() wakes the thread blocked in accept() (close() alone does not, on Linux):
        # it ends here, before another listener may be given the same descriptor number.
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(timeout=10)
