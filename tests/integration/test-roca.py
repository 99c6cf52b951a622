#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""key-roca-weak: the real keyctld tests the RSA modulus of each key in a real GnuPG home for ROCA
(CVE-2017-15361) and keyctl-status --json shows it.

The home holds the user's own RSA 2048 key (made here by gpg) and two keys of others the user
trusts fully, so relied on ([upstream] relied-on-trusted, the default): the authors' key04.pgp,
ROCA-weak in its primary and both subkeys, and their key01.pgp, a safe RSA 2048 key
(tests/data/roca/, from https://github.com/crocs-muni/roca roca/tests/data). Expected: one
critical key-roca-weak finding per (sub)key of key04, naming it, and none about the other two;
the findings do not change when the keyring is listed again (Reload {full}), where the verdicts
come from what the first listing learnt. The upstream checks are pushed a year away: no query
leaves the machine. Every process is stopped by pid, also on failure.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from testlib import check, finish, wait_until  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402

KEYCTL_STATUS = os.environ.get('KEYCTL_STATUS', '')
DATA = os.path.join(os.environ.get('KEYCTL_SRCDIR', ''), 'tests', 'data', 'roca')
K04 = 'E6303FAB28D47A4258DDDFAE85052D6915C34DC4'
K04_SUBS = {K04, 'FC58C4551E775D4B85CFB9EC6F2887DBA4BBD140',
            '42FC1322AE0C0E495687454269825656415676C0'}
K01 = '8BF5D80D32113A68CA8BD9921934602D3A0A27FE'


def status(d):
    r = subprocess.run([KEYCTL_STATUS, '--json', '--socket', d.socket], env=d.env,
                       capture_output=True, text=True, timeout=30)
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        return r.returncode, None


def roca(st):
    return [f for f in (st or {}).get('findings', []) if f['rule'] == 'key-roca-weak']


def listed(st, fprs):
    return st is not None and fprs <= {k['fingerprint'] for k in st.get('keys', [])}


def main():
    if not KEYCTL_STATUS or not os.path.isdir(DATA):
        print('skip: KEYCTL_STATUS or the test data is missing')
        sys.exit(77)
    kr = kb.Keyring()
    d = None
    try:
        kr.gpg('--quick-gen-key', 'Own RSA <own@example.org>', 'rsa2048', 'sign,cert', 'never')
        own = kr.fingerprint('Own RSA <own@example.org>')
        for name in ('key04.pgp', 'key01.pgp'):
            kr.gpg('--import', os.path.join(DATA, name))
        kr.gpg('--import-ownertrust', input=('%s:5:\n%s:5:\n' % (K04, K01)).encode())

        d = Keyctld(kr.env, conf='[upstream]\ninterval = 366d\n')
        t0 = time.monotonic()
        check(d.start(), 'keyctld started')
        st = None

        def seen():
            nonlocal st
            st = status(d)[1]
            return listed(st, {own, K04, K01}) and len(roca(st)) >= 3
        wait_until(seen, timeout=30, step=0.2)
        print('     findings after %.2f s' % (time.monotonic() - t0))
        keys = {k['fingerprint']: k for k in (st or {}).get('keys', [])}
        check(listed(st, {own, K04, K01}), 'the own key and both relied-on keys are listed',
              sorted(keys))
        check(keys.get(K04, {}).get('relied_on') is True, 'key04 is a relied-on key',
              keys.get(K04))
        f = roca(st)
        check({x['subkey'] for x in f} == K04_SUBS and len(f) == 3,
              'one key-roca-weak finding per (sub)key of key04', json.dumps(f, indent=1))
        check(all(x['key'] == K04 and x['level'] == 'critical' for x in f),
              'each names key04 and is critical', json.dumps(f, indent=1))
        check(all('ROCA-weak (CVE-2017-15361' in x['message'] and 'test@test.com' in x['message']
                  for x in f), 'the message says ROCA and whose key',
              [x['message'] for x in f])
        check(all(x['hint'].startswith('Only its owner can replace it') for x in f),
              "the hint is for another's key", [x['hint'] for x in f])

        # Listed again in full: the same findings, from the verdicts kept.
        r = d.call('io.keyctl.Reload', {'full': True})
        check(r is not None and 'error' not in r, 'Reload {full} answered', r)
        rc, st2 = status(d)
        check({x['subkey'] for x in roca(st2)} == K04_SUBS,
              'the same findings after the keyring was listed again', roca(st2))
        check(rc != 0, 'keyctl-status exits non-zero with critical findings', rc)
        check(d.alive(), 'keyctld is running')
    finally:
        if d is not None:
            d.stop()
        kr.stop()
    finish()


if __name__ == '__main__':
    main()
