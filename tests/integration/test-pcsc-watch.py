#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The PC/SC watcher on the test bed: an isolated pcscd with the vpcd
virtual OpenPGP card, and a throwaway gpg-agent/scdaemon.  Drives
pcsc-watch-probe (the watcher + a real model, events as JSON lines) and
asserts what the model sees: insertion, removal, pcscd going away and
coming back, card faults, scdaemon holding the card, and that
`gpg --card-status` never fails because of us.  Exits 77 when the bed
cannot run here."""

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import keyctlbed as kb

PROBE = os.environ.get("PCSC_WATCH_PROBE")
READER = "Yubico YubiKey OTP+FIDO+CCID"
READ_PATH_PCSC, READ_PATH_SCDAEMON = 1, 2
KIND_YUBIKEY = 1
WRITE_INS = {0x20, 0x24, 0x2C, 0x44, 0xDA, 0xDB, 0x47, 0xE6, 0x2A, 0x88, 0x84, 0xE4}


class Probe:
    def __init__(self, env):
        self.events = queue.Queue()
        self.log = []
        self.proc = kb.procs.spawn("pcsc-watch-probe", [PROBE], env=env, stdout=subprocess.PIPE,
                                   stderr=None, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        self.expect(lambda e: e == "ready", 10, "probe ready")

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.events.put(json.loads(line))
            except ValueError:
                self.events.put({"garbage": line})
        self.events.put(None)

    def expect(self, pred, timeout, what):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out waiting for {what}; saw: {self.log[-6:]}")
            try:
                e = self.events.get(timeout=left)
            except queue.Empty:
                continue
            if e is None:
                raise AssertionError(f"probe exited (rc={self.proc.wait()}) waiting for {what}")
            self.log.append(e)
            if pred(e):
                return e

    def token(self, timeout, what, event=("added", "changed"), check=None):
        return self.expect(lambda e: isinstance(e, dict) and e.get("event") in event and
                           (check is None or check(e["token"])), timeout, what)["token"]

    def quiet(self, seconds):
        """No token events for this long (the watcher does not re-read on its own)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                e = self.events.get(timeout=end - time.monotonic())
            except queue.Empty:
                return
            self.log.append(e)
            if isinstance(e, dict) and e.get("event") in ("added", "changed"):
                raise AssertionError(f"unexpected event {e}")

    def no_errors(self, seconds):
        """Token events for this long carry no error and stay on the card."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                e = self.events.get(timeout=end - time.monotonic())
            except queue.Empty:
                return
            self.log.append(e)
            if isinstance(e, dict) and "token" in e:
                assert e["event"] != "removed" and e["token"]["error"] == "", e

    def rescan(self):
        self.proc.send_signal(signal.SIGUSR1)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.expect(lambda e: e == "stopped", 10, "probe stopped")
        assert self.proc.wait(10) == 0, "probe exit status"


def check_profile_token(t, path=READ_PATH_PCSC):
    assert t["error"] == "", t["error"]
    assert t["present"] and t["has_openpgp"], t
    assert t["kind"] == KIND_YUBIKEY and t["serial"] == "12345678", t
    assert t["model"] == "YubiKey" and t["usb_interfaces"] == 7, t
    assert t["read_path"] == path, t
    c = t["openpgp"]
    assert c["slots"][0]["fingerprint"] == "3C7E2A6F1B5D9C8E4F0A2B6C8D1E3F5A7B9C0D2E", c
    assert c["slots"][1]["fingerprint"] == "8A1B2C3D4E5F60718293A4B5C6D7E8F901234567", c
    assert c["slots"][2]["created"] == 1700000200, c
    assert c["signature_counter"] == 42, c
    assert c["pin_retries"] == [3, 0, 3], c
    assert c["cardholder"] == "Tester Alice", c


def no_writes(card):
    assert card.forbidden_count() == 0, card.forbidden()
    # 0x47 with P1=0x81 only reads a public key (scdaemon does it for gpg --card-status).
    bad = [a for a in card.apdus() if a[1] in WRITE_INS and not (a[1] == 0x47 and a[2] == 0x81)]
    assert not bad, f"write/verify instructions sent: {bad}"


def test_lifecycle_and_faults(p, card, probe):
    t = probe.token(10, "card inserted")
    check_profile_token(t)
    probe.quiet(1.5)  # our own connect/disconnect must not trigger another read

    card.remove()
    probe.token(5, "card removed", event=("removed",))
    card.insert()
    check_profile_token(probe.token(5, "card re-inserted"))

    # pcscd killed and restarted: a state, not an error; seen again without restarting us.
    p.restart()
    probe.expect(lambda e: isinstance(e, dict) and e.get("pcsc_available") is False, 10,
                 "pcsc unavailable")
    probe.expect(lambda e: isinstance(e, dict) and e.get("pcsc_available") is True, 10,
                 "pcsc available again")
    check_profile_token(probe.token(10, "card after pcscd restart"))

    def read_error(t):
        return t["error"]

    def card_error(t):
        # A broken member of 6E: the rest is kept, C5 asked for on its own (which this card
        # answers), so the token reads, and the card's own error names the item.
        return t["openpgp"]["error"] if not t["error"] and t.get("openpgp") else ""

    faults = [
        ("truncated TLV", lambda: card.truncated_tlv(True), card_error,
         "73: the item at byte 66 (tag C5) runs past its end"),
        ("wrong status word", lambda: card.wrong_status(0x6F00), read_error,
         "GET DATA 6E answered 6F00"),
        ("silent card", lambda: card.silent(True), read_error, "card did not answer within 5 s"),
    ]
    for what, inject, error_of, text in faults:
        card.remove()
        probe.token(5, f"removed before {what}", event=("removed",))
        inject()
        t0 = time.monotonic()
        card.insert()
        t = probe.token(15, what, check=lambda t: error_of(t) != "")
        assert text in error_of(t), f"{what}: {error_of(t)!r}"
        if what == "silent card":
            assert time.monotonic() - t0 < 12, "silence detected in time"
        card.clear_faults()
        # the watcher goes on: the next insertion reads fine
        card.remove()
        probe.token(10, f"removed after {what}", event=("removed",))
        card.insert()
        check_profile_token(probe.token(10, f"good read after {what}"))

    # Slow but answering: still read, no error.
    card.remove()
    probe.token(5, "removed before slow", event=("removed",))
    card.slow(150)
    card.insert()
    check_profile_token(probe.token(20, "slow card"))
    card.clear_faults()

    # Yanked mid-read: either no sighting or an error, then the watcher goes on.
    card.remove()
    probe.token(5, "removed before yank", event=("removed",))
    card.insert()
    card.yank_after(2)
    time.sleep(2)
    card.clear_faults()
    card.insert()
    check_profile_token(probe.token(10, "good read after yank",
                                    check=lambda t: t["error"] == "" and t["present"]))
    no_writes(card)


def test_scdaemon(p, card, env):
    # scdaemon without pcsc-shared takes the card exclusively after `gpg --card-status`.
    k = kb.Keyring(p)
    with open(os.path.join(k.home, "scdaemon.conf"), "w") as f:
        f.write(f"disable-ccid\nlog-file {k.home}/scd.log\n")
    try:
        out = k.card_status()
        assert "12345678" in out, out
        k.scdaemon_pid()
        penv = dict(env, GNUPGHOME=k.home)
        probe = Probe(penv)
        try:
            t = probe.token(20, "card via scdaemon")
            check_profile_token(t, path=READ_PATH_SCDAEMON)
            # gpg keeps working while we are around, and after our reads.
            for _ in range(3):
                probe.rescan()
                k.card_status()
            probe.no_errors(3)
        finally:
            probe.stop()
        # --scd reads once through scd_read_card() directly.
        r = subprocess.run([PROBE, "--scd"], env=penv, capture_output=True, text=True, timeout=30)
        res = json.loads(r.stdout.splitlines()[-1])
        assert r.returncode == 0 and res["r"] == 0, res
        assert res["openpgp"]["serial"] == "12345678", res
        assert res["openpgp"]["slots"][2]["algorithm"] == "ed25519", res
        k.card_status()
    finally:
        k.stop()
    no_writes(card)


def test_gpg_alongside(p, card, env):
    # scdaemon with pcsc-shared (the bed's default): gpg --card-status during, between and
    # after our reads never fails.
    k = kb.Keyring(p)
    try:
        probe = Probe(dict(env, GNUPGHOME=k.home))
        try:
            check_profile_token(probe.token(10, "card before gpg"))
            for i in range(4):
                probe.rescan()
                k.card_status()  # raises on a non-zero exit
                time.sleep(0.2 * i)
            k.scdaemon_pid()
            # with scdaemon connected (INUSE) and the agent up, a re-read asks scdaemon
            card.remove()
            probe.token(10, "removed under gpg", event=("removed",))
            card.insert()
            t = probe.token(15, "card while scdaemon shares it")
            assert t["error"] == "", t
            k.card_status()
        finally:
            probe.stop()
        k.card_status()
    finally:
        k.stop()
    no_writes(card)


def test_pcscd_later():
    """pcscd absent when the watcher starts, even its directory: the watcher waits (inotify on
    the nearest existing parent, no polling) and picks pcscd up when it appears."""
    base = kb.procs.tmpdir("keyctlbed-later-")
    later = os.path.join(base, "not", "yet")
    env = dict(os.environ, PCSCLITE_CSOCK_NAME=os.path.join(later, "run", "pcscd.comm"))
    env.pop("GNUPGHOME", None)
    probe = Probe(env)
    p = kb.Pcscd(friendly_name=READER)
    try:
        probe.quiet(1.0)
        orig = kb.procs.tmpdir
        kb.procs.tmpdir = lambda prefix="": (os.makedirs(later), later)[1]
        try:
            p.start()
        finally:
            kb.procs.tmpdir = orig
        probe.expect(lambda e: isinstance(e, dict) and e.get("pcsc_available") is True, 10,
                     "pcsc available once pcscd appeared")
        p.card("yubikey5nfc")
        check_profile_token(probe.token(10, "card on the late pcscd"))
    finally:
        probe.stop()
        p.stop()


def main():
    if not PROBE:
        print("PCSC_WATCH_PROBE not set")
        return 77
    try:
        p = kb.Pcscd(friendly_name=READER)
        p.start()
    except kb.BedUnavailable as e:
        print(f"test bed unavailable: {e}")
        return 77
    try:
        test_pcscd_later()
        card = p.card("yubikey5nfc")
        p.wait_card(True)
        env = dict(os.environ, **p.env)
        env.pop("GNUPGHOME", None)
        probe = Probe(env)
        try:
            test_lifecycle_and_faults(p, card, probe)
        finally:
            probe.stop()
        test_scdaemon(p, card, env)
        test_gpg_alongside(p, card, env)
    finally:
        p.stop()
        kb.stop_all()
    kb.assert_no_leftovers()
    print("pcsc-watch: all scenarios passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
