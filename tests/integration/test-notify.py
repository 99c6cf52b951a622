#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# keyctl-notify end to end: the real keyctld on the test bed (pcscd + virtual YubiKey + a
# throwaway keyring with subkeys 0, 1, 5, 20 and 400 days from expiry) and a private session bus
# with dbusmock's notification daemon. Asserts the exact notifications (summary, body, urgency),
# that a restarted notifier repeats none, that renewing a subkey clears its record, that a daemon
# restart is survived, that notifications made while no notification server exists arrive
# once one appears, and that a replaced subkey 2 days from expiry raises none. Every process is stopped by pid, also on failure.
# Before the bed: a token waiting for a touch (issue 34), fed by fake_keyctld.py: its popup at
# once, transient and silent, closed (CloseNotification) when touch-done comes, never recorded.
import html, json, os, signal, subprocess, sys, time

import keyctlbed as kb
from keyctlbed import procs
from testlib import check, wait_until, failures
from fake_keyctld import FakeDaemon, reply, touch_events

KEYCTLD = os.environ['KEYCTLD']
NOTIFY = os.environ['KEYCTL_NOTIFY']
STATUS = os.environ['KEYCTL_STATUS']
DAY = 86400


class Env:
    def __init__(self, kr):
        self.tmp = procs.tmpdir('keyctl-notify-test-')
        for d in ('runtime', 'config', 'state'):
            os.makedirs(os.path.join(self.tmp, d), mode=0o700, exist_ok=True)
        self.socket = os.path.join(self.tmp, 'runtime', 'keyctl', 'socket')
        self.state = os.path.join(self.tmp, 'state', 'notified')
        self.env = dict(os.environ, **kr.env, HOME=self.tmp,
                        XDG_RUNTIME_DIR=os.path.join(self.tmp, 'runtime'),
                        XDG_CONFIG_HOME=os.path.join(self.tmp, 'config'),
                        XDG_STATE_HOME=os.path.join(self.tmp, 'state'))
        self.env.pop('JOURNAL_STREAM', None)
        self.env.pop('KEYCTL_RENEWAL_URL', None)
        self.daemon = None

    def start_daemon(self):
        self.daemon = procs.spawn('keyctld', [KEYCTLD], env=self.env,
                                  stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(self.tmp, 'keyctld.log'), 'a'))

    def stop_daemon(self):
        procs.stop(self.daemon)
        self.daemon = None

    def status(self):
        r = subprocess.run([STATUS, '--json'], env=self.env, capture_output=True, timeout=30)
        if not r.stdout:
            return None
        try:
            return json.loads(r.stdout)
        except ValueError:
            return None

    def notifier(self, bus_env, log='notify.log', state=None):
        return procs.spawn('keyctl-notify', [NOTIFY, '--socket=' + self.socket,
                                             '--state-file=' + (state or self.state)],
                           env=dict(self.env, **bus_env), stdout=subprocess.DEVNULL,
                           stderr=open(os.path.join(self.tmp, log), 'a'))

    def records(self, state=None):
        try:
            with open(state or self.state) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return []
        return [tuple(l.split(' ')) for l in lines[1:]]


def gpg_expiry(kr, fpr):
    """{subkey fpr: (expiry epoch, creation epoch)} as gpg lists them."""
    r = kr.gpg('--with-colons', '--list-keys', fpr)
    out, last = {}, None
    for line in r.stdout.decode().splitlines():
        f = line.split(':')
        if f[0] in ('pub', 'sub'):
            last = f
        elif f[0] == 'fpr' and last is not None:
            out[f[9]] = (int(last[6]) if last[6] else 0, int(last[5]))
            last = None
    return out


def grouped(fpr):
    g = [fpr[i:i + 4] for i in range(0, 40, 4)]
    return ' '.join(g[:5]) + '  ' + ' '.join(g[5:])


def token_name(t):
    kinds = {'yubikey': 'YubiKey', 'nitrokey': 'Nitrokey', 'openpgp-card': 'OpenPGP card'}
    serial = t.get('serial') or (t.get('openpgp') or {}).get('serial', '')
    return (t.get('model') or kinds.get(t['kind'], 'Token')) + (' #' + serial if serial else '')


def expected_expiry(key, sub, use, noun, times, where, level, algo):
    """The server has no "actions": the details are in the body."""
    now = time.time()
    expires, created = times
    date = time.strftime('%Y-%m-%d', time.gmtime(expires))
    if expires > now:
        days = int((expires - now + DAY - 1) // DAY)
        rel = f'in {days} day' + ('' if days == 1 else 's')
        summary = f'OpenPGP {noun} expires {rel}'
    else:
        days = int((now - expires) // DAY)
        rel = 'expired today' if days == 0 else f'expired {days} days ago'
        summary = f'OpenPGP {noun} {rel}'
    body = (f'{key["uid"]}\nSubkey {sub[-16:]} ({use}) {where}\nExpiry: {date}, {rel}\n'
            f'Renew: gpg --quick-set-expire {key["fpr"]} 1y {sub}\n\n'
            f'Fingerprint: {grouped(sub)}\n'
            f'Algorithm: {algo}, created {time.strftime("%Y-%m-%d", time.gmtime(created))}\n'
            f'Primary key: {grouped(key["fpr"])}')
    return (summary, html.escape(body, quote=False), 2 if level in ('critical', 'expired') else 1)


EXPIRY_RULES = ('subkey-expiring', 'subkey-expired-no-replacement', 'expired-key-on-card')


def expected_findings(status):
    out = []
    for f in status['findings']:
        if f['level'] in ('warning', 'critical', 'expired') and f['rule'] not in EXPIRY_RULES:
            out.append(f['message'])
    return out


def got(bus):
    return sorted((n['summary'], n['body'], n['urgency']) for n in bus.notifications_sent())


def fifo_config():
    """A FIFO where keyctl.conf belongs would block a plain open() for ever: the notifier says
    so and goes on with the defaults."""
    tmp = procs.tmpdir('keyctl-notify-fifo-')
    os.makedirs(os.path.join(tmp, 'keyctl'))
    os.mkfifo(os.path.join(tmp, 'keyctl', 'keyctl.conf'))
    log = os.path.join(tmp, 'notify.log')
    n = procs.spawn('keyctl-notify-fifo', [NOTIFY, '--socket=' + os.path.join(tmp, 'none'),
                                           '--state-file=' + os.path.join(tmp, 'notified')],
                    env=dict(os.environ, XDG_CONFIG_HOME=tmp, XDG_RUNTIME_DIR=tmp,
                             DBUS_SESSION_BUS_ADDRESS='unix:path=' + os.path.join(tmp, 'no-bus')),
                    stdout=subprocess.DEVNULL, stderr=open(log, 'a'))
    try:
        ok = wait_until(lambda: 'not a regular file' in open(log).read(), timeout=10)
        check(ok, 'a FIFO as keyctl.conf: the notifier says so instead of hanging')
    finally:
        procs.stop(n)


def mock_calls(bus, method):
    """The args of every call of method the notification mock took, oldest first."""
    b = bus._bus()
    calls = bus._mock_obj(b).GetCalls(dbus_interface='org.freedesktop.DBus.Mock')
    b.close()
    return [list(args) for _ts, m, args in calls if m == method]


def dismiss(bus, nid):
    """What a server says when the user closes a popup: NotificationClosed(id, 2)."""
    import dbus
    b = bus._bus()
    bus._mock_obj(b).EmitSignal('org.freedesktop.Notifications', 'NotificationClosed', 'uu',
                                [dbus.UInt32(nid), dbus.UInt32(2)],
                                dbus_interface='org.freedesktop.DBus.Mock')
    b.close()


def touch_popups():
    """touch-pending, 2 s later touch-done: one popup at once, closed by its id; a second wait
    of the same token gets a popup of its own (nothing "warned once"); one the user dismissed is
    not closed again; nothing is recorded."""
    tmp = procs.tmpdir('keyctl-notify-touch-')
    path, state = os.path.join(tmp, 'socket'), os.path.join(tmp, 'notified')
    params = reply('ok', 'ok')
    token = params['tokens'][0]
    events = ([{'pause': 1.0}] + touch_events(token, pause=2.0) + [{'pause': 1.0}] +
              touch_events(token, pause=2.0, application='fido', slot='', requester='firefox') +
              [{'pause': 1.0}] + touch_events(token, pause=3.0, requester='ssh'))
    d = FakeDaemon(path, params, watch_stays=True, events=events)
    summary = 'YubiKey 5 NFC #12345678 waits for a touch'
    try:
        with kb.SessionBus() as bus:
            n = procs.spawn('keyctl-notify-touch', [NOTIFY, '--socket=' + path,
                                                    '--state-file=' + state],
                            env=dict(os.environ, HOME=tmp, XDG_CONFIG_HOME=tmp,
                                     XDG_RUNTIME_DIR=tmp, **bus.env),
                            stdout=subprocess.DEVNULL,
                            stderr=open(os.path.join(tmp, 'notify.log'), 'a'))
            shown = lambda: [x for x in bus.notifications_sent() if x['summary'] == summary]
            first = wait_until(lambda: shown(), timeout=10)
            check(len(first) == 1 and first[0]['body'] == 'signing key; likely git' and
                  first[0]['urgency'] == 1 and bool(first[0]['hints'].get('transient')) and
                  bool(first[0]['hints'].get('suppress-sound')),
                  'touch-pending: a transient, silent popup at once', first)
            nid = first[0]['id'] if first else None
            closed = wait_until(lambda: [nid] in mock_calls(bus, 'CloseNotification'),
                                timeout=10)
            check(closed, 'touch-done: that popup is closed (CloseNotification %s)' % nid,
                  mock_calls(bus, 'CloseNotification'))
            both = wait_until(lambda: len(shown()) >= 2 and
                              len(mock_calls(bus, 'CloseNotification')) >= 2, timeout=10)
            check(both and shown()[1]['body'] == 'FIDO; likely firefox' and
                  shown()[1]['id'] != nid,
                  'the next wait of the same token: a popup of its own, closed too', shown())
            # The user dismisses the third: its touch-done then closes nothing, and the
            # notifier lives on (the popup's object went with the dismissal).
            third = wait_until(lambda: len(shown()) >= 3 and shown()[2], timeout=10)
            if third:
                dismiss(bus, third['id'])
            time.sleep(4)
            check(third and len(mock_calls(bus, 'CloseNotification')) == 2 and
                  n.poll() is None, 'a dismissed popup is not closed again; the notifier lives',
                  mock_calls(bus, 'CloseNotification'))
            procs.stop(n)
            check(not os.path.exists(state) or
                  all('12345678' not in l for l in open(state).read().splitlines()[1:]),
                  'no touch wait in the state file')
    finally:
        d.close()


def main():
    fifo_config()
    touch_popups()
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        a = kr.create_key(uid='Alice Tester <alice@example.org>',
                          subkeys={'sig': 0, 'enc': 1, 'aut': 5})
        b = kr.create_key(uid='Bob Tester <bob@example.org>', subkeys={'sig': 20, 'enc': 400})
        a['uid'], b['uid'] = 'Alice Tester <alice@example.org>', 'Bob Tester <bob@example.org>'
        # Carl's key is someone else's that the user relies on (the ultimate owner trust gpg
        # gave it stays after its secret part goes): its subkey expiring in 3 days is its
        # owner's business, so no popup may speak of it (key_relied_only()); the count of
        # popups below would show one.
        c = kr.create_key(uid='Carl Relied <carl@example.org>', subkeys={'sig': 3})
        kr.gpg('--delete-secret-keys', c['fpr'])
        # Dana rotated: her signing subkey 2 days from expiry has a 1-year replacement, so it
        # no longer counts (the daemon's one rule) and no popup may speak of it; the count of
        # popups below would show one.
        dana = kr.create_key(uid='Dana Rotor <dana@example.org>', subkeys={'sig': 2})
        kr.gpg('--quick-add-key', dana['fpr'], 'ed25519', 'sign', '1y')
        # Erin acknowledged her signing subkey's expiry (keyctl-status --ack, below): 4 days
        # left, yet no popup may speak of it; the count of popups below would show one.
        erin = kr.create_key(uid='Erin Acked <erin@example.org>', subkeys={'sig': 4})
        prof = kr.card_profile(a, base='yubikey5nfc')
        pcscd.card(prof)
        pcscd.wait_card(True)
        kr.stubs_from_card(a)
        e = Env(kr)
        e.start_daemon()
        st = wait_until(lambda: (lambda s: s if s and len(s.get('keys', [])) >= 5 and
                                 s.get('tokens') else None)(e.status()), timeout=30)
        if not st:
            print('SKIP: keyctld did not list the keys and the card (daemon not wired yet?)')
            return 77
        r = subprocess.run([STATUS, '--ack=subkey-expiring:' + erin['sig']], env=e.env,
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 0, 'Erin\'s subkey-expiring acknowledged', r.stderr)
        st = wait_until(lambda: (lambda s: s if s and any(
            sk.get('acked') for k in s['keys'] for sk in k['subkeys']
            if sk['fingerprint'] == erin['sig']) else None)(e.status()), timeout=30)
        check(st is not None, 'Erin\'s subkey is acked')
        if not st:
            return 1
        carl = [k for k in st['keys'] if k['fingerprint'] == c['fpr']]
        check(len(carl) == 1 and carl[0].get('relied_on') and not carl[0]['has_secret'],
              'Carl is listed as relied on only', carl)
        levels = {s['fingerprint']: s for k in st['keys'] for s in k['subkeys']}
        tok = {t['id']: t for t in st['tokens']}
        check(levels.get(dana['sig'], {}).get('replaced_by') and
              levels[dana['sig']]['level'] == 'ok', 'Dana\'s old signing subkey is replaced',
              levels.get(dana['sig']))

        def where(fpr):
            s = levels[fpr]
            if s.get('token_id') in tok:
                return 'on ' + token_name(tok[s['token_id']])
            return 'on disk' if s['secret'] == 'disk' else ''

        exp_a, exp_b = gpg_expiry(kr, a['fpr']), gpg_expiry(kr, b['fpr'])

        def expected(skip=()):
            out = []
            for key, slot, use, noun, exp in (
                    (a, 'sig', 'sign', 'signing subkey', exp_a),
                    (a, 'enc', 'encrypt', 'encryption subkey', exp_a),
                    (a, 'aut', 'auth', 'authentication subkey', exp_a),
                    (b, 'sig', 'sign', 'signing subkey', exp_b)):
                if key[slot] in skip:
                    continue
                out.append(expected_expiry(key, key[slot], use, noun, exp[key[slot]],
                                           where(key[slot]), levels[key[slot]]['level'],
                                           levels[key[slot]]['algorithm']))
            out += [(m, None, None) for m in expected_findings(st)]
            return out

        def same(have, want):
            """Findings are compared by summary only: their body is the daemon's text."""
            if len(have) != len(want):
                return False
            ws = sorted(want, key=lambda w: w[0])
            hs = sorted(have, key=lambda h: h[0])
            return all(w[0] == h[0] and (w[1] is None or (w[1], w[2]) == (h[1], h[2]))
                       for w, h in zip(ws, hs))

        with kb.SessionBus() as bus:
            n = e.notifier(bus.env)
            want = expected()
            wait_until(lambda: len(got(bus)) >= len(want), timeout=20)
            time.sleep(1)
            have = got(bus)
            check(same(have, want), 'exactly the expected notifications: %d' % len(want))
            if not same(have, want):
                print('  want:', json.dumps(sorted(want, key=lambda w: w[0]), indent=1))
                print('  have:', json.dumps(have, indent=1))
            check(not any(s.endswith('in 400 days') for s, _, _ in have),
                  'nothing for the subkey 400 days from expiry')
            recs = e.records()
            check(sorted(r[1] for r in recs if r[0] in (a['sig'], a['enc'], a['aut'], b['sig']))
                  == ['0', '1', '30', '7'], 'records: thresholds 0, 1, 7, 30: %s' % recs)

            # A restarted notifier repeats none.
            procs.stop(n)
            check(n.returncode == 0, 'SIGTERM: exit 0 (%s)' % n.returncode)
            bus.clear()
            n = e.notifier(bus.env)
            time.sleep(3)
            check(got(bus) == [], 'restart repeats nothing: %s' % got(bus))

            # Renewing a subkey clears its records.
            kr.gpg('--quick-set-expire', a['fpr'], '1y', a['aut'])
            ok = wait_until(lambda: not any(r[0] == a['aut'] for r in e.records()), timeout=20)
            check(ok, 'renewing the auth subkey cleared its record')

            # The daemon goes away and comes back: the notifier waits and resyncs.
            e.stop_daemon()
            time.sleep(2)
            check(n.poll() is None, 'notifier survives the daemon going away')
            e.start_daemon()
            kr.gpg('--quick-set-expire', b['fpr'], '1y', b['sig'])
            ok = wait_until(lambda: not any(r[0] == b['sig'] for r in e.records()), timeout=40)
            check(ok, 'after a daemon restart, renewing a subkey still clears its record')
            check(got(bus) == [], 'no repeats after the daemon restart: %s' % got(bus))
            procs.stop(n)

        # No notification server at first: the notifications wait for one.
        st = wait_until(lambda: (lambda s: s if s and s.get('keys') else None)(e.status()))
        levels = {s['fingerprint']: s for k in st['keys'] for s in k['subkeys']}
        state2 = os.path.join(e.tmp, 'state', 'notified-2')
        with kb.SessionBus(notifications=False) as bus:
            n = e.notifier(bus.env, log='notify-2.log', state=state2)
            time.sleep(3)
            check(n.poll() is None, 'notifier runs without a notification server')
            check(e.records(state2) == [], 'nothing recorded while nothing could be shown')
            bus.mock = procs.spawn('dbusmock', [procs.PYTHON, '-m', 'dbusmock', '--session',
                                                '-t', 'notification_daemon'],
                                   env=dict(os.environ, **bus.env), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
            bus._wait_name('org.freedesktop.Notifications')
            want = expected(skip=(a['aut'], b['sig']))
            wait_until(lambda: len(got(bus)) >= len(want), timeout=20)
            time.sleep(1)
            have = got(bus)
            check(same(have, want), 'pending notifications arrive once a server appears: %d'
                  % len(want))
            if not same(have, want):
                print('  have:', json.dumps(have, indent=1))
            check(len(e.records(state2)) == len(want), 'and are recorded once shown')
            procs.stop(n)
            check(n.returncode == 0, 'exit 0 on SIGTERM')
        e.stop_daemon()
    return 1 if failures else 0


if __name__ == '__main__':
    try:
        rc = main()
    except kb.BedUnavailable as ex:
        print(f'SKIP: {ex}')
        rc = 77
    finally:
        procs.stop_all()
    for f in failures:
        print('FAILED:', f)
    sys.exit(rc)
