#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Long paths, used whole or refused by name, never cut (issue 32, item 2).

1. GNUPGHOME of 320 bytes: GetStatus reports it whole (it said 255 bytes of it, a path that does
   not exist), the key tracked in it is listed, and the upstream check asks gpgconf about that
   home: without /run/user, dirmngr's socket there is too long for a unix socket, which the
   check says (before, gpgconf --launch ran for the cut home).
2. The socket: $XDG_RUNTIME_DIR/keyctl/socket of exactly 107 bytes (108 with the NUL, all a
   sockaddr_un takes) is served and keyctl-status reaches it; one byte more and keyctld exits 1
   with the path named and "too long for a unix socket", leaving no directory behind; the same
   for [daemon] socket.

Every process is stopped by pid, also on failure (keyctld_proc, keyctlbed.procs).
"""
import os
import subprocess
import sys

import keyctlbed as kb
from keyctlbed import procs
from keyctld_proc import Keyctld
from testlib import check, finish, wait_until

KEYCTLD = os.environ.get('KEYCTLD', '')
KEYCTL_STATUS = os.environ.get('KEYCTL_STATUS', '')
SUN_PATH = 108  # a sockaddr_un's path, NUL included


def padded_dir(base, total):
    """base/xxxx/.../xxx, exactly total bytes, in steps of at most 100 bytes."""
    path = base
    while len(path) < total:
        step = min(100, total - len(path) - 1)
        if step < 1:  # one byte short of a '/' and a name: lengthen the last name
            path += 'x'
            continue
        path = os.path.join(path, 'x' * step)
    assert len(path) == total, (len(path), total)
    return path


def agent_pids(home):
    """gpg-agent's and dirmngr's pids in home, for the few setups where they can start there."""
    out = []
    for extra in ([], ['--dirmngr']):
        r = subprocess.run(['gpg-connect-agent', '--no-autostart', '--homedir', home] + extra +
                           ['GETINFO pid', '/bye'], capture_output=True, text=True, timeout=30)
        for line in r.stdout.splitlines():
            if line.startswith('D ') and line[2:].strip().isdigit():
                out.append(int(line[2:]))
    return out


def make_key():
    """A public key made in a short home (its agent is the bed's, stopped by pid)."""
    kr = kb.Keyring()
    try:
        kr.gpg('--quick-gen-key', 'Long Home <long@example.org>', 'ed25519', 'cert', 'never')
        fpr = kr.fingerprint('long@example.org')
        return fpr, kr.gpg('--export', fpr).stdout
    finally:
        kr.stop()


def test_long_gnupghome():
    fpr, pub = make_key()
    base = procs.tmpdir('keyctl-long-home-')
    home = padded_dir(base, 320)
    os.makedirs(home, mode=0o700)
    # No agent can bind a socket in this home (gpg --import exits 2 for that): none is needed.
    subprocess.run(['gpg', '--homedir', home, '--batch', '--import'], input=pub,
                   capture_output=True, timeout=60)
    r = subprocess.run(['gpg', '--homedir', home, '--list-keys', fpr], capture_output=True,
                       timeout=60)
    check(r.returncode == 0, 'the key imported into the 320-byte home', r.stderr.decode())
    sock = subprocess.run(['gpgconf', '--homedir', home, '--list-dirs', 'dirmngr-socket'],
                          capture_output=True, text=True, timeout=30).stdout.strip()
    # With /run/user, GnuPG puts the sockets there and dirmngr could really start: then the
    # upstream part is left out (no keyserver is asked from a test).
    upstream = len(sock) >= SUN_PATH
    conf = '[keyring]\ntrack = %s\n[upstream]\ncheck = %s\nwkd = no\nrelied-on = %s\n' % (
        fpr, 'on' if upstream else 'off', fpr)
    d = Keyctld({'GNUPGHOME': home,
                 'PCSCLITE_CSOCK_NAME': os.path.join(base, 'no-pcscd', 'pcscd.comm')}, conf=conf)
    try:
        check(d.start(['--log-level=debug']), 'keyctld serves with a 320-byte GNUPGHOME',
              d.log()[-2000:])
        s = d.status() or {}
        got = s.get('daemon', {}).get('gnupghome', '')
        check(got == home, 'GetStatus: gnupghome is the whole 320-byte path (got %d bytes)'
              % len(got), got)
        keys = wait_until(lambda: [k for k in ((d.call('io.keyctl.GetKeys') or {})
                                               .get('parameters', {}).get('keys') or [])
                                   if k.get('fingerprint') == fpr], timeout=30)
        check(bool(keys), 'GetKeys lists the key tracked in that home', d.log()[-2000:])
        if not upstream:
            print('SKIP: the upstream part (dirmngr socket %s fits a sockaddr_un)' % sock)
            return
        r = d.call('io.keyctl.CheckUpstream', timeout=60)
        check(r is not None and 'error' not in r, 'CheckUpstream answered', r)
        s = d.status() or {}
        err = s.get('daemon', {}).get('upstream_error', '')
        check("dirmngr's socket is too long for a unix socket" in err and home[:40] in err,
              'the check names dirmngr\'s socket in that home as too long', err)
        check(home[:255] + '/S.dirmngr' not in d.log(),
              'no socket of a home cut to 255 bytes in the log')
    finally:
        rc = d.stop()
        check(rc == 0, 'keyctld exits 0 on SIGTERM (got %s)' % rc)
        for pid in agent_pids(home):
            procs.stop_pid(pid)


def refused(d, path, how):
    """keyctld exits 1 naming path as too long for a unix socket."""
    d.start(wait=False)
    try:
        rc = d.proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        rc = None
    log = d.log()
    check(rc == 1, '%s of %d bytes: keyctld exits 1 (got %s)' % (how, len(path), rc), log)
    check(path in log and 'too long for a unix socket' in log,
          '%s of %d bytes: the error names the path as too long for a unix socket'
          % (how, len(path)), log)
    return log


def test_socket_limit():
    base = procs.tmpdir('keyctl-sock-')
    tail = len('/keyctl/socket')

    # Exactly at the limit: served, and keyctl-status reaches it.
    rt = padded_dir(base, SUN_PATH - 1 - tail)
    os.makedirs(rt, mode=0o700)
    # A home it can list: one never listed makes keyctl-status exit 3 (unknown), as unreached.
    os.makedirs(os.path.join(base, 'gnupg'), mode=0o700, exist_ok=True)
    d = Keyctld({'PCSCLITE_CSOCK_NAME': os.path.join(base, 'no-pcscd', 'pcscd.comm'),
                 'GNUPGHOME': os.path.join(base, 'gnupg')},
                extra_env={'XDG_RUNTIME_DIR': rt})
    d.socket = rt + '/keyctl/socket'
    try:
        check(len(d.socket) == SUN_PATH - 1, 'the socket path is %d bytes' % len(d.socket))
        check(d.start(), 'keyctld serves on a socket path of 107 bytes', d.log()[-2000:])
        if KEYCTL_STATUS:
            env = dict(d.env)
            r = subprocess.run([KEYCTL_STATUS, '--json'], env=env, capture_output=True,
                               text=True, timeout=60)
            check(r.returncode != 3 and '"daemon"' in r.stdout,
                  'keyctl-status reaches it (exit %d)' % r.returncode, r.stderr)
    finally:
        d.stop()

    # One byte more, from $XDG_RUNTIME_DIR.
    rt = padded_dir(base, SUN_PATH - tail)
    os.makedirs(rt, mode=0o700)
    d = Keyctld({'PCSCLITE_CSOCK_NAME': os.path.join(base, 'no-pcscd', 'pcscd.comm'),
                 'GNUPGHOME': os.path.join(base, 'gnupg')},
                extra_env={'XDG_RUNTIME_DIR': rt})
    try:
        log = refused(d, rt + '/keyctl/socket', '$XDG_RUNTIME_DIR/keyctl/socket')
        check('XDG_RUNTIME_DIR' in log and '[daemon] socket' in log,
              'the error says where the path came from and what to set', log)
        check(not os.path.exists(os.path.join(rt, 'keyctl')),
              'no directory made for a socket refused')
    finally:
        d.stop()

    # One byte more, from [daemon] socket.
    path = padded_dir(base, SUN_PATH)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    d = Keyctld({'PCSCLITE_CSOCK_NAME': os.path.join(base, 'no-pcscd', 'pcscd.comm'),
                 'GNUPGHOME': os.path.join(base, 'gnupg')},
                conf='[daemon]\nsocket = %s\n' % path)
    try:
        refused(d, path, '[daemon] socket')
    finally:
        d.stop()


def main():
    if not KEYCTLD:
        print('SKIP: KEYCTLD not set')
        sys.exit(77)
    try:
        test_socket_limit()
        test_long_gnupghome()
    except procs.BedUnavailable as e:
        print('SKIP: %s' % e)
        sys.exit(77)
    finally:
        procs.stop_all()
    finish()


main()
