#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# udev-watch on umockdev devices, through udev-watch-probe (udev_watch + a real model, printing the
# model's token events as JSON lines): the start-up enumeration sees devices present before start
# (uninitialized: no udev database here); a YubiKey 5 and a Nitrokey 3 plugged and unplugged give
# added and removed tokens with the right kind, model and interfaces, one token per physical
# device; an unlisted smartcard reader is identified by its descriptors, a mouse is not a token;
# without permission on the YubiKey's node the token says so and the watcher goes on.
# Also checks udev-rules/70-keyctl.rules against the same devices with a small rules evaluator.
# Runs itself under umockdev-wrapper; exits 77 when umockdev is missing.
import json, os, re, select, subprocess, sys, time

sys.path.insert(0, os.path.join(os.environ.get('KEYCTL_SRCDIR', '.'), 'tests', 'bed'))
from keyctlbed import procs, udev  # noqa: E402
from testlib import check, failures

try:
    udev.reexec()
    bed = udev.Udev()
except procs.BedUnavailable as e:
    print(f'SKIP: {e}')
    sys.exit(77)

PROBE = os.environ['UDEV_WATCH_PROBE']
RULES = os.path.join(os.environ['KEYCTL_SRCDIR'], 'udev-rules', '70-keyctl.rules')
EACCES_TEXT = ("no permission to read the YubiKey's OTP interface "
               "(install udev-rules/70-keyctl.rules)")


class Probe:
    """udev-watch-probe as our child; stopped by pid whatever happens."""

    def __init__(self, argv_prefix=()):
        self.stderr = open(os.path.join(procs.tmpdir('udev-watch-'), 'stderr'), 'w+')
        self.proc = procs.spawn('udev-watch-probe', list(argv_prefix) + [PROBE],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=self.stderr, env=dict(os.environ, UMOCKDEV_DIR=bed.tb.get_root_dir()))
        self.events = []
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
                self.events.append(json.loads(line))
                print('     ' + line.decode(), flush=True)

    def wait_for(self, pred, timeout=5.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for ev in self.events:
                if pred(ev):
                    return ev
            self.poll(min(0.1, end - time.monotonic()))
        return next((ev for ev in self.events if pred(ev)), None)

    def log(self):
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read()

    def stop(self):
        procs.stop(self.proc)


def token_ev(kind, types=('token-added', 'token-changed')):
    return lambda ev: ev['event'] in types and ev.get('kind') == kind and ev.get('present')


def gone(token_id):
    return lambda ev: ev.get('id') == token_id and (
        ev['event'] == 'token-removed' or (ev['event'] == 'token-changed' and not ev['present']))


# An unlisted CCID reader (only its descriptors say it is smartcard-shaped) and a mouse.
READER = """P: /devices/pci0000:00/0000:00:14.0/usb1/1-9
N: bus/usb/001/020
E: DEVNAME=/dev/bus/usb/001/020
E: DEVTYPE=usb_device
E: SUBSYSTEM=usb
A: idVendor=04e6
A: idProduct=5816
A: bcdDevice=0100
A: product=Test CCID Reader
H: descriptors=12010002000000 40e6041658000101020301 09021900010100800f 0904000001 0b000000 0705810308000a
"""
READER = re.sub(r'(H: descriptors=)(.*)', lambda m: m.group(1) + m.group(2).replace(' ', ''),
                READER)
MOUSE = """P: /devices/pci0000:00/0000:00:14.0/usb1/1-10
N: bus/usb/001/021
E: DEVNAME=/dev/bus/usb/001/021
E: DEVTYPE=usb_device
E: SUBSYSTEM=usb
A: idVendor=046d
A: idProduct=c52b
A: bcdDevice=1201
A: product=USB Receiver
"""


def rules_eval(path, action='add'):
    """The rules' effect on one device: (tags, SYSTEMD_USER_WANTS). Understands the subset the
    file uses: ACTION, SUBSYSTEM, KERNEL, ENV{DEVTYPE}, ATTR, ATTRS, GOTO, LABEL, TAG+=, ENV+=."""
    def props(p):
        out = {}
        try:
            with open(p + '/uevent') as f:
                for line in f:
                    k, _, v = line.strip().partition('=')
                    out[k] = v
        except OSError:
            pass
        return out

    def attr(p, name):
        try:
            with open(os.path.join(p, name)) as f:
                return f.read().strip()
        except OSError:
            return None

    def glob_match(pattern, value):
        if value is None:
            return False
        return any(re.fullmatch(alt.replace('*', '.*'), value) for alt in pattern.split('|'))

    env = props(path)
    tags, wants = set(), set()
    lines = [ln.strip() for ln in open(RULES) if ln.strip() and not ln.startswith('#')]
    i = 0
    while i < len(lines):
        ok, jump = True, None
        assigns = []
        for key, op, val in re.findall(r'([A-Z]+(?:\{[^}]*\})?)(==|!=|\+=|=)"([^"]*)"', lines[i]):
            if op in ('==', '!='):
                if key == 'ACTION':
                    m = glob_match(val, action)
                elif key == 'SUBSYSTEM':
                    m = glob_match(val, env.get('SUBSYSTEM'))
                elif key == 'KERNEL':
                    m = glob_match(val, os.path.basename(path))
                elif key.startswith('ENV{'):
                    m = glob_match(val, env.get(key[4:-1]))
                elif key.startswith('ATTR{'):
                    m = glob_match(val, attr(path, key[5:-1]))
                elif key.startswith('ATTRS{'):
                    # all ATTRS of a rule must match on one device up the chain; one key here
                    m = False
                    p = path
                    while p.startswith('/sys/devices/'):
                        if glob_match(val, attr(p, key[6:-1])):
                            m = True
                            break
                        p = os.path.dirname(p)
                else:
                    raise ValueError(f'rules_eval does not know {key}')
                ok = ok and (m if op == '==' else not m)
            elif key == 'GOTO':
                jump = val
            elif key != 'LABEL':
                assigns.append((key, val))
        if ok:
            for key, val in assigns:
                if key == 'TAG':
                    tags.add(val)
                elif key == 'ENV{SYSTEMD_USER_WANTS}':
                    wants.add(val)
            if jump:
                i = next(k for k, ln in enumerate(lines) if ln == f'LABEL="{jump}"')
                continue
        i += 1
    return tags, wants


probe = None
try:
    # 1. Present before start: the enumeration must see it without any udev database.
    yk = bed.add('yubikey5nfc', serial='12345678')
    probe = Probe()
    ev = probe.wait_for(lambda ev: ev['event'] == 'ready')
    check(ev is not None, 'probe started and enumerated')
    yk_ev = probe.wait_for(token_ev('yubikey'), 1)
    check(yk_ev is not None, 'YubiKey present before start is seen by the enumeration')
    if yk_ev:
        check(yk_ev['model'] == 'YubiKey 5', f"YubiKey model {yk_ev['model']!r}")
        check(yk_ev['firmware'] == '5.4.3', f"YubiKey firmware from bcdDevice {yk_ev['firmware']!r}")
        check(yk_ev['serial'] == '12345678', f"YubiKey serial from USB {yk_ev['serial']!r}")
        check(yk_ev['interfaces'] == ['otp', 'fido', 'ccid'], f"interfaces {yk_ev['interfaces']}")
        check((yk_ev['vendor'], yk_ev['product']) == ('1050', '0407'), 'usb ids 1050:0407')
    # the OTP read fails here (no real key behind the node): no error text, no crash
    probe.poll(1.5)
    check(probe.proc.poll() is None, 'probe survives the failed OTP read')
    check(all(not e.get('error') for e in probe.events), 'no error text as root without a key')

    # 2. Hotplug a Nitrokey 3: one token for the device and its hidraw node.
    nk = bed.add('nitrokey3')
    nk_ev = probe.wait_for(token_ev('nitrokey', ('token-added',)))
    check(nk_ev is not None, 'Nitrokey 3 plugged in: token added')
    if nk_ev:
        check(nk_ev['model'] == 'Nitrokey 3', f"Nitrokey model {nk_ev['model']!r}")
        check(nk_ev['interfaces'] == ['fido', 'ccid'], f"Nitrokey interfaces {nk_ev['interfaces']}")
        check(nk_ev['serial'] == udev.DEFAULT_SERIALS['nitrokey3'], 'Nitrokey serial from USB')
    probe.poll(0.5)
    added = [e for e in probe.events if e['event'] == 'token-added' and e['kind'] == 'nitrokey']
    check(len(added) == 1, f'one token per physical device ({len(added)} added)')

    # 3. An unlisted CCID reader known by its descriptors only; a mouse is not a token.
    check(bed.add_text(READER) and bed.add_text(MOUSE), 'reader and mouse added')
    rd = probe.wait_for(lambda ev: ev['event'] == 'token-added' and ev['vendor'] == '04e6')
    check(rd is not None and rd['kind'] == 'unknown' and rd['interfaces'] == ['ccid']
          and rd['model'] == 'Test CCID Reader', f'unlisted CCID reader from descriptors: {rd}')
    probe.poll(0.5)
    check(not any(e.get('vendor') == '046d' for e in probe.events), 'the mouse is no token')

    # 4. The rules, on the same devices.
    for d, name in ((yk, 'YubiKey'), (nk, 'Nitrokey')):
        tags, wants = rules_eval(d.syspath)
        check(tags == {'uaccess', 'systemd'} and wants == {'keyctld.service'},
              f'rules: {name} usb_device gets uaccess, systemd, keyctld.service ({tags}, {wants})')
        hidraw = [p for p in d.syspaths if '/hidraw/' in p]
        check(len(hidraw) == 1 and rules_eval(hidraw[0]) == ({'uaccess'}, set()),
              f'rules: {name} hidraw gets uaccess only')
        for p in d.syspaths[1:]:
            if '/hidraw/' not in p:
                check(rules_eval(p) == (set(), set()), f'rules: nothing for {os.path.basename(p)}')
        check(rules_eval(d.syspath, 'remove') == (set(), set()), f'rules: nothing on remove')
    for p in ('/sys/devices/pci0000:00/0000:00:14.0/usb1/1-9',
              '/sys/devices/pci0000:00/0000:00:14.0/usb1/1-10'):
        check(rules_eval(p) == (set(), set()), f'rules: nothing for {p.rsplit("/", 1)[1]}')

    # 4b. udevd's own rule engine (udevadm test, systemd 252 has no `udevadm verify`) on the
    # test bed, our file in a private mount namespace's /etc/udev/rules.d: root only.
    if os.geteuid() == 0 and os.path.exists('/usr/bin/udevadm'):
        def udevadm_test(syspath):
            cmd = ('mount -t tmpfs none /etc/udev/rules.d && cp "$1" /etc/udev/rules.d/ && '
                   'udevadm test --action=add "$2"')
            r = subprocess.run(['unshare', '-m', 'sh', '-c', cmd, 'sh', RULES, syspath],
                               env=dict(os.environ, UMOCKDEV_DIR=bed.tb.get_root_dir()),
                               capture_output=True, text=True, timeout=60)
            out = r.stdout + r.stderr
            # systemd 252 prints properties flush left, 257 indents them under "Properties:".
            props = dict(ln.strip().split('=', 1) for ln in out.splitlines()
                         if re.match(r'^\s*(TAGS|SYSTEMD_USER_WANTS)=', ln))
            bad = [ln for ln in out.splitlines() if '70-keyctl.rules' in ln and
                   re.search(r'invalid|error|unknown|ignor', ln, re.I)]
            return r.returncode, props, bad, out
        rc, props, bad, out = udevadm_test(yk.syspath)
        if rc != 0 and 'unshare' in out:
            print('skip udevadm test: no mount namespace')
        else:
            check(rc == 0 and not bad, f'udevadm test: 70-keyctl.rules parses cleanly {bad}')
            check('uaccess' in props.get('TAGS', '').split(':') and
                  'keyctld.service' in props.get('SYSTEMD_USER_WANTS', '').split(),
                  f'udevadm test: YubiKey usb_device {props}')
            rc, props, bad, out = udevadm_test([p for p in yk.syspaths if '/hidraw/' in p][0])
            check('uaccess' in props.get('TAGS', '').split(':'), f'udevadm test: hidraw {props}')

    # 5. Unplug both: their USB sightings go.
    bed.remove(nk)
    check(probe.wait_for(gone(nk_ev['id']) if nk_ev else lambda ev: False) is not None,
          'Nitrokey unplugged: token removed')
    bed.remove(yk)
    check(probe.wait_for(gone(yk_ev['id']) if yk_ev else lambda ev: False) is not None,
          'YubiKey unplugged: token removed')
    check(probe.proc.poll() is None, 'probe still running')
    if failures:
        print(probe.log())
    probe.stop()
    rc = probe.proc.returncode
    check(rc == 0, f'probe exits 0 on SIGTERM (got {rc})')
    probe = None

    # 6. No permission on the YubiKey's usbfs node: the token says why; nothing fatal.
    if os.geteuid() == 0 and os.path.exists('/usr/bin/setpriv'):
        yk = bed.add('yubikey5nfc', serial='87654321')
        root = bed.tb.get_root_dir()
        for dirpath, dirnames, filenames in os.walk(root):
            os.chmod(dirpath, 0o755)
        os.chmod(root, 0o1777)  # the fake netlink sockets live there
        node_path = None
        for dirpath, _, filenames in os.walk(os.path.join(root, 'dev', 'bus', 'usb')):
            for fn in filenames:
                node_path = os.path.join(dirpath, fn)
                os.chown(node_path, 0, 0)
                os.chmod(node_path, 0o600)
        check(node_path is not None, f'usbfs node in the test bed ({node_path})')
        probe = Probe(['/usr/bin/setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'])
        ev = probe.wait_for(lambda ev: ev.get('kind') == 'yubikey' and ev.get('error'), 5)
        check(ev is not None and ev['error'] == EACCES_TEXT,
              f'no permission: the token says so ({ev and ev["error"]!r})')
        check(ev is not None and ev['model'] == 'YubiKey 5' and ev['serial'] == '87654321',
              'no permission: the token is still there, with its USB serial')
        check(probe.proc.poll() is None, 'no permission: probe still running')
        if failures:
            probe.poll(0.2)
            print(probe.log())
    else:
        print('skip permission check: needs root and setpriv')
finally:
    if probe:
        probe.stop()
    procs.stop_all()

print(f'{len(failures)} failure(s)' if failures else 'all passed')
sys.exit(1 if failures else 0)
