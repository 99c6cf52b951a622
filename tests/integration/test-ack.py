#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl-status --ack and --unack against the real keyctld (issue 31, item 1): a revoked key
named by gpg.conf's default-key raises revoked-default-key (warning, exit 1); acknowledged by its
id (from --json), keyctl-status exits 0, the table says "acknowledged", Prometheus counts no
warning, the JSON says acked with level ok; still acknowledged after a restart (acks.json in the
state directory); the finding gone (default-key removed) and back: counted again; --unack: counted
again; an unknown id: "no finding ID", exit 3; an id that is none: exit 3. Then a subkey 10 days
from expiry (subkey-expiring, warning) acknowledged, and the daemon restarted 8 days later
(KEYCTL_TIME_OFFSET): critical, shown again. While acknowledged, the subkey itself counts as ok
(exit 0 with --warn-days, acked in the table and the JSON, keyctl_subkey_level 0). Every process
is stopped by pid, also on failure."""
import importlib.util
import json
import os
import subprocess
import sys

_spec = importlib.util.spec_from_file_location(
    'daemon_keys', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                'test-daemon-keys.py'))
dk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dk)

import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402

STATUS = os.environ.get('KEYCTL_STATUS', '')
DAY = dk.DAY
check = dk.check


def write_gpg_conf(kr, default_key):
    with open(os.path.join(kr.home, 'gpg.conf'), 'w') as f:
        f.write('no-auto-check-trustdb\n')
        if default_key:
            f.write('default-key %s\n' % default_key)


def revoke_key(kr, fpr):
    """Revokes the whole key with the certificate gpg left in openpgp-revocs.d."""
    with open(os.path.join(kr.home, 'openpgp-revocs.d', fpr + '.rev')) as f:
        cert = f.read().replace(':-----BEGIN', '-----BEGIN')
    kr.import_keys(cert.encode())


def status(dm, *args):
    env = dict(dm.env)
    env.pop('NO_COLOR', None)
    p = subprocess.run([STATUS, '--socket=' + dm.socket, '--color=never'] + list(args), env=env,
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout, p.stderr


def finding(st, rule):
    for f in (st or {}).get('findings', []):
        if f['rule'] == rule:
            return f
    return None


def wait_finding(dm, rule, pred=lambda f: True, timeout=30):
    st = dm.wait_status(lambda s: finding(s, rule) is not None and pred(finding(s, rule)),
                        timeout=timeout)
    return finding(st, rule)


def test_revoked_default_key(dm, kr, rex):
    f = wait_finding(dm, 'revoked-default-key')
    check(f is not None and f['level'] == 'warning', 'revoked-default-key raised: %r' % (f,))
    if f is None:
        return
    fid = f.get('id')
    check(fid == 'revoked-default-key:' + rex['fpr'], 'its id in the JSON: %r' % fid)
    rc, out, err = status(dm)
    check(rc == 1, 'a warning: exit 1 (%d)' % rc)

    rc, out, err = status(dm, '--ack=' + fid)
    check(rc == 0 and err == '', '--ack: exit 0 (%d, %r)' % (rc, err))
    rc, out, err = status(dm)
    check(rc == 0, 'acknowledged: exit 0 (%d)' % rc)
    check('acknowledged; undo: keyctl-status --unack=' + fid in out and '  acked ' in out,
          'the table says acknowledged:\n' + out)
    rc, out, err = status(dm, '--format=prometheus')
    check(rc == 0 and 'keyctl_findings{level="warning"} 0' in out,
          'Prometheus counts no warning (%d):\n%s' % (rc, out))
    rc, out, err = status(dm, '--json')
    f = finding(json.loads(out), 'revoked-default-key') if rc == 0 else None
    check(f is not None and f.get('acked') is True and f['level'] == 'ok',
          'the JSON: acked, level ok: %r' % (f,))
    rc, out, err = status(dm, '--ack=' + fid)
    check(rc == 0, 'acknowledging it again changes nothing: exit 0 (%d, %r)' % (rc, err))

    dm.stop()
    dm.start()
    f = wait_finding(dm, 'revoked-default-key')
    check(f is not None and f.get('acked') is True, 'still acknowledged after a restart: %r' % f)
    rc, out, err = status(dm)
    check(rc == 0, 'after the restart: exit 0 (%d)' % rc)

    write_gpg_conf(kr, None)
    st = dm.wait_status(lambda s: finding(s, 'revoked-default-key') is None)
    check(finding(st, 'revoked-default-key') is None, 'the finding goes away with default-key')
    write_gpg_conf(kr, rex['fpr'])
    f = wait_finding(dm, 'revoked-default-key')
    check(f is not None and not f.get('acked') and f['level'] == 'warning',
          'back again: not acknowledged (the ack went with it): %r' % (f,))
    rc, out, err = status(dm)
    check(rc == 1, 'back again: exit 1 (%d)' % rc)

    rc, out, err = status(dm, '--ack=' + fid)
    check(rc == 0 and status(dm)[0] == 0, 'acknowledged again: exit 0')
    rc, out, err = status(dm, '--unack=' + fid)
    check(rc == 0 and err == '', '--unack: exit 0 (%d, %r)' % (rc, err))
    rc, out, err = status(dm)
    check(rc == 1 and 'acknowledged' not in out, 'unacknowledged: exit 1 again (%d)' % rc)
    rc, out, err = status(dm, '--unack=' + fid)
    check(rc == 3 and err == 'keyctl-status: no acknowledged finding %s\n' % fid,
          '--unack of no ack: exit 3, said (%d, %r)' % (rc, err))

    bogus = 'revoked-default-key:' + '0' * 40
    rc, out, err = status(dm, '--ack=' + bogus)
    check(rc == 3 and err == 'keyctl-status: no finding %s\n' % bogus,
          'an unknown id: "no finding ID", exit 3 (%d, %r)' % (rc, err))
    rc, out, err = status(dm, '--ack=' + 'x' * 300)
    check(rc == 3 and 'is not a finding id' in err, 'an overlong id: exit 3 (%d, %r)' % (rc, err))
    rc, out, err = status(dm, '--ack=a b')
    check(rc == 3 and 'is not a finding id' in err, 'a space: exit 3 (%d, %r)' % (rc, err))


def subkey_in(st, fpr):
    """The key and the subkey with fingerprint fpr in a --json status, or (None, None)."""
    for k in (st or {}).get('keys', []):
        for s in k.get('subkeys', []):
            if s.get('fingerprint') == fpr:
                return k, s
    return None, None


def level_metric(out, fpr):
    """keyctl_subkey_level of the subkey fpr in a Prometheus output, or None."""
    for line in out.splitlines():
        if line.startswith('keyctl_subkey_level{') and 'subkey="%s"' % fpr in line:
            return line.rsplit(' ', 1)[1]
    return None


def test_level_rises(dm, kr):
    # Rex's finding aside (default-key gone): the exit code is Alice's subkey's alone.
    write_gpg_conf(kr, None)
    alice = kr.create_key(uid='Alice Tester <alice@example.org>', subkeys={'sig': 10})
    f = wait_finding(dm, 'subkey-expiring', lambda f: f['subkey'] == alice['sig'], timeout=60)
    check(f is not None and f['level'] == 'warning', 'subkey-expiring at 10 days: %r' % (f,))
    if f is None:
        return
    rc, out, err = status(dm)
    check(rc == 1, 'a subkey 10 days from expiry: exit 1 (%d)\n%s' % (rc, out))
    rc, out, err = status(dm, '--ack=' + f['id'])
    f = wait_finding(dm, 'subkey-expiring', lambda f: f.get('acked') is True)
    check(rc == 0 and f is not None and f['level'] == 'ok', 'acknowledged: %r' % (f,))

    # The ack quiets the subkey too: its level, its key's, the exit code, the metric.
    rc, out, err = status(dm)
    row = [ln for ln in out.splitlines() if alice['sig'][-16:] in ln and 'acked' in ln]
    check(rc == 0 and row, 'acknowledged: exit 0, the subkey\'s row says acked (%d)\n%s'
          % (rc, out))
    rc, out, err = status(dm, '--warn-days=30')
    check(rc == 0, 'acknowledged: --warn-days=30 does not count it either (%d)' % rc)
    rc, out, err = status(dm, '--json')
    k, s = subkey_in(json.loads(out) if rc == 0 else None, alice['sig'])
    check(s is not None and s.get('acked') is True and s['level'] == 'ok' and k['level'] == 'ok',
          'the JSON: the subkey acked at level ok, its key ok: %r %r' % (s, k and k['level']))
    rc, out, err = status(dm, '--format=prometheus')
    check(level_metric(out, alice['sig']) == '0',
          'keyctl_subkey_level 0 for it: %r' % level_metric(out, alice['sig']))

    dm.stop()
    dm.start(offset=8 * DAY)
    f = wait_finding(dm, 'subkey-expiring', lambda f: f['level'] != 'ok', timeout=60)
    check(f is not None and f['level'] == 'critical' and not f.get('acked'),
          '8 days later, critical: shown again: %r' % (f,))
    rc, out, err = status(dm)
    check(rc == 2, '8 days later: exit 2 (%d)' % rc)
    rc, out, err = status(dm, '--json')
    k, s = subkey_in(json.loads(out) if rc == 2 else None, alice['sig'])
    check(s is not None and not s.get('acked') and s['level'] == 'critical',
          'the subkey counts again: %r' % (s,))
    dm.stop()
    dm.start()
    f = wait_finding(dm, 'subkey-expiring', lambda f: f['subkey'] == alice['sig'])
    check(f is not None and f['level'] == 'warning' and not f.get('acked'),
          'back at warning: the ack was forgotten when the level rose: %r' % (f,))


def main():
    if not dk.KEYCTLD or not STATUS:
        print('SKIP: KEYCTLD or KEYCTL_STATUS not set')
        return 77
    with kb.Keyring() as kr:
        rex = kr.create_key(uid='Rex Revoked <rex@example.org>', subkeys={'sig': 100})
        revoke_key(kr, rex['fpr'])
        write_gpg_conf(kr, rex['fpr'])
        dm = dk.Daemon(kr.env).start()
        rc = None
        try:
            test_revoked_default_key(dm, kr, rex)
            test_level_rises(dm, kr)
        finally:
            rc = dm.stop()
            if dk.failures or rc != 0:
                print('--- keyctld log (tail) ---\n' + dm.tail())
        check(rc == 0, 'keyctld exits 0 on SIGTERM (%s)' % rc)
    check(not procs.leftovers(), 'no process left running: %s' % procs.leftovers())
    return 1 if dk.failures else 0


if __name__ == '__main__':
    try:
        rc = main()
    except kb.BedUnavailable as ex:
        print('SKIP: %s' % ex)
        rc = 77
    finally:
        procs.stop_all()
    for f in dk.failures:
        print('FAILED:', f)
    sys.exit(rc)
