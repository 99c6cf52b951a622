# SPDX-License-Identifier: LGPL-2.1-or-later
"""Process and temp-dir bookkeeping for the bed.

Every process the bed starts goes through spawn() (our child) or
adopt() (a pid that is not our child, e.g. scdaemon forked by gpg-agent).
stop_all() runs at exit and stops them by pid, newest first: SIGTERM,
then SIGKILL after a grace period.  Never kills by name.
"""

import atexit
import os
import shutil
import signal
import subprocess
import tempfile
import time

PYTHON = "/usr/bin/python3"


class BedUnavailable(Exception):
    """The bed cannot run here (no unshare, missing tool...).  str() is the
    reason; tests print it and exit 77."""


_children = []   # (label, Popen)
_adopted = []    # (label, pid)
_tmpdirs = []


def tmpdir(prefix="keyctlbed-"):
    d = tempfile.mkdtemp(prefix=prefix)
    _tmpdirs.append(d)
    return d


def spawn(label, argv, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    kw.setdefault("start_new_session", True)
    p = subprocess.Popen(argv, **kw)
    _children.append((label, p))
    return p


def adopt(label, pid):
    if pid and pid > 0:
        _adopted.append((label, pid))


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def stop(p, timeout=3.0, sig=signal.SIGTERM):
    """Stop one Popen by pid and reap it."""
    if p.poll() is None:
        try:
            os.kill(p.pid, sig)
        except ProcessLookupError:
            pass
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait(5)
    for f in (p.stdout, p.stderr):
        if f:
            f.close()


def stop_pid(pid, timeout=3.0):
    """Stop a pid that is not our child."""
    if not alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if not alive(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_all():
    for label, p in reversed(_children):
        stop(p)
    for label, pid in reversed(_adopted):
        stop_pid(pid)
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)
    _tmpdirs.clear()


atexit.register(stop_all)


def leftovers():
    """[(label, pid)] of bed processes still alive."""
    out = [(label, p.pid) for label, p in _children if p.poll() is None]
    out += [(label, pid) for label, pid in _adopted if alive(pid)]
    return out


def assert_no_leftovers():
    left = leftovers()
    if left:
        raise AssertionError("bed processes still alive: " + ", ".join(f"{l}[{p}]" for l, p in left))
