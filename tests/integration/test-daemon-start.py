#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld's first answers on the test bed (an isolated pcscd with a virtual YubiKey whose keys
are stubs in a throwaway keyring; the signing subkey expires in 5 days, so the true answer of
`keyctl-status -q` is 1, "warning"):

- five fresh starts, each asked the moment its socket appears: every answer is the true one,
  READY=1 comes only once the keyring is listed and the card read, and no finding about the
  card's slots is raised before the keyring is known (card-slot-unknown-key, then "resolved",
  was logged on every start);
- a gpg that takes 14 s to answer its first call: io.keyctl calls wait, bounded at 10 s, then
  are answered with keyring_stale and a daemon-starting finding; org.varlink.service.GetInfo is
  answered at once; with max-clients 2 held by two waiting calls a third connection reads
  io.keyctl.TooManyClients (never a reset); once gpg answers, the finding goes.
Every process is stopped by pid (and the slow gpg by the daemon's process group), also on failure.
"""
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keyctld_proc import Keyctld  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import bed_main, card_bed, check, wait_until, failures  # noqa: E402

KEYCTL_STATUS = os.environ['KEYCTL_STATUS']
SERIAL = '23456789'


class Notify:
    """A NOTIFY_SOCKET: the datagrams the daemon sends, with when they came."""

    def __init__(self, path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.setblocking(False)
        self.got = []

    def poll(self):
        while True:
            try:
                self.got.append((time.monotonic(), self.sock.recv(4096).decode()))
            except BlockingIOError:
                return self.got

    def ready_at(self):
        for t, m in self.poll():
            if 'READY=1' in m.split('\n'):
                return t
        return None

    def close(self):
        self.sock.close()


def kill_group(d):
    """The daemon ran in its own session (procs.spawn): end what it left, a slow gpg too."""
    if d.proc is not None:
        try:
            os.killpg(d.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def slot_findings(log):
    return [ln for ln in log.splitlines() if 'card-slot-unknown-key' in ln]


def test_first_answers(kr, key):
    codes, ready_ok, slot_lines, token_read = [], 0, [], 0
    for i in range(5):
        d = Keyctld(kr.env, label=f'keyctld-start-{i}')
        n = Notify(os.path.join(d.tmp, 'notify'))
        d.env['NOTIFY_SOCKET'] = n.path
        try:
            d.start(wait=False, args=['--log-level=info'])
            t0 = time.monotonic()
            if not wait_until(lambda: os.path.exists(d.socket), 20, step=0.002):
                check(False, f'start {i}: the socket appears', d.log()[-2000:])
                continue
            r = subprocess.run([KEYCTL_STATUS, '-q'], env=d.env, capture_output=True,
                               text=True, timeout=30)
            codes.append(r.returncode)
            # READY=1 came before that answer, and the status right now lists key and card.
            rt = n.ready_at()
            s = d.status()
            tok = [t for t in (s or {}).get('tokens', []) if t.get('serial') == SERIAL]
            keys = [k for k in (s or {}).get('keys', []) if k['fingerprint'] == key['fpr']]
            if rt is not None and keys and tok and tok[0].get('openpgp'):
                ready_ok += 1
            if tok and tok[0].get('present') and tok[0].get('openpgp'):
                token_read += 1
            print(f'     start {i}: keyctl-status -q {r.returncode} '
                  f'{(time.monotonic() - t0) * 1000:.0f} ms after the socket appeared; '
                  f'READY=1 {"sent" if rt else "not sent"}')
            time.sleep(0.5)  # findings raised and resolved at start would be logged by now
            slot_lines += slot_findings(d.log())
        finally:
            d.stop()
            kill_group(d)
            n.close()
    check(codes == [1] * 5, f'five fresh starts: the first keyctl-status -q is the true 1 '
          f'(warning: 5 days) every time ({codes})')
    check(ready_ok == 5, f'READY=1 only with the keyring listed and the card read ({ready_ok}/5)')
    check(token_read == 5, f'the first answer has the card read ({token_read}/5)')
    check(slot_lines == [], 'no card-slot-unknown-key raised at start for keys that are in the '
          'keyring', slot_lines[:4])


SLOW_GPG = '''#!/bin/sh
# The first gpg run (the engine check or the first listing) takes 14 s; later ones do not.
if [ ! -e "{flag}" ]; then
    : > "{flag}"
    /bin/sleep 14
fi
exec /usr/bin/gpg "$@"
'''


def test_slow_keyring(kr, key):
    d = Keyctld(kr.env, conf='[daemon]\nmax-clients = 2\n', label='keyctld-slow-gpg')
    bindir = os.path.join(d.tmp, 'bin')
    os.makedirs(bindir)
    gpg = os.path.join(bindir, 'gpg')
    with open(gpg, 'w') as f:
        f.write(SLOW_GPG.format(flag=os.path.join(d.tmp, 'gpg-was-slow')))
    os.chmod(gpg, stat.S_IRWXU)
    # Only gpg: with gpgconf on PATH gpgme would ask it where gpg is (/usr/bin/gpg).
    d.env['PATH'] = bindir
    n = Notify(os.path.join(d.tmp, 'notify'))
    d.env['NOTIFY_SOCKET'] = n.path
    waiting = []
    try:
        d.start(wait=False, args=['--log-level=debug'])
        t0 = time.monotonic()
        check(wait_until(lambda: os.path.exists(d.socket), 20, step=0.005),
              'slow gpg: the socket appears')
        r = d.call('org.varlink.service.GetInfo', timeout=5)
        dt = time.monotonic() - t0
        check(r is not None and r.get('parameters', {}).get('product') == 'keyctld' and dt < 2,
              f'slow gpg: GetInfo is answered at once ({dt:.2f} s after start)')
        for _ in range(2):
            c = vr.Conn(d.socket, timeout=30)
            c.send('io.keyctl.GetStatus')
            waiting.append(c)
        time.sleep(0.3)
        third = vr.Conn(d.socket, timeout=10)
        try:
            third.send('io.keyctl.GetStatus')
            r3 = third.recv(timeout=10)
        except OSError as e:
            r3 = {'exception': repr(e)}
        finally:
            third.close()
        check(r3 is not None and r3.get('error') == 'io.keyctl.TooManyClients'
              and r3.get('parameters', {}).get('max') == 2,
              f'max-clients 2 held by two waiting calls: a third reads io.keyctl.TooManyClients '
              f'({r3})')
        replies = []
        for c in waiting:
            try:
                replies.append((c.recv(timeout=20), time.monotonic() - t0))
            except OSError as e:
                replies.append(({'exception': repr(e)}, time.monotonic() - t0))
        for i, (rep, at) in enumerate(replies):
            p = (rep or {}).get('parameters', {})
            rules = [f['rule'] for f in p.get('findings', [])]
            start = [f for f in p.get('findings', []) if f['rule'] == 'daemon-starting']
            check(9.0 <= at <= 12.5 and p.get('daemon', {}).get('keyring_stale') is True
                  and start and 'keyring' in start[0]['message'],
                  f'waiting call {i}: answered at the 10 s bound ({at:.1f} s) with keyring_stale '
                  f'and a daemon-starting finding naming the keyring ({rules})',
                  json.dumps(rep)[:600])
            check('card-slot-unknown-key' not in rules,
                  f'waiting call {i}: no slot finding while the keyring is unknown ({rules})')
        rt = n.ready_at()
        check(rt is not None and rt - t0 >= 9.0,
              f'READY=1 not before the bound ({(rt - t0) if rt else None} s)')
        s = d.wait(lambda s: any(k['fingerprint'] == key['fpr'] for k in s['keys']), 40)
        rules = [f['rule'] for f in (s or {}).get('findings', [])]
        check(s is not None and not s['daemon']['keyring_stale'] and 'daemon-starting' not in rules,
              f'once gpg answers: keys listed, not stale, daemon-starting gone ({rules})')
        check(slot_findings(d.log()) == [],
              'no card-slot-unknown-key raised while the keyring was not yet listed',
              slot_findings(d.log())[:4])
        check(d.alive(), 'the daemon ran through the slow start')
    finally:
        for c in waiting:
            c.close()
        d.stop()
        kill_group(d)
        n.close()
        if failures:
            print('---- keyctld log (tail) ----')
            print(d.log()[-3000:])


def main():
    def body():
        with card_bed({'sig': 5, 'enc': 100, 'aut': 100}, SERIAL) as (_, kr, key, _):
            test_first_answers(kr, key)
            test_slow_keyring(kr, key)
    return bed_main(body)


if __name__ == '__main__':
    sys.exit(main())
