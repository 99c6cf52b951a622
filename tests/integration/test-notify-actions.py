#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# keyctl-notify's buttons and its token-inserted notification, end to end: the real keyctld on
# the test bed (pcscd + virtual YubiKey #12345678 holding Alice's signing subkey, 5 days from
# expiry; Bob's signing subkey on disk, 30.5 days from expiry) and a private session bus whose
# dbusmock notification server advertises "actions" (or not). Clicks are the server's
# ActionInvoked signal. Asserts:
#   - with "actions", the expiry notification has "Snooze 1 day" and "Details", the short body;
#   - Details runs x-terminal-emulator -e sh -c '<keyctl-status> ...' when there is one, which
#     shows the subkey; without one, a second notification has the full fingerprints;
#   - Snooze records snooze-until = the daemon's now + 86400 and closes the notification; a
#     daemon 23 h later (KEYCTL_TIME_OFFSET, adopted by the notifier from DaemonInfo.now) shows
#     Bob's newly crossed 30-day threshold but not Alice's snoozed one; 25 h later Alice's
#     notification is back ("in 4 days") and the snooze is gone from the state file;
#   - a card holding a warned subkey plugged in again: "YubiKey #12345678: signing subkey expires
#     in 5 days" with the subkey, expiry and renew command in the body, no buttons without
#     "actions".
# Every process is stopped by pid, also on failure.
import html, json, os, stat, subprocess, sys, time

import keyctlbed as kb
from keyctlbed import procs
from testlib import check, wait_until, failures

KEYCTLD = os.environ['KEYCTLD']
NOTIFY = os.environ['KEYCTL_NOTIFY']
STATUS = os.environ['KEYCTL_STATUS']
DAY = 86400
ACTION_CAPS = 'body actions body-markup'


# Alice's primary secret is offline (sec#): the renewal runs where that secret is, and says so.
OFFLINE = 'On the machine that holds the primary key: '


def grouped(fpr):
    g = [fpr[i:i + 4] for i in range(0, 40, 4)]
    return ' '.join(g[:5]) + '  ' + ' '.join(g[5:])


def days_left(expires, now):
    return int((expires - now + DAY - 1) // DAY)


class Env:
    def __init__(self, kr):
        self.tmp = procs.tmpdir('keyctl-notify-actions-')
        for d in ('runtime', 'config', 'state', 'bin-term', 'bin-none'):
            os.makedirs(os.path.join(self.tmp, d), mode=0o700, exist_ok=True)
        self.socket = os.path.join(self.tmp, 'runtime', 'keyctl', 'socket')
        self.env = dict(os.environ, **kr.env, HOME=self.tmp,
                        XDG_RUNTIME_DIR=os.path.join(self.tmp, 'runtime'),
                        XDG_CONFIG_HOME=os.path.join(self.tmp, 'config'),
                        XDG_STATE_HOME=os.path.join(self.tmp, 'state'))
        for k in ('JOURNAL_STREAM', 'KEYCTL_RENEWAL_URL', 'KEYCTL_TIME_OFFSET'):
            self.env.pop(k, None)
        self.daemon = None
        self.offset = 0
        # A PATH with a stand-in terminal: it records its argv, runs the command without a
        # tty (the script's "read" then returns at once) and keeps what it printed.
        self.term_log = os.path.join(self.tmp, 'term.argv')
        self.term_out = os.path.join(self.tmp, 'term.out')
        term = os.path.join(self.tmp, 'bin-term', 'x-terminal-emulator')
        with open(term, 'w') as f:
            f.write('#!/bin/sh\n'
                    'PATH="$PATH:/usr/bin:/bin"\n'
                    f'printf "%s\\n" "$@" > "{self.term_log}.tmp"\n'
                    f'mv "{self.term_log}.tmp" "{self.term_log}"\n'
                    '[ "$1" = -e ] && shift\n'
                    f'"$@" < /dev/null > "{self.term_out}.tmp" 2>&1\n'
                    f'mv "{self.term_out}.tmp" "{self.term_out}"\n')
        os.chmod(term, stat.S_IRWXU)
        os.symlink(STATUS, os.path.join(self.tmp, 'bin-term', 'keyctl-status'))

    def start_daemon(self, offset=0):
        self.offset = offset
        env = dict(self.env, KEYCTL_TIME_OFFSET=str(offset))
        self.daemon = procs.spawn('keyctld', [KEYCTLD], env=env, stdout=subprocess.DEVNULL,
                                  stderr=open(os.path.join(self.tmp, 'keyctld.log'), 'a'))

    def stop_daemon(self):
        procs.stop(self.daemon)
        self.daemon = None

    def status(self):
        r = subprocess.run([STATUS, '--json'], env=self.env, capture_output=True, timeout=30)
        try:
            return json.loads(r.stdout) if r.stdout else None
        except ValueError:
            return None

    def wait_ready(self, n_keys=2, present=True):
        """The daemon lists the keys and the card in the wanted state."""
        def ready():
            s = self.status()
            if not s or len(s.get('keys', [])) < n_keys:
                return None
            toks = [t for t in s.get('tokens', []) if t.get('present') == present]
            return s if toks else None
        return wait_until(ready, timeout=40)

    def state_path(self, name):
        return os.path.join(self.tmp, 'state', name)

    def notifier(self, bus, state, path_dir='bin-none', log='notify.log', args=()):
        env = dict(self.env, **bus.env, PATH=os.path.join(self.tmp, path_dir))
        return procs.spawn('keyctl-notify', [NOTIFY, '--socket=' + self.socket,
                                             '--state-file=' + self.state_path(state)] +
                           list(args),
                           env=env, stdout=subprocess.DEVNULL,
                           stderr=open(os.path.join(self.tmp, log), 'a'))

    def records(self, state):
        """{id: (threshold, expires, snooze_until)}"""
        try:
            with open(self.state_path(state)) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return {}
        out = {}
        for line in lines[1:]:
            i, t, e, s = line.split(' ')
            out[i] = (int(t), int(e), int(s))
        return out


def expiries(kr, fpr):
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


def main():
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        alice_uid, bob_uid = 'Alice Tester <alice@example.org>', 'Bob Tester <bob@example.org>'
        a = kr.create_key(uid=alice_uid, subkeys={'sig': 5, 'enc': None, 'aut': None})
        b = kr.create_key(uid=bob_uid, subkeys={'sig': 30.5})
        kr.remove_primary_secret(a['fpr'])
        prof = kr.card_profile(a, base='yubikey5nfc', serial='12345678')
        card = pcscd.card(prof)
        pcscd.wait_card(True)
        kr.stubs_from_card(a)
        a_exp, a_created = expiries(kr, a['fpr'])[a['sig']]
        b_exp = expiries(kr, b['fpr'])[b['sig']][0]

        e = Env(kr)
        e.start_daemon()
        st = e.wait_ready()
        if not st:
            print('SKIP: keyctld did not list the keys and the card')
            return 77
        sig = {s['fingerprint']: s for k in st['keys'] for s in k['subkeys']}[a['sig']]
        token = 'YubiKey #12345678'

        def alice_summary(now):
            return f'OpenPGP signing subkey expires in {days_left(a_exp, now)} days'

        def alice_notes(bus):
            return [n for n in bus.notifications_sent()
                    if n['summary'].startswith('OpenPGP signing subkey expires') and
                    html.unescape(n['body']).startswith(alice_uid)]

        def bob_notes(bus):
            return [n for n in bus.notifications_sent()
                    if html.unescape(n['body']).startswith(bob_uid)]

        short_body = html.escape(
            f'{alice_uid}\nSubkey {a["sig"][-16:]} (sign) on {token}\n'
            f'Expiry: {time.strftime("%Y-%m-%d", time.gmtime(a_exp))}, in 5 days\n'
            f'Renew: {OFFLINE}gpg --quick-set-expire {a["fpr"]} 1y {a["sig"]}', quote=False)
        details_tail = html.escape(
            f'\n\nFingerprint: {grouped(a["sig"])}\n'
            f'Algorithm: {sig["algorithm"]}, created '
            f'{time.strftime("%Y-%m-%d", time.gmtime(a_created))}\n'
            f'Primary key: {grouped(a["fpr"])}', quote=False)

        with kb.SessionBus(capabilities=ACTION_CAPS) as bus:
            # Details, with a terminal on PATH: keyctl-status runs in it.
            n = e.notifier(bus, 'details-term', path_dir='bin-term', log='notify-term.log')
            notes = wait_until(lambda: alice_notes(bus))
            if not check(len(notes) == 1, 'with "actions": one expiry notification for '
                         'the 5-day subkey: %d' % len(notes)):
                print('  sent:', bus.notifications_sent())
                return 1
            first = notes[0]
            check(first['summary'] == 'OpenPGP signing subkey expires in 5 days',
                  'summary: %r' % first['summary'])
            check(first['actions'] == ['snooze', 'Snooze 1 day', 'details', 'Details'],
                  'buttons "Snooze 1 day" and "Details": %s' % first['actions'])
            check(first['body'] == short_body, 'short body, no fingerprints: %r' % first['body'])
            check(first['urgency'] == 1, 'urgency normal: %s' % first['urgency'])
            bus.invoke_action(first['id'], 'details')
            argv = wait_until(lambda: os.path.exists(e.term_log) and
                              open(e.term_log).read().splitlines(), timeout=20)
            check(bool(argv) and argv[:3] == ['-e', 'sh', '-c'] and
                  "bin-term/keyctl-status'" in argv[3],
                  'Details runs x-terminal-emulator -e sh -c keyctl-status: %s' % argv)
            out = wait_until(lambda: os.path.exists(e.term_out) and open(e.term_out).read(),
                             timeout=30) or ''
            check(a['sig'][-16:] in out and 'in 5 days' in out and token in out,
                  'the terminal shows the subkey, "in 5 days" and the token')
            check(n.poll() is None, 'notifier still runs after Details')
            procs.stop(n)
            bus.clear()

            # Details, no terminal: a notification with the details in its body, no buttons.
            n = e.notifier(bus, 'details-plain', log='notify-plain.log')
            notes = wait_until(lambda: alice_notes(bus))
            check(len(notes) == 1 and notes[0]['body'] == short_body,
                  'a fresh notifier shows the short notification')
            if notes:
                bus.invoke_action(notes[0]['id'], 'details')
            more = wait_until(lambda: alice_notes(bus)[1:], timeout=20)
            check(len(more) == 1, 'without x-terminal-emulator, Details shows one more '
                  'notification: %d' % len(more))
            if more:
                check(more[0]['summary'] == 'OpenPGP signing subkey expires in 5 days' and
                      more[0]['body'] == short_body + details_tail,
                      'its body has both fingerprints, algorithm and creation date: %r'
                      % more[0]['body'])
                check(more[0]['actions'] == [], 'and no buttons: %s' % more[0]['actions'])
            check(n.poll() is None, 'notifier still runs after Details')
            procs.stop(n)
            bus.clear()

            # Snooze.
            n = e.notifier(bus, 'snooze', log='notify-snooze.log')
            notes = wait_until(lambda: alice_notes(bus))
            check(len(notes) == 1, 'the snooze notifier shows the notification')
            # Records are saved just after the notification goes out: give them a moment.
            wait_until(lambda: e.records('snooze').get(a['sig']), timeout=10)
            rec = e.records('snooze').get(a['sig'])
            check(rec is not None and rec[0] == 7 and rec[1] == a_exp and rec[2] == 0,
                  'recorded: threshold 7, its expiry, not snoozed: %s' % (rec,))
            clicked = time.time()
            if notes:
                bus.invoke_action(notes[0]['id'], 'snooze')
            rec = wait_until(lambda: (lambda r: r if r and r[2] else None)(
                e.records('snooze').get(a['sig'])), timeout=20)
            check(rec is not None and clicked + DAY - 5 <= rec[2] <= time.time() + DAY + 5,
                  'Snooze records snooze-until = now + 86400: %s (clicked %d)'
                  % (rec, clicked))
            check(rec is not None and rec[:2] == (7, a_exp), 'same threshold and expiry')

            def closed():
                conn = bus._bus()
                calls = bus._mock_obj(conn).GetCalls(dbus_interface='org.freedesktop.DBus.Mock')
                conn.close()
                return [int(c[2][0]) for c in calls if c[1] == 'CloseNotification']
            check(notes and wait_until(lambda: notes[0]['id'] in closed(), timeout=10),
                  'Snooze closes the notification')

            # 23 h later (notifier restarted too): Bob's 30-day threshold is news, Alice's is
            # snoozed. Bob's notification proves the notifier took the daemon's clock.
            procs.stop(n)
            e.stop_daemon()
            bus.clear()
            e.start_daemon(offset=23 * 3600)
            n = e.notifier(bus, 'snooze', log='notify-snooze.log')
            bobs = wait_until(lambda: bob_notes(bus), timeout=40)
            check(len(bobs) == 1 and bobs[0]['summary'] ==
                  'OpenPGP signing subkey expires in %d days'
                  % days_left(b_exp, time.time() + e.offset),
                  '23 h later: the 30-day threshold of the other key is shown: %s'
                  % [x['summary'] for x in bobs])
            check(alice_notes(bus) == [], '23 h later: the snoozed notification is not '
                  'repeated: %s' % [x['summary'] for x in alice_notes(bus)])
            check(e.records('snooze').get(a['sig'], (0, 0, 0))[2] == rec[2],
                  'the snooze is still in the state file')

            # 25 h later, the notifier kept running: it reconnects, the snooze has ended.
            e.stop_daemon()
            e.start_daemon(offset=25 * 3600)
            again = wait_until(lambda: alice_notes(bus), timeout=60)
            want = alice_summary(time.time() + e.offset)
            check(len(again) == 1 and again[0]['summary'] == want and
                  want.endswith('in 4 days'),
                  'after the snooze: shown again, "%s": %s'
                  % (want, [x['summary'] for x in again]))
            check(len(again) == 1 and again[0]['actions'][::2] == ['snooze', 'details'],
                  'again with both buttons')
            wait_until(lambda: e.records('snooze').get(a['sig']) == (7, a_exp, 0), timeout=10)
            recs = e.records('snooze')
            check(recs.get(a['sig']) == (7, a_exp, 0), 'the snooze is cleared: %s'
                  % (recs.get(a['sig']),))
            check(len(bob_notes(bus)) == 1, 'the other key is not repeated')
            check(n.poll() is None, 'notifier survived two daemon restarts')
            procs.stop(n)
            check(n.returncode == 0, 'exit 0 on SIGTERM (%s)' % n.returncode)
        e.stop_daemon()

        # A token holding a warned subkey is plugged in; the server has no "actions".
        e.start_daemon()
        e.wait_ready()
        with kb.SessionBus() as bus:
            n = e.notifier(bus, 'insert', log='notify-insert.log')
            notes = wait_until(lambda: alice_notes(bus))
            check(len(notes) == 1 and notes[0]['body'] == short_body + details_tail and
                  notes[0]['actions'] == [],
                  'without "actions": the details are in the body, no buttons')
            card.remove()
            check(bool(e.wait_ready(present=False)), 'the daemon sees the card go')
            bus.clear()
            card.insert()
            summary = f'{token}: signing subkey expires in 5 days'
            ins = wait_until(lambda: [x for x in bus.notifications_sent()
                                      if x['summary'].startswith(token)], timeout=40)
            body = html.escape(
                f'{alice_uid}\nSubkey {a["sig"][-16:]} (sign): '
                f'{time.strftime("%Y-%m-%d", time.gmtime(a_exp))}, in 5 days\n'
                f'Renew: {OFFLINE}gpg --quick-set-expire {a["fpr"]} 1y {a["sig"]}', quote=False)
            check(len(ins) == 1 and ins[0]['summary'] == summary,
                  'insert: "%s": %s' % (summary, [x['summary'] for x in ins]))
            if ins:
                check(ins[0]['body'] == body, 'insert body names the subkey, its expiry and '
                      'the renew command: %r' % ins[0]['body'])
                check(ins[0]['urgency'] == 1 and ins[0]['actions'] == [],
                      'urgency normal, no buttons')
            check(alice_notes(bus) == [], 'the expiry notification is not repeated')
            check(n.poll() is None, 'notifier still runs')
            procs.stop(n)
        e.stop_daemon()

        # The notifier's own timer: with its own thresholds (30,20,...) and Bob's subkey 20 days
        # and 6 s from expiry on the daemon's clock, the 20-day crossing is 6 s away. The daemon
        # (thresholds 30,14,...) has nothing to say then; only the notifier's CLOCK_REALTIME
        # timer can raise it.
        lead = 12  # covers the daemon's and the notifier's start, even on a sanitised build
        e.start_daemon(offset=int(b_exp - time.time()) - 20 * DAY - lead)
        e.wait_ready()
        with kb.SessionBus() as bus:
            n = e.notifier(bus, 'own-timer', log='notify-timer.log',
                           args=['--thresholds=30,20,7,3,1'])
            first = wait_until(lambda: bob_notes(bus), timeout=20) or []
            t0 = time.time()
            both = wait_until(lambda: (lambda b: b if len(b) >= 2 else None)(bob_notes(bus)),
                              timeout=lead + 20) or first
            took = time.time() - t0
            check([x['summary'] for x in both] ==
                  ['OpenPGP signing subkey expires in 21 days',
                   'OpenPGP signing subkey expires in 20 days'],
                  'own thresholds: the 30-day one at start, the 20-day one %.1f s later, with '
                  'no event from the daemon: %s' % (took, [x['summary'] for x in both]))
            wait_until(lambda: e.records('own-timer').get(b['sig'], (0,))[0] == 20, timeout=10)
            check(e.records('own-timer').get(b['sig'], (0,))[0] == 20,
                  'recorded at threshold 20: %s' % (e.records('own-timer').get(b['sig']),))
            procs.stop(n)
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
