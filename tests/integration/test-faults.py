#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# keyctld survives what its surroundings do to it, on the test bed (isolated pcscd + virtual
# YubiKey #87654321 + a throwaway keyring whose signing subkey is on the card and expires in 5
# days). After every fault the SAME daemon process (same pid) must answer GetStatus with the right
# token, key and levels: pcscd killed and restarted; the card pulled mid-transaction; a card that
# answers truncated TLV, a wrong status word or nothing; N insert/remove cycles
# (KEYCTL_FAULT_CYCLES, default 200) with the fd count back to its baseline; the keyring corrupt,
# locked by a live gpg-style dotlock, unreadable; the gpg binary vanishing and coming back (a
# second daemon with its own PATH); a wall-clock jump of 10 days under libfaketime (a third
# daemon); SIGHUP and Reload with a broken configuration (the old one stays in force: warning-days
# and max-clients); 500 simultaneous clients, slow readers, a 16 MiB write and half-messages while
# another client's answers stay complete and right. Exit 77 when the bed cannot run here.
import os, select, shutil, signal, socket, stat, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import keyctlbed as kb
from keyctlbed import procs
from keyctld_proc import Keyctld
import varlink_raw
from testlib import check, wait_until, failures

CYCLES = int(os.environ.get('KEYCTL_FAULT_CYCLES', '200'))
SERIAL = '87654321'
TOKEN = 'yubikey-' + SERIAL
DAY = 86400


def token(s):
    return next((t for t in s['tokens'] if t['id'] == TOKEN), None) if s else None


def on_reader(s):
    """The token present in the virtual reader, whatever id a damaged read gave it."""
    return next((t for t in s['tokens'] if t['present']), None) if s else None


def subkey(s, fpr):
    for k in (s or {}).get('keys', []):
        for sk in k['subkeys']:
            if sk['fingerprint'] == fpr:
                return sk
    return None


class Expect:
    """What a right answer is: the card read fully, the key listed, the levels as gpg says."""

    def __init__(self, key):
        self.key = key

    def card_ok(self, s):
        t = token(s)
        if not t or not t['present'] or t['error'] or not t.get('openpgp'):
            return False
        slots = {x['slot']: x['fingerprint'] for x in t['openpgp']['slots']}
        return (t['openpgp']['serial'] == SERIAL and slots.get('sign') == self.key['sig'] and
                slots.get('encrypt') == self.key['enc'])

    def keys_ok(self, s, stale_ok=False):
        if not s or (s['daemon']['keyring_stale'] and not stale_ok):
            return False
        sig = subkey(s, self.key['sig'])
        return (sig is not None and sig['level'] == 'warning' and
                any(k['fingerprint'] == self.key['fpr'] for k in s['keys']))

    def all_ok(self, s):
        return self.card_ok(s) and self.keys_ok(s) and s['daemon']['pcsc_available']


def same_daemon(d, pid, what):
    return check(d.alive() and d.pid == pid, f'{what}: the daemon is still pid {pid}')


# ---- card and pcscd faults ----------------------------------------------------------------------
def card_faults(d, pcscd, card, exp):
    pid = d.pid

    pcscd.restart()
    s = d.wait(exp.all_ok, timeout=60)
    same_daemon(d, pid, 'pcscd killed (-9) and restarted')
    check(s is not None, 'pcscd restart: the card is read again and the key matched')

    card.remove()
    check(d.wait(lambda s: not (token(s) or {}).get('present', True), 30) is not None,
          'card removed: token reported not present')
    card.yank_after(3)
    card.insert()
    # It vanishes on the 4th APDU of the read; the daemon must notice and not hang.
    check(d.wait(lambda s: not (token(s) or {}).get('present', True) or
                 (token(s) or {}).get('error'), 30) is not None,
          'card yanked mid-transaction: reported gone or with an error, not as read')
    card.clear_faults()
    card.insert()
    same_daemon(d, pid, 'card yanked mid-transaction')
    check(d.wait(exp.all_ok, 60) is not None, 'card yanked: re-inserted card read right')

    for name, fault in (('truncated TLV', lambda: card.truncated_tlv(True)),
                        ('status word 6A88 on every GET DATA', lambda: card.wrong_status(0x6A88))):
        card.remove()
        d.wait(lambda s: not (token(s) or {}).get('present', True), 30)
        fault()
        card.insert()
        # Present, and either an error or no OpenPGP data: never a made-up slot. A truncated
        # C5 is asked for on its own, which this card answers: the token reads, and
        # openpgp_error names the broken item.
        s = d.wait(lambda s: on_reader(s) and
                   (on_reader(s)['error'] or not on_reader(s).get('openpgp') or
                    on_reader(s).get('openpgp_error')), 30)
        t = on_reader(s) or {}
        check(s is not None, f'card answering {name}: token {t.get("id")} present with error '
              f'"{t.get("error", "")}", openpgp_error "{t.get("openpgp_error", "")}" and '
              f'openpgp={"set" if t.get("openpgp") else "absent"}')
        check(exp.keys_ok(d.status()), f'card answering {name}: keys still listed right')
        card.remove()
        card.clear_faults()
        card.insert()
        same_daemon(d, pid, f'card answering {name}')
        check(d.wait(exp.all_ok, 60) is not None, f'after {name}: good card read right')

    card.remove()
    d.wait(lambda s: not (token(s) or {}).get('present', True), 30)
    card.silent(True)
    card.insert()
    time.sleep(1.5)  # let pcscd and the daemon reach the card; what follows is a bounded poll
    t0 = time.monotonic()
    s = d.status(timeout=30)
    check(s is not None and exp.keys_ok(s),
          f'silent card: GetStatus still answered (in {time.monotonic() - t0:.2f} s), keys right')
    card.remove()
    card.clear_faults()
    check(d.wait(lambda s: not (token(s) or {}).get('present', True), 60) is not None,
          'silent card removed: token reported not present')
    card.insert()
    same_daemon(d, pid, 'silent card')
    check(d.wait(exp.all_ok, 60) is not None, 'after the silent card: good card read right')


def cycles(d, pcscd, card, exp):
    pid = d.pid
    base_fds, base_targets = d.fds(), d.fd_targets()
    for i in range(CYCLES):
        card.remove()
        time.sleep(0.05 if i % 10 else 0.6)  # every 10th gap long enough for pcscd to see it
        card.insert()
        time.sleep(0.05 if i % 10 else 0.6)
        if i % 50 == 49 and not d.alive():
            break
    same_daemon(d, pid, f'{CYCLES} insert/remove cycles')
    check(d.wait(exp.all_ok, 60) is not None, f'{CYCLES} cycles: final state right (card present,'
          ' read, key matched)')
    n = wait_until(lambda: d.fds() <= base_fds, timeout=20) and d.fds()
    now_fds = d.fds()
    check(now_fds <= base_fds, f'{CYCLES} cycles: {now_fds} fds open, baseline {base_fds}')
    if now_fds > base_fds:
        print('     extra fds:', sorted(set(d.fd_targets()) - set(base_targets)))


# ---- keyring faults -----------------------------------------------------------------------------
def reload_and_wait(d, pred, timeout=30):
    r = d.call('io.keyctl.Reload')
    return d.wait(pred, timeout) if r is not None else None


def keyring_faults(d, kr, exp, no_dac):
    pid = d.pid
    home = kr.env['GNUPGHOME']
    kbx = os.path.join(home, 'pubring.kbx')
    good = open(kbx, 'rb').read()

    with open(kbx + '.qa', 'wb') as f:
        f.write(b'\x00\x00\x00\x20\x01\x02garbage, not a keybox' + os.urandom(4000))
    os.rename(kbx + '.qa', kbx)
    s = reload_and_wait(d, lambda s: s['daemon']['keyring_stale'])
    check(s is not None and s['daemon']['keyring_error'] != '',
          'corrupt pubring.kbx: keyring_stale with reason "%s"' %
          (s['daemon']['keyring_error'] if s else ''))
    check(s is not None and exp.keys_ok(s, stale_ok=True),
          'corrupt pubring.kbx: the last good keys are kept, not dropped')
    with open(kbx + '.qa', 'wb') as f:
        f.write(good)
    os.rename(kbx + '.qa', kbx)
    check(reload_and_wait(d, exp.keys_ok) is not None, 'pubring.kbx restored: not stale, keys right')
    same_daemon(d, pid, 'corrupt keyring')

    # gpg's dotlock: "<pid>\n" in pubring.kbx.lock held by a live process. Listing takes no lock
    # in gpg 2.2 (only writers do), so the right answer is: not stale, no hang.
    holder = procs.spawn('lock-holder', ['sleep', '600'])
    try:
        for name in ('pubring.kbx.lock', 'trustdb.gpg.lock'):
            with open(os.path.join(home, name), 'w') as f:
                f.write('%10d\n' % holder.pid)
        t0 = time.monotonic()
        before = d.status()['daemon']['keyring_refreshed_epoch']
        time.sleep(1.1)  # the stamp has seconds: make the next listing's stamp differ
        s = reload_and_wait(d, lambda s: s['daemon']['keyring_refreshed_epoch'] > before and
                            exp.keys_ok(s), timeout=60)
        check(s is not None, f'keyring locked by a live pid: listing still right '
              f'({time.monotonic() - t0:.1f} s), not stale')
    finally:
        procs.stop(holder)
        for name in ('pubring.kbx.lock', 'trustdb.gpg.lock'):
            try:
                os.unlink(os.path.join(home, name))
            except FileNotFoundError:
                pass
    same_daemon(d, pid, 'locked keyring')

    if not no_dac and os.geteuid() == 0:
        print('ok   # unreadable GNUPGHOME not tested: root with CAP_DAC_OVERRIDE reads mode 000')
        return
    mode = os.stat(home).st_mode
    os.chmod(home, 0)
    try:
        s = reload_and_wait(d, lambda s: s['daemon']['keyring_stale'])
        check(s is not None and s['daemon']['keyring_error'] != '' and
              exp.keys_ok(s, stale_ok=True),
              'GNUPGHOME mode 000: stale with reason "%s", last keys kept' %
              (s['daemon']['keyring_error'] if s else ''))
    finally:
        os.chmod(home, stat.S_IMODE(mode))
    check(reload_and_wait(d, exp.keys_ok) is not None, 'GNUPGHOME readable again: keys right')
    same_daemon(d, pid, 'unreadable GNUPGHOME')


def gpg_missing(kr, exp, prefix):
    """A daemon whose PATH has a gpg we can take away (gpgme looks gpg up on PATH when there
    is no gpgconf; it remembers the path, so a daemon started without any gpg stays without)."""
    bindir = procs.tmpdir('keyctl-qa-bin-')
    gpg = shutil.which('gpg', path='/usr/bin:/bin')
    os.symlink(gpg, os.path.join(bindir, 'gpg'))
    d = Keyctld(kr.env, prefix=prefix, extra_env={'PATH': bindir}, label='keyctld-nogpg')
    try:
        check(d.start(), 'PATH with only gpg: daemon answers')
        check(d.wait(exp.keys_ok, 60) is not None, 'PATH with only gpg: keys listed right')
        pid = d.pid
        os.unlink(os.path.join(bindir, 'gpg'))
        s = reload_and_wait(d, lambda s: s['daemon']['keyring_stale'])
        check(s is not None and s['daemon']['keyring_error'] != '' and
              exp.keys_ok(s, stale_ok=True),
              'gpg removed: keyring_stale with reason "%s", last keys kept' %
              (s['daemon']['keyring_error'] if s else ''))
        os.symlink(gpg, os.path.join(bindir, 'gpg'))
        check(reload_and_wait(d, exp.keys_ok, 60) is not None, 'gpg back: not stale, keys right')
        same_daemon(d, pid, 'gpg missing and back')
        check(d.stop() == 0, 'PATH with only gpg: SIGTERM exit 0')
    finally:
        d.stop()

    empty = procs.tmpdir('keyctl-qa-bin-')
    d = Keyctld(kr.env, prefix=prefix, extra_env={'PATH': empty}, label='keyctld-nogpg2')
    try:
        check(d.start(), 'no gpg on PATH at start: daemon answers')
        s = d.wait(lambda s: s['daemon']['keyring_stale'], 60)
        check(s is not None and s['daemon']['keyring_error'] != '' and not s['keys'],
              'no gpg at start: keyring_stale with reason "%s", no keys claimed' %
              (s['daemon']['keyring_error'] if s else ''))
        os.symlink(gpg, os.path.join(empty, 'gpg'))
        s = reload_and_wait(d, lambda s: True)
        # Honest either way: recovered, or still stale; never "fresh" with no keys.
        check(s is not None and (exp.keys_ok(s) or s['daemon']['keyring_stale']),
              'gpg appears after start: ' + ('recovered' if exp.keys_ok(s or {'keys': []})
                                             else 'still stale until a restart (gpgme caches '
                                             'its lookup), and says so'))
    finally:
        d.stop()


# ---- clock --------------------------------------------------------------------------------------
def clock_jump(kr, exp, prefix):
    lib = '/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1'
    if not os.path.exists(lib):
        print('ok   # clock jump not tested: libfaketime missing (apt-get install faketime)')
        return
    tsfile = os.path.join(procs.tmpdir('keyctl-qa-time-'), 'faketime')
    with open(tsfile, 'w') as f:
        f.write('+0d\n')
    # ASan's allocator stamps each new size-class region with clock_gettime(); under the preload
    # that is libfaketime's, whose first call dlsym()s the real one, which mallocs: a deadlock
    # inside the allocator's lock (gdb: FutexWait under __asan::Allocator::Allocate, called from
    # libfaketime's clock_gettime). It depends on which region is first touched before
    # libfaketime's constructor, so it hung on some runs only. Turning the release-to-OS stamp
    # off removes that call; the flag is inert on an unsanitised build.
    asan = ':'.join(filter(None, [os.environ.get('ASAN_OPTIONS', ''),
                                  'allocator_release_to_os_interval_ms=-1']))
    # faketime-monotonic.c first: libfaketime would also shift the loop's monotonic timerfds.
    # Built here with the plain compiler: the build's sanitizer and coverage flags would make
    # it need their runtimes in every process it is preloaded into.
    fix = os.path.join(procs.tmpdir('keyctl-qa-fix-'), 'faketime-monotonic.so')
    r = subprocess.run(['cc', '-O2', '-D_GNU_SOURCE', '-shared', '-fPIC', '-o', fix,
                        os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     'faketime-monotonic.c'), '-ldl'],
                       capture_output=True, text=True)
    if not check(r.returncode == 0, 'the clock-jump preload builds', r.stderr[-1000:]):
        return
    preload = fix + ':' + lib
    d = Keyctld(kr.env, prefix=prefix, label='keyctld-faketime', extra_env={
        'LD_PRELOAD': preload, 'FAKETIME_TIMESTAMP_FILE': tsfile, 'FAKETIME_NO_CACHE': '1',
        'FAKETIME_DONT_FAKE_MONOTONIC': '1', 'FAKETIME_DONT_RESET': '1', 'ASAN_OPTIONS': asan})
    try:
        if not check(d.start(), 'under libfaketime: daemon answers', d.log()[-2000:]):
            return
        s0 = d.wait(exp.keys_ok, 60)
        check(s0 is not None, 'under libfaketime +0d: signing subkey at level warning (5 days)')
        if s0 is None:
            return
        pid = d.pid
        with open(tsfile + '.tmp', 'w') as f:
            f.write('+10d\n')
        os.rename(tsfile + '.tmp', tsfile)
        jumped = lambda s: (subkey(s, exp.key['sig']) or {}).get('level') == 'expired'
        # No event, no Reload: the daemon must notice by itself (its expiry timer / clock reads).
        s = d.wait(jumped, timeout=20)
        check(s is not None and s['daemon']['now_epoch'] - s0['daemon']['now_epoch'] >= 10 * DAY - 60,
              'clock +10 days: signing subkey now "expired" and daemon now moved 10 days, '
              'without an event or a restart')
        check(s is not None and token(s) is not None and token(s)['present'] and
              exp.card_ok(s), 'clock +10 days: the card is still reported present and read')
        same_daemon(d, pid, 'clock jump')
        # libfaketime shifts every absolute timerfd_settime by its offset, sd-event's
        # CLOCK_MONOTONIC timerfd included (strace: it_value.tv_sec=-860792 -> EINVAL), and the
        # daemon arms monotonic timers on every connection: faketime-monotonic.c, preloaded
        # first, hands those to the kernel untouched. Not tested: the kernel's CANCEL_ON_SET
        # path, which needs a real clock_settime (not on a shared machine).
    finally:
        d.stop()


# ---- configuration ------------------------------------------------------------------------------
def broken_reload(kr, exp, prefix):
    good = '[daemon]\nmax-clients = 6\n[expiry]\nwarning-days = 10\n'
    d = Keyctld(kr.env, conf=good, prefix=prefix, label='keyctld-conf')
    held = []
    try:
        check(d.start(), 'max-clients 6: daemon answers')
        pid = d.pid
        s = d.wait(lambda s: s['daemon'].get('warning_days') == 10, 30)
        check(s is not None, 'warning-days 10 in force')
        d.write_conf('[daemon]\nmax-clients = 1000\n[expiry]\nwarning-days = banana\n')
        d.signal(signal.SIGHUP)
        check(wait_until(lambda: 'Configuration reload failed' in d.log(), 20),
              'SIGHUP with a broken file: the daemon logs the refusal')
        check(wait_until(lambda: 'banana' in d.log(), 5), 'the log names the bad value')
        r = d.call('io.keyctl.Reload')
        check(r is not None and r.get('error') == 'io.keyctl.ReloadFailed',
              'Reload with a broken file: io.keyctl.ReloadFailed')
        s = d.status()
        check(s is not None and s['daemon']['warning_days'] == 10,
              'after the broken reload warning-days is still 10')
        def is_closed(conn):
            r, _, _ = select.select([conn.sock], [], [], 0)
            if not r:
                return False
            try:
                return not conn.sock.recv(4096, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return False
            except ConnectionResetError:
                return True

        for _ in range(6):
            held.append(varlink_raw.Conn(d.socket))
            time.sleep(0.05)  # one after the other: "idle longest" is well defined
        # The 6 held connections fill max-clients; a 7th evicts the one idle longest.
        extra = varlink_raw.Conn(d.socket)
        held.append(extra)
        r = extra.call('io.keyctl.GetStatus', timeout=30)
        check(r is not None and 'parameters' in r, 'max-clients 6: a 7th client is served')
        check(held[0].closed_by_peer(timeout=10) and not any(is_closed(c) for c in held[1:6]),
              'max-clients 6 still in force after the broken reload (the oldest idle one '
              'evicted, the other 5 kept)')

        # A good reload applies max-clients at once: with 6 connected there is room for 2 more.
        d.write_conf('[daemon]\nmax-clients = 8\n[expiry]\nwarning-days = 9\n')
        r = extra.call('io.keyctl.Reload', timeout=30)
        check(r is not None and 'error' not in r, 'Reload with max-clients 8: accepted')
        more = [varlink_raw.Conn(d.socket) for _ in range(2)]
        held.extend(more)
        answers = [m.call('io.keyctl.GetStatus', timeout=30) for m in more]
        check(all(a is not None and a.get('parameters', {}).get('daemon', {})
                  .get('warning_days') == 9 for a in answers),
              'after the reload the 7th and 8th clients are answered (warning-days 9)')
        check(not any(is_closed(c) for c in held[1:6]), 'max-clients 8: nobody evicted for them')
        ninth = varlink_raw.Conn(d.socket)
        held.append(ninth)
        r = ninth.call('io.keyctl.GetStatus', timeout=30)
        check(r is not None and 'parameters' in r and held[1].closed_by_peer(timeout=10),
              'max-clients 8: a 9th is served and evicts the one idle longest')
        same_daemon(d, pid, 'broken reload')
    finally:
        for c in held:
            c.close()
        d.stop()


# ---- clients ------------------------------------------------------------------------------------
def clients(d, exp):
    pid = d.pid
    base_fds = d.fds()
    probe = varlink_raw.Conn(d.socket, timeout=60)

    def probe_ok(what):
        r = probe.call('io.keyctl.GetStatus', timeout=60)
        check(r is not None and exp.all_ok(r.get('parameters')),
              f'{what}: another client gets a complete, right GetStatus')

    conns = []
    try:
        for i in range(500):
            conns.append(varlink_raw.Conn(d.socket, timeout=60))
        for c in conns:
            c.send('io.keyctl.GetStatus')
        good = sum(1 for c in conns if exp.all_ok((c.recv(timeout=120) or {}).get('parameters')))
        check(good == 500, f'500 simultaneous clients: {good}/500 complete, right answers')
        probe_ok('500 clients')
    finally:
        for c in conns:
            c.close()
    conns = []

    # Slow readers: Watch and never read while events pile up; the daemon drops them.
    slow = []
    try:
        for i in range(20):
            c = varlink_raw.Conn(d.socket)
            c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            c.send('io.keyctl.Watch', more=True)
            slow.append(c)
        # Reloads are done at most once a second: five of them, an event each for the watchers.
        for i in range(5):
            d.call('io.keyctl.Reload')
            d.status()
        probe_ok('20 watchers not reading')
        same_daemon(d, pid, 'slow readers')
    finally:
        for c in slow:
            c.close()

    # 16 MiB without a NUL: refused with MessageTooLarge and closed; nothing else disturbed.
    big = varlink_raw.Conn(d.socket, timeout=60)
    try:
        try:
            big.send_raw(b'{"method":"io.keyctl.GetStatus","parameters":{"x":"' + b'A' * (16 << 20))
        except OSError:
            pass  # the daemon closed while we wrote: that is the refusal
        r = big.recv(timeout=30)
        check(r is None or r.get('error') == 'io.keyctl.MessageTooLarge',
              '16 MiB write: MessageTooLarge or closed (%s)' % (r and r.get('error')))
        check(big.closed_by_peer(30), '16 MiB write: connection closed by the daemon')
    finally:
        big.close()
    probe_ok('16 MiB write')

    # Half messages: 50 clients send half a call and wait; the others are served meanwhile, and
    # each half finished later is answered.
    msg = varlink_raw.Conn.encode('io.keyctl.GetStatus')
    halves = [varlink_raw.Conn(d.socket, timeout=60) for _ in range(50)]
    try:
        for c in halves:
            c.send_raw(msg[:len(msg) // 2])
        probe_ok('50 half-messages pending')
        for c in halves:
            c.send_raw(msg[len(msg) // 2:])
        good = sum(1 for c in halves if exp.all_ok((c.recv(timeout=60) or {}).get('parameters')))
        check(good == 50, f'half-messages completed later: {good}/50 answered right')
    finally:
        for c in halves:
            c.close()
    probe.close()
    same_daemon(d, pid, 'client abuse')
    n = wait_until(lambda: d.fds() <= base_fds, 20)
    check(d.fds() <= base_fds, f'after the client tests: {d.fds()} fds, baseline {base_fds}')


def main():
    if not os.environ.get('KEYCTLD'):
        print('SKIP: KEYCTLD not set (run through meson test)')
        return 77
    # As root, drop CAP_DAC_OVERRIDE & co. so that file modes mean what they mean for a user.
    prefix = []
    if os.geteuid() == 0 and shutil.which('setpriv'):
        prefix = [shutil.which('setpriv'), '--inh-caps=-all', '--bounding-set=-all', '--']
    try:
        with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
            key = kr.create_key(subkeys={'sig': 5, 'enc': None, 'aut': 40})
            prof = kr.card_profile(key, base='yubikey5nfc', serial=SERIAL)
            card = pcscd.card(prof)
            pcscd.wait_card(True)
            kr.stubs_from_card(key)
            exp = Expect(key)
            d = Keyctld(kr.env, conf='[daemon]\nmax-clients = 1024\nclient-queue-kib = 64\n',
                        prefix=prefix)
            try:
                if not check(d.start(), 'keyctld answers on its socket'):
                    print(d.log())
                    return 1
                s = d.wait(exp.all_ok, 60)
                if not check(s is not None, 'baseline: card read, key matched, signing subkey '
                             'at warning'):
                    print(d.status(), d.log()[-3000:])
                    return 1
                for part in (lambda: card_faults(d, pcscd, card, exp),
                             lambda: cycles(d, pcscd, card, exp),
                             lambda: keyring_faults(d, kr, exp, bool(prefix)),
                             lambda: clients(d, exp)):
                    part()
                    if not d.alive():
                        break
                rc = d.stop()
                check(rc == 0, f'SIGTERM after all faults: exit code {rc}')
            finally:
                d.stop()
                if failures:
                    print('--- keyctld log (tail)\n' + d.log()[-4000:])
            gpg_missing(kr, exp, prefix)
            clock_jump(kr, exp, prefix)
            broken_reload(kr, exp, prefix)
    except kb.BedUnavailable as e:
        print(f'SKIP: {e}')
        return 77
    print(f'{len(failures)} failures' if failures else 'all ok')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
