# SPDX-License-Identifier: LGPL-2.1-or-later
"""What every integration test script shares: check() prints one `ok`/`FAIL` line per assertion
and remembers the failures; wait_until() polls a condition with a deadline (a test waits for
what it asserts, it never sleeps a fixed time and hopes); finish() prints the summary and exits.
For the tests of the daemon on the bed: card_bed() (a virtual YubiKey holding a new key's
subkeys), daemon_running() (a Keyctld started, stopped, its log shown on failure) and bed_main()
(skip, cleanup, leftovers and summary as meson reads them).
"""
import contextlib
import os
import sys
import time

failures = []


def check(cond, what, detail=''):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        if detail:
            print('     ' + str(detail).replace('\n', '\n     '), flush=True)
        failures.append(what)
    return cond


def wait_until(pred, timeout=30, step=0.1):
    """The first true value of pred() within timeout seconds, else pred()'s last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def cpu_seconds(pid):
    """User plus system CPU time pid has used, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def finish():
    print(f'{len(failures)} failed' if failures else 'all passed')
    sys.exit(1 if failures else 0)


@contextlib.contextmanager
def card_bed(subkeys, serial):
    """An isolated pcscd with a virtual YubiKey 5 NFC #serial holding the subkeys of a new key
    (subkeys as Keyring.create_key takes them), its primary offline (sec#) and the card's stubs
    in the keyring, as users keep theirs: yields (pcscd, keyring, key, card)."""
    import keyctlbed as kb
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        key = kr.create_key(subkeys=subkeys)
        kr.remove_primary_secret(key['fpr'])
        card = pcscd.card(kr.card_profile(key, base='yubikey5nfc', serial=serial))
        pcscd.wait_card(True)
        kr.stubs_from_card(key)
        yield pcscd, kr, key, card


@contextlib.contextmanager
def daemon_running(d, survived='the daemon ran through it'):
    """d (a keyctld_proc.Keyctld) started for the block and stopped after it, whatever happens;
    that it is still alive at the end is checked, and its log's tail shown when a check failed."""
    try:
        check(d.start(), 'the daemon answers')
        yield d
        check(d.alive(), survived)
    finally:
        d.stop()
        if failures:
            print('---- keyctld log (tail) ----')
            print(d.log()[-3000:])


def bed_main(body):
    """Runs body() on the test bed and returns the exit status meson reads: 77 (skip) where the
    bed cannot run, else 1 when a check failed; every bed process is stopped first, and one
    left over is a failure."""
    import keyctlbed as kb
    from keyctlbed import procs
    try:
        body()
    except kb.BedUnavailable as e:
        print(f'SKIP: test bed unavailable: {e}')
        return 77
    finally:
        procs.stop_all()
    check(not procs.leftovers(), 'no process left behind', procs.leftovers())
    print(f'{len(failures)} failure(s)' if failures else 'all passed')
    return 1 if failures else 0
