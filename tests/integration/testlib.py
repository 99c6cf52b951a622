# SPDX-License-Identifier: LGPL-2.1-or-later
"""What every integration test script shares: check() prints one `ok`/`FAIL` line per assertion
and remembers the failures; wait_until() polls a condition with a deadline (a test waits for
what it asserts, it never sleeps a fixed time and hopes); finish() prints the summary and exits.
For the tests of the daemon on the bed: card_bed() (a virtual YubiKey holding a new key's
subkeys), daemon_running() (a Keyctld started, stopped, its log shown on failure), bed_main()
(skip, cleanup, leftovers and summary as meson reads them), SystemBus (a private system bus whose
fake logind sends PrepareForSleep), wait_log() (a line in a daemon's log) and use_keyboxd() (a
keyboxd home on GnuPG >= 2.4). run_hint() runs a finding's hint as its user would, against a copy
of the GnuPG home it was made for, and says whether it did what it says.
"""
import contextlib
import os
import sys
import time

failures = []


def check(cond, what, detail=''):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        if detail:
            print('     ' + str(detail).replace('\n', '\n     '), flush=True)
        failures.append(what)
    return cond


def wait_until(pred, timeout=30, step=0.1):
    """The first true value of pred() within timeout seconds, else pred()'s last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def task_switches(pid):
    """Context switches of every thread of pid so far."""
    n = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        n += int(line.split()[1])
        except FileNotFoundError:
            pass
    return n


def cpu_seconds(pid):
    """User plus system CPU time pid has used, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def finish():
    print(f'{len(failures)} failed' if failures else 'all passed')
    sys.exit(1 if failures else 0)


@contextlib.contextmanager
def card_bed(subkeys, serial):
    """An isolated pcscd with a virtual YubiKey 5 NFC #serial holding the subkeys of a new key
    (subkeys as Keyring.create_key takes them), its primary offline (sec#) and the card's stubs
    in the keyring, as users keep theirs: yields (pcscd, keyring, key, card)."""
    import keyctlbed as kb
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        key = kr.create_key(subkeys=subkeys)
        kr.remove_primary_secret(key['fpr'])
        card = pcscd.card(kr.card_profile(key, base='yubikey5nfc', serial=serial))
        pcscd.wait_card(True)
        kr.stubs_from_card(key)
        yield pcscd, kr, key, card


@contextlib.contextmanager
def daemon_running(d, survived='the daemon ran through it'):
    """d (a keyctld_proc.Keyctld) started for the block and stopped after it, whatever happens;
    that it is still alive at the end is checked, and its log's tail shown when a check failed."""
    try:
        check(d.start(), 'the daemon answers')
        yield d
        check(d.alive(), survived)
    finally:
        d.stop()
        if failures:
            print('---- keyctld log (tail) ----')
            print(d.log()[-3000:])


# ---- suspend and resume: logind on a private system bus ---------------------------------
LOGIND = 'org.freedesktop.login1'
MANAGER = 'org.freedesktop.login1.Manager'

BUS_CONF = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
'''


class SystemBus:
    """A private bus configured as a system bus, with python-dbusmock's logind on it: keyctld
    started with DBUS_SYSTEM_BUS_ADDRESS=bus.address follows its PrepareForSleep."""

    def __init__(self):
        self.daemon = self.mock = self.address = None

    def start(self):
        import subprocess
        from keyctlbed import procs
        if not os.path.exists('/usr/bin/dbus-daemon'):
            raise procs.BedUnavailable('dbus-daemon not installed')
        try:
            import dbus  # noqa: F401
            import dbusmock  # noqa: F401
        except ImportError:
            raise procs.BedUnavailable('python3-dbus or python3-dbusmock not installed')
        d = procs.tmpdir('keyctl-sleep-bus-')
        conf = os.path.join(d, 'system.conf')
        with open(conf, 'w') as f:
            f.write(BUS_CONF.format(path=os.path.join(d, 'system_bus_socket')))
        self.daemon = procs.spawn('dbus-daemon-system', ['dbus-daemon', '--config-file', conf,
                                                         '--nofork', '--print-address'],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.address = self.daemon.stdout.readline().strip()
        if not self.address:
            raise procs.BedUnavailable('the private system bus did not start')
        self.mock = procs.spawn('logind-mock', [procs.PYTHON, '-m', 'dbusmock', '--template',
                                                'logind'],
                                env=dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        bus = self._bus()
        try:
            if not wait_until(lambda: bus.name_has_owner(LOGIND) or self.mock.poll() is not None,
                              10) or not bus.name_has_owner(LOGIND):
                raise procs.BedUnavailable('the logind mock did not appear on the bus')
        finally:
            bus.close()
        return self

    def _bus(self):
        import dbus
        return dbus.bus.BusConnection(self.address)

    def prepare_for_sleep(self, going):
        """What logind sends before a suspend (True) and after the resume (False)."""
        import dbus
        bus = self._bus()
        try:
            obj = bus.get_object(LOGIND, '/org/freedesktop/login1')
            obj.EmitSignal(MANAGER, 'PrepareForSleep', 'b', [dbus.Boolean(going)],
                           dbus_interface='org.freedesktop.DBus.Mock')
        finally:
            bus.close()

    def stop(self):
        from keyctlbed import procs
        for p in (self.mock, self.daemon):
            if p:
                procs.stop(p)
        self.mock = self.daemon = None


def log_lines(d, text):
    """The lines of d's log (a keyctld_proc.Keyctld) that contain text."""
    return [x for x in d.log().splitlines() if text in x]


def wait_log(d, text, n=1, timeout=10):
    """Whether d's log holds n lines with text within timeout seconds."""
    return wait_until(lambda: len(log_lines(d, text)) >= n, timeout)


def use_keyboxd(home):
    """Makes home, before any key goes in, a keyboxd home where this GnuPG has keyboxd (>= 2.4):
    common.conf says use-keyboxd, as gpg 2.4 writes it into a home it creates (the bed makes its
    homes itself). Returns whether it did."""
    import subprocess
    r = subprocess.run(['gpgconf', '--list-components'], capture_output=True, text=True)
    if not any(line.startswith('keyboxd:') for line in r.stdout.splitlines()):
        return False
    with open(os.path.join(home, 'common.conf'), 'w') as f:
        f.write('use-keyboxd\n')
    return True


def bed_main(body):
    """Runs body() on the test bed and returns the exit status meson reads: 77 (skip) where the
    bed cannot run, else 1 when a check failed; every bed process is stopped first, and one
    left over is a failure."""
    import keyctlbed as kb
    from keyctlbed import procs
    try:
        body()
    except kb.BedUnavailable as e:
        print(f'SKIP: test bed unavailable: {e}')
        return 77
    finally:
        procs.stop_all()
    check(not procs.leftovers(), 'no process left behind', procs.leftovers())
    print(f'{len(failures)} failure(s)' if failures else 'all passed')
    return 1 if failures else 0


# ---- hints that run ------------------------------------------------------------------------
# A finding's hint is run as the user would, against a copy of the GnuPG home it was made for.
# What "succeeds" means differs by kind; each kind below says it. A hint that cannot run in a
# test comes back with ran False and the reason, for the caller to show and judge.

OFFLINE = 'On the machine that holds the primary key: '


class HintResult:
    def __init__(self, kind, ran, ok, why, out=''):
        self.kind, self.ran, self.ok, self.why, self.out = kind, ran, ok, why, out

    def __repr__(self):
        return f'<{self.kind} ran={self.ran} ok={self.ok}: {self.why}>'


def copy_home(home):
    """A scratch copy of a GnuPG home, without the agents' sockets and with its own logs: what a
    hint may change there changes nothing the test still reads."""
    import shutil
    from keyctlbed import procs
    dst = os.path.join(procs.tmpdir('keyctl-hint-'), 'gnupg')
    shutil.copytree(home, dst, ignore=lambda d, names: [
        n for n in names if n.startswith('S.') or n.endswith('.log') or n.endswith('.lock')
        or n.startswith('.#lk')])
    os.chmod(dst, 0o700)
    with open(os.path.join(dst, 'gpg-agent.conf'), 'w') as f:
        f.write('allow-loopback-pinentry\n')
    # No network: dirmngr asks a keyserver on a port nobody listens on (or _keyserver's).
    with open(os.path.join(dst, 'dirmngr.conf'), 'w') as f:
        f.write('keyserver hkp://127.0.0.1:9\n')
    return dst


def _stop_gnupg(home):
    """The agent and dirmngr a hint started in home, stopped by pid."""
    import re
    import subprocess
    from keyctlbed import procs
    for extra in ([], ['--dirmngr']):
        r = subprocess.run(['gpg-connect-agent', '--no-autostart', '--homedir', home] + extra +
                           ['GETINFO pid', '/bye'], capture_output=True, text=True, timeout=30)
        m = re.search(r'^D (\d+)', r.stdout, re.M)
        if m:
            procs.stop_pid(int(m.group(1)))


def _gpg(home, *args, input=None, timeout=60):
    import subprocess
    env = dict(os.environ, GNUPGHOME=home)
    # --batch (no tty here) and an empty passphrase: the bed's keys have none.
    argv = ['gpg', '--homedir', home, '--batch', '--yes', '--pinentry-mode', 'loopback',
            '--passphrase', ''] + list(args)
    return subprocess.run(argv, input=input, capture_output=True, env=env, timeout=timeout)


def _expiry(home, fpr):
    """The expiry gpg lists for the (sub)key fpr in home: epoch, 0 never, None when unlisted."""
    r = _gpg(home, '--with-colons', '--list-keys', fpr)
    last = None
    for line in r.stdout.decode(errors='replace').splitlines():
        f = line.split(':')
        if f[0] in ('pub', 'sub'):
            last = int(f[6]) if f[6] else 0
        elif f[0] == 'fpr' and f[9] == fpr:
            return last
    return None


def _set_expire(home, hint, m, primary_home):
    """Succeeds when it runs where the hint says: plain, here, exit 0 and the expiry moved;
    with the offline prefix, here gpg must refuse for want of the primary secret (why the hint
    says so) and on the machine that holds it (primary_home) exit 0 and move the expiry."""
    fpr, period, sub = m.group(2), m.group(3), m.group(4)
    target = sub or fpr
    args = ['--quick-set-expire', fpr, period] + ([sub] if sub else [])
    out = ''
    if m.group(1):
        r = _gpg(home, *args)
        out = r.stderr.decode(errors='replace')
        if r.returncode == 0 or 'No secret key' not in out:
            return HintResult('set-expire', True, False,
                              'ran here though the hint says elsewhere: rc %d' % r.returncode,
                              out)
        if not primary_home:
            return HintResult('set-expire', True, False, 'no copy of the primary key here', out)
        home = copy_home(primary_home)
    try:
        before = _expiry(home, target)
        r = _gpg(home, *args)
        out += r.stderr.decode(errors='replace')
        after = _expiry(home, target)
    finally:
        if m.group(1):
            _stop_gnupg(home)
    ok = r.returncode == 0 and after not in (None, before)
    return HintResult('set-expire', True, ok, 'rc %d, expiry %s -> %s%s' % (
        r.returncode, before, after, ' (on the primary\'s machine)' if m.group(1) else ''), out)


def _keyserver(home, m):
    """Succeeds when gpg asks the keyserver for that very key: a listener here stands for the
    keyserver (dirmngr.conf points at it), records the request and answers "not found"."""
    import socket
    import threading
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(4)
    srv.settimeout(60)
    requests = []

    def serve():
        try:
            while True:
                c, _ = srv.accept()
                with c:
                    c.settimeout(10)
                    requests.append(c.recv(4096).decode(errors='replace').split('\r\n')[0])
                    c.sendall(b'HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n')
        except OSError:
            pass  # closed, or no request within the minute
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    with open(os.path.join(home, 'dirmngr.conf'), 'w') as f:
        f.write('keyserver hkp://127.0.0.1:%d\n' % srv.getsockname()[1])
    try:
        r = _gpg(home, '--' + m.group(1), m.group(2), timeout=90)
    finally:
        srv.close()
        t.join(5)
    asked = [q for q in requests if m.group(2).upper() in q.upper()]
    return HintResult('keyserver', True, bool(asked), 'rc %d, the keyserver was asked: %s' % (
        r.returncode, asked or requests), r.stderr.decode(errors='replace'))


def _git_config(home, m):
    """Succeeds when git then reads back the key the hint sets, and gpg signs with it as git
    would have it (gpg --local-user KEY)."""
    import subprocess
    import tempfile
    key = m.group(1)
    with tempfile.TemporaryDirectory(prefix='keyctl-hint-git-') as h:
        env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
        env.update(HOME=h, XDG_CONFIG_HOME=os.path.join(h, 'config'), GIT_CONFIG_NOSYSTEM='1',
                   GNUPGHOME=home)
        r = subprocess.run(['git', 'config', '--global', 'user.signingkey', key], env=env,
                           capture_output=True, timeout=30)
        got = subprocess.run(['git', 'config', '--global', '--get', 'user.signingkey'], env=env,
                             capture_output=True, text=True, timeout=30).stdout.strip()
    s = _gpg(home, '--local-user', key, '--sign', '-o', '-', input=b'x')
    ok = r.returncode == 0 and got == key and s.returncode == 0 and s.stdout
    return HintResult('git-config', True, bool(ok), 'git reads %s; gpg -u signs: rc %d' % (
        got, s.returncode), s.stderr.decode(errors='replace'))


def _default_key(home, m):
    """Succeeds when gpg.conf, changed as the hint says (default-key pointed at the key it
    names, or the line removed), lets plain gpg --sign sign."""
    path = os.path.join(home, 'gpg.conf')
    with open(path) as f:
        lines = [x for x in f.read().splitlines() if not x.strip().startswith('default-key')]
    if m.group(1):
        lines.append('default-key ' + m.group(1))
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    s = _gpg(home, '--sign', '-o', '-', input=b'x')
    return HintResult('default-key', True, s.returncode == 0 and bool(s.stdout),
                      'gpg --sign rc %d' % s.returncode, s.stderr.decode(errors='replace'))


def _offline_primary(home, m):
    """Succeeds when the backup exports the secret key and the deletion leaves sec#."""
    fpr = m.group(1)
    e = _gpg(home, '--armor', '--export-secret-keys', fpr)
    d = _gpg(home, '--delete-secret-keys', fpr + '!')
    ls = _gpg(home, '--list-secret-keys', fpr).stdout.decode(errors='replace')
    ok = (b'BEGIN PGP PRIVATE KEY BLOCK' in e.stdout and d.returncode == 0 and
          ls.lstrip().startswith('sec#'))
    return HintResult('offline-primary', True, ok, 'export rc %d, delete rc %d, sec#: %s' % (
        e.returncode, d.returncode, 'sec#' in ls), d.stderr.decode(errors='replace'))


def _edit_key_select(home, m, subkey):
    """`gpg --edit-key FPR, then "key N" and "keytocard"`: keytocard needs a card and its
    admin PIN, not in this copy; what is checked is that "key N" selects the finding's
    subkey (the N a user types)."""
    r = _gpg(home, '--keyid-format', 'long', '--command-fd', '0', '--edit-key', m.group(1),
             input=('key %s\nquit\n' % m.group(2)).encode())
    out = r.stdout.decode(errors='replace') + r.stderr.decode(errors='replace')
    chosen = [x for x in out.splitlines() if x.startswith('ssb*') or x.startswith('sub*')]
    ok = bool(subkey) and bool(chosen) and all(subkey[-16:] in x for x in chosen[-1:])
    return HintResult('edit-key', True, ok, '"key %s" selects %s (want 0x%s); keytocard needs '
                      'the card' % (m.group(2), chosen[-1:] or 'nothing', (subkey or '')[-16:]),
                      out)


def run_hint(home, hint, subkey=None, primary_home=None):
    """Runs hint (a finding's) against a copy of the GnuPG home it was made for, with --batch
    where gpg needs it, a timeout, and no network; returns a HintResult. subkey: the finding's,
    for hints that select one; primary_home: a home that still holds the primary secret (the
    offline machine) for hints that say to run there. ran is False for a kind no test can run
    here; why then says why."""
    import re
    kinds = [
        (r'(%s)?gpg --quick-set-expire ([0-9A-F]{40}) (\S+?)(?: ([0-9A-F]{40}))?(?:;|$)'
         % re.escape(OFFLINE), lambda h, m: _set_expire(h, hint, m, primary_home)),
        (r'gpg --(refresh-keys|recv-keys) ([0-9A-F]{40})', _keyserver),
        (r'git config --global user\.signingkey (\S+)', _git_config),
        (r'(?i)point default-key in gpg\.conf at ([0-9A-F]{40}!?)', _default_key),
        (r'Point default-key in gpg\.conf at a valid key, or remove the line()', _default_key),
        (r'\(gpg --armor --export-secret-keys ([0-9A-F]{40})\)', _offline_primary),
        (r'gpg --edit-key ([0-9A-F]{40}), then "key (\d+)" and "keytocard"',
         lambda h, m: _edit_key_select(h, m, subkey)),
    ]
    for pattern, fn in kinds:
        m = re.search(pattern, hint)
        if not m:
            continue
        copy = copy_home(home)
        try:
            return fn(copy, m)
        finally:
            _stop_gnupg(copy)
    return HintResult('other', False, False, 'no runnable command in it')
