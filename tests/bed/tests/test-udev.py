#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""umockdev: a child process (like keyctld would be) sees a YubiKey 5 NFC and
a Nitrokey 3 being plugged and unplugged, through libudev (pyudev)."""

import os
import subprocess
import time

from common import run
import keyctlbed as kb
from keyctlbed import udev

MONITOR = r"""
import sys, pyudev
ctx = pyudev.Context()
m = pyudev.Monitor.from_netlink(ctx)
m.filter_by('usb')
m.filter_by('hidraw')
m.start()
print('ready', flush=True)
for d in iter(m.poll, None):
    print(d.action, d.subsystem, d.get('DEVTYPE', '-'), d.properties.get('ID_VENDOR_ID', '-'),
          d.properties.get('ID_SERIAL_SHORT', '-'), d.sys_name, flush=True)
"""


def main():
    udev.reexec()
    try:
        import pyudev  # noqa: F401
    except ImportError:
        raise kb.BedUnavailable("python3-pyudev not installed")
    u = udev.Udev()
    mon = kb.procs.spawn("udev-monitor", [kb.PYTHON, "-c", MONITOR], stdout=subprocess.PIPE,
                         text=True)
    assert mon.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    yk = u.add("yubikey5nfc")
    nk = u.add("nitrokey3")
    u.remove(yk)
    u.remove(nk)
    lines = []
    while len(lines) < 20:
        line = mon.stdout.readline().strip()
        lines.append(line)
        if line.startswith("remove usb usb_device 20a0"):
            break
    print(f"{len(lines)} events in {(time.monotonic() - t0) * 1000:.0f} ms")
    print("\n".join(lines))
    assert "add usb usb_device 1050 12345678 1-1" in lines, lines
    assert any(x.startswith("add hidraw") for x in lines), lines
    assert "add usb usb_device 20a0 A1B2C3D4E5F60718 1-2" in lines, lines
    assert "remove usb usb_device 1050 12345678 1-1" in lines, lines
    kb.procs.stop(mon)
    # The child also sees the static tree (enumeration) while plugged.
    u.add("yubikey5nfc", serial="99999999")
    r = subprocess.run([kb.PYTHON, "-c", "import pyudev; print([d.get('ID_SERIAL_SHORT') for d in "
                        "pyudev.Context().list_devices(subsystem='usb', ID_VENDOR_ID='1050')])"],
                       capture_output=True, text=True)
    assert "99999999" in r.stdout, r


run(main)
