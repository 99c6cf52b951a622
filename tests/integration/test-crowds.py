#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld among crowds of its own user's connections, on the test bed (a virtual YubiKey whose
signing subkey expires in 5 days, a private session bus with dbusmock's notification server):

- 500 connections that connect and say nothing: then keyctl-status, keyctl-notify and a raw
  Watch are all served (before, 64 such connections locked every client out);
- Watch subscribers have their own cap (max-watchers): one more is answered
  io.keyctl.TooManyWatchers and its connection stays usable;
- keyctl-notify refused that way keeps retrying with backoff while the socket stays (before, it
  gave up after five tries and waited for a socket that already existed), and is served as soon
  as a slot frees.
Every process is stopped by pid, also on failure.
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import bed_main, card_bed, check, daemon_running, wait_until  # noqa: E402

KEYCTL_STATUS = os.environ['KEYCTL_STATUS']
KEYCTL_NOTIFY = os.environ['KEYCTL_NOTIFY']
SERIAL = '45678901'


def watch(d):
    """A raw Watch; (conn, first reply)."""
    c = vr.Conn(d.socket, timeout=15)
    return c, c.call('io.keyctl.Watch', more=True, timeout=15)


def is_state(r):
    return bool(r) and r.get('parameters', {}).get('event', {}).get('type') == 'state'


def notifier(d, bus, name, retry_max=None):
    env = dict(d.env, **bus.env)
    if retry_max:
        env['KEYCTL_NOTIFY_RETRY_MAX'] = str(retry_max)
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


def test_idle_crowd(d, bus):
    conns = []
    try:
        for _ in range(500):
            c = vr.Conn(d.socket, connect=False)
            c.sock.settimeout(10)
            c.sock.connect(d.socket)
            conns.append(c)
        time.sleep(0.5)
        r = subprocess.run([KEYCTL_STATUS, '-q'], env=d.env, capture_output=True, text=True,
                           timeout=30)
        check(r.returncode == 1, f'500 idle connections: keyctl-status -q is served, the true 1 '
              f'(exit {r.returncode}; {r.stderr.strip()[-200:]})')
        w, first = watch(d)
        check(is_state(first), '500 idle connections: a Watch gets its "state"')
        n, log = notifier(d, bus, 'notify-crowd')
        ok = wait_until(lambda: expiring_shown(bus), 20)
        check(bool(ok), '500 idle connections: keyctl-notify is served and shows the 5-day '
              'expiry', read(log)[-800:])
        check(d.fds() < 64 + 40, f'the daemon holds no more than max-clients of them '
              f'({d.fds()} fds)')
        procs.stop(n)
        w.close()
    finally:
        for c in conns:
            c.close()


def test_watch_cap(d):
    a, fa = watch(d)
    b, fb = watch(d)
    c = vr.Conn(d.socket, timeout=15)
    try:
        check(is_state(fa) and is_state(fb), 'max-watchers 2: two Watch calls served')
        r = c.call('io.keyctl.Watch', more=True, timeout=15)
        check(r and r.get('error') == 'io.keyctl.TooManyWatchers'
              and r.get('parameters', {}).get('max') == 2,
              f'max-watchers 2: a third Watch is answered io.keyctl.TooManyWatchers ({r})')
        r = c.call('org.varlink.service.GetInfo', timeout=15)
        check(r and r.get('parameters', {}).get('product') == 'keyctld',
              'that connection stays usable (GetInfo answered)')
    finally:
        for x in (a, b, c):
            x.close()


def test_notify_backoff(d, bus):
    bus.clear()
    a, fa = watch(d)
    b, fb = watch(d)
    n = None
    try:
        check(is_state(fa) and is_state(fb), 'both Watch slots held')
        n, log = notifier(d, bus, 'notify-refused', retry_max=2)
        # Longer than five retries 1 s to 2 s apart: the old notifier stopped trying by then.
        time.sleep(14)
        refusals = read(log).count('TooManyWatchers')
        check(refusals >= 6, f'keyctl-notify refused: it keeps retrying ({refusals} refusals '
              f'in 14 s)', read(log)[-600:])
        check(n.poll() is None and not expiring_shown(bus), 'and shows nothing meanwhile')
        a.close()
        t = time.monotonic()
        ok = wait_until(lambda: expiring_shown(bus), 15)
        dt = time.monotonic() - t
        check(bool(ok) and dt < 6, f'a slot frees: keyctl-notify is served and shows the 5-day '
              f'expiry ({dt:.1f} s later)', read(log)[-600:])
    finally:
        a.close()
        b.close()
        if n is not None:
            procs.stop(n)


def main():
    def body():
        with card_bed({'sig': 5, 'enc': 100, 'aut': 100}, SERIAL) as (_, kr, _, _):
            d = Keyctld(kr.env, conf='[daemon]\nmax-watchers = 2\nclient-idle-sec = 60\n',
                        label='keyctld-crowds')
            with daemon_running(d, 'the daemon ran through the crowds'), \
                    kb.SessionBus() as bus:
                test_idle_crowd(d, bus)
                test_watch_cap(d)
                test_notify_backoff(d, bus)
    return bed_main(body)


if __name__ == '__main__':
    sys.exit(main())
