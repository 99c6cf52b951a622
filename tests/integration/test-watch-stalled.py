#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Watch slots that clients hold without reading, on the test bed (a virtual YubiKey whose
signing subkey expires in 5 days, a private session bus with dbusmock's notification server),
keyctld with client-idle-sec = 2 and the default max-watchers (32):

- 32 connections send Watch and never read: keyctl-notify, refused io.keyctl.TooManyWatchers at
  first, is served within client-idle-sec and a margin (a stalled watcher gives its slot up to a
  newcomer, and is closed after client-idle-sec anyway), and so is a raw Watch; before, the 32
  held every slot for ever and keyctl-notify never got in;
- each of the 32 is closed by the daemon, the log saying why;
- a Watch client that reads keeps its slot past client-idle-sec while events flow (the card
  removed and inserted), and so does keyctl-notify.
Every process is stopped by pid, also on failure."""
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import bed_main, card_bed, check, daemon_running, wait_until  # noqa: E402

KEYCTL_NOTIFY = os.environ['KEYCTL_NOTIFY']
SERIAL = '45678901'
IDLE_SEC = 2
SLOTS = 32
MARGIN = 3.0


def is_state(r):
    return bool(r) and r.get('parameters', {}).get('event', {}).get('type') == 'state'


def answered(c):
    """The daemon has sent c something (c reads none of it)."""
    r, _, _ = select.select([c.sock], [], [], 0)
    return bool(r)


def closed(c):
    """The daemon closed c (POLLHUP), seen without reading: a read would be reading."""
    p = select.poll()
    p.register(c.sock, select.POLLRDHUP)
    return any(ev & (select.POLLHUP | select.POLLRDHUP) for _, ev in p.poll(0))


def stalled_watchers(d, n=SLOTS):
    """n connections that send Watch and never read a byte of the answers; once each has its
    answer waiting, every slot is taken."""
    conns = []
    for _ in range(n):
        c = vr.Conn(d.socket, timeout=10)
        c.send('io.keyctl.Watch', more=True)
        conns.append(c)
    check(wait_until(lambda: all(answered(c) for c in conns), 10),
          f'{n} Watch calls that are never read are answered')
    return conns


def notifier(d, bus, name):
    env = dict(d.env, **bus.env, KEYCTL_NOTIFY_RETRY_MAX='1')
    log = os.path.join(d.tmp, name + '.log')
    p = procs.spawn(name, [KEYCTL_NOTIFY, '--socket=' + d.socket,
                           '--state-file=' + os.path.join(d.tmp, name + '.state')],
                    env=env, stdout=subprocess.DEVNULL, stderr=open(log, 'a'))
    return p, log


def read(path):
    try:
        with open(path, errors='replace') as f:
            return f.read()
    except FileNotFoundError:
        return ''


def expiring_shown(bus):
    return [n for n in bus.notifications_sent() if 'in 5 days' in n['summary'] + n['body']]


class Reader(threading.Thread):
    """A Watch client that reads everything until told to stop."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.conn = vr.Conn(path)
        self.conn.send('io.keyctl.Watch', more=True)
        self.types, self.closed, self.stop = [], False, False

    def run(self):
        while not self.stop:
            try:
                r = json.loads(self.conn.recv_bytes(0.2))
            except socket.timeout:
                continue
            except vr.Closed:
                self.closed = True
                return
            self.types.append(r.get('parameters', {}).get('event', {}).get('type'))


def test_stalled_slots(d, bus):
    conns = stalled_watchers(d)
    t0 = time.monotonic()
    try:
        with vr.Conn(d.socket, timeout=10) as c:
            r = c.call('io.keyctl.Watch', more=True, timeout=10)
        check((r or {}).get('error') == 'io.keyctl.TooManyWatchers',
              f'{SLOTS} watchers that never read hold every slot at first ({r})')
        n, log = notifier(d, bus, 'notify-stalled')
        ok = wait_until(lambda: expiring_shown(bus), IDLE_SEC + MARGIN + 10)
        dt = time.monotonic() - t0
        check(bool(ok) and dt <= IDLE_SEC + MARGIN,
              f'keyctl-notify is served and shows the 5-day expiry {dt:.1f} s after {SLOTS} '
              f'stalled Watch calls (client-idle-sec {IDLE_SEC} + {MARGIN:.0f} s)',
              read(log)[-600:])

        def raw_watch():
            with vr.Conn(d.socket, timeout=10) as c:
                return is_state(c.call('io.keyctl.Watch', more=True, timeout=10))
        ok = wait_until(raw_watch, IDLE_SEC + MARGIN + 5, step=0.2)
        dt = time.monotonic() - t0
        check(ok and dt <= IDLE_SEC + MARGIN, f'a raw Watch gets its "state" too ({dt:.1f} s)')
        gone = wait_until(lambda: all(closed(c) for c in conns), IDLE_SEC + MARGIN)
        dt = time.monotonic() - t0
        check(gone, f'each of the {SLOTS} that never read is closed by the daemon ({dt:.1f} s)')
        check('Dropping a Watch client that read none of its events' in d.log(),
              'the daemon logs why')
        return n, len(read(log))
    finally:
        for c in conns:
            c.close()


def test_readers_stay(d, n, served_at, card):
    reader = Reader(d.socket)
    reader.start()
    try:
        check(wait_until(lambda: 'state' in reader.types, 10), 'a reading Watch client is served')
        for _ in range(3):
            card.remove()
            time.sleep(IDLE_SEC / 2)
            card.insert()
            time.sleep(IDLE_SEC / 2)
        check(wait_until(lambda: 'token-added' in reader.types[1:], 10),
              f'it gets the events of 3 removals and insertions ({reader.types})')
        check(not reader.closed, f'and keeps its slot past client-idle-sec ({IDLE_SEC} s) '
              '(3 x 2 s of events)')
        since = read(os.path.join(d.tmp, 'notify-stalled.log'))[served_at:]
        check(n.poll() is None and 'ended Watch' not in since and 'Lost the daemon' not in since,
              'keyctl-notify keeps its Watch too', since[-600:])
    finally:
        reader.stop = True
        reader.join(5)
        reader.conn.close()


def main():
    def body():
        with card_bed({'sig': 5, 'enc': 100, 'aut': 100}, SERIAL) as (_, kr, _, card):
            d = Keyctld(kr.env, conf=f'[daemon]\nclient-idle-sec = {IDLE_SEC}\n',
                        label='keyctld-stalled')
            with daemon_running(d), kb.SessionBus() as bus:
                n, served_at = test_stalled_slots(d, bus)
                test_readers_stay(d, n, served_at, card)
                procs.stop(n)
    return bed_main(body)


if __name__ == '__main__':
    sys.exit(main())
