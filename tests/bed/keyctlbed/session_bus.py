# SPDX-License-Identifier: LGPL-2.1-or-later
"""A private D-Bus session bus with python3-dbusmock's notification_daemon
template on it, and a way to read back every Notify call.

dbus-daemon --session --print-address --nofork and the dbusmock process are
our children, stopped by pid.  Does not touch the user's real session bus.
"""

import os
import subprocess
import time

from . import procs


class SessionBus:
    def __init__(self, notifications=True):
        self.notifications = notifications
        self.daemon = None
        self.mock = None
        self.address = None

    @property
    def env(self):
        return {"DBUS_SESSION_BUS_ADDRESS": self.address}

    def start(self):
        if not os.path.exists("/usr/bin/dbus-daemon"):
            raise procs.BedUnavailable("dbus-daemon not installed")
        d = procs.tmpdir("keyctlbed-dbus-")
        self.daemon = procs.spawn("dbus-daemon", ["dbus-daemon", "--session", "--nofork",
                                                  "--print-address",
                                                  f"--address=unix:dir={d}"],
                                  stdout=subprocess.PIPE, text=True)
        self.address = self.daemon.stdout.readline().strip()
        if not self.address:
            raise procs.BedUnavailable("dbus-daemon did not start")
        if self.notifications:
            try:
                import dbusmock  # noqa: F401
            except ImportError:
                raise procs.BedUnavailable("python3-dbusmock not installed")
            self.mock = procs.spawn("dbusmock", [procs.PYTHON, "-m", "dbusmock", "--session",
                                                 "-t", "notification_daemon"],
                                    env=dict(os.environ, **self.env), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            self._wait_name("org.freedesktop.Notifications")
        return self

    def _bus(self):
        import dbus
        return dbus.bus.BusConnection(self.address)

    def _wait_name(self, name, timeout=10):
        bus = self._bus()
        end = time.monotonic() + timeout
        while not bus.name_has_owner(name):
            if time.monotonic() > end or self.mock.poll() is not None:
                raise procs.BedUnavailable(f"{name} did not appear on the bed bus")
            time.sleep(0.05)
        bus.close()

    def notifications_sent(self):
        """[{"app_name", "summary", "body", "urgency", "actions", "hints", "timeout"}]
        for every Notify call so far, oldest first."""
        import dbus
        bus = self._bus()
        obj = bus.get_object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
        calls = obj.GetCalls(dbus_interface="org.freedesktop.DBus.Mock")
        bus.close()
        out = []
        for _ts, method, args in calls:
            if method != "Notify":
                continue
            app, _replaces, _icon, summary, body, actions, hints, timeout = args
            urgency = hints.get("urgency")
            out.append({"app_name": str(app), "summary": str(summary), "body": str(body),
                        "actions": [str(a) for a in actions],
                        "urgency": int(urgency) if urgency is not None else None,
                        "hints": {str(k): v for k, v in hints.items()},
                        "timeout": int(timeout)})
        del dbus
        return out

    def clear(self):
        bus = self._bus()
        bus.get_object("org.freedesktop.Notifications", "/org/freedesktop/Notifications") \
            .ClearCalls(dbus_interface="org.freedesktop.DBus.Mock")
        bus.close()

    def stop(self):
        for p in (self.mock, self.daemon):
            if p:
                procs.stop(p)
        self.mock = self.daemon = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
