#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""umockdev: a child process (like keyctld would be) sees a YubiKey 5 NFC and
a Nitrokey 3 being plugged and unplugged, through libudev (pyudev); then the same
with a listener that reads nothing for 2 s (a busy daemon): the bed waits for it,
every event arrives, none is lost."""

import os
import subprocess
import time

from common import run
import keyctlbed as kb
from keyctlbed import udev

MONITOR = r"""
import sys, time, pyudev
ctx = pyudev.Context()
m = pyudev.Monitor.from_netlink(ctx)
m.filter_by('usb')
m.filter_by('hidraw')
m.start()
print('ready', flush=True)
time.sleep(float(sys.argv[1]))
for d in iter(m.poll, None):
    print(d.action, d.subsystem, d.get('DEVTYPE', '-'), d.properties.get('ID_VENDOR_ID', '-'),
          d.properties.get('ID_SERIAL_SHORT', '-'), d.sys_name, flush=True)
"""


def plug_and_unplug(u, delay):
    """Two tokens in and out (22 uevents, twice what a listener's queue holds by default: 18 of them usb or hidraw)
    while the listener starts reading only after delay seconds."""
    mon = kb.procs.spawn("udev-monitor", [kb.PYTHON, "-c", MONITOR, str(delay)],
                         stdout=subprocess.PIPE, text=True)
    assert mon.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    yk = u.add("yubikey5nfc")
    nk = u.add("nitrokey3")
    root = u.tb.get_root_dir()
    sent = 2 * sum(os.path.basename(os.readlink(f"{root}{p}/subsystem")) in ("usb", "hidraw")
                   for p in yk.syspaths + nk.syspaths)
    u.remove(yk)
    u.remove(nk)
    lines = []
    while len(lines) < 30:
        line = mon.stdout.readline().strip()
        lines.append(line)
        if line.startswith("remove usb usb_device 20a0"):
            break
    print(f"listener reading after {delay} s: {len(lines)} events in "
          f"{(time.monotonic() - t0) * 1000:.0f} ms")
    print("\n".join(lines))
    yk_port, nk_port = yk.syspath.rsplit("/", 1)[1], nk.syspath.rsplit("/", 1)[1]
    assert f"add usb usb_device 1050 12345678 {yk_port}" in lines, lines
    assert any(x.startswith("add hidraw") for x in lines), lines
    assert f"add usb usb_device 20a0 A1B2C3D4E5F60718 {nk_port}" in lines, lines
    assert f"remove usb usb_device 1050 12345678 {yk_port}" in lines, lines
    assert len(lines) == sent, f"{sent} uevents sent, {len(lines)} received"
    kb.procs.stop(mon)


def main():
    udev.reexec()
    try:
        import pyudev  # noqa: F401
    except ImportError:
        raise kb.BedUnavailable("python3-pyudev not installed")
    u = udev.Udev()
    for delay in (0, 2):
        plug_and_unplug(u, delay)
    # The child also sees the static tree (enumeration) while plugged.
    u.add("yubikey5nfc", serial="99999999")
    r = subprocess.run([kb.PYTHON, "-c", "import pyudev; print([d.get('ID_SERIAL_SHORT') for d in "
                        "pyudev.Context().list_devices(subsystem='usb', ID_VENDOR_ID='1050')])"],
                       capture_output=True, text=True)
    assert "99999999" in r.stdout, r


run(main)
