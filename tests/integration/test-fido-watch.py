#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# watch_fido on umockdev hidraw nodes, through fido-watch-probe (watch_fido on a loop, printing
# "pending <usb syspath> <serial> <since>" and "done ..." lines): the token's side of real
# exchanges is replayed on each node with umockdev's script runner ("r <delay_ms> <bytes>" lines,
# written to the node's pty while the probe reads it).
#
# Real bytes, cited (the same as tests/unit/test-fido-hid.c):
#  - FIDO2: a YubiKey "Security Key by Yubico" (1050:0120) makeCredential recorded with umockdev:
#    its KEEPALIVE UPNEEDED reports with their recorded gaps, then its 4-report CBOR answer; and its
#    report descriptor. martinpitt/umockdev devices/hidraw/fido2.script and fido2.umockdev,
#    commit 92c8a005e84b8d6c2dc8229b3cc4b75c9d878872.
#  - U2F: the 0x6985 answer and the authentication answer of libfido2's recorded HID reports,
#    Yubico/libfido2 fuzz/wiredata_u2f.h, commit 8ee8e5a2eb94575c8baeda9c7bf1d4f27a3b1db4.
#  - The keyboard: the boot keyboard report descriptor of USB HID 1.11, Appendix E.6.
#
# Asserts: pending within 1 s of the first UPNEEDED, done on the answer (not at the silence
# timeout); U2F: a lone 0x6985 raises nothing, polling does, done on the answer; done 2 s after
# the last keepalive when no answer comes; a token unplugged while waiting is done; two tokens
# stay two (each its own USB syspath and serial, one's end not the other's); a keyboard's hidraw
# node is never opened (/proc/<pid>/fd of the probe); an idle probe does not wake (its loop count
# over 3 s, asked by SIGUSR1, grows by the SIGUSR1 alone).
# Runs itself under umockdev-wrapper; exits 77 when umockdev is missing.
import os, select, signal, stat, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.environ.get('KEYCTL_SRCDIR', '.'), 'tests', 'bed'))
from keyctlbed import procs, udev  # noqa: E402
from testlib import check, failures  # noqa: E402

try:
    udev.reexec()
    bed = udev.Udev()
except procs.BedUnavailable as e:
    print(f'SKIP: {e}')
    sys.exit(77)

PROBE = os.environ['FIDO_WATCH_PROBE']

# umockdev devices/hidraw/fido2.umockdev: the Security Key's report descriptor.
FIDO_RDESC = '06D0F10901A1010920150026FF007508954081020921150026FF00750895409102C0'
# USB HID 1.11, Appendix E.6.
KEYBOARD_RDESC = ('05010906A101050719E029E7150025017501950881029501750881019505750105081901'
                  '2905910295017503910195067508150025650507190029658100C0')


def report(hexstr):
    b = bytes.fromhex(hexstr)
    return b + bytes(64 - len(b))


# umockdev devices/hidraw/fido2.script: the token's reports after makeCredential.
KEEPALIVE_UPNEEDED = report('01b20003bb000102')
KEEPALIVE_GAPS_MS = [269, 287, 289, 287, 288, 288, 288, 288, 288, 287, 288, 288]
CBOR_ANSWER = [report(h) for h in (
    '01b200039000cb00a301a262696458404ecf8e5bb4ca8d928851323d8d4718e9c71d2663160a58098b98fd25c2'
    '2fd4db324fd72b83742298fd0a68c698055c10',
    '01b2000300a5b69eb09f7f07849a4be98bd3464a3164747970656a7075626c69632d6b6579025825aeb0388497'
    'c8c3d375c157ee720698ac7878be870ad8f1aa',
    '01b200030199372fac5db45b5401000001ee0358473045022100fd6d7768503f8a2032e83c195c497cfbddc00f'
    '512f10a01831b08161738264ba02206c7af677',
    '01b2000302729f8d487e283eb7dea1c7623d093f161fd1e38eb0a9f8cc245593860000000000000000000000',
)]
# libfido2 fuzz/wiredata_u2f.h: WIREDATA_CTAP_U2F_6985 and the first report of
# WIREDATA_CTAP_U2F_AUTH.
U2F_6985 = report('000099018300026985')
U2F_AUTH = report('00009901' '83004e01' '0000002c' '30450220' '1cf57cf6' 'debee986' 'ee97b764'
                  'a34e7a70' '85d066f9' 'f0cd045d' '97f23c22' 'e30e61c8' '02210097' 'efae36e6'
                  '179f5e2d' 'd78c34a7')


def encode(data):
    """umockdev's script data: bytes < 32 as '^' + (b + 64), '^' as '^`', the rest verbatim."""
    out = bytearray()
    for b in data:
        if b < 32:
            out += bytes([0x5e, b + 64])
        elif b == 0x5e:
            out += b'^`'
        else:
            out.append(b)
    return bytes(out)


def script(steps):
    """steps: (delay_ms, report) pairs; returns the path of an umockdev script of 'r' lines."""
    fd, path = tempfile.mkstemp(prefix='fido-script-', dir=procs.tmpdir('fido-watch-'))
    with os.fdopen(fd, 'wb') as f:
        for delay, data in steps:
            f.write(b'r %d ' % delay + encode(data) + b'\n')
    return path


def token(n, rdesc, serial=None, vid='1050', pid='0120'):
    """A USB token with one HID interface whose hidraw node is /dev/hidraw<n>."""
    base = f'/devices/pci0000:00/0000:00:14.0/usb1/1-{n + 1}'
    serial_line = f'A: serial={serial}\n' if serial else ''
    text = (f'P: {base}\nE: DEVTYPE=usb_device\nE: SUBSYSTEM=usb\nE: DRIVER=usb\n'
            f'A: idVendor={vid}\nA: idProduct={pid}\n{serial_line}\n'
            f'P: {base}/1-{n + 1}:1.0\nE: DEVTYPE=usb_interface\nE: SUBSYSTEM=usb\n'
            f'E: DRIVER=usbhid\nA: bInterfaceClass=03\n\n'
            f'P: {base}/1-{n + 1}:1.0/0003:{vid.upper()}:{pid.upper()}.{n + 1:04X}\n'
            f'E: SUBSYSTEM=hid\nE: DRIVER=hid-generic\nH: report_descriptor={rdesc}\n\n'
            f'P: {base}/1-{n + 1}:1.0/0003:{vid.upper()}:{pid.upper()}.{n + 1:04X}/hidraw/hidraw{n}\n'
            f'N: hidraw{n}\nE: DEVNAME=/dev/hidraw{n}\nE: SUBSYSTEM=hidraw\n')
    syspaths = bed.add_text(text)
    dev = udev.Device(f'hidraw{n}', syspaths)
    bed.devices.append(dev)
    return dev, '/sys' + base


def pty_of(n):
    return os.readlink(os.path.join(bed.tb.get_root_dir(), 'dev', f'hidraw{n}'))


class Probe:
    """fido-watch-probe as our child; stopped by pid whatever happens."""

    def __init__(self, argv_prefix=()):
        self.stderr = open(os.path.join(procs.tmpdir('fido-watch-'), 'stderr'), 'w+')
        env = dict(os.environ, UMOCKDEV_DIR=bed.tb.get_root_dir())
        self.proc = procs.spawn('fido-watch-probe', list(argv_prefix) + [PROBE],
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.lines = []   # (monotonic time read, words)
        self.buf = b''

    def poll(self, timeout):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if not r:
                return
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                return
            self.buf += data
            while b'\n' in self.buf:
                line, self.buf = self.buf.split(b'\n', 1)
                self.lines.append((time.monotonic(), line.decode().split()))
                print('     ' + line.decode(), flush=True)

    def wait_for(self, pred, timeout=5.0, start=0):
        end = time.monotonic() + timeout
        while True:
            for i, (t, words) in enumerate(self.lines[start:], start):
                if pred(words):
                    return t, words, i
            left = end - time.monotonic()
            if left <= 0:
                return None, None, None
            self.poll(min(0.1, left))

    def fds(self):
        out = set()
        d = f'/proc/{self.proc.pid}/fd'
        for name in os.listdir(d):
            try:
                out.add(os.readlink(os.path.join(d, name)))
            except OSError:
                pass
        return out

    def iterations(self):
        start = len(self.lines)
        os.kill(self.proc.pid, signal.SIGUSR1)
        _, words, _ = self.wait_for(lambda w: w[0] == 'iterations', 5, start)
        return int(words[1]) if words else None

    def log(self):
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read()

    def stop(self):
        procs.stop(self.proc)


def line(kind, syspath):
    return lambda w: len(w) == 4 and w[0] == kind and w[1] == syspath


def since_of(words):
    return int(words[3]) / 1e6


probe = None
try:
    # Present at start (the enumeration): the FIDO2 token and a keyboard.
    a, a_sys = token(0, FIDO_RDESC, serial='FIDOA0001')
    kbd, kbd_sys = token(1, KEYBOARD_RDESC, vid='046d', pid='c31c')
    probe = Probe()
    _, ready, _ = probe.wait_for(lambda w: w == ['ready'], 10)
    check(ready is not None, 'probe started and enumerated', probe.log()[-2000:])
    # Plugged afterwards (the monitor): the U2F token, a FIDO2 token left waiting, and one to unplug.
    b, b_sys = token(2, FIDO_RDESC)
    c, c_sys = token(3, FIDO_RDESC, serial='FIDOC0003')
    e, e_sys = token(4, FIDO_RDESC, serial='FIDOE0005')
    fido = [0, 2, 3, 4]
    def opened():
        return all(pty_of(n) in probe.fds() for n in fido)
    deadline = time.monotonic() + 10
    while not opened() and time.monotonic() < deadline:
        probe.poll(0.1)
    check(opened(), 'the four FIDO nodes are open in the probe (enumerated and hotplugged)',
          f'fds {sorted(probe.fds())}, ptys {[pty_of(n) for n in fido]}\n' + probe.log()[-3000:])
    check(pty_of(1) not in probe.fds(), "the keyboard's hidraw node is never opened")

    # The replays, all at once: each node has its own script runner.
    first_ms = 300
    a_steps = [(first_ms if i == 0 else KEEPALIVE_GAPS_MS[i], KEEPALIVE_UPNEEDED) for i in range(8)]
    a_answer_ms = first_ms + sum(KEEPALIVE_GAPS_MS[1:8]) + 124
    a_steps += [(124, CBOR_ANSWER[0])] + [(0, r) for r in CBOR_ANSWER[1:]]
    # U2F: a lone 0x6985 (a check-only lookup) at 200 ms, then polling from 1.5 s, 100 ms apart.
    b_steps = [(200, U2F_6985), (1300, U2F_6985)] + [(100, U2F_6985)] * 4 + [(100, U2F_AUTH)]
    b_poll_ms, b_answer_ms = 1500, 2000
    # No answer: three keepalives, then silence.
    c_steps = [(first_ms, KEEPALIVE_UPNEEDED), (288, KEEPALIVE_UPNEEDED), (288, KEEPALIVE_UPNEEDED)]
    c_last_ms = first_ms + 576
    # Unplugged while it waits: keepalives for 6 s.
    e_steps = [(first_ms, KEEPALIVE_UPNEEDED)] + [(288, KEEPALIVE_UPNEEDED)] * 20

    scripts = {0: script(a_steps), 2: script(b_steps), 3: script(c_steps), 4: script(e_steps)}
    start = len(probe.lines)
    t0 = time.monotonic()
    wall0 = time.time()
    for n, path in scripts.items():
        bed.tb.load_script(f'/dev/hidraw{n}', path)

    # FIDO2 with an answer.
    t, w, _ = probe.wait_for(line('pending', a_sys), 5, start)
    check(t is not None and t - t0 <= first_ms / 1000 + 1.0,
          'FIDO2 token: pending within 1 s of its first KEEPALIVE UPNEEDED',
          f'after {None if t is None else round(t - t0, 3)} s')
    if w:
        check(w[2] == 'FIDOA0001', f'its USB serial named ({w[2]})')
        check(abs(since_of(w) - (wall0 + first_ms / 1000)) < 0.6,
              'since is the first keepalive', f'{since_of(w) - wall0:.3f} s after the replay began')
    # Two tokens stay two: the U2F token waits at the same time, under its own name.
    tb_, wb, _ = probe.wait_for(line('pending', b_sys), 5, start)
    check(tb_ is not None and tb_ - t0 >= b_poll_ms / 1000 - 0.2 and
          tb_ - t0 <= b_poll_ms / 1000 + 1.0,
          'U2F token: pending once it polls (second 0x6985 within 1 s), not on the lone one',
          f'after {None if tb_ is None else round(tb_ - t0, 3)} s')
    if wb:
        check(wb[2] == '-', 'the U2F token has no serial')
        check(abs(since_of(wb) - (wall0 + b_poll_ms / 1000)) < 0.6,
              'its since is the first 0x6985 of the polling',
              f'{since_of(wb) - wall0:.3f} s after the replay began')
    td_b, _, _ = probe.wait_for(line('done', b_sys), 5, start)
    check(td_b is not None and td_b - t0 >= b_answer_ms / 1000 - 0.2 and
          td_b - t0 <= b_answer_ms / 1000 + 1.0,
          "U2F token: done on the authentication answer",
          f'after {None if td_b is None else round(td_b - t0, 3)} s')
    td_a, _, i_a = probe.wait_for(line('done', a_sys), 6, start)
    check(td_a is not None and td_a - t0 >= a_answer_ms / 1000 - 0.2 and
          td_a - t0 <= a_answer_ms / 1000 + 1.0,
          'FIDO2 token: done on its CBOR answer (not at the 2 s silence)',
          f'after {None if td_a is None else round(td_a - t0, 3)} s, answer at '
          f'{a_answer_ms / 1000} s')
    check(td_a is not None and td_b is not None and td_a > td_b,
          "two tokens stay two: the U2F token's end did not end the FIDO2 token's wait")

    # No answer: done 2 s after the last keepalive.
    tc, _, _ = probe.wait_for(line('pending', c_sys), 5, start)
    check(tc is not None, 'silent token: pending')
    td_c, _, _ = probe.wait_for(line('done', c_sys), 6, start)
    silence = None if td_c is None else td_c - t0 - c_last_ms / 1000
    check(silence is not None and 1.9 <= silence <= 2.8,
          'silent token: done 2 s after its last keepalive', f'{silence} s')

    # Unplugged while waiting.
    te, _, _ = probe.wait_for(line('pending', e_sys), 5, start)
    check(te is not None, 'token to unplug: pending')
    check(probe.wait_for(line('done', e_sys), 0.1, start)[0] is None,
          'token to unplug: still pending while keepalives come')
    tr = time.monotonic()
    bed.remove(e)
    td_e, _, _ = probe.wait_for(line('done', e_sys), 5, start)
    check(td_e is not None and td_e - tr <= 1.0, 'token unplugged while waiting: done within 1 s',
          f'{None if td_e is None else round(td_e - tr, 3)} s')
    ends = [w[:2] for _, w in probe.lines[start:] if w[0] in ('pending', 'done')]
    check(sorted(ends) == sorted([[k, s] for s in (a_sys, b_sys, c_sys, e_sys)
                                  for k in ('pending', 'done')]),
          'one pending and one done per token, nothing else (no flapping)', ends)

    check(pty_of(1) not in probe.fds(), "the keyboard's hidraw node was never opened")

    # Idle: nothing waits, no frame comes. Over 3 s the loop wakes for the SIGUSR1 alone.
    probe.poll(0.5)
    n1 = probe.iterations()
    time.sleep(3)
    n2 = probe.iterations()
    check(n1 is not None and n2 is not None and n2 - n1 == 1,
          'idle probe: no wake-up in 3 s (loop iterations grow by the SIGUSR1 alone)',
          f'{n1} -> {n2}')

    if failures:
        print(probe.log()[-6000:])
    probe.stop()
    probe = None

    # No permission on one FIDO node (a probe run as nobody): logged once, also after a change
    # event, skipped; the node it may read is still watched.
    if os.geteuid() == 0 and os.path.exists('/usr/bin/setpriv'):
        denied, denied_sys = token(5, FIDO_RDESC, serial='FIDOD0006')
        allowed, allowed_sys = token(6, FIDO_RDESC, serial='FIDOF0007')
        bed.open_to_all()
        # umockdev's preload connects to a socket per node on open(): nobody must reach them.
        for dirpath, _, filenames in os.walk(bed.tb.get_root_dir()):
            for fn in filenames:
                p = os.path.join(dirpath, fn)
                if stat.S_ISSOCK(os.lstat(p).st_mode):
                    os.chmod(p, 0o777)
        os.chown(pty_of(5), 0, 0)
        os.chmod(pty_of(5), 0o600)
        os.chown(pty_of(6), 65534, 65534)
        probe = Probe(['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'])
        _, ready, _ = probe.wait_for(lambda w: w == ['ready'], 10)
        check(ready is not None, 'probe as nobody started', probe.log()[-2000:])
        deadline = time.monotonic() + 10
        while pty_of(6) not in probe.fds() and time.monotonic() < deadline:
            probe.poll(0.1)
        check(pty_of(6) in probe.fds(), 'as nobody: the node it may read is open')
        bed.change(denied, denied.syspaths[-1])
        start = len(probe.lines)
        t0 = time.monotonic()
        bed.tb.load_script('/dev/hidraw6', script([(first_ms, KEEPALIVE_UPNEEDED)] * 2))
        t, _, _ = probe.wait_for(line('pending', allowed_sys), 5, start)
        check(t is not None and t - t0 <= first_ms / 1000 + 1.0,
              'as nobody: the readable token still reports its wait')
        refused = [ln for ln in probe.log().splitlines()
                   if 'Cannot read FIDO token' in ln and denied_sys in ln]
        check(len(refused) == 1 and 'Permission denied' in refused[0],
              'as nobody: the unreadable node is logged once (start and a change event), '
              'with the reason', refused)
        check(probe.proc.poll() is None, 'as nobody: probe still running')
    else:
        print('skip permission check: needs root and setpriv')
finally:
    if probe:
        probe.stop()


def keyctld_token(d, pred, timeout):
    """keyctld's token of the Security Key FIDOK0009 once pred(token) holds, polled every 20 ms
    (the tokens of the probe's tests are still plugged in, one of them waiting)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and d.alive():
        st = d.status(timeout=5) or {}
        t = next((t for t in st.get('tokens', []) if t['serial'] == 'FIDOK0009' and
                  t['present'] and pred(t)), None)
        if t:
            return t
        time.sleep(0.02)
    return None


# keyctld itself (main-touch.c): the wait reaches Token.touch_pending {fido} of the token its udev
# sighting made, and goes when the answer comes.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keyctld_proc import Keyctld  # noqa: E402

d = None
try:
    k, k_sys = token(9, FIDO_RDESC, serial='FIDOK0009')
    # A GNUPGHOME not made yet: keyctld waits for it and runs no gpg, so nothing forks under
    # umockdev's preload (not fork-safe: doc/coexistence.md).
    home = os.path.join(procs.tmpdir('fido-gnupg-'), 'not-yet')
    d = Keyctld({'GNUPGHOME': home, 'UMOCKDEV_DIR': bed.tb.get_root_dir()})
    check(d.start(), 'keyctld started under umockdev', open(d.log_path).read()[-2000:])
    t = keyctld_token(d, lambda t: True, 15)
    check(t is not None, 'keyctld: the Security Key is a token (its udev sighting)',
          (d.status() or {}).get('tokens'))
    steps = [(300, KEEPALIVE_UPNEEDED)] + [(288, KEEPALIVE_UPNEEDED)] * 5
    steps += [(124, CBOR_ANSWER[0])] + [(0, r) for r in CBOR_ANSWER[1:]]
    t0 = time.monotonic()
    bed.tb.load_script('/dev/hidraw9', script(steps))
    up = keyctld_token(d, lambda t: t.get('touch_pending'), 5)
    t_up = time.monotonic() - t0
    tp = up and up['touch_pending']
    check(tp and tp['application'] == 'fido' and t_up <= 0.3 + 1.0,
          f'keyctld: touch_pending {{fido}} within 1 s of the first keepalive ({t_up:.2f} s)',
          tp)
    down = keyctld_token(d, lambda t: not t.get('touch_pending'), 5)
    t_down = time.monotonic() - t0
    answer = (300 + 5 * 288 + 124) / 1000
    check(down is not None and answer - 0.2 <= t_down <= answer + 1.0,
          f'keyctld: touch_pending gone on the answer ({t_down:.2f} s, answer at {answer:.2f} s)')
    check(d.alive(), 'keyctld still running')
finally:
    if d:
        rc = d.stop()
        check(rc == 0, f'keyctld exits 0 on SIGTERM (got {rc})')

print(f'{len(failures)} failure(s)' if failures else 'all passed')
sys.exit(1 if failures else 0)
