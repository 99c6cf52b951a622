#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs one test and ends every process it started, by pid, however the test ends.

    reap-test.py [--fail-on-leftovers] COMMAND [ARG...]

meson runs each test through this wrapper (add_test_setup's exe_wrapper). The wrapper is a
child subreaper (PR_SET_CHILD_SUBREAPER): whatever the test starts stays below it in the process
tree, daemons that double-fork (gpg-agent, scdaemon, keyboxd, dbus-daemon) and children put in
sessions of their own included, so it can find them all through /proc without knowing a name.

- The test ends: what it left is given LEFTOVER_GRACE to go by itself (a gpg-agent whose home was
  just deleted), then SIGTERM, then SIGKILL. Each such process is appended to $KEYCTL_LEFTOVERS
  as one JSON object a line ({"test", "status" (the test's exit status), "pid", "cmdline"}),
  which tools/test-summary reads at the end: a passing test that leaves a process behind fails
  the run.
- meson's timeout (SIGTERM to the test's process group, SIGKILL 0.5 s later): the test has
  0.2 s of that to clean up, then everything below the wrapper gets SIGKILL, before meson's.
- --fail-on-leftovers (tools/test wraps the whole run so): anything left is ended and the
  wrapper exits 1: the final check of the run.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
LEFTOVER_GRACE = 2.0


def descendants(root):
    """Pids below root, from /proc's parent links."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if fields[0] in ("Z", "X"):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [root]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def reap_zombies():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_all(sig):
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def end_all(grace):
    """Waits up to grace for the descendants to go, then ends them. Returns [(pid, cmdline)]
    of those that had to be ended."""
    end = time.monotonic() + grace
    while True:
        reap_zombies()
        left = descendants(os.getpid())
        if not left or time.monotonic() >= end:
            break
        time.sleep(0.05)
    ended = [(pid, cmdline(pid)) for pid in left]
    if left:
        kill_all(signal.SIGTERM)
        end = time.monotonic() + 1.0
        while descendants(os.getpid()) and time.monotonic() < end:
            reap_zombies()
            time.sleep(0.05)
    # Forks racing the kill: repeat until nothing is left.
    for _ in range(50):
        reap_zombies()
        if not descendants(os.getpid()):
            break
        kill_all(signal.SIGKILL)
        time.sleep(0.02)
    reap_zombies()
    return ended


def main():
    args = sys.argv[1:]
    fail_on_leftovers = args[:1] == ["--fail-on-leftovers"]
    if fail_on_leftovers:
        args = args[1:]
    if not args:
        print("usage: reap-test.py [--fail-on-leftovers] COMMAND [ARG...]", file=sys.stderr)
        return 2
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print(f"reap-test: prctl: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
        return 99
    # The test's name: its script's or its executable's (test-*), else the command's.
    names = [os.path.basename(a) for a in args]
    name = next((n for n in names if n.startswith("test-")), names[0])

    class Stop(Exception):
        pass

    def on_term(signum, frame):
        raise Stop(signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        child = subprocess.Popen(args)
        child.wait()
    except Stop as stop:
        # meson gave the whole group SIGTERM and kills it in 0.5 s: the test has part of that.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        time.sleep(0.2)
        kill_all(signal.SIGKILL)
        end_all(0)
        print(f"reap-test: {name}: stopped by signal {stop.args[0]}; every process "
              "below it killed", file=sys.stderr)
        return 128 + stop.args[0]
    status = child.returncode
    ended = end_all(LEFTOVER_GRACE)
    if ended:
        print(f"reap-test: {name} left {len(ended)} process(es) running; ended them:",
              file=sys.stderr)
        for pid, cmd in ended:
            print(f"  [{pid}] {cmd}", file=sys.stderr)
        path = os.environ.get("KEYCTL_LEFTOVERS")
        if path:
            # JSON, so that a command line with tabs or newlines (python3 -c "...") stays one
            # record; one write() on an O_APPEND file, so that tests ending together do not
            # interleave their lines.
            records = "".join(json.dumps({"test": name, "status": status, "pid": pid,
                                          "cmdline": cmd}) + "\n" for pid, cmd in ended)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, records.encode())
            finally:
                os.close(fd)
        if fail_on_leftovers:
            print(f"reap-test: FAIL: processes outlived {name}", file=sys.stderr)
            return 1
    return status if status >= 0 else 128 - status


sys.exit(main())
