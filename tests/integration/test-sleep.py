#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld across suspend and resume, on the test bed (a virtual YubiKey on an isolated pcscd, a
throwaway keyring with its stubs) and a private system bus of its own (a dbus-daemon with a system
bus's configuration in a temp dir, DBUS_SYSTEM_BUS_ADDRESS pointing at it) where python-dbusmock's
logind template stands in for logind and emits PrepareForSleep:

- asleep, the card is swapped for another (the backup, another serial): the card gets no APDU
  at all while asleep; on resume keyctl-status shows the new card within 2 s;
- a read the sleep cuts (the card goes away in the middle of it, as a USB token loses power
  when the laptop suspends) is no error: no token ever carries one, no log line says one;
- the system bus gone while asleep (D-Bus restarted): keyctld reads again and stays idle;
- without a system bus (DBUS_SYSTEM_BUS_ADDRESS pointing to nothing: a container, an ssh
  login) keyctld says so once at debug level and reads the cards as before.
Every process is stopped by pid, also on failure."""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keyctld_proc import Keyctld  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import (SystemBus, bed_main, card_bed, check, cpu_seconds,  # noqa: E402
                     daemon_running, log_lines, wait_log, wait_until)
from keyctlbed import procs  # noqa: E402

SERIAL = '45678901'
BACKUP = '56789012'
KEYCTL_STATUS = os.environ.get('KEYCTL_STATUS', '')
# keyctld's log lines the test looks for (main.c; watch-sleep.c and watch-pcsc-worker.c at
# log-level debug).
FOLLOWING = 'following suspend and resume'
ASLEEP = 'System goes to sleep'
RESUMED = 'System resumed'
NO_BUS = 'No system bus'
CUT = 'cut by sleep, dropped'

class Events:
    """io.keyctl.Watch followed on a thread: every event, for a look at the tokens it carried."""

    def __init__(self, socket_path):
        self.conn = vr.Conn(socket_path, timeout=30)
        self.conn.send('io.keyctl.Watch', more=True)
        self.events = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        while True:
            try:
                m = self.conn.recv(timeout=600)
            except (OSError, vr.Closed, ValueError):
                return
            if m is None:
                return
            self.events.append(m.get('parameters', {}).get('event', {}))

    def token_errors(self):
        """(serial, error) of every token an event carried with an error, the state included."""
        out = []
        for e in list(self.events):
            tokens = list(e.get('state', {}).get('tokens', []) or [])
            if e.get('token'):
                tokens.append(e['token'])
            out += [(t.get('serial'), t['error']) for t in tokens if t.get('error')]
        return out

    def close(self):
        self.conn.close()
        self.thread.join(5)


def status_json(d):
    """keyctl-status --json as its user runs it: the reply, or None."""
    r = subprocess.run([KEYCTL_STATUS, '--json', '--socket', d.socket], capture_output=True,
                       text=True, timeout=30, env=d.env)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def present_serials(s):
    return {t['serial'] for t in (s or {}).get('tokens', []) if t.get('present')}


def stopped_clean(d):
    """After daemon_running: exit 0 on SIGTERM, and no sanitizer report (ASan builds)."""
    said = [x for x in d.log().splitlines() if 'Sanitizer' in x or 'runtime error' in x]
    check(d.proc.returncode == 0 and not said, f'{d.label} stopped with exit 0 and no report',
          f'exit {d.proc.returncode}: {said[:5]}')


def apdus_settled(card, quiet=1.5, timeout=30):
    """Waits until the card has received no APDU for `quiet` seconds."""
    last, since, end = None, time.monotonic(), time.monotonic() + timeout
    while time.monotonic() - since < quiet and time.monotonic() < end:
        n = len(card.apdus())
        if n != last:
            last, since = n, time.monotonic()
        time.sleep(0.1)


def test_swap_asleep(d, bus, pcscd, card, backup):
    """(a) The card swapped while asleep: no APDU while asleep, the new card within 2 s."""
    apdus_settled(card)
    bus.prepare_for_sleep(True)
    check(wait_log(d, ASLEEP), 'PrepareForSleep(true): keyctld says it goes to sleep')
    card.reset_counters()
    card.swap(backup)
    pcscd.wait_card(True, timeout=10)
    # Time for a daemon that does not sleep to read the new card (it takes it 0.1 s).
    time.sleep(2)
    sent = card.apdus()
    check(not sent, f'asleep, the card swapped for #{BACKUP}: keyctld sends it no APDU',
          f'{len(sent)} APDUs: {sent[:6]}')
    t0 = time.monotonic()
    bus.prepare_for_sleep(False)
    s = wait_until(lambda: BACKUP in present_serials(status_json(d)), 2, step=0.05)
    dt = time.monotonic() - t0
    check(s, f'resumed: keyctl-status shows #{BACKUP} within 2 s ({dt:.2f} s)',
          status_json(d))
    check(SERIAL not in present_serials(status_json(d)), f'and #{SERIAL} as not present')
    check(wait_log(d, RESUMED), 'and keyctld says it resumed')


def test_read_cut(d, bus, card):
    """(b) A read in progress when the system sleeps, the card gone mid-read: no error."""
    events = Events(d.socket)
    try:
        apdus_settled(card)
        card.reset_counters()
        # 2 s an APDU: the read is still going when the sleep comes, and the card goes away
        # before the next APDU (a USB token loses power when the laptop suspends).
        card.slow(2000)
        d.call('io.keyctl.Reload')
        got = wait_until(lambda: any(a[1:4] == (0xCA, 0x00, 0x6E) for a in card.apdus()), 15,
                         step=0.05)
        check(got, 'a read of the card has begun (its Application Related Data asked)')
        n_asleep = len(log_lines(d, ASLEEP))
        bus.prepare_for_sleep(True)
        # Within the 2 s the card takes over the next APDU.
        check(wait_log(d, ASLEEP, n_asleep + 1, timeout=1),
              'PrepareForSleep(true) during the read')
        card.yank_after(0)
        check(wait_until(lambda: any(a[4] == 'yanked' for a in card.apdus()), 10),
              'the card goes away in the middle of the read')
        card.clear_faults()
        card.reset_counters()
        card.insert()
        time.sleep(2)
        check(not card.apdus(), 'asleep, the card back: keyctld sends it no APDU',
              card.apdus()[:6])
        t0 = time.monotonic()
        bus.prepare_for_sleep(False)
        s = wait_until(lambda: BACKUP in present_serials(status_json(d)), 2, step=0.05)
        check(s, f'resumed: #{BACKUP} read again within 2 s ({time.monotonic() - t0:.2f} s)')
        apdus_settled(card)
        errors = events.token_errors()
        check(not errors, 'no token ever carried an error for the read the sleep cut', errors)
        now = [(t['serial'], t['error']) for t in status_json(d)['tokens'] if t.get('error')]
        check(not now, 'keyctl-status shows no token error', now)
        said = [x for x in d.log().splitlines() if 'during read' in x or 'did not answer' in x]
        check(not said, 'and no log line reports the read as failed', said)
        check(log_lines(d, CUT), 'the read was cut, and dropped (its debug line)')
    finally:
        events.close()


def test_bus_lost(d, bus, card, first):
    """(d) The system bus goes away while asleep (D-Bus restarted): reads resume, the daemon
    stays, and nothing spins."""
    n_asleep, n_resumed = len(log_lines(d, ASLEEP)), len(log_lines(d, RESUMED))
    bus.prepare_for_sleep(True)
    check(wait_log(d, ASLEEP, n_asleep + 1), 'asleep again')
    bus.stop()
    check(wait_log(d, RESUMED, n_resumed + 1), 'the system bus gone: keyctld reads again')
    cpu = cpu_seconds(d.pid)
    time.sleep(2)
    used = cpu_seconds(d.pid) - cpu
    check(d.alive() and used < 0.2, f'and runs on without a bus, idle ({used:.2f} s CPU in 2 s)')
    card.swap(first)
    check(d.wait(lambda s: SERIAL in present_serials(s), 10), f'and sees #{SERIAL} swapped in')


def test_no_bus(kr, card, backup):
    """(c) No system bus: said once at debug level, cards read as before."""
    nothing = 'unix:path=' + os.path.join(procs.tmpdir('keyctl-sleep-nobus-'), 'system_bus_socket')
    d = Keyctld(kr.env, extra_env={'DBUS_SYSTEM_BUS_ADDRESS': nothing}, label='keyctld-nobus')
    with daemon_running(d):
        check(d.wait(lambda s: SERIAL in present_serials(s), 30),
              f'without a system bus: keyctld reads #{SERIAL}')
        apdus_settled(card)
        card.swap(backup)
        check(d.wait(lambda s: BACKUP in present_serials(s), 10),
              f'and the card swapped for #{BACKUP} as before')
        check(not log_lines(d, NO_BUS), 'and says nothing about it at the default log level',
              log_lines(d, NO_BUS))
    stopped_clean(d)
    d = Keyctld(kr.env, conf='[daemon]\nlog-level = debug\n',
                extra_env={'DBUS_SYSTEM_BUS_ADDRESS': nothing}, label='keyctld-nobus-debug')
    with daemon_running(d):
        check(d.wait(lambda s: BACKUP in present_serials(s), 30),
              f'at log level debug: keyctld reads #{BACKUP}')
        lines = log_lines(d, NO_BUS)
        check(len(lines) == 1, 'and says once that it has no system bus', lines)
    stopped_clean(d)


def main():
    def body():
        bus = SystemBus().start()
        try:
            with card_bed({'sig': 100, 'enc': 100, 'aut': 100}, SERIAL) as (pcscd, kr, key, card):
                backup = kr.card_profile(key, base='yubikey5nfc', serial=BACKUP)
                # gpg's agent and scdaemon out of the way: every APDU the card gets is keyctld's.
                kr.stop()
                first = card.copy_profile()
                d = Keyctld(kr.env, conf='[daemon]\nlog-level = debug\n',
                            extra_env={'DBUS_SYSTEM_BUS_ADDRESS': bus.address},
                            label='keyctld-sleep')
                with daemon_running(d):
                    check(d.wait(lambda s: SERIAL in present_serials(s), 30),
                          f'keyctld has read #{SERIAL}')
                    check(wait_log(d, FOLLOWING), 'it follows logind on the system bus')
                    test_swap_asleep(d, bus, pcscd, card, backup)
                    test_read_cut(d, bus, card)
                    test_bus_lost(d, bus, card, first)
                stopped_clean(d)
                test_no_bus(kr, card, backup)
        finally:
            bus.stop()
    return bed_main(body)


if __name__ == '__main__':
    sys.exit(main())
