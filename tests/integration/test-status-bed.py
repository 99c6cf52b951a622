#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl-status against the real keyctld on the test bed: a virtual YubiKey #12345678 holding the
subkeys of a throwaway keyring (primary offline, sec#). Three keyrings give the exit codes: all
subkeys 100 days away with touch on (0), a signing subkey 5 days away (1), one 1 day away (2);
a stopped daemon gives 3 with the way to start it. Checks the table (serial, "YubiKey", short
fingerprints, "in 5 days", level words, <= 100 columns and findings <= 80 but whole hints, colour
switches), --json against a raw GetStatus from varlink_raw.py, --quiet, --warn-days, Prometheus
text, --watch across a card insertion, and KEYCTL_TIME_OFFSET moving 5 days to 2 (exit 1 -> 2). A fourth keyring rotates
subkeys (one replaced after it expired, one 5 days before, one revoked) and retires an expired key
in keyctl.conf: exit 0, the table says "replaced by 0x..." and "retired", Prometheus leaves them
out of keyctl_subkey_level; without the retired line exit 2. A fifth replaces the card's
signing subkey by one only on disk: still a warning (exit 1), replacement-not-on-card. Every
process is stopped by pid, also on failure."""
import json, os, re, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import check, wait_until, failures

KEYCTLD = os.environ['KEYCTLD']
STATUS = os.environ['KEYCTL_STATUS']
SERIAL = '12345678'
DAY = 86400


class Daemon:
    def __init__(self, kr, offset=0, conf=None):
        self.tmp = procs.tmpdir('keyctl-status-bed-')
        os.makedirs(os.path.join(self.tmp, 'runtime'), mode=0o700)
        os.makedirs(os.path.join(self.tmp, 'config'), mode=0o700)
        if conf is not None:
            os.makedirs(os.path.join(self.tmp, 'config', 'keyctl'), mode=0o700)
            with open(os.path.join(self.tmp, 'config', 'keyctl', 'keyctl.conf'), 'w') as f:
                f.write(conf)
        self.socket = os.path.join(self.tmp, 'runtime', 'keyctl', 'socket')
        self.log_path = os.path.join(self.tmp, 'keyctld.log')
        self.env = dict(os.environ, **kr.env, HOME=self.tmp,
                        XDG_RUNTIME_DIR=os.path.join(self.tmp, 'runtime'),
                        XDG_CONFIG_HOME=os.path.join(self.tmp, 'config'), XDG_STATE_HOME=os.path.join(self.tmp, 'state'))
        for k in ('JOURNAL_STREAM', 'KEYCTL_SOCKET', 'NO_COLOR', 'KEYCTL_TIME_OFFSET'):
            self.env.pop(k, None)
        denv = dict(self.env)
        if offset:
            denv['KEYCTL_TIME_OFFSET'] = str(offset)
        self.proc = procs.spawn('keyctld', [KEYCTLD, '--foreground'], env=denv,
                                stdout=subprocess.DEVNULL, stderr=open(self.log_path, 'a'))

    def status(self, *args, env=None):
        e = dict(self.env, **(env or {}))
        if not env or 'COLUMNS' not in env:
            e.pop('COLUMNS', None)   # a pipe's width, whatever the shell that ran the suite
        r = subprocess.run([STATUS] + list(args), env=e, capture_output=True, text=True,
                           timeout=30)
        return r.returncode, r.stdout, r.stderr

    def ready(self, key):
        """The card is present and the key's subkeys are matched to it."""
        def ok():
            try:
                p = vr.call_once(self.socket, 'io.keyctl.GetStatus')['parameters']
            except (OSError, TypeError, KeyError):
                return False
            toks = [t for t in p['tokens'] if t['serial'] == SERIAL and t['present'] and t.get('openpgp')]
            subs = {s['fingerprint']: s for k in p['keys'] for s in k['subkeys']}
            return bool(toks) and all(subs.get(key[s], {}).get('secret') == 'card'
                                      for s in ('sig', 'enc', 'aut'))
        return wait_until(ok, 30)

    def stop(self):
        procs.stop(self.proc)

    def log(self):
        with open(self.log_path, errors='replace') as f:
            return f.read()


def make_key(kr, card, days, touch, keep_primary=False):
    key = kr.create_key(uid='Alice Tester <alice@example.org>',
                        subkeys={'sig': days[0], 'enc': days[1], 'aut': days[2]},
                        primary_expires=365)
    if not keep_primary:
        kr.remove_primary_secret(key['fpr'])
    prof = kr.card_profile(key, base='yubikey5nfc', serial=SERIAL, touch=touch)
    if card[0] is None:
        card[0] = kr_pcscd(kr).card(prof)
    else:
        card[0].remove()
        time.sleep(1)
        card[0].insert(prof)
    kr_pcscd(kr).wait_card(True)
    kr.stubs_from_card(key)
    return key


def kr_pcscd(kr):
    return kr._bed_pcscd


def strip_now(status):
    s = json.loads(json.dumps(status))
    for k in ('now', 'now_epoch'):
        s['daemon'].pop(k, None)
    return s


def scenario_fine(pcscd, card):
    with kb.Keyring(pcscd) as kr:
        kr._bed_pcscd = pcscd
        key = make_key(kr, card, (100, 100, 100), {'sig': 'on', 'enc': 'on', 'aut': 'on'})
        d = Daemon(kr)
        try:
            if not check(d.ready(key), 'all-fine keyring: daemon lists the card and the key', d.log()[-2000:]):
                return
            rc, out, err = d.status('--color=never')
            check(rc == 0, f'all subkeys 100 days away, sec#, all on the card, touch on: exit 0 (got {rc})',
                  out + err)
            check('in 100 days' in out or 'in 99 days' in out, 'table says "in 100 days"', out)
            rc, out, err = d.status('--warn-days=120', '--quiet')
            check(rc == 1 and out == '' and err == '', f'--warn-days=120 --quiet: exit 1, silent (got {rc})',
                  out + err)
            rc, _, _ = d.status('--warn-days=90')
            check(rc == 0, f'--warn-days=90: still 0 (got {rc})')
        finally:
            d.stop()


def scenario_warning(pcscd, card):
    with kb.Keyring(pcscd) as kr:
        kr._bed_pcscd = pcscd
        key = make_key(kr, card, (5, 100, 100), {'sig': 'on', 'enc': 'on', 'aut': 'on'})
        d = Daemon(kr)
        try:
            if not check(d.ready(key), 'warning keyring: daemon lists the card and the key', d.log()[-2000:]):
                return
            rc, out, err = d.status('--color=never')
            check(rc == 1, f'a subkey 5 days from expiry: exit 1 (got {rc})', out + err)
            for word in (SERIAL, 'YubiKey', 'in 5 days', 'warning', 'ok',
                         key['sig'][-16:], key['enc'][-16:], key['aut'][-16:]):
                check(word in out, f'table contains {word!r}', out)
            long = long_lines(out)
            check(not long, 'no table line over 100 columns, no finding over 80 but whole hints',
                  '\n'.join(long))
            check('\033[' not in out, '--color=never: no escape sequences')
            sig_line = [l for l in out.splitlines() if 'in 5 days' in l]
            check(sig_line and 'warning' in sig_line[0] and SERIAL in sig_line[0],
                  'the 5-day subkey line names the YubiKey and says warning', sig_line)
            rc, out2, _ = d.status('--color=always')
            check('\033[' in out2 and rc == 1, '--color=always: escape sequences')
            rc, out3, _ = d.status('--color=always', env={'NO_COLOR': '1'})
            check('\033[' in out3, 'NO_COLOR=1 with --color=always: the option wins')
            rc, out4, _ = d.status(env={'NO_COLOR': '1', 'TERM': 'xterm'})
            check('\033[' not in out4 and SERIAL in out4, 'NO_COLOR=1 (auto): no escape sequences')
            plain = re.sub('\033\\[[0-9;]*m', '', out2)
            check(plain == out, '--color=always minus its escapes equals --color=never',
                  plain[:500])

            rc, js, err = d.status('--json')
            raw = vr.call_once(d.socket, 'io.keyctl.GetStatus')['parameters']
            try:
                parsed = json.loads(js)
            except ValueError as e:
                parsed = None
                check(False, '--json: valid JSON', f'{e}: {js[:300]}')
            check(rc == 1 and parsed is not None and strip_now(parsed) == strip_now(raw),
                  '--json equals a raw GetStatus reply (but "now"), exit 1',
                  f'{json.dumps(parsed)[:600]}\n{json.dumps(raw)[:600]}')

            rc, out, err = d.status('--quiet')
            check(rc == 1 and out == '' and err == '', f'--quiet: nothing printed, exit 1 (got {rc})')
            rc, _, _ = d.status('--warn-days=3')
            check(rc == 1, '--warn-days=3 keeps the daemon\'s warning: exit 1')

            rc, prom, err = d.status('--format=prometheus')
            check(rc == 1, f'--format=prometheus exits like the table (1, got {rc})')
            samples = {}
            for line in prom.splitlines():
                if line.startswith('#') or not line.strip():
                    continue
                m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$', line)
                check(m is not None, f'Prometheus line parses: {line!r}') if not m else None
                if m:
                    samples.setdefault(m.group(1), []).append((m.group(2) or '', float(m.group(3))))
            days = [v for lbl, v in samples.get('keyctl_subkey_expiry_days', []) if key['sig'] in lbl]
            check(days == [5.0], f'keyctl_subkey_expiry_days for the 5-day subkey is 5 ({days})', prom)
            pres = [v for lbl, v in samples.get('keyctl_token_present', []) if f'serial="{SERIAL}"' in lbl]
            check(pres == [1.0], f'keyctl_token_present{{serial="{SERIAL}"}} 1 ({pres})', prom)
            for fam in ('keyctl_daemon_up', 'keyctl_token_present', 'keyctl_subkey_expiry_days'):
                check(f'# HELP {fam} ' in prom and f'# TYPE {fam} gauge' in prom,
                      f'HELP and TYPE lines for {fam}')
            check(samples.get('keyctl_daemon_up') == [('', 1.0)], 'keyctl_daemon_up 1')

            watch_test(d, card[0])
        finally:
            d.stop()
        # Three days later the 5-day subkey is 2 days away: critical.
        d = Daemon(kr, offset=3 * DAY)
        try:
            if check(d.ready(key), 'daemon with KEYCTL_TIME_OFFSET=+3 days is ready', d.log()[-2000:]):
                rc, out, err = d.status('--color=never')
                check(rc == 2, f'KEYCTL_TIME_OFFSET +3 days: the 5-day subkey is 2 days away, exit 2 '
                      f'(got {rc})', out + err)
                check('in 2 days' in out and 'critical' in out, 'table says "in 2 days", critical', out)
                rc, prom, _ = d.status('--format=prometheus')
                check(re.search(r'keyctl_subkey_expiry_days\{[^}]*' + key['sig'] + r'[^}]*\} 2\b', prom),
                      'Prometheus: expiry days 2 under the offset', prom)
        finally:
            d.stop()
        rc, out, err = d.status()
        check(rc == 3, f'daemon stopped: exit 3 (got {rc})')
        check('keyctld is not running' in err and 'systemctl --user start keyctld.socket' in err,
              'daemon stopped: the message says how to start it', err)
        rc, out, err = d.status('--quiet')
        check(rc == 3 and out == '' and err == '', 'daemon stopped, --quiet: exit 3, silent')
        rc, prom, _ = d.status('--format=prometheus')
        check(rc == 3 and 'keyctl_daemon_up 0' in prom, 'daemon stopped: Prometheus says keyctl_daemon_up 0')


def watch_test(d, card):
    p = procs.spawn('keyctl-status --watch', [STATUS, '--watch', '--color=never'], env=d.env,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []

    def reader():
        for line in p.stdout:
            lines.append(line)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        wait_until(lambda: lines, 10)
        n0 = len(lines)
        card.remove()
        wait_until(lambda: any(SERIAL in l for l in lines[n0:]), 20)
        n1 = len(lines)
        card.insert()
        ok = wait_until(lambda: any(SERIAL in l for l in lines[n1:]), 20)
        check(ok, '--watch: a line naming the token appears when the card is inserted',
              ''.join(lines))
        print('     --watch lines after insertion: ' + ' | '.join(l.strip() for l in lines[n1:n1 + 3]))
        check(p.poll() is None, '--watch keeps running')
    finally:
        procs.stop(p)
        t.join(5)


def scenario_critical(pcscd, card):
    with kb.Keyring(pcscd) as kr:
        kr._bed_pcscd = pcscd
        key = make_key(kr, card, (1, 100, 100), {'sig': 'on', 'enc': 'on', 'aut': 'on'})
        d = Daemon(kr)
        try:
            if not check(d.ready(key), 'critical keyring: daemon lists the card and the key', d.log()[-2000:]):
                return
            rc, out, err = d.status('--color=never')
            check(rc == 2, f'a subkey 1 day from expiry: exit 2 (got {rc})', out + err)
            check('critical' in out and ('in 1 day' in out or 'in 0 days' in out or 'today' in out),
                  'table: critical, in 1 day', out)
            long = long_lines(out)
            check(not long, 'no table line over 100 columns, no finding over 80 but whole hints '
                  '(with findings)', '\n'.join(long))
            hints = [l.strip() for a, l in zip(out.splitlines(), out.splitlines()[1:])
                     if a.strip() == 'hint:']
            # The bed's primary is offline (sec#): the renewal hint names where it runs.
            check(hints and all(h.startswith('On the machine that holds the primary key: gpg ')
                                and len(h) > 66 for h in hints),
                  'a hint too long for the line stands whole on the next one', out)
            rc, _, _ = d.status('--quiet')
            check(rc == 2, '--quiet: exit 2')
        finally:
            d.stop()


def long_lines(out):
    """The table's lines past 100 columns, and the findings' past 80 (a pipe's width, which
    they are wrapped to), but a hint standing whole on the line after its 'hint:' (a command is
    never broken, however long)."""
    lines = out.splitlines()
    start = lines.index('FINDINGS') if 'FINDINGS' in lines else len(lines)
    return [l for i, l in enumerate(lines) if len(l) > (80 if i > start else 100) and
            not (i > 0 and lines[i - 1].strip() == 'hint:' and l.startswith(' ' * 14))]


def prom_samples(prom):
    """{family: [(labels, value)]} of a Prometheus text."""
    samples = {}
    for line in prom.splitlines():
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$', line)
        if m and not line.startswith('#'):
            samples.setdefault(m.group(1), []).append((m.group(2) or '', float(m.group(3))))
    return samples


def add_subkey(kr, fpr, algo, usage, expire):
    before = set(kr.subkeys(fpr))
    kr.gpg('--quick-add-key', fpr, algo, usage, expire)
    return [s for s in kr.subkeys(fpr) if s not in before][0]


def scenario_rotation(pcscd, card):
    """One rule for what counts: Alice all fine on the card; Bob (on disk) rotated his signing
    subkey after it expired and his encryption subkey 5 days before it expires, and revoked an
    authentication subkey due in 2 days; Carol's expired key is retired in keyctl.conf."""
    with kb.Keyring(pcscd) as kr:
        kr._bed_pcscd = pcscd
        key = make_key(kr, card, (100, 100, 100), {'sig': 'on', 'enc': 'on', 'aut': 'on'})
        bob = kr.create_key(uid='Bob Rotor <bob@example.org>',
                            subkeys={'sig': -10, 'enc': 100, 'aut': 100})
        kr.gpg('--quick-set-expire', bob['fpr'], '5d', bob['enc'])
        kr.gpg('--quick-set-expire', bob['fpr'], '2d', bob['aut'])
        kr.revoke_subkey(bob['fpr'], bob['aut'])
        sig2 = add_subkey(kr, bob['fpr'], 'ed25519', 'sign', '1y')
        enc2 = add_subkey(kr, bob['fpr'], 'cv25519', 'encr', '1y')
        carol = kr.create_key(uid='Carol Retired <carol@example.org>', subkeys={'sig': -5},
                              primary_expires=-5)
        conf = '[keyring]\nretired = %s\n' % carol['fpr']
        d = Daemon(kr, conf=conf)
        try:
            if not check(d.ready(key), 'rotation keyring: daemon lists the card and the keys',
                         d.log()[-2000:]):
                return
            rc, out, err = d.status('--color=never')
            check(rc == 0, f'rotated subkeys and a retired key: exit 0 (got {rc})', out + err)
            lines = out.splitlines()

            def line_of(text):
                return [l for l in lines if text in l]
            old_sig = [l for l in lines if 'expired 10 days ago' in l]
            check(old_sig and f'replaced by 0x{sig2[-16:]}' in old_sig[0],
                  'table: the expired signing subkey says "replaced by 0x<new>"', out)
            old_enc = [l for l in lines if 'in 5 days' in l]
            check(old_enc and f'replaced by 0x{enc2[-16:]}' in old_enc[0],
                  'table: the 5-day encryption subkey says "replaced by 0x<new>"', out)
            check(any('revoked' in l for l in line_of('[A]')), 'table: the revoked one says so',
                  out)
            carol_line = line_of('Carol Retired')
            check(carol_line and carol_line[0].rstrip().endswith('retired'),
                  'table: the retired key says "retired"', out)
            bob_line = line_of('Bob Rotor')
            check(bob_line and '  ok' in bob_line[0], 'table: Bob\'s key is ok', out)
            check('critical' not in out and 'warning' not in out.split('FINDINGS')[-1],
                  'no warning or critical finding', out)
            rc, _, _ = d.status('--warn-days=30', '--quiet')
            check(rc == 0, f'--warn-days=30 does not count the replaced 5-day subkey (got {rc})')
            rc, js, _ = d.status('--json')
            st = json.loads(js) if js else {}
            subs = {s['fingerprint']: s for k in st.get('keys', []) for s in k['subkeys']}
            keys = {k['fingerprint']: k for k in st.get('keys', [])}
            check(subs.get(bob['sig'], {}).get('replaced_by') == sig2 and
                  subs.get(bob['sig'], {}).get('level') == 'ok',
                  'JSON: the old signing subkey has replaced_by and level ok',
                  subs.get(bob['sig']))
            check(keys.get(carol['fpr'], {}).get('retired') is True and
                  keys.get(carol['fpr'], {}).get('level') == 'ok',
                  'JSON: Carol\'s key is retired, level ok', keys.get(carol['fpr']))
            rc, prom, _ = d.status('--format=prometheus')
            check(rc == 0, f'--format=prometheus exits 0 too (got {rc})')
            sm = prom_samples(prom)
            lv = [lbl for lbl, _ in sm.get('keyctl_subkey_level', [])]
            check(not any(bob['sig'] in l or bob['enc'] in l or carol['fpr'] in l for l in lv),
                  'Prometheus: no keyctl_subkey_level for replaced subkeys or the retired key',
                  prom)
            check(max((v for _, v in sm.get('keyctl_subkey_level', [])), default=0) == 0,
                  'Prometheus: every keyctl_subkey_level is 0', prom)
            sup = {lbl: v for lbl, v in sm.get('keyctl_subkey_superseded', [])}
            check(any(bob['sig'] in l and f'replaced_by="{sig2}"' in l for l in sup) and
                  any(carol['fpr'] in l and 'reason="retired"' in l for l in sup),
                  'Prometheus: keyctl_subkey_superseded names them, with replaced_by / retired',
                  prom)
        finally:
            d.stop()
        # Without the retired line, Carol's expired key counts again: exit 2.
        d = Daemon(kr, conf='')
        try:
            if check(d.ready(key), 'daemon without [keyring] retired is ready', d.log()[-2000:]):
                rc, out, err = d.status('--color=never')
                check(rc == 2, f'not retired, the expired key counts: exit 2 (got {rc})',
                      out + err)
        finally:
            d.stop()


def scenario_not_on_card(pcscd, card):
    """The exception: the signing subkey on the card #12345678, 5 days from expiry, was replaced
    by a 1-year one that is only on disk: the card still signs with the old one, so it still
    counts, as a warning, with a finding that says to move the replacement to the card."""
    with kb.Keyring(pcscd) as kr:
        kr._bed_pcscd = pcscd
        key = make_key(kr, card, (5, 100, 100), {'sig': 'on', 'enc': 'on', 'aut': 'on'},
                       keep_primary=True)
        sig2 = add_subkey(kr, key['fpr'], 'ed25519', 'sign', '1y')
        d = Daemon(kr)
        try:
            if not check(d.ready(key), 'replacement-on-disk keyring: daemon is ready',
                         d.log()[-2000:]):
                return
            rc, out, err = d.status('--color=never')
            check(rc == 1, f'replacement not on the card: exit 1, a warning (got {rc})', out + err)
            old = [l for l in out.splitlines() if 'in 5 days' in l]
            check(old and 'warning' in old[0] and
                  f'replacement 0x{sig2[-16:]} not on its card' in old[0],
                  'table: the old subkey says warning, replacement not on its card', out)
            flat = ' '.join(out.split())  # findings wrap at 100 columns
            check(f'its replacement 0x{sig2[-16:]} is not on that card yet' in flat and
                  f'gpg --edit-key {key["fpr"]}, then "key 4" and "keytocard"' in flat,
                  'finding: the replacement is not on that card yet, with the keytocard hint',
                  out)
            rc, js, _ = d.status('--json')
            st = json.loads(js) if js else {}
            subs = {s['fingerprint']: s for k in st.get('keys', []) for s in k['subkeys']}
            check(subs.get(key['sig'], {}).get('replaced_by') == sig2 and
                  subs.get(key['sig'], {}).get('level') == 'warning',
                  'JSON: replaced_by set, level warning', subs.get(key['sig']))
            rc, prom, _ = d.status('--format=prometheus')
            lv = [v for lbl, v in prom_samples(prom).get('keyctl_subkey_level', [])
                  if key['sig'] in lbl]
            check(rc == 1 and lv == [2.0], f'Prometheus: the old subkey at level 2 ({lv})', prom)
        finally:
            d.stop()


def main():
    card = [None]
    try:
        with kb.Pcscd() as pcscd:
            for s in (scenario_fine, scenario_warning, scenario_critical, scenario_rotation,
                      scenario_not_on_card):
                try:
                    s(pcscd, card)
                except kb.BedUnavailable:
                    raise
                except Exception as e:
                    import traceback
                    traceback.print_exc()
                    check(False, f'{s.__name__} raised {e!r}')
    except kb.BedUnavailable as e:
        print(f'SKIP: test bed unavailable: {e}')
        return 77
    print(f'{len(failures)} failure(s)' if failures else 'all passed')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
