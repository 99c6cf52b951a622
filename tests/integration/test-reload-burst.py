#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reload asked for in bursts, on the test bed (a virtual YubiKey on an isolated pcscd, a
throwaway keyring with its stubs):

- 5,000 io.keyctl.Reload calls in one write: every one is answered, in order, but the daemon
  reloads a handful of times, not 5,000 (its log's "Configuration reloaded" lines), and reads
  the card a handful of times (the card's GET DATA of its Application Related Data); before,
  each call was a reload of its own, and a PC/SC rescan (here 9 reads of the card);
- a call pipelined behind a Reload is answered after it;
- 50 connections asking at once are each answered;
- SIGHUPs in a row are coalesced the same way.
Every process is stopped by pid, also on failure."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keyctld_proc import Keyctld  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import bed_main, card_bed, check, daemon_running, wait_until  # noqa: E402

SERIAL = '45678901'
BURST = 5000
HANDFUL = 5


def reloads(d):
    return d.log().count('Configuration reloaded')


def card_reads(card):
    """GET DATA of the Application Related Data (6E): one per read of the card."""
    return sum(1 for a in card.apdus() if a[1:4] == (0xCA, 0x00, 0x6E))


def settled(d, card):
    """Waits until neither the log's reloads nor the card's reads move for 2 s; returns both."""
    last, since = None, time.monotonic()
    while time.monotonic() - since < 2:
        now = (reloads(d), card_reads(card))
        if now != last:
            last, since = now, time.monotonic()
        time.sleep(0.2)
    return last


def test_burst(d, card):
    r0, c0 = settled(d, card)
    with vr.Conn(d.socket, timeout=60) as c:
        t = time.monotonic()
        c.send_raw(vr.Conn.encode('io.keyctl.Reload') * BURST)
        ok = bad = 0
        while ok + bad < BURST:
            r = c.recv(timeout=60)
            if r is None:
                break
            if 'error' in r:
                bad += 1
            else:
                ok += 1
        dt = time.monotonic() - t
    check(ok == BURST, f'{BURST} Reload calls in one write: each is answered ({ok} replies, '
          f'{bad} errors, in {dt:.1f} s)')
    r1, c1 = settled(d, card)
    print(f'     {BURST} Reload calls: {r1 - r0} reloads logged, {c1 - c0} card reads')
    check(0 < r1 - r0 <= HANDFUL, f'and the daemon reloads a handful of times, not once per call '
          f'({r1 - r0} reloads)')
    check(0 < c1 - c0 <= HANDFUL, f'and reads the card a handful of times ({c1 - c0} GET DATA '
          'of its Application Related Data)')


def test_order(d):
    with vr.Conn(d.socket, timeout=30) as c:
        c.send_raw(vr.Conn.encode('io.keyctl.Reload') + vr.Conn.encode('io.keyctl.GetTokens'))
        first, second = c.recv(timeout=30), c.recv(timeout=30)
    check(first is not None and 'error' not in first and
          'tokens' not in first.get('parameters', {}),
          f'a Reload and a GetTokens in one write: the Reload is answered first ({first})')
    check(second is not None and 'tokens' in second.get('parameters', {}),
          'then the GetTokens')


def test_many_callers(d):
    r0 = reloads(d)
    conns = [vr.Conn(d.socket, timeout=30) for _ in range(50)]
    try:
        for c in conns:
            c.send('io.keyctl.Reload')
        replies = [c.recv(timeout=30) for c in conns]
    finally:
        for c in conns:
            c.close()
    check(all(r is not None and 'error' not in r for r in replies),
          '50 connections asking for a Reload at once: each is answered')
    check(wait_until(lambda: reloads(d) > r0, 5) and reloads(d) - r0 <= 2,
          f'by one or two reloads ({reloads(d) - r0})')


def test_sighup(d, card):
    r0, _ = settled(d, card)
    # Spaced, so that the kernel does not merge them into one pending signal.
    for _ in range(40):
        d.signal(signal.SIGHUP)
        time.sleep(0.05)
    n = settled(d, card)[0] - r0
    check(0 < n <= HANDFUL, f'40 SIGHUPs over 2 s: a handful of reloads ({n})')


def main():
    def body():
        with card_bed({'sig': 100, 'enc': 100, 'aut': 100}, SERIAL) as (_, kr, _, card):
            d = Keyctld(kr.env, conf='[daemon]\nclient-idle-sec = 60\n', label='keyctld-reload')
            with daemon_running(d):
                check(d.wait(lambda s: any(t['serial'] == SERIAL for t in s['tokens']), 30),
                      'it has read the card')
                test_burst(d, card)
                test_order(d)
                test_many_callers(d)
                test_sighup(d, card)
    return bed_main(body)


if __name__ == '__main__':
    sys.exit(main())
