#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""GnuPG uses the bed's card for real (issue 33, item 2): keys made with gpg are moved to a
virtual YubiKey with keytocard, then gpg signs and verifies, encrypts and decrypts, git signs a
commit with user.signingkey, and ssh-keygen -Y sign signs through gpg-agent's ssh support, all
with the PINs typed into a scripted pinentry that counts its prompts. Then a wrong PIN (the
retry counter down by one, back after the right one), a cancelled pinentry (gpg fails cleanly,
nothing left running) and, for Ed25519, a signing slot that waits for a touch.

argv[1]: "ed25519" (Ed25519 sign + Cv25519 encrypt + Ed25519 auth) or "rsa2048" (three RSA
2048 subkeys). Real pcscd + vpcd card (tests/bed), GnuPG's own gpg-agent and scdaemon
(disable-ccid, pcsc-shared), no keyctld: this is the workload item 3 will run beside it.

What the pinentry must have been asked, and why (GnuPG 2.2's scdaemon, scd/app-openpgp.c; the
card's C4 says "PW1 valid for several signatures", as the shipped YubiKey profile):
- keytocard of three keys to an empty card, whose slots say RSA 2048 as shipped: RSA keys ask
  the Admin PIN once (do_writekey() -> verify_chv3() while !did_chv3; scdaemon keeps did_chv3
  from one gpg --edit-key to the next). ECC keys ask four times: each slot's algorithm
  attributes must change first (PUT DATA C1-C3), and change_keyattr() verifies PW3, writes
  them and then clears did_chv1..3, so the key write after it verifies PW3 again: 1 + 3.
- the first signature: one PIN prompt (do_sign(): !did_chv1 -> verify_a_chv(1), VERIFY 81);
  the next signatures and git's: none (did_chv1 stays set: C4 first byte 01).
- the first decryption: one prompt (verify_chv2(): !did_chv2 -> VERIFY 82; with pcsc-shared it
  does not verify CHV1 too); the next: none. ssh's INTERNAL AUTHENTICATE (do_auth() ->
  verify_chv2()) then needs none.
- gpg-agent restarted (its scdaemon too: a new PC/SC connection, and pcscd powers the card
  off when the old one goes, so the card forgot PW1 as well): the next signature asks again.
  (Not `gpgconf --kill scdaemon`: with GnuPG 2.2.40 gpg-agent then answered every card
  operation "Broken pipe", three tries over 3 s, until it was itself restarted; seen on this
  bed.)
The signature counter (93 in 7A) moves by exactly the number of signatures made with the
signing key (gpg --sign and git commit -S); ssh's signatures use the auth key and do not count.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import bed_main, check  # noqa: E402

import keyctlbed as kb  # noqa: E402
from keyctlbed import procs, profiles  # noqa: E402

ALGOS = {"ed25519": {"sig": "ed25519", "enc": "cv25519", "aut": "ed25519"},
         "rsa2048": {"sig": "rsa2048", "enc": "rsa2048", "aut": "rsa2048"}}
SIGNATURES = 3
UID = "Alice Tester <alice@example.org>"


def empty_card(serial):
    """A virtual YubiKey with no keys, in use (the "yubikey" applet's PIN rules), PW1 valid for
    several signatures, as YubiKeys ship."""
    prof = profiles.load("yubikey5nfc")
    prof.update(applet="yubikey", serial=serial, slots={}, signature_counter=0,
                pw1_valid_once=False, attestation_slot=False)
    prof["yubikey"]["serial"] = int(serial)
    # No PIV: GnuPG 2.4's scdaemon SELECTs a YubiKey's PIV around its operations and the
    # YubiKey then forgets the PINs, a prompt each time (users set disable-application piv:
    # drduh/YubiKey-Guide#511); test-piv.py has the card with PIV.
    prof.pop("piv", None)
    return prof


class Run:
    """One keyring, one card, one pinentry; each step asserts what a user would see."""

    def __init__(self, pcscd, kr, algo):
        self.pcscd, self.kr, self.algo = pcscd, kr, algo
        self.pin = kr.use_scripted_pinentry()
        self.key = kr.create_key_algos(UID, ALGOS[algo])
        self.card = pcscd.card(empty_card("87654321" if algo == "ed25519" else "87654322"))
        pcscd.wait_card(True)
        self.tmp = procs.tmpdir("keyctl-card-use-")

    def prompts(self, kind=None):
        return self.pin.count(kind)

    def sigcount(self):
        return int(self.card.live_profile().get("signature_counter", 0))

    def retries(self):
        return self.card.live_profile()["pin_retries"]["pw1"]

    def phase(self, name):
        self.card.phase(name)
        return name

    def check_verifies(self, phase, p0):
        """Each PIN typed is one VERIFY on the card, none sent without a prompt."""
        n = self.card.phase_counts().get(phase, {}).get("VERIFY", 0)
        typed = sum(1 for x in self.pin.prompts()[p0:] if x["answer"] != "cancel")
        check(n == typed, f"{self.algo}: {phase}: {n} VERIFY on the card for {typed} PINs typed")

    # ---- keytocard ---------------------------------------------------------------------
    def keytocard(self):
        self.phase("keytocard")
        for slot in ("sig", "enc", "aut"):
            try:
                self.kr.keytocard(self.key, slot)
                check(True, f"{self.algo}: keytocard moved the {slot} subkey")
            except RuntimeError as e:
                check(False, f"{self.algo}: keytocard moved the {slot} subkey", e)
        prof = self.card.live_profile()
        for slot in ("sig", "enc", "aut"):
            s = prof["slots"].get(slot, {})
            check(s.get("fingerprint") == self.key[slot] and "private" in s
                  and s.get("algorithm", "rsa2048") == ALGOS[self.algo][slot],
                  f"{self.algo}: the card holds the {slot} key, fingerprint "
                  f"{s.get('fingerprint')}", {k: v for k, v in s.items() if k != "private"})
        want = 4 if self.algo == "ed25519" else 1
        self.check_verifies("keytocard", 0)
        check(self.prompts("admin") == want and self.prompts("user") == 0,
              f"{self.algo}: keytocard of 3 keys asked the Admin PIN {want} times, the PIN never",
              self.pin.prompts())
        text = self.kr.gpg_user("--card-status").stdout.decode(errors="replace")
        check(all(_spaced(self.key[s]) in text for s in ("sig", "enc", "aut")),
              f"{self.algo}: gpg --card-status reads the three fingerprints back", text)
        listing = self.kr.gpg("--list-secret-keys", self.key["fpr"]).stdout.decode()
        check(listing.count("ssb>") == 3, f"{self.algo}: the three subkeys are stubs (ssb>)",
              listing)

    # ---- sign, encrypt, git, ssh -------------------------------------------------------
    def sign(self):
        self.phase("sign")
        before, p0 = self.sigcount(), self.prompts()
        for i in range(SIGNATURES):
            data = f"message {i}\n".encode()
            r = self.kr.gpg_user("--sign", "-u", self.key["sig"] + "!", "--output", "-",
                                 input=data, check=False)
            v = self.kr.gpg("--verify", "--output", "-", input=r.stdout, check=False)
            check(r.returncode == 0 and v.returncode == 0 and v.stdout == data,
                  f"{self.algo}: gpg --sign {i + 1} made a signature gpg --verify accepts",
                  r.stderr.decode(errors="replace")[-600:] + v.stderr.decode(errors="replace"))
        check(self.sigcount() == before + SIGNATURES,
              f"{self.algo}: the signature counter moved by {SIGNATURES}",
              f"{before} -> {self.sigcount()}")
        self.check_verifies("sign", p0)
        check(self.prompts() - p0 == 1, f"{self.algo}: {SIGNATURES} signatures, one PIN prompt",
              self.pin.prompts()[p0:])

    def encrypt(self):
        self.phase("decrypt")
        p0, sig0 = self.prompts(), self.sigcount()
        for i in range(2):
            data = f"secret {i}\n".encode()
            e = self.kr.gpg("--trust-model", "always", "--encrypt", "-r", self.key["enc"] + "!",
                            "--output", "-", input=data)
            d = self.kr.gpg_user("--decrypt", "--output", "-", input=e.stdout, check=False)
            check(d.returncode == 0 and d.stdout == data,
                  f"{self.algo}: gpg --decrypt {i + 1} on the card gives the plaintext back",
                  d.stderr.decode(errors="replace")[-600:])
        self.check_verifies("decrypt", p0)
        check(self.prompts() - p0 == 1, f"{self.algo}: two decryptions, one PIN prompt (PW1 82)",
              self.pin.prompts()[p0:])
        check(self.sigcount() == sig0, f"{self.algo}: decrypting signs nothing (counter kept)")

    def git(self):
        self.phase("git")
        p0, sig0 = self.prompts(), self.sigcount()
        repo = os.path.join(self.tmp, "repo")
        env = dict(os.environ, **self.kr.env, GIT_CONFIG_NOSYSTEM="1", HOME=self.tmp,
                   GIT_AUTHOR_DATE="2026-01-01T00:00:00Z")
        for argv in (["init", "-q", repo], ["-C", repo, "config", "user.name", "Alice Tester"],
                     ["-C", repo, "config", "user.email", "alice@example.org"],
                     ["-C", repo, "config", "user.signingkey", self.key["sig"] + "!"],
                     ["-C", repo, "commit", "-q", "-S", "--allow-empty", "-m", "signed"],
                     ["-C", repo, "verify-commit", "HEAD"]):
            r = subprocess.run(["git"] + argv, env=env, capture_output=True, text=True, timeout=60)
            if r.returncode != 0:
                break
        check(r.returncode == 0, f"{self.algo}: git commit -S signed with user.signingkey, "
              "git verify-commit accepts it", r.stderr[-800:])
        check(self.sigcount() == sig0 + 1, f"{self.algo}: git's signature counted once",
              f"{sig0} -> {self.sigcount()}")
        self.check_verifies("git", p0)
        check(self.prompts() == p0, f"{self.algo}: git commit -S asked no PIN (PW1 still valid)",
              self.pin.prompts()[p0:])

    def ssh(self):
        self.phase("ssh")
        p0, sig0 = self.prompts(), self.sigcount()
        self.kr.ssh_allow(self.key["aut"])
        env = dict(os.environ, **self.kr.env, SSH_AUTH_SOCK=self.kr.ssh_socket())
        pub = self.kr.gpg("--export-ssh-key", self.key["aut"] + "!").stdout.decode().strip()
        listed = subprocess.run(["ssh-add", "-L"], env=env, capture_output=True, text=True,
                                timeout=60)
        check(pub.split()[1] in listed.stdout, f"{self.algo}: ssh-add -L lists the card's key",
              listed.stdout + listed.stderr)
        path = os.path.join(self.tmp, "data")
        with open(path, "w") as f:
            f.write("ssh-signed data\n")
        with open(path + ".pub", "w") as f:
            f.write(pub + "\n")
        with open(os.path.join(self.tmp, "allowed"), "w") as f:
            f.write(f"alice@example.org {pub}\n")
        r = subprocess.run(["ssh-keygen", "-Y", "sign", "-f", path + ".pub", "-n", "file", path],
                           env=env, capture_output=True, text=True, timeout=60)
        with open(path) as data:
            v = subprocess.run(["ssh-keygen", "-Y", "verify", "-f",
                                os.path.join(self.tmp, "allowed"), "-I", "alice@example.org",
                                "-n", "file", "-s", path + ".sig"], stdin=data, env=env,
                               capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and v.returncode == 0,
              f"{self.algo}: ssh-keygen -Y sign with the agent's card key, -Y verify accepts",
              r.stderr + v.stdout + v.stderr)
        counts = self.card.phase_counts().get("ssh", {})
        check(counts.get("INTERNAL AUTHENTICATE", 0) >= 1,
              f"{self.algo}: the ssh signature was INTERNAL AUTHENTICATE on the card", counts)
        self.check_verifies("ssh", p0)
        check(self.prompts() == p0 and self.sigcount() == sig0,
              f"{self.algo}: ssh asked no PIN (PW1 82 verified) and counted no signature",
              self.pin.prompts()[p0:])

    # ---- a wrong PIN, a cancelled pinentry ------------------------------------------------
    def restart_agent(self):
        """A new gpg-agent and scdaemon, which know of no verified PIN (the next gpg starts
        them)."""
        self.kr.scdaemon_pid()  # adopted, so that stop() ends it by pid
        self.kr.stop()

    def wrong_pin(self):
        self.phase("wrong-pin")
        self.restart_agent()
        r0, p0, sig0 = self.retries(), self.prompts(), self.sigcount()
        self.pin.answer_next("wrong")
        r = self.kr.gpg_user("--sign", "-u", self.key["sig"] + "!", "--output", "-",
                             input=b"x\n", check=False)
        check(r.returncode != 0 and self.retries() == r0 - 1,
              f"{self.algo}: a wrong PIN fails the signature, the retry counter {r0} -> "
              f"{self.retries()}", r.stderr.decode(errors="replace")[-500:])
        r = self.kr.gpg_user("--sign", "-u", self.key["sig"] + "!", "--output", "-",
                             input=b"x\n", check=False)
        check(r.returncode == 0 and self.retries() == r0,
              f"{self.algo}: the right PIN signs and the counter is back to {r0}",
              r.stderr.decode(errors="replace")[-500:])
        self.check_verifies("wrong-pin", p0)
        check(self.prompts() - p0 == 2 and self.sigcount() == sig0 + 1,
              f"{self.algo}: two prompts (wrong, right), one signature counted",
              self.pin.prompts()[p0:])

    def cancelled(self):
        self.phase("cancel")
        self.restart_agent()
        r0, p0, sig0 = self.retries(), self.prompts(), self.sigcount()
        self.pin.answer_next("cancel")
        t = time.monotonic()
        r = self.kr.gpg_user("--sign", "-u", self.key["sig"] + "!", "--output", "-",
                             input=b"x\n", check=False, timeout=60)
        err = r.stderr.decode(errors="replace")
        # gpg streams: the packets before the signature are out already, the signature is not.
        v = self.kr.gpg("--verify", input=r.stdout, check=False)
        check(r.returncode != 0 and v.returncode != 0 and time.monotonic() - t < 30,
              f"{self.algo}: a cancelled pinentry fails gpg --sign at once, no signature made",
              err[-500:])
        check("cancel" in err.lower(), f"{self.algo}: gpg says the operation was cancelled",
              err[-500:])
        pins = [x["pid"] for x in self.pin.prompts()[p0:]]
        check(len(pins) == 1 and not any(procs.alive(p) for p in pins),
              f"{self.algo}: one prompt, and the pinentry is gone", pins)
        counts = self.card.phase_counts().get("cancel", {})
        check(self.retries() == r0 and self.sigcount() == sig0 and "VERIFY" not in counts,
              f"{self.algo}: nothing reached the card: no VERIFY, retries {r0}, counter kept",
              counts)

    # ---- touch ----------------------------------------------------------------------------
    def touch(self):
        """The signing slot's UIF on: gpg --sign waits until the card is touched."""
        self.phase("touch")
        self.card.update_slot("sig", touch="on")
        sig0 = self.sigcount()
        path = os.path.join(self.tmp, "touched")
        with open(path, "w") as f:
            f.write("touched\n")
        self.kr.start_agent()
        p = procs.spawn("gpg-sign-touch", ["gpg", "--homedir", self.kr.home, "--batch", "--sign",
                                           "-u", self.key["sig"] + "!", "--output", "-", path],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                        env=dict(os.environ, **self.kr.env))
        waiting = _wait(lambda: self.card.security()["touch_pending"], 20)
        check(waiting and p.poll() is None,
              f"{self.algo}: with touch on, the card holds the signature (gpg waits)")
        check(self.card.touch(), f"{self.algo}: the bed's touch releases it")
        try:
            out, err = p.communicate(timeout=30)
        finally:
            procs.stop(p)
        v = self.kr.gpg("--verify", "--output", "-", input=out, check=False)
        check(p.returncode == 0 and v.returncode == 0 and self.sigcount() == sig0 + 1,
              f"{self.algo}: the touched signature verifies and counts", err.decode()[-500:])


def _spaced(fpr):
    """A fingerprint as gpg --card-status prints it: groups of four, two spaces in the middle."""
    g = [fpr[i:i + 4] for i in range(0, 40, 4)]
    return " ".join(g[:5]) + "  " + " ".join(g[5:])


def _wait(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def body(algo):
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        run = Run(pcscd, kr, algo)
        steps = [run.keytocard, run.sign, run.encrypt, run.git, run.ssh, run.wrong_pin,
                 run.cancelled]
        if algo == "ed25519":
            steps.append(run.touch)
        try:
            for step in steps:
                step()
        finally:
            print(f"{algo}: APDUs per phase: {run.card.phase_counts()}")
            print(f"{algo}: pinentry prompts: " + ", ".join(
                f"{x['kind']}/{x['answer']}" for x in run.pin.prompts()))
            for x in run.card.stats()["events"][-6:]:
                print(f"{algo}: card event {x}")


def main():
    algo = sys.argv[1] if len(sys.argv) > 1 else "ed25519"
    sys.exit(bed_main(lambda: body(algo)))


if __name__ == "__main__":
    main()
