#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Private session bus + dbusmock notification daemon: notify-send's
summary, body, urgency and actions are read back."""

import os
import shutil
import subprocess

from common import run
import keyctlbed as kb


def main():
    if not shutil.which("notify-send"):
        raise kb.BedUnavailable("notify-send (libnotify-bin) not installed")
    with kb.SessionBus() as bus:
        env = dict(os.environ, **bus.env)
        subprocess.run(["notify-send", "-u", "critical", "-a", "keyctl",
                        "YubiKey 12345678", "Signing subkey expires in 5 days"],
                       env=env, check=True, timeout=10)
        n = bus.notifications_sent()
        assert len(n) == 1, n
        assert n[0]["summary"] == "YubiKey 12345678", n
        assert n[0]["body"] == "Signing subkey expires in 5 days"
        assert n[0]["urgency"] == 2 and n[0]["app_name"] == "keyctl", n
        # Actions, through the raw Notify call as a client library makes it.
        subprocess.run(["gdbus", "call", "--session", "--dest", "org.freedesktop.Notifications",
                        "--object-path", "/org/freedesktop/Notifications", "--method",
                        "org.freedesktop.Notifications.Notify", "keyctl", "0", "", "S", "B",
                        "['renew', 'Renew…']", "{'urgency': <byte 1>}", "5000"],
                       env=env, check=True, capture_output=True, timeout=10)
        n = bus.notifications_sent()
        assert n[1]["actions"] == ["renew", "Renew…"] and n[1]["urgency"] == 1, n
        bus.clear()
        assert bus.notifications_sent() == []


run(main)
