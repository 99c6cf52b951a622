#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The real keyctld's view of real GnuPG homes, asked over its Varlink socket.

Proves, against a keyring built with gpg (subkeys expiring in 0, 1, 5, 20 and 400 days and never,
a revoked and an expired subkey, `sec#`, card stubs for a virtual YubiKey, a stranger's public key
and a tracked one):
1. GetKeys lists each subkey with the level, secret location, card serial, token id, keygrip,
   capabilities and created/expires epochs that gpg --with-colons gives; strangers are left out.
2. [keyring] track lists a key without a secret part (tracked: true).
4. KEYCTL_TIME_OFFSET=+3d: the 5-day subkey is critical, the 1-day one expired, and gpg with
   --faked-system-time at the same moment agrees; daemon.next_deadline_epoch is the earliest
   threshold crossing computed here from the subkeys (30, 14, 7, 3, 1 days; 14/3 levels).
3. Keys changed under the running daemon (gpg --quick-gen-key, --quick-set-expire): GetKeys
   follows (latency printed) and Watch sends key-added, key-changed and level-changed
   (warning -> ok).
5. pubring.kbx turned to garbage, GNUPGHOME deleted and replaced by a file: the daemon keeps the
   last good keys, says keyring_stale with a reason, recovers without a restart, never dies.

The helpers here (Daemon, Varlink, gpg_view) are also used by test-audit-rules.py.
Every process is stopped by pid, also on failure.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import time

import keyctlbed as kb
from keyctlbed import procs
from testlib import check, wait_until, failures

KEYCTLD = os.environ.get('KEYCTLD', '')
DAY = 86400
THRESHOLDS = (30, 14, 7, 3, 1)
WARNING_DAYS, CRITICAL_DAYS = 14, 3


class Varlink:
    """A minimal Varlink client: NUL-terminated JSON over AF_UNIX."""

    def __init__(self, path, timeout=30):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = b''

    def close(self):
        self.s.close()

    def send(self, method, more=False):
        m = {'method': method}
        if more:
            m['more'] = True
        self.s.sendall(json.dumps(m).encode() + b'\0')

    def recv(self, timeout=30):
        """The next message, or None when none came within timeout."""
        end = time.monotonic() + timeout
        while b'\0' not in self.buf:
            left = end - time.monotonic()
            if left <= 0:
                return None
            self.s.settimeout(left)
            try:
                d = self.s.recv(1 << 16)
            except socket.timeout:
                return None
            if not d:
                raise EOFError('keyctld closed the connection')
            self.buf += d
        m, self.buf = self.buf.split(b'\0', 1)
        return json.loads(m)

    def call(self, method):
        self.send(method)
        return self.recv()


class Daemon:
    """keyctld with a private XDG tree, the given keyring env and keyctl.conf."""

    def __init__(self, env_extra, conf='', name='keyctld'):
        self.tmp = procs.tmpdir('keyctl-daemon-keys-')
        for d in ('runtime', 'config/keyctl', 'state'):
            os.makedirs(os.path.join(self.tmp, d), mode=0o700, exist_ok=True)
        self.conf_path = os.path.join(self.tmp, 'config', 'keyctl', 'keyctl.conf')
        self.write_conf(conf)
        self.socket = os.path.join(self.tmp, 'runtime', 'keyctl', 'socket')
        self.log = os.path.join(self.tmp, name + '.log')
        self.env = dict(os.environ, **env_extra, HOME=self.tmp,
                        XDG_RUNTIME_DIR=os.path.join(self.tmp, 'runtime'),
                        XDG_CONFIG_HOME=os.path.join(self.tmp, 'config'),
                        XDG_STATE_HOME=os.path.join(self.tmp, 'state'))
        # GIT_CONFIG_GLOBAL too: git's config is the temporary HOME's, not the developer's.
        for k in ('JOURNAL_STREAM', 'NOTIFY_SOCKET', 'KEYCTL_TIME_OFFSET', 'KEYCTL_RENEWAL_URL',
                  'GIT_CONFIG_GLOBAL'):
            if k not in env_extra:
                self.env.pop(k, None)
        self.proc = None

    def write_conf(self, conf):
        with open(self.conf_path, 'w') as f:
            f.write(conf)

    def start(self, offset=0):
        env = dict(self.env)
        if offset:
            env['KEYCTL_TIME_OFFSET'] = '%+d' % offset
        self.proc = procs.spawn('keyctld', [KEYCTLD, '--foreground', '--log-level=debug'],
                                env=env, stdout=subprocess.DEVNULL,
                                stderr=open(self.log, 'a'))
        if not wait_until(lambda: os.path.exists(self.socket) or self.proc.poll() is not None,
                          timeout=30):
            raise RuntimeError('keyctld made no socket')
        if self.proc.poll() is not None:
            raise RuntimeError('keyctld exited %s: %s' % (self.proc.returncode, self.tail()))
        return self

    def stop(self):
        if self.proc:
            procs.stop(self.proc)
            rc = self.proc.returncode
            self.proc = None
            # The log goes with the temporary directory: what led to a failed check is shown
            # now or never (a rare failure under load is read from this alone).
            if failures:
                print('---- %s log (tail) ----\n%s' % (os.path.basename(self.log), self.tail()))
            return rc
        return None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def tail(self, n=3000):
        try:
            with open(self.log, errors='replace') as f:
                return f.read()[-n:]
        except FileNotFoundError:
            return ''

    def call(self, method):
        """The reply's parameters, or None when the daemon could not be asked."""
        try:
            v = Varlink(self.socket)
        except OSError:
            return None
        try:
            r = v.call(method)
        except (OSError, EOFError, ValueError):
            return None
        finally:
            v.close()
        return r.get('parameters') if r and 'error' not in r else None

    def status(self):
        return self.call('io.keyctl.GetStatus')

    def wait_status(self, pred, timeout=30):
        """The first GetStatus for which pred(status) holds, else the last one (or None)."""
        last = [None]

        def probe():
            s = self.status()
            last[0] = s
            return s if s and pred(s) else None
        return wait_until(probe, timeout=timeout, step=0.1) or last[0]

    def watch(self):
        v = Varlink(self.socket)
        v.send('io.keyctl.Watch', more=True)
        first = v.recv(30)
        if not first or first.get('parameters', {}).get('event', {}).get('type') != 'state':
            raise RuntimeError('Watch did not start with a state event: %r' % (first,))
        return v


def events_until(v, pred, timeout):
    """Watch events received until pred(event) holds or timeout; returns (events, hit)."""
    seen = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = v.recv(max(0.05, end - time.monotonic()))
        if m is None:
            break
        ev = m.get('parameters', {}).get('event', {})
        seen.append(ev)
        if pred(ev):
            return seen, ev
    return seen, None


CAPS = {'s': 'sign', 'e': 'encrypt', 'a': 'authenticate', 'c': 'certify'}


def gpg_view(kr, fpr=None, at=None, secret=False):
    """{fpr: {validity, created, expires, caps, keygrip, primary, card}} for every (sub)key
    gpg lists (of `fpr`, or all), as --with-colons says (at: --faked-system-time)."""
    args = ['--with-colons', '--with-keygrip', '--list-secret-keys' if secret else '--list-keys']
    if fpr:
        args.append(fpr)
    out, cur = {}, None
    for line in kr.gpg(*args, at=at).stdout.decode().splitlines():
        f = line.split(':')
        if f[0] in ('pub', 'sub', 'sec', 'ssb'):
            cur = {'validity': f[1], 'created': int(f[5]),
                   'expires': int(f[6]) if f[6] else 0,
                   'caps': sorted(CAPS[c] for c in f[11] if c in CAPS),
                   'primary': f[0] in ('pub', 'sec'), 'card': f[14] if len(f) > 14 else ''}
        elif f[0] == 'fpr' and cur is not None and 'fpr' not in cur:
            cur['fpr'] = f[9]
            out[f[9]] = cur
        elif f[0] == 'grp' and cur is not None and 'keygrip' not in cur:
            cur['keygrip'] = f[9]
    return out


def expected_level(expires, now, expired_flag=False):
    if expired_flag or (expires and expires <= now):
        return 'expired'
    if not expires:
        return 'ok'
    left = expires - now
    if left <= CRITICAL_DAYS * DAY:
        return 'critical'
    if left <= WARNING_DAYS * DAY:
        return 'warning'
    if left <= THRESHOLDS[0] * DAY:
        return 'notice'
    return 'ok'


def expected_deadline(expiries, now):
    """The earliest moment after now at which a level or threshold changes."""
    best = 0
    for e in expiries:
        if not e or e <= now:
            continue
        for days in (0,) + THRESHOLDS + (WARNING_DAYS, CRITICAL_DAYS):
            t = e - days * DAY
            if t > now and (best == 0 or t < best):
                best = t
    return best


def subkeys_of(st):
    return {s['fingerprint']: s for k in st['keys'] for s in k['subkeys']}


def keys_of(st):
    return {k['fingerprint']: k for k in st['keys']}


def add_subkey(kr, fpr, algo, usage, expire, at=None):
    before = set(kr.subkeys(fpr))
    kr.gpg('--quick-add-key', fpr, algo, usage, expire, at=at)
    return [s for s in kr.subkeys(fpr) if s not in before][0]


def stranger_key(uid):
    """A public key made in another GNUPGHOME (someone else's key)."""
    with kb.Keyring() as other:
        k = other.create_key(uid=uid, subkeys={'enc': 100})
        return k, other.export(k['fpr'])


# ---------------------------------------------------------------------------------------------

def build_keyring(pcscd, kr):
    """Alice: card stubs (5, 1, 20 days) on YubiKey #87654321. Bob: on disk, subkeys 0, 400 days
    and never, plus a revoked and an expired one. Carol: sec#. Dave: a stranger. Erin: tracked."""
    a = kr.create_key(uid='Alice Tester <alice@example.org>', subkeys={'sig': 5, 'enc': 1,
                                                                       'aut': 20})
    card = pcscd.card(kr.card_profile(a, serial='87654321'))
    pcscd.wait_card(True)
    kr.stubs_from_card(a)
    b = kr.create_key(uid='Bob Tester <bob@example.org>', subkeys={'sig': 0, 'enc': 400,
                                                                   'aut': None})
    b['revoked'] = add_subkey(kr, b['fpr'], 'ed25519', 'sign', 'never')
    kr.revoke_subkey(b['fpr'], b['revoked'])
    # Created with the key 30 days ago, lasted 20 days: expired 10 days ago.
    b['expired'] = add_subkey(kr, b['fpr'], 'ed25519', 'sign', 'seconds=%d' % (20 * DAY),
                              at=b['created'])
    c = kr.create_key(uid='Carol Tester <carol@example.org>', subkeys={'enc': 20})
    kr.remove_primary_secret(c['fpr'])
    d, d_pub = stranger_key('Dave Stranger <dave@example.org>')
    kr.import_keys(d_pub)
    e, e_pub = stranger_key('Erin Tracked <erin@example.org>')
    kr.import_keys(e_pub)
    return card, a, b, c, d, e


def test_listing(dm, kr, a, b, c, d, e):
    st = dm.wait_status(lambda s: len(s['keys']) >= 4 and s['tokens'] and all(
        sk['token_id'] for sk in subkeys_of(s).values() if sk['secret'] == 'card'))
    if not check(st is not None, 'GetStatus answers'):
        return None
    keys = keys_of(st)
    now = st['daemon']['now_epoch']
    check(sorted(keys) == sorted([a['fpr'], b['fpr'], c['fpr'], e['fpr']]),
          '1. keys listed: Alice, Bob, Carol (secret) and Erin (tracked)',
          [k['uid'] for k in st['keys']])
    check(d['fpr'] not in keys, '1. the stranger Dave, only in pubring, is not listed')

    tok = [t for t in st['tokens'] if (t.get('openpgp') or {}).get('serial') == '87654321']
    check(len(tok) == 1 and tok[0]['present'], '1. the virtual YubiKey #87654321 is a token')
    tok_id = tok[0]['id'] if tok else '?'
    aid = tok[0]['openpgp']['aid'] if tok else '?'

    view = {}
    for fpr in (a['fpr'], b['fpr'], c['fpr'], e['fpr']):
        view.update(gpg_view(kr, fpr))
    secret_view = {}
    for fpr in (a['fpr'], b['fpr'], c['fpr']):
        secret_view.update(gpg_view(kr, fpr, secret=True))
    subs = subkeys_of(st)
    check(sorted(subs) == sorted(view), '1. every subkey of those keys is listed, no others',
          sorted(set(subs) ^ set(view)))

    # What a user must see, spelled out: level per subkey.
    want_level = {a['sig']: 'warning', a['enc']: 'critical', a['aut']: 'notice',
                  b['sig']: 'expired', b['enc']: 'ok', b['aut']: 'ok', b['expired']: 'expired'}
    for fpr, lvl in want_level.items():
        got = subs.get(fpr, {}).get('level')
        exp = view[fpr]['expires']
        check(got == lvl, '1. subkey %s level %s (gpg: expires %s): %s' % (
            fpr[-8:], lvl, 'in %.1f days' % ((exp - now) / DAY) if exp else 'never', got))
    check(subs.get(b['revoked'], {}).get('revoked') is True, '1. revoked subkey: revoked true')
    check(subs.get(b['expired'], {}).get('expired') is True, '1. expired subkey: expired true')

    bad = []
    for fpr, g in view.items():
        s = subs.get(fpr)
        if not s:
            continue
        lvl = expected_level(g['expires'], now, g['validity'] == 'e' and not g['primary'])
        if s['level'] != lvl:
            bad.append('%s level %s want %s' % (fpr[-8:], s['level'], lvl))
        if s['created_epoch'] != g['created']:
            bad.append('%s created %s want %s' % (fpr[-8:], s['created_epoch'], g['created']))
        if (s.get('expires_epoch') or 0) != g['expires']:
            bad.append('%s expires %s want %s' % (fpr[-8:], s.get('expires_epoch'),
                                                   g['expires']))
        if g['expires'] == 0 and s.get('expires') is not None:
            bad.append('%s never expires but has "expires"' % fpr[-8:])
        if s['keygrip'] != g.get('keygrip') or len(s['keygrip']) != 40:
            bad.append('%s keygrip %s want %s' % (fpr[-8:], s['keygrip'], g.get('keygrip')))
        if sorted(s['capabilities']) != g['caps']:
            bad.append('%s caps %s want %s' % (fpr[-8:], s['capabilities'], g['caps']))
        if s['is_primary'] != g['primary']:
            bad.append('%s is_primary %s' % (fpr[-8:], s['is_primary']))
    check(not bad, '1. level, created/expires epochs, keygrip, capabilities equal gpg '
          '--with-colons for all %d subkeys' % len(view), '\n'.join(bad))

    # Secret location.
    for fpr in (a['sig'], a['enc'], a['aut']):
        s = subs.get(fpr, {})
        check(s.get('secret') == 'card' and s.get('card_serial', '').upper() ==
              secret_view.get(fpr, {}).get('card', '?').upper() and '87654321' in
              s.get('card_serial', '') and s.get('token_id') == tok_id,
              '1. Alice %s: secret card, card_serial %s (the stub\'s), token %s' % (
                  fpr[-8:], s.get('card_serial'), s.get('token_id')))
    check(kb.stub_names_card(subs.get(a['sig'], {}).get('card_serial', '-'), aid),
          '1. the stub serial names the inserted card (%s)' % aid)
    for fpr in (a['fpr'], b['fpr'], b['sig'], b['enc'], b['aut']):
        s = subs.get(fpr, {})
        check(s.get('secret') == 'disk' and s.get('card_serial') == '' and
              s.get('token_id') == '', '1. %s secret on disk, no card, no token' % fpr[-8:])
    check(subs.get(c['fpr'], {}).get('secret') == 'none',
          '1. Carol sec#: primary secret none: %s' % subs.get(c['fpr'], {}).get('secret'))
    check(subs.get(c['enc'], {}).get('secret') == 'disk', '1. Carol\'s subkey secret on disk')
    check(keys.get(c['fpr'], {}).get('has_secret') is True, '1. Carol has_secret (sec#)')
    check(keys.get(a['fpr'], {}).get('tracked') is False and
          keys.get(a['fpr'], {}).get('uid') == 'Alice Tester <alice@example.org>',
          '1. Alice: uid, not tracked')

    # 2. Tracked without a secret part.
    ek = keys.get(e['fpr'], {})
    check(ek.get('tracked') is True and ek.get('has_secret') is False and
          all(s['secret'] == 'none' for s in ek.get('subkeys', [])) and
          ek.get('uid') == 'Erin Tracked <erin@example.org>',
          '2. Erin (track = FPR): listed, tracked true, has_secret false, secrets none')

    # 4a. next deadline at the real clock.
    want = expected_deadline([g['expires'] for g in view.values()], now)
    check(st['daemon'].get('next_deadline_epoch') == want,
          '4. next_deadline_epoch %s = earliest crossing %s (%s)' % (
              st['daemon'].get('next_deadline_epoch'), want,
              time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(want))))
    return st


def test_offset(kr, a, e_conf, env):
    off = 3 * DAY
    dm = Daemon(env, e_conf, name='keyctld-offset').start(offset=off)
    try:
        st = dm.wait_status(lambda s: len(s['keys']) >= 4)
        if not check(st is not None, '4. the +3d daemon answers'):
            return
        subs = subkeys_of(st)
        now = st['daemon']['now_epoch']
        check(abs(now - (time.time() + off)) < 120, '4. daemon.now is 3 days ahead (%+.0f s)'
              % (now - time.time()))
        check(subs.get(a['sig'], {}).get('level') == 'critical',
              '4. +3d: the 5-day subkey is critical: %s' % subs.get(a['sig'], {}).get('level'))
        left = (subs[a['sig']]['expires_epoch'] - now) / DAY if a['sig'] in subs else 0
        check(1 < left <= 2, '4. +3d: it has 2 days left (%.2f)' % left)
        check(subs.get(a['enc'], {}).get('level') == 'expired',
              '4. +3d: the 1-day subkey is expired: %s' % subs.get(a['enc'], {}).get('level'))
        check(subs.get(a['aut'], {}).get('level') == 'notice',
              '4. +3d: the 20-day subkey is still notice (17 days)')
        g = gpg_view(kr, a['fpr'], at=now)
        check(g[a['enc']]['validity'] == 'e', "4. gpg --faked-system-time at that moment: the "
              "1-day subkey is 'e' (%s)" % g[a['enc']]['validity'])
        check(g[a['sig']]['validity'] != 'e' and g[a['aut']]['validity'] != 'e',
              '4. gpg agrees the 5- and 20-day subkeys are not expired')
        view = {}
        for k in st['keys']:
            view.update(gpg_view(kr, k['fingerprint']))
        want = expected_deadline([v['expires'] for v in view.values()], now)
        got = st['daemon'].get('next_deadline_epoch')
        check(got == want, '4. +3d: next_deadline_epoch %s = earliest crossing %s '
              '(%.2f days ahead)' % (got, want, (want - now) / DAY))
        check(dm.alive(), '4. the +3d daemon is still running')
    finally:
        dm.stop()


def test_changes(dm, kr, a):
    w = dm.watch()
    try:
        # A new key.
        t0 = time.monotonic()
        kr.gpg('--quick-gen-key', 'Frank New <frank@example.org>', 'ed25519', 'default', '1y')
        t_gpg = time.monotonic()
        frank = kr.fingerprint('Frank New <frank@example.org>')
        st = dm.wait_status(lambda s: frank in keys_of(s), timeout=5)
        t_seen = time.monotonic()
        check(st is not None and frank in keys_of(st),
              '3. a key made by gpg --quick-gen-key appears in GetKeys within 5 s')
        print('     figure: new key visible %.3f s after gpg returned' % (t_seen - t_gpg))
        evs, hit = events_until(w, lambda ev: ev.get('type') == 'key-added' and
                                (ev.get('key') or {}).get('fingerprint') == frank, 10)
        check(hit is not None, '3. Watch: key-added for it',
              [ev.get('type') for ev in evs])

        # The 5-day (warning) signing subkey renewed for a year.
        st = dm.status()
        old = subkeys_of(st).get(a['sig'], {})
        check(old.get('level') == 'warning', '3. before: the 5-day subkey is warning')
        kr.gpg('--quick-set-expire', a['fpr'], '1y', a['sig'])
        t_gpg = time.monotonic()
        want = gpg_view(kr, a['fpr'])[a['sig']]['expires']
        st = dm.wait_status(lambda s: subkeys_of(s).get(a['sig'], {}).get('expires_epoch') ==
                            want, timeout=5)
        t_seen = time.monotonic()
        new = subkeys_of(st).get(a['sig'], {}) if st else {}
        check(new.get('expires_epoch') == want and new.get('level') == 'ok',
              '3. --quick-set-expire 1y: GetKeys shows the new expiry and level ok within 5 s'
              ' (%s, %s)' % (new.get('expires'), new.get('level')))
        print('     figure: new expiry visible %.3f s after gpg returned (target < 1 s)'
              % (t_seen - t_gpg))
        got = {}

        def pred(ev):
            if ev.get('type') == 'key-changed' and (ev.get('key') or {}).get('fingerprint') \
                    == a['fpr']:
                got['changed'] = ev
            if ev.get('type') == 'level-changed' and ev.get('subkey') == a['sig']:
                got['level'] = ev
            return 'changed' in got and 'level' in got
        evs, _ = events_until(w, pred, 10)
        check('changed' in got, '3. Watch: key-changed for Alice', [ev.get('type') for ev in evs])
        lv = got.get('level', {})
        check(lv.get('old_level') == 'warning' and lv.get('level') == 'ok' and
              (lv.get('key') or {}).get('fingerprint') == a['fpr'],
              '3. Watch: level-changed warning -> ok for the renewed subkey: %s -> %s' % (
                  lv.get('old_level'), lv.get('level')))
    finally:
        w.close()
    return frank


def rmtree(path):
    """rm -r that tolerates gpg-agent removing its sockets at the same time."""
    for _ in range(20):
        try:
            shutil.rmtree(path)
            return
        except FileNotFoundError:
            continue
    shutil.rmtree(path)


def test_stale(dm, kr):
    pid = dm.proc.pid
    home = kr.home
    before = dm.status()
    good = sorted(keys_of(before))
    kbx = os.path.join(home, 'pubring.kbx')
    kr.stop()  # no gpg-agent in a home we are about to break

    # a) pubring.kbx turned into garbage.
    with open(kbx, 'rb') as f:
        saved = f.read()
    with open(kbx + '.tmp', 'wb') as f:
        f.write(b'this is not a keybox, it is garbage\n' * 40)
    os.rename(kbx + '.tmp', kbx)
    st = dm.wait_status(lambda s: s['daemon']['keyring_stale'], timeout=10)
    check(st and st['daemon']['keyring_stale'] and 'keybox' in st['daemon']['keyring_error'],
          '5. garbage pubring.kbx: keyring_stale true, reason: %s' % (
              st and st['daemon']['keyring_error']))
    check(st and sorted(keys_of(st)) == good, '5. ... and the last good keys are kept')
    with open(kbx + '.tmp', 'wb') as f:
        f.write(saved)
    t0 = time.monotonic()
    os.rename(kbx + '.tmp', kbx)
    st = dm.wait_status(lambda s: not s['daemon']['keyring_stale'], timeout=30)
    check(st and not st['daemon']['keyring_stale'] and st['daemon']['keyring_error'] == '' and
          sorted(keys_of(st)) == good, '5. repaired: keyring_stale false again, same keys')
    print('     figure: recovered %.2f s after the repair' % (time.monotonic() - t0))

    # b) GNUPGHOME removed, then a file where the directory should be.
    backup = os.path.join(procs.tmpdir('keyctl-home-saved-'), 'home')
    nosock = shutil.ignore_patterns('S.*')  # the agent's sockets cannot be copied
    shutil.copytree(home, backup, symlinks=True, ignore=nosock)
    rmtree(home)
    st = dm.wait_status(lambda s: s['daemon']['keyring_stale'], timeout=10)
    check(st and st['daemon']['keyring_stale'] and home in st['daemon']['keyring_error'],
          '5. GNUPGHOME deleted: keyring_stale, reason: %s' % (
              st and st['daemon']['keyring_error']))
    with open(home, 'w') as f:
        f.write('not a directory\n')
    st = dm.wait_status(lambda s: 'not a directory' in s['daemon']['keyring_error'], timeout=20)
    check(st and st['daemon']['keyring_stale'] and
          'not a directory' in st['daemon']['keyring_error'],
          '5. a file where GNUPGHOME should be: stale, reason: %s' % (
              st and st['daemon']['keyring_error']))
    check(st and sorted(keys_of(st)) == good, '5. ... and the last good keys are kept')
    os.unlink(home)
    t0 = time.monotonic()
    os.rename(backup, home)
    st = dm.wait_status(lambda s: not s['daemon']['keyring_stale'], timeout=60)
    check(st and not st['daemon']['keyring_stale'] and sorted(keys_of(st)) == good,
          '5. directory back: recovered without a restart (retry backoff)')
    print('     figure: recovered %.2f s after the home came back' % (time.monotonic() - t0))

    # c) A renamed-away home (the inode the watch sits on moves) and a new one put in place.
    os.rename(home, backup)
    shutil.copytree(backup, home, symlinks=True, ignore=nosock)
    with open(os.path.join(home, 'pubring.kbx'), 'wb') as f:
        f.write(b'garbage again\n' * 10)
    st = dm.wait_status(lambda s: s['daemon']['keyring_stale'], timeout=10)
    check(st and st['daemon']['keyring_stale'],
          '5. home renamed away and replaced by a damaged copy: stale (%s)' % (
              st and st['daemon']['keyring_error']))
    rmtree(home)
    os.rename(backup, home)
    st = dm.wait_status(lambda s: not s['daemon']['keyring_stale'], timeout=60)
    check(st and not st['daemon']['keyring_stale'], '5. ... and recovered when restored')

    check(dm.alive() and dm.proc.pid == pid, '5. the daemon never died (pid %d)' % pid)
    check(dm.status() is not None, '5. and still answers')


def main():
    if not KEYCTLD:
        print('SKIP: KEYCTLD not set')
        return 77
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        card, a, b, c, d, e = build_keyring(pcscd, kr)
        conf = '[keyring]\ntrack = %s\n' % e['fpr']
        dm = Daemon(kr.env, conf).start()
        try:
            st = test_listing(dm, kr, a, b, c, d, e)
            if st is None:
                print(dm.tail())
                return 1
            test_offset(kr, a, conf, kr.env)
            test_changes(dm, kr, a)
            test_stale(dm, kr)
        finally:
            rc = dm.stop()
            if failures or rc != 0:
                print('--- keyctld log (tail) ---\n' + dm.tail())
        check(rc == 0, 'keyctld exits 0 on SIGTERM (%s)' % rc)
    check(not procs.leftovers(), 'no process left running: %s' % procs.leftovers())
    return 1 if failures else 0


if __name__ == '__main__':
    try:
        rc = main()
    except kb.BedUnavailable as ex:
        print('SKIP: %s' % ex)
        rc = 77
    finally:
        procs.stop_all()
    for f in failures:
        print('FAILED:', f)
    sys.exit(rc)
