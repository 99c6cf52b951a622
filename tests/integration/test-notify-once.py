#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl-notify --once where it cannot do its job (issue 31 item 5): it ends within 10 s,
with a nonzero exit status and the reason in its output, when

- keyctld is not there: no socket, a stale socket, a regular file at the path;
- the socket is another program's: gpg-agent's greeting, one that says nothing, a Varlink
  service without io.keyctl;
- a fake keyctld has a subkey to announce but there is no session bus, or a bus without a
  notification server;

the control: the same fake with dbusmock's notification server: one popup, exit 0. Without --once
it keeps retrying another program's socket, saying why, without spinning. Every process started
here is stopped by pid."""

import os
import socket
import subprocess
import sys
import time

import keyctlbed as kb
from keyctlbed import procs
from fake_keyctld import Alien, FakeDaemon, reply
from testlib import check, cpu_seconds, finish, wait_until

NOTIFY = os.environ['KEYCTL_NOTIFY']
BOUND_S = 10.0
OTHER = "; is it another program's socket?"


def env_for(tmp, bus_env):
    env = {k: v for k, v in os.environ.items()
           if k not in ('KEYCTL_SOCKET', 'DBUS_SESSION_BUS_ADDRESS', 'KEYCTL_RENEWAL_URL',
                        'JOURNAL_STREAM')}
    env.update(HOME=tmp, XDG_RUNTIME_DIR=os.path.join(tmp, 'runtime'),
               XDG_CONFIG_HOME=os.path.join(tmp, 'config'),
               XDG_STATE_HOME=os.path.join(tmp, 'state'), **bus_env)
    return env


def once(tmp, path, bus_env, name):
    """keyctl-notify --once at path: (exit status or None, stderr, seconds)."""
    state = os.path.join(tmp, name + '.state')
    t = time.monotonic()
    p = procs.spawn('keyctl-notify', [NOTIFY, '--once', '--socket=' + path,
                                      '--state-file=' + state],
                    env=env_for(tmp, bus_env), stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True)
    try:
        _, err = p.communicate(timeout=BOUND_S + 5)
    except subprocess.TimeoutExpired:
        procs.stop(p)
        _, err = p.communicate()
        return None, err, time.monotonic() - t
    return p.returncode, err, time.monotonic() - t


def check_gives_up(what, tmp, path, bus_env, reason):
    rc, err, dt = once(tmp, path, bus_env, what.replace(' ', '-').replace("'", ''))
    said = 'keyctl-notify: ' + reason + '; giving up (--once)\n'
    check(rc not in (None, 0) and said in err and dt < BOUND_S,
          '--once, %s: exit %r in %.1f s with the reason' % (what, rc, dt),
          'err=%r\nwant %r' % (err[-800:], said))


def test_no_daemon(tmp, bus):
    d = os.path.join(tmp, 'paths')
    os.mkdir(d)
    missing = os.path.join(d, 'missing')
    check_gives_up('no socket', tmp, missing, bus.env,
                   'keyctld is not running (no socket at %s)' % missing)
    stale = os.path.join(d, 'stale.sock')
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(stale)
    s.close()
    check_gives_up('a stale socket', tmp, stale, bus.env,
                   'stale socket: keyctld is not running (nobody listens on %s)' % stale)
    regular = os.path.join(d, 'regular')
    open(regular, 'w').close()
    check_gives_up('a regular file', tmp, regular, bus.env,
                   "%s is a regular file, not keyctld's socket" % regular)


def test_not_keyctld(tmp, bus):
    cases = [('greet', "gpg-agent's greeting",
              ' does not answer as keyctld: it said "OK Pleased to meet you", which is not '
              'Varlink'),
             ('silent', 'a socket that says nothing',
              ' does not answer as keyctld: no Varlink answer within 2 s'),
             ('varlink', 'another Varlink service',
              ' does not answer as keyctld: a Varlink service without io.keyctl')]
    for mode, name, said in cases:
        path = os.path.join(tmp, mode + '.sock')
        alien = Alien(path, mode)
        try:
            check_gives_up(name, tmp, path, bus.env, path + said + OTHER)
        finally:
            alien.close()


def test_retries_without_once(tmp, bus):
    """Without --once the notifier outlives a wrong socket (it may be replaced by keyctld's),
    retrying with backoff: it says why each time and does not spin."""
    path = os.path.join(tmp, 'greet-long.sock')
    alien = Alien(path, 'greet')
    log = os.path.join(tmp, 'retries.log')
    said = path + ' does not answer as keyctld: it said "OK Pleased to meet you"'
    n = procs.spawn('keyctl-notify', [NOTIFY, '--socket=' + path,
                                      '--state-file=' + os.path.join(tmp, 'retries.state')],
                    env=dict(env_for(tmp, bus.env), KEYCTL_NOTIFY_RETRY_MAX='1'),
                    stdout=subprocess.DEVNULL, stderr=open(log, 'w'))
    try:
        got = wait_until(lambda: open(log).read().count(said) >= 3, 15)
        check(got and n.poll() is None,
              'without --once: another program\'s socket retried, the reason said each time',
              'exit %r\n%s' % (n.poll(), open(log).read()[-800:]))
        cpu = cpu_seconds(n.pid) if n.poll() is None else -1
        check(0 <= cpu < 1.0, '... without spinning (%.2f s of CPU)' % cpu)
    finally:
        procs.stop(n)
        alien.close()


def test_no_popup(tmp):
    """A keyctld with a subkey 5 days from expiry, and no way to show it."""
    path = os.path.join(tmp, 'keyctld.sock')
    fake = FakeDaemon(path, reply('warning', 'warning'), watch_stays=True)
    try:
        check_gives_up('no session bus', tmp, path,
                       {'DBUS_SESSION_BUS_ADDRESS': 'unix:path=' + os.path.join(tmp, 'no-bus')},
                       '1 notification not shown: no session bus (is DBUS_SESSION_BUS_ADDRESS '
                       'set?)')
        with kb.SessionBus(notifications=False) as bus:
            check_gives_up('no notification server', tmp, path, bus.env,
                           '1 notification not shown: no notification server (nobody owns '
                           'org.freedesktop.Notifications on the session bus)')
        with kb.SessionBus() as bus:
            rc, err, dt = once(tmp, path, bus.env, 'control')
            sent = bus.notifications_sent()
            check(rc == 0 and len(sent) == 1 and 'expires in 5 days' in sent[0]['summary'],
                  '--once with a notification server: the popup shown, exit 0 in %.1f s' % dt,
                  'rc=%r sent=%r err=%r' % (rc, sent, err[-600:]))
    finally:
        fake.close()


def main():
    try:
        tmp = procs.tmpdir('keyctl-notify-once-')
        with kb.SessionBus() as bus:
            test_no_daemon(tmp, bus)
            test_not_keyctld(tmp, bus)
            test_retries_without_once(tmp, bus)
        test_no_popup(tmp)
    except kb.BedUnavailable as e:
        print(e)
        procs.stop_all()
        return 77
    procs.stop_all()
    finish()


if __name__ == '__main__':
    sys.exit(main())
