# SPDX-License-Identifier: LGPL-2.1-or-later
"""Test-side handle of a virtual OpenPGP card.

Starts emulator.py inside the Pcscd's network namespace (nsenter) and
drives it over a Unix socket: insert/remove/swap, runtime profile edits,
fault injection, the log of every APDU the card received (by test phase),
and for a card in use the touch, its access status and its live profile.
Does not parse APDUs itself (openpgp_card.py does).
"""

import copy
import json
import os
import socket
import time

from . import procs
from .piv_certs import materialize
from .profiles import load as load_profile

EMULATOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "emulator.py")


class VirtualCard:
    def __init__(self, profile, pcscd=None):
        self.profile = materialize(load_profile(profile))  # PIV certificates made here
        self.pcscd = pcscd
        self.proc = None
        self.inserted = False
        self.sock = None
        self.file = None

    @property
    def started(self):
        return self.proc is not None and self.proc.poll() is None

    # ---- lifecycle ------------------------------------------------------
    def start(self):
        if self.pcscd is None or self.pcscd.proc is None:
            raise RuntimeError("VirtualCard needs a started Pcscd")
        d = self.pcscd.dir
        n = len([x for x in os.listdir(d) if x.startswith("card")])
        self.control_path = os.path.join(d, f"card{n}.ctl")
        prof = os.path.join(d, f"card{n}.json")
        with open(prof, "w") as f:
            json.dump(self.profile, f)
        log = open(os.path.join(d, f"card{n}.log"), "ab")
        self.proc = procs.spawn("card-emulator",
                                ["nsenter", f"--net={self.pcscd.netns()}", procs.PYTHON, EMULATOR,
                                 "--port", str(self.pcscd.port), "--control", self.control_path,
                                 "--profile", prof], stdout=log, stderr=log)
        log.close()
        end = time.monotonic() + 5
        while not os.path.exists(self.control_path):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise procs.BedUnavailable("card emulator did not start (nsenter?)")
            time.sleep(0.02)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        while True:  # the emulator binds before it listens: refused until then
            try:
                self.sock.connect(self.control_path)
                break
            except ConnectionRefusedError:
                if self.proc.poll() is not None or time.monotonic() > end:
                    raise
                time.sleep(0.02)
        self.file = self.sock.makefile("rwb")
        if self not in self.pcscd.cards:
            self.pcscd.cards.append(self)
        return self

    def stop(self):
        if self.proc is None:
            return
        try:
            self._call("quit")
        except (OSError, ValueError, RuntimeError):
            pass
        if self.file:
            self.file.close()
            self.sock.close()
            self.file = self.sock = None
        procs.stop(self.proc)
        self.proc = None
        try:
            os.unlink(self.control_path)
        except FileNotFoundError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        if self.pcscd and self in self.pcscd.cards:
            self.pcscd.cards.remove(self)

    def _call(self, op, **kw):
        self.file.write(json.dumps(dict(op=op, **kw)).encode() + b"\n")
        self.file.flush()
        line = self.file.readline()
        if not line:
            raise RuntimeError("card emulator went away")
        r = json.loads(line)
        if "error" in r:
            raise RuntimeError(r["error"])
        return r

    # ---- insertion ------------------------------------------------------
    def insert(self, profile=None, wait=False):
        """Connect to vpcd (== insert).  With wait=True block until a PC/SC
        client sees the card and return the delay in seconds."""
        if profile is not None:
            self.profile = materialize(load_profile(profile))
        else:  # the same card again: with what it was given while in use (keys, counters)
            self.profile = self.live_profile()
        self._call("insert", profile=self.profile)
        self.inserted = True
        if wait:
            return self.pcscd.wait_card(True)

    def remove(self, wait=False):
        self._call("remove")
        self.inserted = False
        if wait:
            return self.pcscd.wait_card(False)

    def reinsert(self, gap=1.0, wait=False):
        self.remove()
        time.sleep(gap)
        return self.insert(wait=wait)

    def swap(self, profile, gap=1.0, wait=False):
        """Remove this card and insert another one (a different token)."""
        self.remove()
        time.sleep(gap)
        return self.insert(profile, wait=wait)

    def update(self, **fields):
        """Change profile fields at runtime (takes effect on the next APDU). Starts from the
        card's live profile: what a card in use wrote (keys, counters) is kept."""
        self.profile = self.live_profile()
        self.profile.update(fields)
        self._call("profile", profile=self.profile)

    def update_slot(self, slot, **fields):
        self.profile = self.live_profile()
        self.profile.setdefault("slots", {}).setdefault(slot, {}).update(fields)
        self._call("profile", profile=self.profile)

    # ---- faults -----------------------------------------------------------
    def slow(self, ms):
        self._call("fault", fault={"slow_ms": ms})

    def truncated_tlv(self, on=True):
        self._call("fault", fault={"truncated_tlv": on})

    def wrong_status(self, sw):
        """Every GET DATA answers this status word (None to clear)."""
        self._call("fault", fault={"wrong_status": sw})

    def yank_after(self, n):
        """Answer n more APDUs, then drop the vpcd connection on the next one
        (card pulled mid-transaction).  reinsert()/insert() to bring it back."""
        self._call("fault", fault={"yank_after": n})
        self.inserted = False

    def silent(self, on=True):
        """Never answer APDUs (control messages/ATR still answered)."""
        self._call("fault", fault={"silent": on})

    def hold_on(self, ins, p1p2=None, late=False, max_s=60):
        """The next command with this INS (and P1-P2, e.g. 0x9E9A for PSO:CDS) goes unanswered
        while the card holds it: a card that stops answering halfway through an operation,
        with the reader waiting (a busy card's time extensions) and pcscd's reader thread
        blocked. It stays so until release_hold() or max_s; then late=True answers it as usual,
        else never (remove() it first: the emulator's send fails, as a pulled token's). Fires
        once; APDUs from other connections wait behind it, as on a real reader."""
        self.update(hold_on={"ins": ins, "p1p2": p1p2, "late": late, "max_s": max_s})

    def holding(self):
        """{"ins", "p1p2"} of the command held now, or None."""
        return self.live_profile().get("holding")

    def release_hold(self):
        """Lets a held command go (see hold_on()); True when one was held."""
        return bool(self.holding()) and self._call("touch")["touched"]

    def clear_faults(self):
        self._call("fault", fault={"slow_ms": 0, "truncated_tlv": False, "wrong_status": None,
                                   "yank_after": None, "silent": False})

    # ---- counters ---------------------------------------------------------
    def stats(self):
        return self._call("stats")

    def apdus(self):
        """[(cla, ins, p1, p2, data hex)] of every APDU received."""
        return [tuple(x) for x in self.stats()["log"]]

    def commands(self):
        """INS bytes of every APDU received, in order."""
        return [a[1] for a in self.apdus()]

    def forbidden(self):
        return [tuple(x) for x in self.stats()["forbidden"]]

    def forbidden_count(self):
        return len(self.stats()["forbidden"])

    def reset_counters(self):
        self._call("reset_stats")

    def connected(self):
        return self.stats()["connected"]

    def copy_profile(self):
        return copy.deepcopy(self.profile)

    # ---- a card in use --------------------------------------------------------
    def live_profile(self):
        """The profile as the card holds it now: with the keys gpg's keytocard put there, the
        signature counter and the PIN retry counters."""
        return self._call("get_profile")["profile"]

    def security(self):
        """{"verified": ["pw1_81", "pw1_82", "pw3"] verified now, "selected", "touch_pending"}."""
        return self._call("security")

    def touch(self, timeout=20.0):
        """Touch the card once an operation waits for it (waiting up to `timeout` s for one);
        returns True when an operation was released, False when none came."""
        end = time.monotonic() + timeout
        while True:
            if self._call("touch")["touched"]:
                return True
            if time.monotonic() > end:
                return False
            time.sleep(0.05)

    def phase(self, name):
        """Name the test phase: APDUs from now on are counted under it (phase_counts())."""
        self._call("phase", name=name)

    def phase_counts(self):
        """{phase: {INS name or hex: count}} of every APDU since the last reset_counters()."""
        st = self.stats()
        out = {}
        for phase, apdu in zip(st["phases"], st["log"]):
            key = INS_NAMES.get(apdu[1], f"{apdu[1]:02X}")
            if apdu[1] == 0x2A:
                key = PSO_NAMES.get((apdu[2], apdu[3]), key)
            per = out.setdefault(phase, {})
            per[key] = per.get(key, 0) + 1
        return out


INS_NAMES = {0xA4: "SELECT", 0xCA: "GET DATA", 0xC0: "GET RESPONSE", 0x20: "VERIFY",
             0x2A: "PSO", 0x88: "INTERNAL AUTHENTICATE", 0xDA: "PUT DATA", 0xDB: "PUT DATA (odd)",
             0x47: "GENERATE/READ KEY", 0xF1: "GET VERSION", 0x1D: "READ CONFIG"}
PSO_NAMES = {(0x9E, 0x9A): "PSO:CDS", (0x80, 0x86): "PSO:DECIPHER"}
