# SPDX-License-Identifier: LGPL-2.1-or-later
"""The workload of the coexistence test (issue 33, item 3) and of its benchmark: a user's day of
card operations through GnuPG on the bed's card, timed one by one, with the PIN prompts the
scripted pinentry counted and the VERIFY commands the card counted, per run.

    bed = Bed(pcscd, kr)              # a key made with gpg, its subkeys moved with keytocard
    bed.set_mode("pcsc-shared")       # scdaemon.conf, then a new gpg-agent and scdaemon
    r = bed.run("shared/without", per_kind=50, between=lambda i: ...)
    r.failures, r.prompts, r.verifies, r.latency("sign")  # (p50, p99) in seconds

The operations, in turn: gpg --sign (checked with gpg --verify), gpg --decrypt (the plaintext
back), git commit -S with user.signingkey (git verify-commit), ssh-keygen -Y sign through
gpg-agent's ssh support (ssh-keygen -Y verify); only the operation itself is timed, the checks
after it are not. Each run starts with a new gpg-agent and scdaemon, so that each asks the PIN as
on a fresh login: once for the first signature, once for the first decryption; and only once the
card has been quiet for half a second (what reads it after scdaemon let go has read it).

What it does not do: start keyctld or anything else beside GnuPG (the test does, in `between`),
or judge the figures.
"""

import os
import subprocess
import time

from keyctlbed import procs, profiles

UID = "Alice Tester <alice@example.org>"
ALGOS = {"sig": "ed25519", "enc": "cv25519", "aut": "ed25519"}
KINDS = ("sign", "decrypt", "git", "ssh")
# scdaemon.conf per mode: as users run it (the default opens the card exclusively; the README's
# advice shares it; GnuPG 2.4 with pcscd also wants its own CCID driver off).
MODES = {"exclusive": [], "pcsc-shared": ["pcsc-shared"], "disable-ccid": ["disable-ccid"],
         "pcsc-shared+disable-ccid": ["pcsc-shared", "disable-ccid"]}


def gnupg_version():
    r = subprocess.run(["gpgconf", "--version"], capture_output=True, text=True, timeout=30)
    first = r.stdout.splitlines()[0] if r.stdout else ""
    try:
        return tuple(int(x) for x in first.split()[-1].split(".")[:2])
    except ValueError:
        return (0, 0)


def modes():
    """The scdaemon modes users run with this GnuPG. 2.2 falls back to PC/SC when its CCID
    driver finds no reader: the default (exclusive) and pcsc-shared. 2.4 does not (its CCID
    driver on beside pcscd finds no card: test-scd-ccid), so there each mode comes with
    disable-ccid, as users of pcscd must set it: exclusive, and pcsc-shared."""
    if gnupg_version() >= (2, 4):
        return ["disable-ccid", "pcsc-shared+disable-ccid"]
    return ["exclusive", "pcsc-shared"]


def empty_card(serial):
    """A virtual YubiKey with no keys, in use with the "yubikey" applet's rules (the strictest:
    any SELECT forgets every PIN), PW1 valid for several signatures as YubiKeys ship."""
    prof = profiles.load("yubikey5nfc")
    prof.update(applet="yubikey", serial=serial, slots={}, signature_counter=0,
                pw1_valid_once=False, attestation_slot=False)
    prof["yubikey"]["serial"] = int(serial)
    # No PIV: GnuPG 2.4's scdaemon SELECTs a YubiKey's PIV around its operations and the
    # YubiKey then forgets the PINs, a prompt each time (users set disable-application piv:
    # drduh/YubiKey-Guide#511); test-piv.py has the card with PIV.
    prof.pop("piv", None)
    return prof


def pct(xs, p):
    """The p-th percentile by nearest rank (p99 of 50 samples is the largest)."""
    s = sorted(xs)
    if not s:
        return float("nan")
    k = max(0, min(len(s) - 1, -(-len(s) * p // 100) - 1))
    return s[int(k)]


class Result:
    def __init__(self, name):
        self.name = name
        self.samples = {k: [] for k in KINDS}
        self.failed = []          # (index, kind, detail)
        self.prompts = 0
        self.verifies = 0
        self.apdus = {}
        self.seconds = 0.0

    @property
    def ops(self):
        return sum(len(v) for v in self.samples.values())

    @property
    def failures(self):
        return len(self.failed)

    def latency(self, kind):
        xs = self.samples[kind]
        return pct(xs, 50), pct(xs, 99)

    def slowest(self, kind, n=3):
        """The n slowest operations of a kind: (seconds, operation index in the run)."""
        xs = self.samples[kind]
        top = sorted(range(len(xs)), key=lambda j: -xs[j])[:n]
        return [(xs[j], j * len(KINDS) + KINDS.index(kind)) for j in top]

    def summary(self):
        lat = ", ".join(f"{k} p50 {self.latency(k)[0] * 1000:.0f} p99 "
                        f"{self.latency(k)[1] * 1000:.0f} ms" for k in KINDS)
        return (f"{self.name}: {self.ops} ops in {self.seconds:.1f} s, {self.failures} failed, "
                f"{self.prompts} PIN prompts, {self.verifies} VERIFY; {lat}")

    def as_dict(self):
        return {"ops": self.ops, "failures": self.failures, "prompts": self.prompts,
                "verify": self.verifies, "seconds": round(self.seconds, 2),
                "latency_ms": {k: {"p50": round(self.latency(k)[0] * 1000, 1),
                                   "p99": round(self.latency(k)[1] * 1000, 1)} for k in KINDS},
                "failed": [list(x) for x in self.failed[:10]], "apdus": self.apdus,
                "samples_ms": {k: [round(x * 1000, 1) for x in v] for k, v in self.samples.items()}}


class Bed:
    """One keyring with its key on one card in use, and the files the operations use."""

    def __init__(self, pcscd, kr, serial="87654321"):
        self.pcscd, self.kr = pcscd, kr
        self.pin = kr.use_scripted_pinentry()
        self.key = kr.create_key_algos(UID, ALGOS)
        self.card = pcscd.card(empty_card(serial))
        self.serial = serial
        pcscd.wait_card(True)
        self.tmp = procs.tmpdir("keyctl-coexist-")
        self.card.phase("keytocard")
        for slot in ("sig", "enc", "aut"):
            kr.keytocard(self.key, slot)
        self.kr.ssh_allow(self.key["aut"])
        self.mode = None
        self.uids = 0
        self._files()

    def _files(self):
        self.repo = os.path.join(self.tmp, "repo")
        self.git_env = dict(os.environ, **self.kr.env, GIT_CONFIG_NOSYSTEM="1", HOME=self.tmp,
                            GIT_AUTHOR_DATE="2026-01-01T00:00:00Z")
        self.git_env.pop("LD_PRELOAD", None)
        for argv in (["init", "-q", self.repo], ["config", "user.name", "Alice Tester"],
                     ["config", "user.email", "alice@example.org"],
                     ["config", "user.signingkey", self.key["sig"] + "!"]):
            subprocess.run(["git"] + (argv if argv[0] == "init" else ["-C", self.repo] + argv),
                           env=self.git_env, check=True, capture_output=True, timeout=60)
        pub = self.kr.gpg("--export-ssh-key", self.key["aut"] + "!").stdout.decode().strip()
        self.ssh_pub = os.path.join(self.tmp, "id.pub")
        with open(self.ssh_pub, "w") as f:
            f.write(pub + "\n")
        self.allowed = os.path.join(self.tmp, "allowed")
        with open(self.allowed, "w") as f:
            f.write(f"alice@example.org {pub}\n")
        self.ssh_data = os.path.join(self.tmp, "data")
        with open(self.ssh_data, "w") as f:
            f.write("ssh-signed data\n")
        self.ciphertexts = []

    def encrypt(self, n):
        """n messages encrypted to the card's key (no card needed), for the decryptions."""
        while len(self.ciphertexts) < n:
            data = f"secret {len(self.ciphertexts)}\n".encode()
            e = self.kr.gpg("--trust-model", "always", "--encrypt", "-r", self.key["enc"] + "!",
                            "--output", "-", input=data)
            self.ciphertexts.append((data, e.stdout))

    # ---- modes and agents ----------------------------------------------------------------
    def set_mode(self, mode):
        with open(os.path.join(self.kr.home, "scdaemon.conf"), "w") as f:
            f.write("".join(x + "\n" for x in MODES[mode]))
            f.write(f"log-file {self.kr.home}/scd.log\n")
        self.mode = mode
        self.restart_agent()

    def restart_agent(self):
        """A new gpg-agent and scdaemon (the next operation starts them): no PIN verified."""
        self.kr.scdaemon_pid()
        self.kr.stop()

    def quiet(self, gap=0.5, timeout=10):
        """Waits until the card has had no APDU for `gap` seconds: scdaemon letting go of the
        card resets it, and a reader that watches it (keyctld) reads it again; the run starts
        after that, as a user's first signature of the day does."""
        last, since, end = None, time.monotonic(), time.monotonic() + timeout
        while time.monotonic() - since < gap and time.monotonic() < end:
            n = len(self.card.stats()["log"])
            if n != last:
                last, since = n, time.monotonic()
            time.sleep(0.05)

    def keyring_change(self):
        """A change to the keyring as a day brings one: a user id added to the key."""
        self.uids += 1
        self.kr.gpg("--quick-add-uid", self.key["fpr"],
                    f"Alice {self.uids} <a{self.uids}@example.org>")

    # ---- the operations ------------------------------------------------------------------
    def op(self, kind, i):
        """Runs one operation; returns (seconds, None) or (seconds, what went wrong). One that
        takes a minute (gpg waiting for a card it cannot find) is a failed one."""
        t = time.monotonic()
        try:
            return getattr(self, "op_" + kind)(i)
        except subprocess.TimeoutExpired as e:
            return time.monotonic() - t, f"timed out after {e.timeout:.0f} s: {e.cmd[:3]}"

    def op_sign(self, i):
        data = f"message {i}\n".encode()
        t = time.monotonic()
        r = self.kr.gpg_user("--sign", "-u", self.key["sig"] + "!", "--output", "-",
                             input=data, check=False)
        dt = time.monotonic() - t
        if r.returncode != 0:
            return dt, "gpg --sign: " + _tail(r.stderr)
        v = self.kr.gpg("--verify", "--output", "-", input=r.stdout, check=False)
        if v.returncode != 0 or v.stdout != data:
            return dt, "gpg --verify: " + _tail(v.stderr)
        return dt, None

    def op_decrypt(self, i):
        data, ct = self.ciphertexts[i % len(self.ciphertexts)]
        t = time.monotonic()
        d = self.kr.gpg_user("--decrypt", "--output", "-", input=ct, check=False)
        dt = time.monotonic() - t
        if d.returncode != 0 or d.stdout != data:
            return dt, "gpg --decrypt: " + _tail(d.stderr)
        return dt, None

    def op_git(self, i):
        t = time.monotonic()
        r = subprocess.run(["git", "-C", self.repo, "commit", "-q", "-S", "--allow-empty", "-m",
                            f"signed {i}"], env=self.git_env, capture_output=True, timeout=60)
        dt = time.monotonic() - t
        if r.returncode != 0:
            return dt, "git commit -S: " + _tail(r.stderr)
        v = subprocess.run(["git", "-C", self.repo, "verify-commit", "HEAD"], env=self.git_env,
                           capture_output=True, timeout=60)
        if v.returncode != 0:
            return dt, "git verify-commit: " + _tail(v.stderr)
        return dt, None

    def op_ssh(self, i):
        env = dict(self.git_env, SSH_AUTH_SOCK=self.kr.ssh_socket())
        sig = self.ssh_data + ".sig"
        if os.path.exists(sig):
            os.unlink(sig)
        t = time.monotonic()
        r = subprocess.run(["ssh-keygen", "-Y", "sign", "-f", self.ssh_pub, "-n", "file",
                            self.ssh_data], env=env, capture_output=True, timeout=60)
        dt = time.monotonic() - t
        if r.returncode != 0:
            return dt, "ssh-keygen -Y sign: " + _tail(r.stderr)
        with open(self.ssh_data) as data:
            v = subprocess.run(["ssh-keygen", "-Y", "verify", "-f", self.allowed, "-I",
                                "alice@example.org", "-n", "file", "-s", sig], stdin=data,
                               env=env, capture_output=True, timeout=60)
        if v.returncode != 0:
            return dt, "ssh-keygen -Y verify: " + _tail(v.stdout + v.stderr)
        return dt, None

    # ---- a run ---------------------------------------------------------------------------
    def run(self, name, per_kind, between=None, log=print):
        """per_kind operations of each kind, in turn (sign, decrypt, git, ssh, sign, ...), on a
        new gpg-agent, once the card is quiet; between(i) after operation i. The card's phase
        is `name`."""
        self.encrypt(per_kind)
        self.restart_agent()
        self.quiet()
        self.kr.start_agent()
        res = Result(name)
        p0 = self.pin.count()
        self.card.phase(name)
        t0 = time.monotonic()
        for i in range(per_kind * len(KINDS)):
            kind = KINDS[i % len(KINDS)]
            dt, err = self.op(kind, i // len(KINDS))
            res.samples[kind].append(dt)
            if err:
                res.failed.append((i, kind, err))
                if len(res.failed) <= 3:
                    log(f"     {name}: operation {i} ({kind}) failed: {err}")
                    tail = self.card.apdus()[-16:]
                    log(f"     the card's last APDUs: {[_apdu_name(a) for a in tail]}")
            if between:
                between(i)
        res.seconds = time.monotonic() - t0
        if len(res.failed) > 3:
            log(f"     {name}: {len(res.failed)} operations failed in all")
        res.prompts = self.pin.count() - p0
        res.apdus = self.card.phase_counts().get(name, {})
        res.verifies = res.apdus.get("VERIFY", 0)
        return res


def median_of_runs(runs, kind):
    """(p50, p99) of a kind over the operations of a condition, each operation's latency the
    median of its k runs (the same position in the workload and the day in each run): a
    latency keyctld adds where it acts stays, a one-off stall of the machine goes."""
    xs = [r.samples[kind] for r in runs]
    n = min(len(x) for x in xs)
    per_op = [sorted(x[j] for x in xs)[len(xs) // 2] for j in range(n)]
    return pct(per_op, 50), pct(per_op, 99)


def _tail(b):
    return b.decode(errors="replace").strip().replace("\n", " | ")[-300:]


def _apdu_name(a):
    from keyctlbed.card import INS_NAMES
    cla, ins, p1, p2, data = a
    name = INS_NAMES.get(ins, f"{ins:02X}")
    return f"{name} {p1:02X}{p2:02X}" + (f" {data[:16]}" if data else "")


class _Slot1:
    """The bed's pcscd as VirtualCard sees it, for vpcd's second slot ("... 00 01"): vpcd
    listens for slot n's card on its port + n."""

    def __init__(self, pcscd):
        self._pcscd = pcscd
        self.port = pcscd.port + 1

    def __getattr__(self, name):
        return getattr(self._pcscd, name)


def second_card(pcscd, profile):
    """A second token's card for the bed's second reader, started but not inserted."""
    from keyctlbed.card import VirtualCard
    return VirtualCard(profile, _Slot1(pcscd)).start()
