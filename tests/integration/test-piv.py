#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld and a YubiKey's PIV application (issue 35): the bed's card in use (a key made with gpg,
its subkeys moved with keytocard, the "yubikey" applet's rules: any SELECT of another application
forgets every PIN) also holds PIV certificates (tests/bed/keyctlbed/piv_card.py):
- 9A CA-issued, expiring in 10 days: piv-cert-expiring, warning (defaults: warning at 14 days);
- 9C self-signed as ykman makes them, expired 5 days ago: piv-cert-expired at level ok
  (information: ssh and age agents ignore its dates);
- 9D CA-issued, 2 years away; 9E self-signed, 10 years away: nothing;
- 82 (retired) CA-issued, expired: information; 83 CA-issued, gzip-compressed (CertInfo 71 01);
- a CHUID expiring in 20 days: piv-chuid-expiring, notice.
keyctld, started while no other program holds the card, reads Token.piv at once: every slot with
its subject, issuer, dates, self_signed and key algorithm as the bed made them, the CHUID's
expiry; the expiry timer armed for 9A's next threshold (next_deadline); keyctl-status shows the
lines; keyctl-status --format=prometheus the dates; keyctl-notify --once one popup, 9A's.

Then gpg signs with the same card's OpenPGP key in a loop (scdaemon pcsc-shared) while keyctld
is asked to read the card again (Reload {full}) and restarted between signatures: every
signature is made and verifies, the pinentry is asked the PIN once (the first signature) as
without keyctld, and keyctld sends no SELECT of PIV while scdaemon holds the card.

Last, the card swapped for a Nitrokey 3 (no PIV: 6A82 to its SELECT): read as before, Token.piv
"none", no error and no PIV finding. Every process is stopped by pid, also on failure."""
import datetime
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from coexist_workload import Bed, gnupg_version, modes  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402
from testlib import bed_main, check, failures, wait_until  # noqa: E402

import keyctlbed as kb  # noqa: E402
from keyctlbed.piv_certs import CA_SUBJECT, materialize  # noqa: E402

DAY = 86400
STATUS = os.environ.get('KEYCTL_STATUS', '')
NOTIFY = os.environ.get('KEYCTL_NOTIFY', '')
SIGNATURES = 6
PIV_AID = 'a000000308'


def piv_spec(now):
    chuid = datetime.datetime.fromtimestamp(now + 20 * DAY, datetime.timezone.utc)
    return {"chuid_expiry": chuid.strftime("%Y%m%d"), "slots": {
        "9a": {"algorithm": "nistp256", "subject": "CN=alice,O=Example Corp", "issuer": CA_SUBJECT,
               "not_after_days": 10},
        "9c": {"algorithm": "rsa2048", "subject": "CN=SSH key", "not_before_days": -370,
               "not_after_days": -5},
        "9d": {"algorithm": "nistp384", "subject": "CN=alice (encryption)", "issuer": CA_SUBJECT,
               "not_after_days": 730},
        "9e": {"algorithm": "nistp256", "subject": "CN=card auth", "not_after_days": 3650},
        "82": {"algorithm": "rsa2048", "subject": "CN=alice (old)", "issuer": CA_SUBJECT,
               "not_before_days": -800, "not_after_days": -30},
        "83": {"algorithm": "rsa2048", "subject": "CN=compressed", "issuer": CA_SUBJECT,
               "not_after_days": 400, "compressed": True}}}


def iso(epoch):
    """A time as the wire carries it (protocol/codec: RFC 3339, UTC)."""
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')


def chuid_iso(text):
    d = datetime.datetime.strptime(text, "%Y%m%d").replace(tzinfo=datetime.timezone.utc)
    return iso(int(d.timestamp()))


def check_token_piv(tok, spec):
    piv = tok.get('piv') or {}
    check(piv.get('state') == 'read' and not piv.get('error'),
          'Token.piv read at insertion', piv)
    certs = {c['slot']: c for c in piv.get('certs', [])}
    check(sorted(certs) == sorted(spec['slots']), 'every slot holding a certificate is listed',
          sorted(certs))
    for slot, s in spec['slots'].items():
        c = certs.get(slot, {})
        want = {'subject': s['subject'], 'issuer': s['issuer_dn'],
                'not_before': iso(s['not_before']), 'not_after': iso(s['not_after']),
                'self_signed': s['self_signed'],
                'key_algorithm': s['algorithm'], 'error': ''}
        got = {k: c.get(k, '' if k == 'error' else None) for k in want}
        check(got == want, f'slot {slot} reads as made', {'got': got, 'want': want})
    check(piv.get('chuid_expiry') == chuid_iso(spec['chuid_expiry']),
          'the CHUID expiry (tag 35)', piv.get('chuid_expiry'))


def check_deadline(status, spec):
    """The expiry timer is armed for the first threshold a certificate crosses (the key's
    subkeys never expire): 9A's 7-day threshold, before the CHUID's 14-day one."""
    want = spec['slots']['9a']['not_after'] - 7 * DAY
    got = status['daemon'].get('next_deadline_epoch')
    check(got == want, "next_deadline_epoch is 9A's 7-day threshold", (got, want))


def check_findings(status):
    got = sorted((f['rule'], f.get('key'), f['level']) for f in status['findings']
                 if f['rule'].startswith('piv-'))
    want = sorted([('piv-cert-expiring', '9a', 'warning'), ('piv-cert-expired', '9c', 'ok'),
                   ('piv-cert-expired', '82', 'ok'), ('piv-chuid-expiring', 'chuid', 'notice')])
    check(got == want, 'the PIV findings at their levels', got)


def keyctl_status(d, *args):
    env = dict(d.env, KEYCTL_SOCKET=d.socket, COLUMNS='200')
    env.pop('NO_COLOR', None)
    r = subprocess.run([STATUS] + list(args), env=env, capture_output=True, text=True, timeout=30)
    return r.stdout


def check_clients(d, spec):
    out = keyctl_status(d)
    a = spec['slots']['9a']
    line = f"    piv 9a      CN=alice,O=Example Corp, nistp256, issued by {a['issuer_dn']}, until "
    check(line in out and 'in 10 days' in out.split(line, 1)[-1].split('\n', 1)[0],
          'keyctl-status shows the 9A line', out)
    check('    piv 9c      CN=SSH key, rsa2048, self-signed, expired ' in out,
          'keyctl-status shows the expired self-signed 9C', out)
    prom = keyctl_status(d, '--format=prometheus')
    want = ('keyctl_piv_cert_expiry_seconds{token="yubikey-87654321",slot="9a",'
            f'self_signed="false"}} {a["not_after"]}')
    check(want in prom, 'Prometheus: keyctl_piv_cert_expiry_seconds of 9A', prom[-1500:])


def check_popups(d):
    """keyctl-notify --once: one popup, 9A's warning, naming its slot; the information (9C, 82)
    and the CHUID's notice raise none."""
    with kb.SessionBus() as bus:
        env = dict(d.env, **bus.env)
        r = subprocess.run([NOTIFY, '--once', '--socket=' + d.socket,
                            '--state-file=' + os.path.join(d.tmp, 'notified')],
                           env=env, capture_output=True, text=True, timeout=30)
        sent = bus.notifications_sent()
    piv = [n for n in sent if 'PIV' in n['summary'] or 'PIV' in n['body']]
    check(r.returncode == 0 and len(piv) == 1 and
          piv[0]['summary'].startswith('The PIV Authentication certificate (slot 9A) of ') and
          'PIV slot: 9a' in piv[0]['body'],
          "keyctl-notify: one popup, 9A's", (r.returncode, r.stderr[-500:], sent))


def piv_selects(card, since):
    return [a for a in card.apdus()[since:] if a[1] == 0xA4 and a[4].lower().startswith(PIV_AID)]


def sign_loop(bed, d):
    """gpg signs SIGNATURES times; keyctld reads the card again (Reload {full}) after each and
    is restarted after the third."""
    card, kr = bed.card, bed.kr
    p0, mark = bed.pin.count('user'), len(card.apdus())
    failed = []
    for i in range(SIGNATURES):
        dt, err = bed.op_sign(i)
        if err:
            failed.append(err)
        if i == 2:
            d.stop()
            check(d.start(), 'keyctld answers after its restart')
        else:
            r = d.call('io.keyctl.Reload', {'full': True})
            check(r is not None and 'error' not in r, 'Reload {full} answered', r)
    check(not failed, f'{SIGNATURES} signatures made and verified beside keyctld', failed)
    check(bed.pin.count('user') - p0 == 1, 'one PIN prompt, for the first signature',
          bed.pin.prompts())
    sel = piv_selects(card, mark)
    check(not sel, 'no SELECT of PIV while scdaemon holds the card', sel)
    kr.scdaemon_pid()


def no_piv_card(pcscd, d, card):
    card.swap('nitrokey3', gap=1.0, wait=True)

    def read(s):
        t = [t for t in s['tokens'] if t['present'] and t.get('openpgp')]
        return t[0] if t and t[0]['id'] != 'yubikey-87654321' else None
    check(wait_until(lambda: read(d.status()) is not None, 15), 'the Nitrokey 3 is read')
    s = d.status()
    tok = read(s) or {}
    piv = tok.get('piv') or {'state': 'none'}
    check(piv.get('state') == 'none' and not piv.get('error') and not tok.get('error'),
          'a card without PIV reads as before: no PIV, no error', tok)
    check(not [f for f in s['findings'] if f['rule'].startswith('piv-') and f['token'] == tok.get('id')],
          'no PIV finding for it')


def body():
    t0 = time.monotonic()
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        bed = Bed(pcscd, kr)
        prof = {"piv": piv_spec(int(time.time()))}
        materialize(prof)
        spec = prof["piv"]
        bed.card.update(piv=spec)
        # pcsc-shared (with disable-ccid on GnuPG 2.4, whose CCID driver beside pcscd finds no
        # card); gpg-agent and scdaemon stopped: the card is free for keyctld's start.
        bed.set_mode(modes()[1])
        if gnupg_version() >= (2, 3):
            # GnuPG 2.3+ has a PIV application of its own: its scdaemon SELECTs the YubiKey's
            # PIV around each operation, which then forgets the PINs: a prompt each time,
            # keyctld or not. Users set this (drduh/YubiKey-Guide#511); then a prompt keyctld
            # added would show.
            with open(os.path.join(kr.home, 'scdaemon.conf'), 'a') as f:
                f.write('disable-application piv\n')
        bed.quiet()
        print(f'bed ready in {time.monotonic() - t0:.1f} s', flush=True)
        d = Keyctld(dict(kr.env))
        try:
            check(d.start(), 'keyctld answers')
            s = d.status()
            tok = [t for t in s['tokens'] if t['id'] == 'yubikey-87654321']
            check(len(tok) == 1, 'the YubiKey is listed', [t['id'] for t in s['tokens']])
            check_token_piv(tok[0] if tok else {}, spec)
            check_findings(s)
            check_deadline(s, spec)
            check_clients(d, spec)
            check_popups(d)
            sign_loop(bed, d)
            no_piv_card(pcscd, d, bed.card)
            check(d.alive(), 'keyctld ran through it')
        finally:
            d.stop()
            if failures:
                print('---- keyctld log (tail) ----')
                print(d.log()[-3000:])
    print(f'wall time {time.monotonic() - t0:.1f} s')


sys.exit(bed_main(body))
