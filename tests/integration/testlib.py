# SPDX-License-Identifier: LGPL-2.1-or-later
"""What every integration test script shares: check() prints one `ok`/`FAIL` line per assertion
and remembers the failures; wait_until() polls a condition with a deadline (a test waits for
what it asserts, it never sleeps a fixed time and hopes); finish() prints the summary and exits.
"""
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


def cpu_seconds(pid):
    """User plus system CPU time pid has used, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def finish():
    print(f'{len(failures)} failed' if failures else 'all passed')
    sys.exit(1 if failures else 0)
