#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Card emulator process: connects to vpcd (TCP, 2-byte big-endian length +
payload; 1-byte control messages 00 off, 01 on, 02 reset, 04 ATR) and
answers APDUs with openpgp_card.OpenPGPCard.  Controlled through a Unix
socket speaking one JSON object per line (see card.py for the client).

Runs inside pcscd's network namespace (started through nsenter).  Being
connected to vpcd == card inserted; closing the connection == removed.
vpcd's power off, power on and reset reach the card as a reset (its PINs
forgotten).  A card in use that waits for a touch releases the lock while it
waits, so that the control socket's `touch` (and stats) get through.
Does no crypto itself; does not talk to anything but vpcd and its control socket.
"""

import argparse
import json
import os
import socket
import struct
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from keyctlbed.openpgp_card import OpenPGPCard  # noqa: E402


class Emulator:
    def __init__(self, port, profile):
        self.port = port
        self.lock = threading.RLock()
        self.card = OpenPGPCard(profile)
        self.card.wait_for_touch = self.wait_touch
        self.touch_event = threading.Event()
        self.touch_pending = False
        self.want_inserted = False
        self.sock = None
        self.connected = False
        self.slow_ms = 0
        self.yank_after = None
        self.silent = False
        self.apdus_since_fault = 0
        self.events = []   # (monotonic time, what)
        self.running = True
        # pcscd's event thread must poll vpcd (every 400 ms) while the card is
        # out, or it never notices the removal and ignores the reinsertion.
        self.min_absent = 0.9
        self.last_drop = 0.0

    def event(self, what):
        self.events.append((time.monotonic(), what))

    # ---- vpcd side ------------------------------------------------------
    def recv_exact(self, s, n):
        buf = b""
        while len(buf) < n:
            chunk = s.recv(n - len(buf))
            # vpcd writes an APDU's length and its bytes in two sends: with Nagle on its side
            # and a delayed ACK on ours every APDU cost 40 ms. Acknowledge at once.
            try:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            except OSError:
                pass
            if not chunk:
                raise ConnectionError("vpcd closed")
            buf += chunk
        return buf

    def send(self, s, payload):
        s.sendall(struct.pack(">H", len(payload)) + payload)

    def drop(self, why):
        with self.lock:
            s, self.sock = self.sock, None
            self.connected = False
        if s:
            self.last_drop = time.monotonic()
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
            self.event("disconnected:" + why)

    def vpcd_loop(self):
        while self.running:
            if not self.want_inserted or self.sock is None and not self.try_connect():
                time.sleep(0.02)
                continue
            s = self.sock
            try:
                n = struct.unpack(">H", self.recv_exact(s, 2))[0]
                msg = self.recv_exact(s, n) if n else b""
            except (OSError, ConnectionError):
                if self.sock is s:
                    self.drop("vpcd closed")
                continue
            try:
                self.handle(s, msg)
            except OSError:
                if self.sock is s:
                    self.drop("send failed")

    def try_connect(self):
        if time.monotonic() - self.last_drop < self.min_absent:
            return False
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.connect(("127.0.0.1", self.port))
        except OSError:
            s.close()
            return False
        with self.lock:
            if not self.want_inserted:
                s.close()
                return False
            self.sock = s
            self.connected = True
            self.card.reset()
        self.event("connected")
        return True

    def handle(self, s, msg):
        if len(msg) == 1:
            c = msg[0]
            if c in (0, 1, 2):
                with self.lock:
                    self.card.reset()
                self.event({0: "power off", 1: "power on", 2: "reset"}[c])
            elif c == 4:
                self.send(s, self.card.atr())
            return
        with self.lock:
            if self.yank_after is not None:
                if self.apdus_since_fault >= self.yank_after:
                    self.yank_after = None
                    self.want_inserted = False
                    self.card.note(msg[0], msg[1] if len(msg) > 1 else 0, 0, 0, "yanked")
                    self.drop("yank")
                    return
                self.apdus_since_fault += 1
            silent = self.silent
            slow = self.slow_ms
        if silent:
            with self.lock:
                self.card.note(msg[0], msg[1] if len(msg) > 1 else 0, 0, 0, "unanswered")
            return
        if slow:
            time.sleep(slow / 1000.0)
        with self.lock:
            resp = self.card.process(msg)
        self.send(s, resp)

    def wait_touch(self, timeout):
        """Called by the card, under self.lock (held once, by handle()), when a slot wants a
        touch: lets go of the lock until `touch` comes or the timeout passes."""
        self.touch_event.clear()
        self.touch_pending = True
        self.event("touch wanted")
        self.lock.release()
        try:
            touched = self.touch_event.wait(timeout)
        finally:
            self.lock.acquire()
            self.touch_pending = False
        self.event("touched" if touched else "touch timed out")
        return touched

    # ---- control side ---------------------------------------------------
    def control_use(self, op, req):
        """The controls of a card in use; None when `op` is not one of them."""
        if op == "touch":
            if not self.touch_pending:
                return {"touched": False}
            self.touch_event.set()
            return {"touched": True}
        if op == "phase":
            self.card.phase = str(req["name"])
            return {}
        if op == "get_profile":
            return {"profile": self.card.profile}
        if op == "security":
            return {"verified": sorted(self.card.sec.state), "selected": self.card.selected,
                    "touch_pending": self.touch_pending}
        return None

    def control(self, req):
        op = req.get("op")
        with self.lock:
            r = self.control_use(op, req)
            if r is not None:
                return r
            if op == "insert":
                if "profile" in req:
                    self.card.profile = req["profile"]
                self.want_inserted = True
                return {}
            if op == "remove":
                self.want_inserted = False
            elif op == "profile":
                self.card.profile = req["profile"]
                return {}
            elif op == "fault":
                f = req["fault"]
                if "slow_ms" in f:
                    self.slow_ms = int(f["slow_ms"])
                if "truncated_tlv" in f:
                    self.card.truncated_tlv = bool(f["truncated_tlv"])
                if "wrong_status" in f:
                    self.card.wrong_status = f["wrong_status"]
                if "yank_after" in f:
                    self.yank_after = f["yank_after"]
                    self.apdus_since_fault = 0
                if "silent" in f:
                    self.silent = bool(f["silent"])
                return {}
            elif op == "stats":
                return {"log": self.card.log, "forbidden": self.card.forbidden,
                        "phases": self.card.phases,
                        "connected": self.connected, "want_inserted": self.want_inserted,
                        "events": self.events, "now": time.monotonic()}
            elif op == "reset_stats":
                self.card.log.clear()
                self.card.phases.clear()
                self.card.forbidden.clear()
                self.events.clear()
                return {}
            elif op == "quit":
                self.running = False
                self.want_inserted = False
            elif op == "ping":
                return {"pid": os.getpid()}
            else:
                return {"error": f"unknown op {op}"}
        if op in ("remove", "quit"):
            self.drop(op)
        return {}

    def serve(self, path):
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(4)
        threading.Thread(target=self.vpcd_loop, daemon=True).start()
        print("ready", flush=True)
        while self.running:
            conn, _ = srv.accept()
            threading.Thread(target=self.client, args=(conn,), daemon=True).start()
        srv.close()

    def client(self, conn):
        f = conn.makefile("rwb")
        for line in f:
            try:
                resp = self.control(json.loads(line))
            except Exception as e:  # report, keep serving
                resp = {"error": repr(e)}
            f.write(json.dumps(resp).encode() + b"\n")
            f.flush()
            if not self.running:
                os._exit(0)
        conn.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--profile", required=True)
    a = ap.parse_args()
    with open(a.profile) as f:
        profile = json.load(f)
    Emulator(a.port, profile).serve(a.control)


if __name__ == "__main__":
    main()
