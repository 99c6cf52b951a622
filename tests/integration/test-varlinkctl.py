#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""systemd's varlinkctl (systemd >= 257), a Varlink client nobody here wrote, against the real
keyctld on the test bed (a virtual YubiKey holding a throwaway keyring's subkeys):
`info` names io.keyctl, `introspect io.keyctl` gives our interface back, `call
io.keyctl.GetStatus` answers the same token and keys as our own client, `call --more
io.keyctl.Watch` reads the first event (a "state"), and `validate-idl` accepts
protocol/io.keyctl.varlink. Skipped (77) where varlinkctl is missing or too old."""
import json
import os
import select
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402
from testlib import check, finish  # noqa: E402

SRC = os.environ['KEYCTL_SRCDIR']
IDL = os.path.join(SRC, 'protocol', 'io.keyctl.varlink')


def varlinkctl(*args, timeout=30):
    r = subprocess.run(['varlinkctl'] + list(args), capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def first_json(proc, timeout):
    """The first JSON object varlinkctl prints (pretty or one per line), or None."""
    buf = ''
    end = time.monotonic() + timeout
    dec = json.JSONDecoder()
    while time.monotonic() < end:
        if select.select([proc.stdout], [], [], 0.2)[0]:
            chunk = os.read(proc.stdout.fileno(), 65536).decode()
            if not chunk:
                break
            buf += chunk
            try:
                obj, _ = dec.raw_decode(buf.lstrip())
                return obj
            except ValueError:
                pass
    return None


def main():
    if not shutil.which('varlinkctl'):
        print('skip: no varlinkctl here (systemd >= 257 has it)')
        sys.exit(77)
    rc, out, _ = varlinkctl('--help')
    if 'validate-idl' not in out or 'introspect' not in out:
        print('skip: this varlinkctl lacks validate-idl or introspect')
        sys.exit(77)

    rc, out, err = varlinkctl('validate-idl', IDL)
    check(rc == 0, 'validate-idl accepts protocol/io.keyctl.varlink', err)

    p = kb.Pcscd().start()
    kr = kb.Keyring(p)
    key = kr.create_key()
    p.card(kr.card_profile(key))
    p.wait_card()
    d = Keyctld(dict(kr.env))
    check(d.start(), 'keyctld answers on the bed')
    ours = d.wait(lambda s: any(t.get('openpgp') for t in s['tokens']), 30)
    check(ours is not None, 'our client sees the card')
    addr = d.socket

    rc, out, err = varlinkctl('info', addr)
    check(rc == 0 and 'io.keyctl' in out and 'org.varlink.service' in out,
          'info lists io.keyctl and org.varlink.service', out + err)

    rc, out, err = varlinkctl('introspect', addr, 'io.keyctl')
    check(rc == 0 and 'interface io.keyctl' in out and 'method GetStatus()' in out and
          'method Watch()' in out, 'introspect io.keyctl gives the interface', out + err)

    rc, out, err = varlinkctl('call', addr, 'io.keyctl.GetStatus', '{}')
    try:
        got = json.loads(out)
    except ValueError:
        got = None
    check(rc == 0 and got is not None, 'call io.keyctl.GetStatus answers JSON', out + err)
    if got:
        serials = sorted(t['serial'] for t in got['tokens'])
        check(serials == sorted(t['serial'] for t in ours['tokens']),
              'GetStatus through varlinkctl: the same tokens as our client: %s' % serials)
        fprs = sorted(k['fingerprint'] for k in got['keys'])
        check(key['fpr'] in fprs and fprs == sorted(k['fingerprint'] for k in ours['keys']),
              'GetStatus through varlinkctl: the same keys as our client')

    w = procs.spawn('varlinkctl-watch',
                    ['varlinkctl', 'call', '--more', addr, 'io.keyctl.Watch', '{}'],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ev = first_json(w, 20)
    check(ev is not None and ev.get('event', {}).get('type') == 'state',
          'call --more io.keyctl.Watch reads the first event, a "state"', ev)
    procs.stop(w)

    check(d.stop() == 0, 'keyctld exits 0 on SIGTERM')
    kr.stop()
    finish()


try:
    main()
finally:
    procs.stop_all()
