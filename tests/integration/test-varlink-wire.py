#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld's Varlink socket spoken raw (varlink_raw.py: Python's socket + json, none of our C) on
the test bed: a virtual YubiKey #12345678 on an isolated pcscd and a throwaway keyring whose
subkeys are stubs on it. Checks the framing (pipelined calls, a call in 1-byte writes, oneway),
every method and the interface text byte for byte, Watch across a card insertion and removal,
the error names, and each abuse (garbage, 1 MiB, no NUL, deep nesting, half a message, 500
connections, a Watch client that never reads, another uid) answered as server.c designs it while
a well-behaved client keeps getting the right tokens and keys and the daemon's fds come back.
Every process is stopped by pid, also on failure."""
import json, os, socket, subprocess, sys, threading, time, select

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import check, wait_until, failures  # noqa: E402

KEYCTLD = os.environ['KEYCTLD']
SRCDIR = os.environ.get('KEYCTL_SRCDIR', os.path.join(os.path.dirname(__file__), '..', '..'))
SERIAL = '12345678'
MSG_MAX = 64 * 1024


def err(reply):
    return (reply or {}).get('error')


class Daemon:
    def __init__(self, kr, conf):
        self.tmp = procs.tmpdir('keyctl-wire-')
        os.makedirs(os.path.join(self.tmp, 'runtime'), mode=0o700)
        os.makedirs(os.path.join(self.tmp, 'config', 'keyctl'), mode=0o700)
        self.conf = os.path.join(self.tmp, 'config', 'keyctl', 'keyctl.conf')
        with open(self.conf, 'w') as f:
            f.write(conf)
        self.socket = os.path.join(self.tmp, 'runtime', 'keyctl', 'socket')
        self.log_path = os.path.join(self.tmp, 'keyctld.log')
        self.env = dict(os.environ, **kr.env, HOME=self.tmp,
                        XDG_RUNTIME_DIR=os.path.join(self.tmp, 'runtime'),
                        XDG_CONFIG_HOME=os.path.join(self.tmp, 'config'), XDG_STATE_HOME=os.path.join(self.tmp, 'state'))
        self.env.pop('JOURNAL_STREAM', None)
        self.env.pop('KEYCTL_TIME_OFFSET', None)
        self.proc = procs.spawn('keyctld', [KEYCTLD, '--foreground', '--log-level=debug'],
                                env=self.env, stdout=subprocess.DEVNULL,
                                stderr=open(self.log_path, 'a'))

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()

    def alive(self):
        return self.proc.poll() is None


class Canary:
    """The well-behaved client: one long-lived connection asking GetStatus. Like any careful
    client it connects again when the daemon closed the connection while it was idle (after
    client-idle-sec, or evicted by a crowd), never in the middle of a call. It also does not
    start a call on a connection about to reach client-idle-sec (3 s here): the close could
    cross the call on the wire."""

    IDLE_SEC = 3

    def __init__(self, d, key):
        self.d, self.key = d, key
        self.conn = vr.Conn(d.socket)
        self.used = time.monotonic()
        self.reconnects = 0

    def _idle_closed(self):
        r, _, _ = select.select([self.conn.sock], [], [], 0)
        return bool(r) and self.conn.closed_by_peer(0.1)

    def right(self):
        if self._idle_closed() or time.monotonic() - self.used > self.IDLE_SEC - 1:
            self.conn.close()
            self.conn = vr.Conn(self.d.socket)
            self.reconnects += 1
        r = self.conn.call('io.keyctl.GetStatus', timeout=15)
        self.used = time.monotonic()
        if not r or 'parameters' not in r:
            return False, r
        p = r['parameters']
        toks = [t for t in p['tokens'] if t['serial'] == SERIAL and t['present']]
        keys = {k['fingerprint']: k for k in p['keys']}
        k = keys.get(self.key['fpr'])
        subs = {s['fingerprint']: s for s in k['subkeys']} if k else {}
        good = (len(toks) == 1 and k is not None and subs.get(self.key['sig'], {}).get('secret') == 'card'
                and subs[self.key['sig']].get('token_id') == 'yubikey-' + SERIAL)
        return good, r

    def check(self, after):
        ok, r = self.right()
        check(self.d.alive() and ok,
              f'after {after}: the other client still gets GetStatus with token #{SERIAL} '
              f'present and the signing subkey on it' + ('' if ok else f' ({str(r)[:300]})'))


def fds_back(d, baseline, what, timeout=15):
    n = wait_until(lambda: vr.fd_count(d.pid) <= baseline, timeout=timeout)
    now = vr.fd_count(d.pid)
    check(bool(n), f'after {what}: daemon fd count back to baseline ({now} <= {baseline})')


# ---------------------------------------------------------------------------------------------

def test_framing(d):
    with vr.Conn(d.socket) as c:
        r = c.call('io.keyctl.GetStatus')
        p = (r or {}).get('parameters', {})
        check(set(p) >= {'daemon', 'tokens', 'keys', 'findings'} and not r.get('continues'),
              'GetStatus: one reply with daemon, tokens, keys, findings')
        # Four calls in one write: four replies, in order.
        c.send_raw(b''.join([vr.Conn.encode('io.keyctl.GetTokens'), vr.Conn.encode('io.keyctl.GetKeys'),
                             vr.Conn.encode('io.keyctl.GetFindings'),
                             vr.Conn.encode('org.varlink.service.GetInfo')]))
        got = [c.recv() for _ in range(4)]
        want = ['tokens', 'keys', 'findings', 'interfaces']
        check(all(g and want[i] in g.get('parameters', {}) for i, g in enumerate(got)),
              'four calls pipelined in one write: four replies in call order')
        # One call, one byte per write.
        c.send_raw(vr.Conn.encode('io.keyctl.GetTokens'), chunk=1, pause=0.002)
        r = c.recv()
        check(r and any(t['serial'] == SERIAL for t in r['parameters']['tokens']),
              'a call split over one-byte writes is answered (token #12345678)')
        # A boundary inside a write: the first call and half the second, then the rest.
        a, b = vr.Conn.encode('io.keyctl.GetKeys'), vr.Conn.encode('io.keyctl.GetFindings')
        c.send_raw(a + b[:10])
        r1 = c.recv()
        c.send_raw(b[10:])
        r2 = c.recv()
        check(r1 and 'keys' in r1['parameters'] and r2 and 'findings' in r2['parameters'],
              'a message boundary in the middle of a write')
        # oneway gets no reply: the next reply is the next call's.
        c.send_raw(vr.Conn.encode('io.keyctl.GetStatus', oneway=True) +
                   vr.Conn.encode('io.keyctl.GetTokens'))
        r = c.recv()
        check(r and 'tokens' in r.get('parameters', {}) and 'daemon' not in r['parameters'],
              'oneway call: no reply, the following call answered first')
        # Whitespace around the object is valid JSON.
        c.send_raw(b' \n{"method": "io.keyctl.GetFindings"} \n\0')
        r = c.recv()
        check(r and 'findings' in r.get('parameters', {}), 'whitespace around the call accepted')


def test_methods(d, key):
    with vr.Conn(d.socket) as c:
        st = c.call('io.keyctl.GetStatus')['parameters']
        toks = c.call('io.keyctl.GetTokens')['parameters']['tokens']
        keys = c.call('io.keyctl.GetKeys')['parameters']['keys']
        finds = c.call('io.keyctl.GetFindings')['parameters']['findings']
        t = [t for t in toks if t['serial'] == SERIAL]
        check(len(t) == 1 and t[0]['kind'] == 'yubikey' and t[0]['present'] and
              t[0]['openpgp']['serial'] == SERIAL and
              t[0]['openpgp']['slots'][0]['fingerprint'] == key['sig'],
              'GetTokens: YubiKey #12345678 present, signature slot holds the signing subkey')
        k = [k for k in keys if k['fingerprint'] == key['fpr']]
        check(len(k) == 1 and k[0]['subkeys'][0]['is_primary'] and
              {s['fingerprint'] for s in k[0]['subkeys']} == {key['fpr'], key['sig'], key['enc'], key['aut']},
              'GetKeys: the key with its primary and three subkeys')
        sig = [s for s in k[0]['subkeys'] if s['fingerprint'] == key['sig']][0] if k else {}
        check(sig.get('level') == 'warning' and sig.get('secret') == 'card' and
              sig.get('token_id') == 'yubikey-' + SERIAL, f'signing subkey: level warning, secret on card ({sig.get("level")})')
        check(any(f['rule'] == 'subkey-expiring' and f['subkey'] == key['sig'] for f in finds),
              'GetFindings: subkey-expiring for the 5-day signing subkey')
        check(st['tokens'] == toks and st['keys'] == keys and st['findings'] == finds,
              'GetStatus equals GetTokens + GetKeys + GetFindings')
        r = c.call('io.keyctl.Reload')
        check(r == {'parameters': {}} or r == {}, f'Reload: empty reply ({r})')
        r = c.call('io.keyctl.Watch')
        check(err(r) == 'org.varlink.service.ExpectedMore', f'Watch without more: ExpectedMore ({r})')
        r = c.call('org.varlink.service.GetInfo')
        p = r.get('parameters', {})
        check(p.get('vendor') == 'keyctl' and p.get('product') == 'keyctld' and p.get('url') and
              p.get('version') and sorted(p.get('interfaces', [])) == ['io.keyctl', 'org.varlink.service'],
              f'GetInfo: vendor, product, version, url, interfaces ({p})')
        with open(os.path.join(SRCDIR, 'protocol', 'io.keyctl.varlink'), encoding='utf-8') as f:
            text = f.read()
        r = c.call('org.varlink.service.GetInterfaceDescription', {'interface': 'io.keyctl'})
        desc = r.get('parameters', {}).get('description')
        check(desc == text, f'GetInterfaceDescription(io.keyctl) equals protocol/io.keyctl.varlink '
              f'byte for byte ({len(desc or "")} vs {len(text)} chars)')
        r = c.call('org.varlink.service.GetInterfaceDescription', {'interface': 'org.varlink.service'})
        desc = r.get('parameters', {}).get('description', '')
        check('interface org.varlink.service' in desc and 'method GetInterfaceDescription' in desc,
              'GetInterfaceDescription(org.varlink.service) describes the service interface')


def test_errors(d):
    """Errors that leave the connection open."""
    with vr.Conn(d.socket) as c:
        cases = [
            (('io.keyctl.NoSuchMethod',), 'org.varlink.service.MethodNotFound',
             {'method': 'io.keyctl.NoSuchMethod'}),
            (('org.varlink.service.Nope',), 'org.varlink.service.MethodNotFound',
             {'method': 'org.varlink.service.Nope'}),
            (('com.example.foo.GetStatus',), 'org.varlink.service.InterfaceNotFound',
             {'interface': 'com.example.foo'}),
            # The interface is compared whole, not as a prefix of ours.
            (('org.varlink.GetInfo',), 'org.varlink.service.InterfaceNotFound',
             {'interface': 'org.varlink'}),
            (('io.keyctlx.GetStatus',), 'org.varlink.service.InterfaceNotFound',
             {'interface': 'io.keyctlx'}),
            (('org.varlink.service.GetInterfaceDescription', {'interface': 'com.example.x'}),
             'org.varlink.service.InterfaceNotFound', {'interface': 'com.example.x'}),
            (('org.varlink.service.GetInterfaceDescription', {'interface': 5}),
             'org.varlink.service.InvalidParameter', {'parameter': 'interface'}),
            (('org.varlink.service.GetInterfaceDescription', {}),
             'org.varlink.service.InvalidParameter', {'parameter': 'interface'}),
            (('org.varlink.service.GetInterfaceDescription', {'interface': ['io.keyctl']}),
             'org.varlink.service.InvalidParameter', {'parameter': 'interface'}),
            (('io.keyctl.GetStatus', {'verbose': True}), 'org.varlink.service.InvalidParameter',
             {'parameter': 'verbose'}),
            (('io.keyctl.Reload', {'force': 1}), 'org.varlink.service.InvalidParameter',
             {'parameter': 'force'}),
        ]
        for args, name, params in cases:
            r = c.call(*args)
            check(r and r.get('error') == name and r.get('parameters') == params,
                  f'{json.dumps(args)} -> {name} {params} (got {r})')
        r = c.call('io.keyctl.GetTokens')
        check(r and 'tokens' in r.get('parameters', {}), 'the connection still serves after those errors')


def abuse_closes(d, data, expect_error, what, shut_wr=False, timeout=10):
    """Sends data; expects expect_error (or, for None, no reply at all), then the daemon to close."""
    with vr.Conn(d.socket) as c:
        c.send_raw(data)
        if shut_wr:
            c.sock.shutdown(socket.SHUT_WR)
        try:
            m = c.recv_bytes(timeout)
            r = json.loads(m)
        except vr.Closed:
            r = None
        except ValueError:
            r = {'unparsable': True}
        if expect_error is None:
            check(r is None, f'{what}: no answer (got {r})')
        else:
            check(r is not None and r.get('error') == expect_error,
                  f'{what}: answered {expect_error} ({r})')
        check(c.closed_by_peer(timeout), f'{what}: then the daemon closes the connection')


def test_garbage(d, canary, baseline):
    M = b'"method": "io.keyctl.GetStatus"'
    IP = 'org.varlink.service.InvalidParameter'
    cases = [
        (b'this is not json\0', IP, 'invalid JSON'),
        (b'\xff\xfe\x00', IP, 'invalid UTF-8'),
        (b'[]\0', IP, 'a JSON array'),
        (b'null\0', IP, 'JSON null'),
        (b'{}\0', IP, 'an object without "method"'),
        (b'{"method": 5}\0', IP, 'a number for "method"'),
        (b'{"method": "GetStatus"}\0', IP, 'a method name without interface'),
        (b'{' + M + b', "parameters": "x"}\0', IP, 'parameters not an object'),
        (b'{' + M + b', "more": "yes"}\0', IP, '"more" not a boolean'),
        (b'{' + M + b', "bogus": 1}\0', IP, 'an unknown top-level field'),
        (b'{' + M + b'} {}\0', IP, 'two values in one message'),
        (b'{' + M + b',}\0', IP, 'a trailing comma'),
        (b'[' * 10000 + b'\0', IP, '10,000 nested ['),
        (b'{' + M + b', "parameters": {"a": ' + b'[' * 10000 + b']' * 10000 + b'}}\0', IP,
         'parameters nested 10,000 deep'),
    ]
    for data, e, what in cases:
        abuse_closes(d, data, e, what)
        canary.check(what)
    abuse_closes(d, b'{' + M + b'}', None, 'a call without NUL, then our side shut', shut_wr=True)
    canary.check('no NUL')
    # A watching connection takes no further calls.
    with vr.Conn(d.socket) as c:
        c.send('io.keyctl.Watch', more=True)
        first = c.recv()
        c.send('io.keyctl.GetStatus')
        r = c.recv()
        while r and r.get('continues'):
            r = c.recv()
        check(first and first.get('continues') and r and r.get('error') == IP,
              f'a call on a watching connection: {IP} ({r})')
        check(c.closed_by_peer(10), 'then the watching connection is closed')
    fds_back(d, baseline, 'garbage')


def test_too_large(d, canary, baseline):
    with vr.Conn(d.socket) as c:
        blob = b'{"method": "io.keyctl.GetStatus", "parameters": {"x": "' + b'A' * (1 << 20) + b'"}}\0'

        def writer():
            try:
                c.sock.settimeout(20)
                c.sock.sendall(blob)
            except OSError:
                pass  # the daemon stops reading and closes: expected

        t = threading.Thread(target=writer, daemon=True)
        t.start()
        try:
            r = json.loads(c.recv_bytes(20))
        except (vr.Closed, socket.timeout) as e:
            r = {'exception': repr(e)}
        check(r.get('error') == 'io.keyctl.MessageTooLarge' and r.get('parameters') == {'max': MSG_MAX},
              f'a 1 MiB message: io.keyctl.MessageTooLarge {{"max": {MSG_MAX}}} ({str(r)[:200]})')
        check(c.closed_by_peer(20), 'a 1 MiB message: then the daemon closes')
        t.join(25)
    # Exactly at the bound is fine; one byte over is not.
    pad = MSG_MAX - len(b'{"method": "io.keyctl.GetTokens", "x": ""}')
    with vr.Conn(d.socket) as c:
        c.send_raw(b'{"method": "io.keyctl.GetTokens"' + b' ' * (MSG_MAX - 33) + b'}\0')
        r = c.recv()
        check(r and 'tokens' in r.get('parameters', {}),
              f'a call of exactly {MSG_MAX} bytes (padded with spaces) is answered')
        c.send_raw(b'{"method": "io.keyctl.GetTokens"' + b' ' * (MSG_MAX - 32) + b'}\0')
        r = c.recv()
        check(r and r.get('error') == 'io.keyctl.MessageTooLarge', f'{MSG_MAX + 1} bytes: MessageTooLarge')
    del pad
    canary.check('1 MiB message')
    fds_back(d, baseline, '1 MiB message')


def test_half_message(d, canary, baseline):
    with vr.Conn(d.socket) as c:
        c.send_raw(b'{"method": "io.keyctl.GetSt')
        t0 = time.monotonic()
        # Meanwhile the daemon serves others.
        canary.check('half a message sent by another client')
        closed = c.closed_by_peer(60)
        dt = time.monotonic() - t0
        check(closed and not c.buf, f'half a message then silence: closed without an answer '
              f'(after {dt:.1f} s; client-idle-sec = 3)')
    check('half a message and went quiet' in d.log(), 'the daemon logs the idle close (debug)')
    canary.check('half a message')
    fds_back(d, baseline, 'half a message')


def open_idle(d, n):
    """n connections that never send anything, in order."""
    conns = []
    for i in range(n):
        c = vr.Conn(d.socket, connect=False)
        c.sock.settimeout(10)
        c.sock.connect(d.socket)
        conns.append(c)
    return conns


def closed_now(c):
    r, _, _ = select.select([c.sock], [], [], 0)
    if not r:
        return False
    try:
        return not c.sock.recv(4096, socket.MSG_DONTWAIT)
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def test_many_connections(d, canary, baseline, n_live):
    """500 idle connections: the oldest are evicted so that max-clients (64) hold, and every
    newcomer, keyctl-status and a Watch included, is served; then client-idle-sec closes the
    rest."""
    watch = vr.Conn(d.socket)
    first = watch.call('io.keyctl.Watch', more=True, timeout=15)
    check(first and first.get('parameters', {}).get('event', {}).get('type') == 'state',
          'a Watch before the crowd gets its "state"')
    t0 = time.monotonic()
    conns = open_idle(d, 500)
    time.sleep(0.5)  # the daemon accepts in batches; let it catch up
    open_now = [c for c in conns if not closed_now(c)]
    dt = time.monotonic() - t0
    print(f'     500 idle connections in {dt:.1f} s: {len(open_now)} still open')
    check(len(open_now) <= 64, f'at most max-clients (64) of 500 idle connections kept ({len(open_now)})')
    check(open_now == conns[-len(open_now):] and len(open_now) >= 60,
          f'the ones kept are the newest ({len(open_now)}; oldest-first eviction)')
    check(vr.fd_count(d.pid) <= baseline + 64 + 2,
          f'the daemon holds at most 64 of them ({vr.fd_count(d.pid)} fds, baseline {baseline})')
    # A newcomer among the crowd is served: raw, keyctl-status, and the Watch still flows.
    with vr.Conn(d.socket) as c:
        r = c.call('io.keyctl.GetTokens', timeout=15)
        check(r and 'tokens' in r.get('parameters', {}), 'with 500 idle connections a newcomer is served')
    st = subprocess.run([os.environ['KEYCTL_STATUS'], '--json'], env=d.env, capture_output=True,
                        text=True, timeout=30)
    check(st.returncode in (0, 1, 2) and '"tokens"' in st.stdout,
          f'with 500 idle connections keyctl-status is served (exit {st.returncode}) {st.stderr.strip()[-200:]}')
    vr.call_once(d.socket, 'io.keyctl.Reload', timeout=15)
    ev = watch.recv(timeout=15)
    check(ev is not None and 'event' in ev.get('parameters', {}),
          'the Watch opened before the crowd still gets events (after a Reload)')
    check('max-clients' in d.log() and 'idle longest' in d.log(),
          'the daemon logs the eviction once (max-clients)')
    # client-idle-sec (3 s here): the idle ones go, the Watch stays.
    check(wait_until(lambda: all(closed_now(c) for c in open_now), 15),
          'after client-idle-sec every idle connection is closed')
    with vr.Conn(d.socket) as c:
        r = c.call('io.keyctl.GetStatus', timeout=15)
        check(r and 'parameters' in r, 'a new connection is admitted again')
    watch.sock.settimeout(0)
    check(not closed_now(watch), 'the Watch subscriber outlives client-idle-sec')
    for c in conns:
        c.close()
    watch.close()
    canary.check('500 connections')
    fds_back(d, baseline, '500 connections')


def test_idle_timeout(d, canary, baseline):
    """A connection that made a call and stays silent is closed after client-idle-sec."""
    with vr.Conn(d.socket) as c:
        r = c.call('io.keyctl.GetTokens', timeout=15)
        check(r and 'tokens' in r.get('parameters', {}), 'idle test: first call answered')
        t0 = time.monotonic()
        closed = c.closed_by_peer(15)
        dt = time.monotonic() - t0
        check(closed and 2.5 <= dt <= 6, f'a connection silent after its call is closed after '
              f'client-idle-sec = 3 ({dt:.1f} s)')
    check('made no call for 3 s' in d.log(), 'the daemon logs the idle close (debug)')
    canary.check('an idle connection')


class Reader(threading.Thread):
    """A Watch client that reads everything, counting events, until told to stop."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.conn = vr.Conn(path)
        self.conn.send('io.keyctl.Watch', more=True)
        self.events, self.closed, self.stop = [], False, False

    def run(self):
        while not self.stop:
            try:
                r = json.loads(self.conn.recv_bytes(0.5))
            except socket.timeout:
                continue
            except vr.Closed:
                self.closed = True
                return
            self.events.append(r)


def test_slow_watcher(d, kr, filler, canary, baseline):
    reader = Reader(d.socket)
    reader.start()
    slow = vr.Conn(d.socket)
    slow.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow.send('io.keyctl.Watch', more=True)
    time.sleep(0.5)
    fds_with = vr.fd_count(d.pid)
    toggles, t0 = 0, time.monotonic()
    dropped = lambda: 'Dropping a Watch client' in d.log()  # noqa: E731
    # Each toggle moves the filler key's three subkeys between 2 and 200 days: key-changed,
    # level-changed and finding events, a few KiB each. The slow client never reads.
    while not dropped() and time.monotonic() - t0 < 180:
        kr.gpg('--quick-set-expire', filler['fpr'], '2d' if toggles % 2 == 0 else '200d', '*')
        toggles += 1
        time.sleep(0.3)
    dt = time.monotonic() - t0
    ok = wait_until(dropped, 10)
    print(f'     slow watcher dropped after {toggles} keyring changes, {dt:.1f} s; the reader got '
          f'{len(reader.events)} events')
    check(ok, 'a Watch client that never reads is dropped (client-queue-kib = 64; daemon log)')
    check(wait_until(lambda: vr.fd_count(d.pid) < fds_with, 10),
          'its fd is closed (daemon fd count fell)')
    check(slow.closed_by_peer(20), 'the slow client sees EOF after the events that were sent')
    reader.stop = True
    reader.join(5)
    types = {e['parameters']['event']['type'] for e in reader.events if 'parameters' in e}
    check(not reader.closed and 'key-changed' in types,
          f'a Watch client that reads is not dropped and got the events ({sorted(types)})')
    reader.conn.close()
    slow.close()
    canary.check('a Watch client that never reads')
    fds_back(d, baseline, 'the slow watcher')


def test_watch_card(d, card, pcscd, canary):
    card.remove()
    present = lambda: any(t['serial'] == SERIAL and t['present']  # noqa: E731
                          for t in vr.call_once(d.socket, 'io.keyctl.GetTokens')['parameters']['tokens'])
    check(wait_until(lambda: not present(), 20), 'card removed before the watch')
    with vr.Conn(d.socket) as c:
        c.send('io.keyctl.Watch', more=True)
        first = c.recv(15)
        ev = (first or {}).get('parameters', {}).get('event', {})
        check(first and first.get('continues') is True and ev.get('type') == 'state' and
              {'daemon', 'tokens', 'keys', 'findings'} <= set(ev),
              'Watch: first reply is a "state" event with continues: true')

        def next_of(kind, timeout=20):
            end = time.monotonic() + timeout
            seen = []
            while time.monotonic() < end:
                try:
                    r = json.loads(c.recv_bytes(max(0.1, end - time.monotonic())))
                except (socket.timeout, vr.Closed):
                    break
                e = r.get('parameters', {}).get('event', {})
                seen.append(e.get('type'))
                if e.get('type') == kind:
                    return r, seen
            return None, seen

        card.insert()
        r, seen = next_of('token-added')
        tok = (r or {}).get('parameters', {}).get('event', {}).get('token', {})
        check(r and r.get('continues') is True and tok.get('serial') == SERIAL and tok.get('present'),
              f'card inserted: token-added with serial {SERIAL} (events {seen})')
        card.remove()
        r, seen = next_of('token-removed')
        tok = (r or {}).get('parameters', {}).get('event', {}).get('token', {})
        check(r and tok.get('serial') == SERIAL, f'card removed: token-removed for {SERIAL} (events {seen})')
    card.insert()
    check(wait_until(present, 20), 'card back in')
    canary.check('the card round trip')


UID_CLIENT = r'''
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.sendall(b'{"method": "io.keyctl.GetStatus"}\0')
except OSError:
    pass
got = b''
try:
    while True:
        d = s.recv(65536)
        if not d:
            break
        got += d
except ConnectionResetError:
    pass
print('connected; got %d bytes' % len(got))
'''


def test_other_uid(d, canary, baseline):
    rt = os.path.join(d.tmp, 'runtime')
    paths = [d.tmp, rt, os.path.join(rt, 'keyctl')]
    modes = {p: os.stat(p).st_mode & 0o7777 for p in paths + [d.socket]}
    try:
        for p in paths:
            os.chmod(p, 0o711)
        os.chmod(d.socket, 0o666)
        r = subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups',
                            '/usr/bin/python3', '-c', UID_CLIENT, d.socket],
                           capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        print('     (no setpriv: other-uid check skipped)')
        return
    finally:
        for p, m in modes.items():
            os.chmod(p, m)
    check(r.returncode == 0 and 'connected; got 0 bytes' in r.stdout,
          f'uid 65534 connects and is disconnected without an answer ({r.stdout.strip()} {r.stderr.strip()[-200:]})')
    check(wait_until(lambda: 'Refusing a connection from uid 65534' in d.log(), 10),
          'the daemon logs the refused uid')
    canary.check('a client of another uid')
    fds_back(d, baseline, 'another uid')


def main():
    try:
        with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
            key = kr.create_key(subkeys={'sig': 5, 'enc': 100, 'aut': 100})
            kr.remove_primary_secret(key['fpr'])
            prof = kr.card_profile(key, base='yubikey5nfc', serial=SERIAL, touch={'sig': 'on'})
            card = pcscd.card(prof)
            pcscd.wait_card(True)
            kr.stubs_from_card(key)
            # A second key with secrets on disk, whose expiry the slow-watcher test toggles.
            filler = kr.create_key(uid='Filler Key <filler@example.org>',
                                   subkeys={'sig': 200, 'enc': 200, 'aut': 200})
            d = Daemon(kr, '[daemon]\nclient-queue-kib = 64\nclient-idle-sec = 3\n')
            try:
                return run(d, kr, key, filler, card, pcscd)
            finally:
                procs.stop(d.proc)
                if failures:
                    print('---- keyctld log (tail) ----')
                    print(d.log()[-4000:])
    except kb.BedUnavailable as e:
        print(f'SKIP: test bed unavailable: {e}')
        return 77


def run(d, kr, key, filler, card, pcscd):
    def ready():
        try:
            return Canary(d, key).right()[0]
        except OSError:
            return False
    if not wait_until(ready, 30):
        try:
            print(json.dumps(Canary(d, key).right()[1])[:3000])
        except OSError as e:
            print(e)
        print('FAIL keyctld did not list the card and the key within 30 s')
        return 1
    canary = Canary(d, key)
    time.sleep(0.5)
    baseline = vr.fd_count(d.pid)
    print(f'     daemon fd baseline (with one client connected): {baseline}')
    steps = [
        lambda: test_framing(d),
        lambda: test_methods(d, key),
        lambda: test_errors(d),
        lambda: test_watch_card(d, card, pcscd, canary),
        lambda: test_garbage(d, canary, baseline),
        lambda: test_too_large(d, canary, baseline),
        lambda: test_many_connections(d, canary, baseline, n_live=1),
        lambda: test_idle_timeout(d, canary, baseline),
        lambda: test_other_uid(d, canary, baseline),
        lambda: test_slow_watcher(d, kr, filler, canary, baseline),
        lambda: test_half_message(d, canary, baseline),
    ]
    for s in steps:
        try:
            s()
        except Exception as e:  # one broken step must not hide the others
            import traceback
            traceback.print_exc()
            check(False, f'step raised {e!r}')
    check(d.alive(), 'keyctld survived everything')
    canary.check('all of it')
    print(f'{len(failures)} failure(s)' if failures else 'all passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
