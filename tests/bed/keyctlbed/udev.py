# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fake USB tokens appearing and vanishing, with real uevents, via umockdev.

The process that creates the Testbed must run under `umockdev-wrapper`
(LD_PRELOAD); processes it starts inherit UMOCKDEV_DIR and the preload, so a
daemon under test that is our child sees the fake sysfs and gets add/remove
uevents through libudev or sd-device.  Udev.reexec() restarts the current
script under the wrapper.  Device descriptions (umockdev-record format,
with {serial} {port} {devnum} {hidraw} {hidseq} placeholders) live in
tests/bed/data/*.umockdev.  Does not touch the real /sys or /dev.

Every uevent is sent only once each listener's queue has room: umockdev delivers a uevent to each
listener's socket without blocking and gives up the whole process when one is full
(net.unix.max_dgram_qlen datagrams, 10 by default: two tokens plugged at once), so a listener
slower than the test would otherwise decide the result.  A listener that takes more than
ROOM_TIMEOUT to read one event is a failure of its own, said as such.  Each step sends one
uevent: one node added, or one removed (by remove_device() itself where umockdev does that).
"""

import errno
import glob
import os
import select
import socket
import sys
import time

from . import procs

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
WRAPPER = "/usr/bin/umockdev-wrapper"

DEFAULT_SERIALS = {"yubikey5nfc": "12345678", "nitrokey3": "A1B2C3D4E5F60718"}
ROOM_TIMEOUT = 30.0


def under_wrapper():
    return "libumockdev-preload" in os.environ.get("LD_PRELOAD", "")


def reexec():
    """Re-run this script under umockdev-wrapper unless already there."""
    if under_wrapper():
        return
    if not os.path.exists(WRAPPER):
        raise procs.BedUnavailable("umockdev-wrapper not installed")
    # umockdev's preload is not safe across fork() in a threaded program (keyctld forking gpg):
    # tests/integration/umockdev-fork.c, built by meson, holds its lock across fork().
    shim = os.environ.get("KEYCTL_UMOCKDEV_FORK", "")
    if shim and os.path.exists(shim):
        os.environ["LD_PRELOAD"] = ":".join(x for x in (shim, os.environ.get("LD_PRELOAD")) if x)
    os.execv(WRAPPER, [WRAPPER, procs.PYTHON] + sys.argv)


class Device:
    def __init__(self, name, syspaths):
        self.name = name
        self.syspaths = syspaths   # parent first

    @property
    def syspath(self):
        return self.syspaths[0]


class Udev:
    def __init__(self):
        if not under_wrapper():
            raise procs.BedUnavailable("Udev needs the test under umockdev-wrapper (Udev.reexec())")
        try:
            import gi
            gi.require_version("UMockdev", "1.0")
            from gi.repository import UMockdev
        except (ImportError, ValueError) as e:
            raise procs.BedUnavailable(f"gir1.2-umockdev-1.0 missing: {e}")
        self.preload = os.environ.get("LD_PRELOAD", "")
        self.tb = UMockdev.Testbed.new()
        self.devices = []
        self.next = 1
        self.remove_sends = self._remove_sends_uevent()

    def _remove_sends_uevent(self):
        """Whether Testbed.remove_device() sends the 'remove' uevent itself: umockdev 0.19
        (Debian 13) does, 0.17 (Debian 12) does not, and sending one more would tell every
        listener twice.  Asked of the library as a listener would see it, before any other
        listener exists: a socket of ours where umockdev looks for listeners."""
        root = self.tb.get_root_dir()
        path = os.path.join(root, "event999999")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.bind(path)
            try:
                self.tb.add_from_string("P: /devices/keyctlbed-probe\nE: SUBSYSTEM=keyctlbed\n")
                s.recv(65536)   # the 'add'
                s.setblocking(False)
                self.tb.remove_device("/sys/devices/keyctlbed-probe")
                try:
                    return s.recv(65536).find(b"ACTION=remove") >= 0
                except BlockingIOError:
                    return False
            finally:
                os.unlink(path)

    @property
    def env(self):
        """What a child needs to see the fake devices: UMOCKDEV_DIR and the preload.
        Testbed.new() sets UMOCKDEV_DIR with g_setenv (C level only), so os.environ
        lacks it and dict(os.environ, ...) would start a child on the real /sys: the
        testbed root is named explicitly.  LD_PRELOAD is kept from the start, so a test
        may drop it from os.environ to keep other children (pcscd) off the testbed."""
        return {"UMOCKDEV_DIR": self.tb.get_root_dir(), "LD_PRELOAD": self.preload}

    def open_to_all(self):
        """Let a child running as another user use the testbed: the fake netlink
        sockets live in its root, so the root is world-writable (sticky)."""
        root = self.tb.get_root_dir()
        for dirpath, _, _ in os.walk(root):
            os.chmod(dirpath, 0o755)
        os.chmod(root, 0o1777)

    def description(self, name, serial=None):
        n = self.next
        self.next += 1
        with open(os.path.join(DATA, name + ".umockdev")) as f:
            text = f.read()
        return text.format(serial=serial or DEFAULT_SERIALS.get(name, "0"), port=f"1-{n}",
                           devnum=f"{n + 1:03d}", devnum_int=n + 1, hidraw=n - 1,
                           hidseq=f"{n:04X}")

    def wait_for_room(self, timeout=ROOM_TIMEOUT):
        """Returns once every listener (a fake netlink socket, eventN in the testbed's root)
        can take one more uevent.  A unix datagram socket connected to the listener polls
        writable exactly while the listener's queue is not full; only this process sends."""
        end = time.monotonic() + timeout
        for path in glob.glob(os.path.join(self.tb.get_root_dir(), "event[0-9]*")):
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
                try:
                    s.connect(path)
                except OSError as e:
                    # A listener that closed its socket: umockdev removes it at the next send.
                    if e.errno in (errno.ECONNREFUSED, errno.ENOENT):
                        continue
                    raise
                p = select.poll()
                p.register(s, select.POLLOUT)
                if not p.poll(max(0.0, end - time.monotonic()) * 1000):
                    raise AssertionError(f"a udev listener ({path}) read no uevent in "
                                         f"{timeout:.0f} s: its queue stayed full")

    def add(self, name, serial=None):
        """Plug a token (data/<name>.umockdev): emits 'add' for each node, parent first,
        each once the listeners have room for it."""
        d = Device(name, self.add_text(self.description(name, serial)))
        self.devices.append(d)
        return d

    def add_text(self, text):
        """Adds the devices of a umockdev-record text, one uevent at a time as add() does;
        returns their sysfs paths, parent first."""
        blocks = [b for b in text.strip().split("\n\n") if b.startswith("P:")]
        for block in blocks:
            self.wait_for_room()
            if not self.tb.add_from_string(block + "\n"):
                raise RuntimeError("umockdev add_from_string failed")
        return ["/sys" + b.split("\n", 1)[0][3:].strip() for b in blocks]

    def remove(self, dev):
        """Unplug: 'remove' uevents children first, then the nodes vanish."""
        for p in reversed(dev.syspaths):
            self.wait_for_room()
            if not self.remove_sends:
                self.tb.uevent(p, "remove")
            self.tb.remove_device(p)
        self.devices.remove(dev)

    def change(self, dev, path=None):
        self.wait_for_room()
        self.tb.uevent(path or dev.syspath, "change")


def keyctld_testbed():
    """For a test that runs keyctld on a udev testbed: this script re-run under
    umockdev-wrapper, the Udev testbed made, or SKIP and exit 77 where it cannot be. Only
    keyctld gets the testbed (its env: Udev.env): pcscd, the card emulator, gpg and the buses
    the test starts stay on the real /sys, so the preload leaves this process's environment."""
    try:
        reexec()
        bed = Udev()
    except procs.BedUnavailable as e:
        print(f"SKIP: {e}")
        sys.exit(77)
    os.environ.pop("LD_PRELOAD", None)
    return bed
