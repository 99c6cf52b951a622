#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Whom the clients trust (issue 32 item 4): keyctl-status and keyctl-notify speak only to a
server of their own uid or root's. A fake keyctld that would answer "all fine" (GetStatus: one
key at level ok; Watch: that state) runs as nobody on a socket in a directory both can reach,
as another user could bind it first in a shared XDG_RUNTIME_DIR:

- keyctl-status, by --socket and by XDG_RUNTIME_DIR, in every format and with --watch: the
  refusal naming the server's uid, exit 3, never "ok"; the fake receives not one byte;
- keyctl-notify --once: logs the refusal and retries with backoff as for an absent daemon
  (until --once's deadline), without spinning, and sends the fake nothing;
- the controls: the same clients served by a fake of their own uid work (status 0 and "ok",
  notify --once exits 0), and keyctl-status run as nobody accepts nobody's fake and root's.

Runs as root (it needs a second uid). Every process started here is stopped by pid."""

import json
import os
import pwd
import select
import socket
import subprocess
import sys
import time

from keyctlbed import procs
from testlib import check, cpu_seconds, finish, wait_until

STATUS = os.environ['KEYCTL_STATUS']
NOTIFY = os.environ['KEYCTL_NOTIFY']
NOW = int(time.time())
DAY = 86400


def iso(t):
    return time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(t))


def all_fine():
    """A GetStatus reply with nothing to worry about: one key, its subkey a year from expiry."""
    fpr = 'A19F9FB7B05291BF55D37A48311667CB6C5E9C57'

    def sub(f, caps, primary, expires):
        s = {'fingerprint': f, 'keygrip': '0' * 40, 'algorithm': 'ed25519',
             'capabilities': caps, 'is_primary': primary, 'created': iso(NOW - DAY),
             'created_epoch': NOW - DAY, 'revoked': False, 'expired': False, 'disabled': False,
             'secret': 'disk', 'card_serial': '', 'token_id': '', 'level': 'ok'}
        if expires:
            s.update(expires=iso(expires), expires_epoch=expires)
        return s
    return {
        'daemon': {'version': '0.1.0', 'started': iso(NOW - 60), 'started_epoch': NOW - 60,
                   'now': iso(NOW), 'now_epoch': NOW, 'pcsc_available': True,
                   'gnupghome': '/nonexistent', 'keyring_stale': False, 'keyring_error': '',
                   'keyring_refreshed': iso(NOW - 30), 'keyring_refreshed_epoch': NOW - 30},
        'tokens': [],
        'keys': [{'fingerprint': fpr, 'uid': 'Alice <alice@example.org>', 'revoked': False,
                  'expired': False, 'disabled': False, 'has_secret': True, 'tracked': False,
                  'level': 'ok',
                  'subkeys': [sub(fpr, ['certify'], True, 0),
                              sub('E3ADAA31DAD4BD6E02FD1F31C08A7F7F73ECA557', ['sign'], False,
                                  NOW + 400 * DAY)]}],
        'findings': [],
    }


def send(conn, msg):
    conn.sendall(json.dumps(msg).encode() + b'\0')


def serve(path):
    """The fake keyctld (run as a child, as whichever uid the test chose). Says "ready" on
    stdout, then for each connection a line "got N METHOD": the bytes it received before the
    client closed, and the method called ("-" for none)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o666)  # the root-served control is reached by nobody
    s.listen(8)
    print('ready', flush=True)
    while True:
        conn, _ = s.accept()
        with conn:
            conn.settimeout(5)
            buf, method = b'', '-'
            try:
                while True:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    buf += chunk
                    if method == '-' and b'\0' in buf:
                        first, rest = buf.split(b'\0', 1)
                        call = json.loads(first)
                        if call.get('method') == 'org.varlink.service.GetInfo':
                            # The clients ask who we are first: not counted as the call.
                            send(conn, {'parameters': {
                                'vendor': 'keyctl', 'product': 'keyctld', 'version': '0.1.0',
                                'url': '', 'interfaces': ['org.varlink.service', 'io.keyctl']}})
                            buf = rest
                            if b'\0' not in buf:
                                continue
                            call = json.loads(buf.split(b'\0')[0])
                        method = call.get('method', '?')
                        answer(conn, call)
            except (OSError, ValueError):
                pass
            print('got %d %s' % (len(buf), method), flush=True)


def answer(conn, call):
    """GetStatus: all fine, and closes. Watch: the state, then waits for the client to go, up
    to 3 s, so that keyctl-status --watch ends too."""
    if call.get('method') == 'io.keyctl.GetStatus':
        send(conn, {'parameters': all_fine()})
        conn.shutdown(socket.SHUT_WR)
    elif call.get('method') == 'io.keyctl.Watch':
        send(conn, {'parameters': {'event': dict(all_fine(), type='state')}, 'continues': True})
        conn.settimeout(3)
    else:
        send(conn, {'error': 'org.varlink.service.MethodNotFound'})


class Fake:
    def __init__(self, path, user):
        self.path = path
        u = pwd.getpwnam(user)
        self.uid = u.pw_uid
        self.p = procs.spawn('fake-keyctld-' + user, [procs.PYTHON, __file__, '--serve', path],
                             user=u.pw_uid, group=u.pw_gid, extra_groups=[],
                             stdout=subprocess.PIPE)
        self.buf = b''
        if self.lines(10, 1) != ['ready']:
            raise RuntimeError('the fake keyctld as %s did not start' % user)

    def lines(self, timeout, want=None):
        """What the fake said, by line: once it said want lines, or else after timeout s."""
        fd, end = self.p.stdout.fileno(), time.monotonic() + timeout
        while want is None or self.buf.count(b'\n') < want:
            left = end - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            self.buf += chunk
        *done, self.buf = self.buf.split(b'\n')
        return [line.decode() for line in done]

    def seen(self, want=1, timeout=5.0):
        """The connections reported, [(bytes, method)]: want of them, or what came by timeout
        s. A client closes before its process ends, so its line is on the way once it ran."""
        return [(int(n), m) for _, n, m in (line.split() for line in self.lines(timeout, want))]

    def stop(self):
        procs.stop(self.p)


def run(argv, env, as_nobody=False, timeout=20):
    if as_nobody:
        u = pwd.getpwnam('nobody')
        argv = ['setpriv', '--reuid=%d' % u.pw_uid, '--regid=%d' % u.pw_gid,
                '--clear-groups'] + argv
    p = procs.spawn('client', argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                    text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        procs.stop(p)
        return None, '', 'timed out after %d s' % timeout
    return p.returncode, out, err


def client_env(tmp, **extra):
    env = {k: v for k, v in os.environ.items() if k not in ('KEYCTL_SOCKET', 'NO_COLOR')}
    env.update(HOME=tmp, XDG_RUNTIME_DIR=os.path.join(tmp, 'none'),
               XDG_CONFIG_HOME=os.path.join(tmp, 'config'),
               XDG_STATE_HOME=os.path.join(tmp, 'state'))
    env.pop('DBUS_SESSION_BUS_ADDRESS', None)
    env.update(extra)
    return env


def refusal(prog, path, uid):
    me = os.getuid()
    return ('%s: %s is served by uid %d (%s), not you (uid %d): refusing to trust it'
            % (prog, path, uid, pwd.getpwuid(uid).pw_name, me))


def test_status_refuses(fake, tmp, shared):
    said = refusal('keyctl-status', fake.path, fake.uid) + '\n'
    ways = [('--socket', [STATUS, '--socket=' + fake.path], client_env(tmp)),
            ('KEYCTL_SOCKET', [STATUS], client_env(tmp, KEYCTL_SOCKET=fake.path)),
            ('XDG_RUNTIME_DIR', [STATUS], client_env(tmp, XDG_RUNTIME_DIR=shared))]
    for name, argv, env in ways:
        rc, out, err = run(argv, env)
        check(rc == 3 and err == said and out == '',
              'served by nobody, found by %s: keyctl-status refuses, exit 3' % name,
              'rc=%r out=%r err=%r' % (rc, out, err))
        check(fake.seen() == [(0, '-')], '... and sent the fake nothing')

    base = [STATUS, '--socket=' + fake.path]
    for extra in (['--json'], ['--watch'], ['--watch', '--json'], ['--check-upstream']):
        rc, out, err = run(base + extra, client_env(tmp))
        check(rc == 3 and err == said and out == '',
              'served by nobody: keyctl-status %s refuses, exit 3' % ' '.join(extra),
              'rc=%r out=%r err=%r' % (rc, out, err))
    rc, out, err = run(base + ['--format=prometheus'], client_env(tmp))
    check(rc == 3 and err == said and out.endswith('keyctl_daemon_up 0\n'),
          'served by nobody: Prometheus says keyctl_daemon_up 0, exit 3',
          'rc=%r out=%r err=%r' % (rc, out, err))
    rc, out, err = run(base + ['--quiet'], client_env(tmp))
    check(rc == 3 and out == '' and err == '', 'served by nobody: --quiet exits 3, silent',
          'rc=%r out=%r err=%r' % (rc, out, err))
    seen = fake.seen(6)
    check(len(seen) == 6 and all(s == (0, '-') for s in seen),
          'the fake got 6 connections and not one byte', seen)


def test_notify_refuses(fake, tmp):
    log = os.path.join(tmp, 'notify-refused.log')
    n = procs.spawn('keyctl-notify', [NOTIFY, '--once', '--socket=' + fake.path,
                                      '--state-file=' + os.path.join(tmp, 'refused.state')],
                    env=client_env(tmp, KEYCTL_NOTIFY_RETRY_MAX='1'),
                    stdout=subprocess.DEVNULL, stderr=open(log, 'w'))
    said = refusal('keyctl-notify', fake.path, fake.uid)
    try:
        def refusals():
            with open(log) as f:
                return f.read().count(said + '; retrying in ')
        got = wait_until(lambda: refusals() >= 3, 15)
        with open(log) as f:
            text = f.read()
        check(got, 'served by nobody: keyctl-notify --once logs the refusal and retries',
              text[-800:])
        check(n.poll() is None, '... and goes on waiting, as for a daemon that is not there',
              'exit %r' % n.poll())
        cpu = cpu_seconds(n.pid) if n.poll() is None else -1
        check(0 <= cpu < 1.0, '... without spinning (%.2f s of CPU)' % cpu)
        seen = fake.seen(None, 0.5)
        check(len(seen) >= 3 and all(s == (0, '-') for s in seen),
              '... and never sent the fake a byte', seen)
    finally:
        procs.stop(n)


def test_own_uid(fake, tmp):
    """The control: the same clients served by their own uid."""
    rc, out, err = run([STATUS, '--socket=' + fake.path], client_env(tmp))
    check(rc == 0 and ' ok\n' in out and err == '',
          'served by our own uid: keyctl-status prints the table, "ok", exit 0',
          'rc=%r out=%r err=%r' % (rc, out, err))
    check([m for _, m in fake.seen()] == ['io.keyctl.GetStatus'], '... after one GetStatus')

    rc, out, err = run([STATUS, '--watch', '--socket=' + fake.path], client_env(tmp))
    check(rc == 3 and out.rstrip().endswith('; ok') and 'closed the connection' in err,
          'served by our own uid: --watch prints the state, exit 3 when it closes',
          'rc=%r out=%r err=%r' % (rc, out, err))
    fake.seen()

    rc, out, err = run([NOTIFY, '--once', '--socket=' + fake.path,
                        '--state-file=' + os.path.join(tmp, 'own.state')],
                       client_env(tmp), timeout=15)
    check(rc == 0 and 'refusing' not in err,
          'served by our own uid: keyctl-notify --once is served and exits 0',
          'rc=%r err=%r' % (rc, err[-600:]))
    check([m for _, m in fake.seen()] == ['io.keyctl.Watch'], '... after one Watch')


def test_as_nobody(root_fake, nobody_fake, tmp):
    """keyctl-status run as nobody: nobody's own fake and root's are both trusted."""
    if run([STATUS, '--version'], client_env(tmp), as_nobody=True)[0] != 0:
        print('     (keyctl-status cannot run as nobody here: those checks skipped)')
        return
    for who, fake in (('nobody (its own uid)', nobody_fake), ('root', root_fake)):
        rc, out, err = run([STATUS, '--socket=' + fake.path], client_env(tmp), as_nobody=True)
        check(rc == 0 and ' ok\n' in out and err == '',
              'run as nobody, served by %s: keyctl-status trusts it, exit 0' % who,
              'rc=%r out=%r err=%r' % (rc, out, err))
        check([m for _, m in fake.seen()] == ['io.keyctl.GetStatus'], '... after one GetStatus')


def main():
    if os.getuid() != 0:
        print('needs root to run a server as another uid')
        return 77
    try:
        nobody = pwd.getpwnam('nobody')
    except KeyError:
        print('no user nobody to serve as')
        return 77
    tmp = procs.tmpdir('keyctl-client-trust-')
    os.chmod(tmp, 0o755)
    # The shared place: nobody's own directory, which root's clients reach, as under /tmp.
    shared = os.path.join(tmp, 'shared')
    os.makedirs(os.path.join(shared, 'keyctl'))
    for d in (shared, os.path.join(shared, 'keyctl')):
        os.chown(d, nobody.pw_uid, nobody.pw_gid)
    foreign = Fake(os.path.join(shared, 'keyctl', 'socket'), 'nobody')
    own = Fake(os.path.join(tmp, 'own.sock'), 'root')
    try:
        test_status_refuses(foreign, tmp, shared)
        test_notify_refuses(foreign, tmp)
        test_own_uid(own, tmp)
        test_as_nobody(own, foreign, tmp)
    finally:
        foreign.stop()
        own.stop()
    procs.stop_all()
    finish()


if __name__ == '__main__':
    if sys.argv[1:2] == ['--serve']:
        serve(sys.argv[2])
    else:
        sys.exit(main())
