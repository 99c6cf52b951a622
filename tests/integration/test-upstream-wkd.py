#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The upstream check's Web Key Directory side (WKD_GET through the user's real dirmngr) against
an https WKD server on loopback, with a CA of our own, in a network, mount and pid namespace of
its own: nothing of the host changes.

The test runs itself again under `unshare --net --mount --pid --fork --mount-proc` (as root). In
there: loopback is brought up; /etc/hosts (openpgpkey.example.net and .org, example.net and
.org at 127.0.0.1) and the system CA bundle (tests/data/wkd/ca.pem, a test CA made once with
openssl, its key thrown away) are bind mounts that only this mount namespace sees; the WKD
server (http.server with ssl, tests/data/wkd/server.pem) listens on 127.0.0.1:443 and answers
/.well-known/openpgpkey/DOMAIN/hu/HASH as a WKD does (HASH: z-base-32 of the SHA-1 of the local
part). When the namespace's first process ends, the kernel ends whatever it left running.

dirmngr.conf says `standard-resolver`: without it dirmngr asks the nameservers of
/etc/resolv.conf directly, which a network namespace cannot reach; with it, it resolves as the
C library does, through /etc/hosts. How dirmngr resolves is its business; what is tested here is
keyctld's WKD_GET and what it makes of the answer.

Cases: a key the user trusts fully, revoked in its WKD copy only (critical key-revoked-upstream
naming the Web Key Directory, hint gpg --locate-external-keys); an own key whose WKD copy lacks
a subkey the keyserver has (warning key-stale-upstream naming the WKD, hint to update it); a
WKD serving another key for the address (no finding; the key's upstream_error says so); a mail
domain that does not resolve (no finding; "could not reach the Web Key Directory of example.com",
the second time too, never "has no key"); the WKD server gone (the revocation seen before stays;
"could not reach").
The keyring is byte for byte unchanged; with
`[upstream] wkd = no` the WKD is not asked at all.
"""
import fcntl
import hashlib
import http.server
import importlib.util
import json
import os
import shutil
import socket
import ssl
import struct
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from testlib import check, finish  # noqa: E402
from keyctld_proc import Keyctld  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, '..', 'data', 'wkd')
_spec = importlib.util.spec_from_file_location('upstream', os.path.join(HERE, 'test-upstream.py'))
up = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(up)

ZB32 = 'ybndrfg8ejkmcpqxot1uwisza345h769'


def wkd_hash(local):
    """z-base-32 of SHA-1 of the lower-cased local part, as in the WKD draft."""
    bits = ''.join(format(b, '08b') for b in hashlib.sha1(local.lower().encode()).digest())
    return ''.join(ZB32[int(bits[i:i + 5], 2)] for i in range(0, len(bits), 5))


class Wkd:
    """https on 127.0.0.1:443: keys[(domain, local)] = bytes; asked = [(host, path)]."""

    def __init__(self):
        self.keys, self.asked = {}, []
        wkd = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                host = (self.headers.get('Host') or '').split(':')[0]
                path = self.path.split('?')[0]
                wkd.asked.append((host, path))
                body = None
                for (domain, local), key in wkd.keys.items():
                    h = wkd_hash(local)
                    if (host == 'openpgpkey.' + domain and
                            path == '/.well-known/openpgpkey/%s/hu/%s' % (domain, h)) or \
                            (host == domain and path == '/.well-known/openpgpkey/hu/' + h):
                        body = key
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header('Content-Type', 'application/octet-stream')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 443), Handler)
        self.httpd.daemon_threads = True
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(DATA, 'server.pem'), os.path.join(DATA, 'server.key'))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def loopback_up():
    """ifconfig lo up, by ioctl: the namespace starts with it down."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
        req = struct.pack('16sH14x', b'lo', 0)
        flags = struct.unpack('16sH14x', fcntl.ioctl(s, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack('16sH14x', b'lo', flags | IFF_UP))
    finally:
        s.close()


def private_files(tmp):
    """/etc/hosts and the CA bundle, for this mount namespace only."""
    hosts = os.path.join(tmp, 'hosts')
    with open(hosts, 'w') as f:
        f.write('127.0.0.1 localhost openpgpkey.example.net example.net '
                'openpgpkey.example.org example.org\n')
    subprocess.run(['mount', '--bind', hosts, '/etc/hosts'], check=True)
    bundle = '/etc/ssl/certs/ca-certificates.crt'
    if os.path.exists(bundle):
        subprocess.run(['mount', '--bind', os.path.join(DATA, 'ca.pem'), bundle], check=True)
    else:
        subprocess.run(['mount', '-t', 'tmpfs', 'tmpfs', '/etc/ssl/certs'], check=True)
        shutil.copy(os.path.join(DATA, 'ca.pem'), bundle)


def make_keys(ks, wkd, other, user):
    k = {}
    # Frank, trusted fully: his WKD has his revocation; the keyserver has not heard.
    frank = other.create_key('Frank WKD <frank@example.net>')
    user.gpg('--import', input=other.export(frank['fpr']))
    user.gpg('--import-ownertrust', input=b'%s:5:\n' % frank['fpr'].encode())
    ks.keys[frank['fpr']] = other.export(frank['fpr'])
    rev = os.path.join(other.home, 'openpgp-revocs.d', frank['fpr'] + '.rev')
    with open(rev, 'rb') as f:
        other.gpg('--import', input=f.read().replace(b':-----BEGIN', b'-----BEGIN'))
    wkd.keys[('example.net', 'frank')] = other.export(frank['fpr'])
    # Hal, relied on by name: the WKD for his address serves Frank's key.
    hal = other.create_key('Hal Moved <hal@example.net>')
    user.gpg('--import', input=other.export(hal['fpr']))
    ks.keys[hal['fpr']] = other.export(hal['fpr'])
    wkd.keys[('example.net', 'hal')] = ks.keys[frank['fpr']]
    # Alice, own: her WKD copy predates a subkey the keyserver has.
    alice = user.create_key('Alice Owner <alice@example.org>')
    wkd.keys[('example.org', 'alice')] = user.export(alice['fpr'])
    user.gpg('--quick-add-key', alice['fpr'], 'cv25519', 'encr', '1y')
    ks.keys[alice['fpr']] = user.export(alice['fpr'])
    # Dave, own, at a domain nobody serves.
    dave = user.create_key('Dave Nowhere <dave@example.com>')
    ks.keys[dave['fpr']] = user.export(dave['fpr'])
    k.update(frank=frank['fpr'], hal=hal['fpr'], alice=alice['fpr'], dave=dave['fpr'])
    return k


def case_wkd(dm, ks, wkd, user, k):
    before = up.keyring_bytes(user.home)
    rc, out, err, took = up.check_upstream(dm)
    check(rc == 2, 'exit 2 with a key revoked in its WKD copy (got %d)' % rc, err)
    check(up.keyring_bytes(user.home) == before, 'the keyring is unchanged by the check')
    if not out:
        return
    f = up.findings(out, 'key-revoked-upstream', k['frank'])
    check(len(f) == 1 and f[0]['level'] == 'critical' and
          f[0]['message'].startswith("The Web Key Directory's copy of Frank WKD "
                                     "<frank@example.net> (relied on) shows the key revoked") and
          f[0]['hint'] == 'gpg --locate-external-keys frank@example.net',
          'revoked in the WKD only: critical, names the WKD, gpg --locate-external-keys', f)
    f = up.findings(out, 'key-stale-upstream', k['alice'])
    check(len(f) == 1 and f[0]['level'] == 'warning' and
          f[0]['message'].startswith("The Web Key Directory's copy of Alice Owner") and
          'lacks subkey' in f[0]['message'] and
          f[0]['hint'].startswith('update your Web Key Directory with gpg --export-options '
                                  'export-minimal --export ' + k['alice']),
          'own key behind in its WKD only: warning, names the WKD, how to update it', f)
    st = json.loads(out)
    quiet = [x for x in st['findings'] if x['rule'].endswith('-upstream') and
             x['key'] in (k['hal'], k['dave'])]
    check(not quiet, 'another key in the WKD, a domain nobody serves: no finding', quiet)
    by = {x['fingerprint']: x for x in st['keys']}
    hal_err = by.get(k['hal'], {}).get('upstream_error', '')
    check('serves another key for hal@example.net' in hal_err, 'Hal: said why: ' + hal_err)
    dave_err = by.get(k['dave'], {}).get('upstream_error', '')
    check('could not reach the Web Key Directory of example.com' in dave_err and
          'has no key' not in dave_err,
          'Dave, at a domain that does not resolve: not reached, not "no key": ' + dave_err)
    check('upstream_error' not in by.get(k['frank'], {}),
          'Frank: both copies came', by.get(k['frank'], {}).get('upstream_error'))
    frank_path = '/.well-known/openpgpkey/example.net/hu/' + wkd_hash('frank')
    check(('openpgpkey.example.net', frank_path) in wkd.asked,
          'the WKD was asked by its advanced method, by hash', wkd.asked)


def case_wkd_down(dm, wkd, user, k):
    """The WKD server gone: the revocation its copy showed stays (a failed fetch keeps the copy
    fetched before), and the key says the WKD could not be reached."""
    before = up.keyring_bytes(user.home)
    wkd.stop()
    rc, out, err, took = up.check_upstream(dm)
    check(rc == 2 and len(up.findings(out, 'key-revoked-upstream', k['frank'])) == 1,
          'WKD down: the revocation seen before stays (exit %d)' % rc, out[-1500:])
    st = json.loads(out) if out else {'keys': []}
    fr = {x['fingerprint']: x for x in st['keys']}.get(k['frank'], {})
    check('could not reach the Web Key Directory of example.net' in
          fr.get('upstream_error', ''), 'WKD down: said: %s' % fr.get('upstream_error'))
    # Asked again, the domain that does not resolve is still out of reach, not "no key".
    dave_err = {x['fingerprint']: x for x in st['keys']}.get(k['dave'], {}).get(
        'upstream_error', '')
    check('could not reach the Web Key Directory of example.com' in dave_err and
          'has no key' not in dave_err, 'Dave, asked again: not reached: ' + dave_err)
    check(up.keyring_bytes(user.home) == before, 'WKD down: the keyring is unchanged')


def case_wkd_off(user, ks, wkd, k):
    conf = '[upstream]\ninterval = 366d\nrelied-on = %s\nwkd = no\n' % k['hal']
    d2 = Keyctld(user.env, conf=conf, label='keyctld-wkd-off')
    d2.env.pop('INVOCATION_ID', None)
    wkd.asked.clear()
    ks.asked.clear()
    try:
        check(d2.start(['--log-level=debug']), 'keyctld (wkd = no) starts', d2.log())
        up.check_upstream(d2)
        check(not wkd.asked and k['frank'] in ks.asked,
              'wkd = no: the keyserver is asked, the WKD is not', wkd.asked)
    finally:
        check(d2.stop() == 0, 'keyctld (wkd = no) exits 0', d2.log()[-2000:])


def run(ks, wkd, other, user):
    k = make_keys(ks, wkd, other, user)
    with open(os.path.join(user.home, 'dirmngr.conf'), 'w') as f:
        f.write('keyserver hkp://127.0.0.1:%d\nstandard-resolver\n' % ks.port)
    conf = '[upstream]\ninterval = 366d\nrelied-on = %s\n' % k['hal']
    dm = Keyctld(user.env, conf=conf, extra_env={'KEYCTL_UPSTREAM_TIMEOUT': '25'},
                 label='keyctld')
    dm.env.pop('INVOCATION_ID', None)  # keyctld may launch dirmngr only outside systemd
    try:
        check(dm.start(['--log-level=debug']), 'keyctld starts', dm.log())
        check(dm.wait(lambda s: len(s['keys']) >= 4, timeout=60) is not None,
              'keyctld lists the owned and relied-on keys')
        case_wkd(dm, ks, wkd, user, k)
        case_wkd_down(dm, wkd, user, k)
    finally:
        check(dm.stop() == 0, 'keyctld exits 0', dm.log()[-2000:])
    case_wkd_off(user, ks, wkd, k)


def inner():
    loopback_up()
    tmp = procs.tmpdir('keyctl-wkd-')
    private_files(tmp)
    ks, wkd = up.Keyserver(), Wkd()
    other, user = kb.Keyring(), kb.Keyring()
    try:
        run(ks, wkd, other, user)
    finally:
        up.teardown((ks, wkd), (user, other))
    finish()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == '--inner':
        inner()
    if not up.KEYCTL_STATUS or not os.path.exists('/usr/bin/dirmngr'):
        print('SKIP: keyctl-status or dirmngr missing')
        sys.exit(77)
    if os.geteuid() != 0:
        print('SKIP: needs root for its network, mount and pid namespace')
        sys.exit(77)
    # --kill-child: were unshare killed (a timeout), the namespace's first process goes too,
    # and with it everything in the namespace.
    r = subprocess.run(['unshare', '--net', '--mount', '--propagation', 'private', '--pid',
                        '--fork', '--kill-child', '--mount-proc', '--', sys.executable,
                        os.path.abspath(__file__), '--inner'], timeout=280)
    check(r.returncode == 0, 'the namespace run passed (exit %d)' % r.returncode)
    finish()


if __name__ == '__main__':
    main()
