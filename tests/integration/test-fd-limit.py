#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld at its open-file limit, on the test bed (a virtual YubiKey, a throwaway keyring):

- started under `prlimit --nofile=64:64` with max-clients and max-watchers at 4096 (what
  keyctl.conf allows): it says in the log that it serves fewer, and 80 idle connections of its own
  user cost it next to no CPU over 10 s, log no flood of "accept" lines, and a newcomer is served
  among them (before, accept() failed with EMFILE in a busy loop: 3 s of CPU in 3 s and millions
  of "Failed to accept" lines);
- the limit lowered under a running daemon (`prlimit --pid`), so that accept() does fail with
  EMFILE: the listening socket rests (one log line for the episode, not one per try), a newcomer
  is still served by closing the connection idle longest, and once the crowd leaves a new
  connection is served at once.
Each phase prints the CPU seconds and the log lines it measured. Every process is stopped by pid,
also on failure."""
import os
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keyctld_proc import Keyctld  # noqa: E402
import varlink_raw as vr  # noqa: E402
from testlib import bed_main, card_bed, check, cpu_seconds, wait_until, failures  # noqa: E402

SERIAL = '45678901'
CONF = '[daemon]\nmax-clients = 4096\nmax-watchers = 4096\nclient-idle-sec = 60\n'
CROWD = 80
WINDOW = 10.0
CPU_MAX = 1.0  # seconds of CPU (or of wanting it) in WINDOW; the busy loop wanted all of it


def log_lines(d, word):
    """Lines of the daemon's log containing word, counted without reading the file whole (the
    old daemon wrote millions)."""
    n = 0
    try:
        with open(d.log_path, 'rb') as f:
            for line in f:
                if word in line:
                    n += 1
    except FileNotFoundError:
        pass
    return n


def crowd(d, n=CROWD):
    """n connections that connect and say nothing."""
    conns = []
    for _ in range(n):
        c = vr.Conn(d.socket, connect=False)
        c.sock.settimeout(10)
        c.sock.connect(d.socket)
        conns.append(c)
    return conns


def served(d, timeout=5):
    """A new connection's GetStatus is answered within timeout seconds."""
    try:
        with vr.Conn(d.socket, timeout=timeout) as c:
            r = c.call('io.keyctl.GetStatus', timeout=timeout)
    except (OSError, socket.timeout):
        return False
    return bool(r) and 'parameters' in r


def wanted_cpu(pid):
    """Seconds the daemon's loop thread (its main thread) ran or waited to run, from
    /proc/PID/schedstat: a busy loop wants the whole window even on a loaded machine, where its
    CPU seconds are only its share."""
    with open(f'/proc/{pid}/schedstat') as f:
        on_cpu, waiting = f.read().split()[:2]
    return (int(on_cpu) + int(waiting)) / 1e9


def at_limit(d, what):
    """A crowd of CROWD idle connections, then CPU seconds, seconds wanting the CPU and "accept"
    log lines (from the crowd's first connection) over WINDOW seconds, printed for the record.
    Returns the crowd, the larger of the first two figures, and the lines."""
    lines0 = log_lines(d, b'accept')
    conns = crowd(d)
    time.sleep(0.5)
    cpu0, want0 = cpu_seconds(d.pid), wanted_cpu(d.pid)
    time.sleep(WINDOW)
    cpu, want = cpu_seconds(d.pid) - cpu0, wanted_cpu(d.pid) - want0
    lines = log_lines(d, b'accept') - lines0
    print(f'     {what}: {cpu:.2f} s of CPU ({want:.2f} s running or runnable) in {WINDOW:.0f} s, '
          f'{lines} "accept" log lines (load average {os.getloadavg()[0]:.1f})')
    return conns, max(cpu, want), lines


def finish(d, conns):
    """Closes the crowd, stops the daemon by pid, and shows its log's tail after a failure."""
    for c in conns:
        c.close()
    d.stop()
    if not failures:
        return
    print('---- keyctld log (tail) ----')
    with open(d.log_path, 'rb') as f:
        f.seek(max(0, os.path.getsize(d.log_path) - 2000))
        print(f.read().decode(errors='replace'))


def test_low_hard_limit(kr):
    d = Keyctld(kr.env, conf=CONF, prefix=['prlimit', '--nofile=64:64'], label='keyctld-64')
    conns = []
    try:
        check(d.start(), 'under a 64-file limit the daemon answers')
        check(wait_until(lambda: 'file limit' in d.log(), 5),
              'it logs that max-clients and max-watchers were fitted to the file limit',
              d.log()[-1500:])
        conns, cpu, lines = at_limit(d, f'{CROWD} idle connections, 64-file limit from the start')
        check(cpu < CPU_MAX, f'{CROWD} idle connections cost no busy loop ({cpu:.2f} s of CPU '
              f'wanted in {WINDOW:.0f} s)')
        check(lines <= 1, f'and no flood of "accept" lines ({lines})')
        check(served(d), f'a newcomer among the {CROWD} is served')
        for c in conns:
            c.close()
        check(wait_until(lambda: served(d, 2), 5), 'after they leave a newcomer is served')
        check(d.alive(), 'the daemon ran through it')
    finally:
        finish(d, conns)


def test_limit_lowered(kr):
    d = Keyctld(kr.env, conf=CONF, label='keyctld-lowered')
    conns = []
    try:
        check(d.start(), 'the daemon answers')
        r = subprocess.run(['prlimit', '--pid', str(d.pid), '--nofile=64:64'],
                           capture_output=True, text=True)
        check(r.returncode == 0, 'its file limit lowered to 64 (prlimit --pid)', r.stderr)
        conns, cpu, lines = at_limit(d, f'{CROWD} idle connections, limit lowered to 64 under '
                                     'the daemon')
        check(cpu < CPU_MAX, f'accept() failing with EMFILE costs no busy loop ({cpu:.2f} s of '
              f'CPU wanted in {WINDOW:.0f} s)')
        check(lines == 1, f'it is logged once for the episode ({lines} "accept" lines)',
              d.log()[-1500:])
        check(served(d), f'a newcomer among the {CROWD} is served (the connection idle longest '
              'makes room)')
        for c in conns:
            c.close()
        conns = []
        t = time.monotonic()
        ok = wait_until(lambda: served(d, 2), 5)
        check(ok, f'after they leave a newcomer is served ({time.monotonic() - t:.1f} s)')
        # A second crowd is a second episode: one more line, not thousands.
        before = log_lines(d, b'accept')
        conns = crowd(d)
        time.sleep(2)
        n = log_lines(d, b'accept') - before
        check(n == 1, f'a second crowd at the limit is a second episode: one more "accept" line '
              f'({n})')
        check(d.alive(), 'the daemon ran through it')
    finally:
        finish(d, conns)


def main():
    if not os.path.exists('/usr/bin/prlimit'):
        print('SKIP: prlimit (util-linux) not installed')
        return 77

    def body():
        with card_bed({'sig': 100, 'enc': 100, 'aut': 100}, SERIAL) as (_, kr, _, _):
            test_low_hard_limit(kr)
            test_limit_lowered(kr)
    return bed_main(body)


if __name__ == '__main__':
    sys.exit(main())
