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
    def __init__(self, notifications=True, capabilities=None):
        """capabilities: what GetCapabilities answers, e.g. "body actions body-markup"
        (a str or a list); None keeps dbusmock's default, which has no "actions"."""
        self.notifications = notifications
        if capabilities is not None and not isinstance(capabilities, str):
            capabilities = " ".join(capabilities)
        self.capabilities = capabilities
        self.daemon = None
        self.mock = None
        self.address = None
        self._ids_cleared = 0   # ids the mock handed out for calls clear() forgot

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
            self.start_mock()
        return self

    def start_mock(self):
        """Starts the notification_daemon mock (again, after stop_mock())."""
        import json
        argv = [procs.PYTHON, "-m", "dbusmock", "--session", "-t", "notification_daemon"]
        if self.capabilities is not None:
            argv += ["-p", json.dumps({"capabilities": self.capabilities})]
        self._ids_cleared = 0
        self.mock = procs.spawn("dbusmock", argv, env=dict(os.environ, **self.env),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_name("org.freedesktop.Notifications")

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

    def _mock_obj(self, bus):
        return bus.get_object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")

    def notifications_sent(self):
        """[{"id", "app_name", "summary", "body", "urgency", "actions", "hints", "timeout"}]
        for every Notify call so far, oldest first.  "id" is the one the mock answered
        (it counts up from 1; a call with replaces_id gets that id back)."""
        import dbus
        bus = self._bus()
        calls = self._mock_obj(bus).GetCalls(dbus_interface="org.freedesktop.DBus.Mock")
        bus.close()
        out = []
        next_id = self._ids_cleared + 1
        for _ts, method, args in calls:
            if method != "Notify":
                continue
            app, replaces, _icon, summary, body, actions, hints, timeout = args
            if replaces:
                nid = int(replaces)
            else:
                nid, next_id = next_id, next_id + 1
            urgency = hints.get("urgency")
            out.append({"id": nid, "app_name": str(app), "summary": str(summary),
                        "body": str(body),
                        "actions": [str(a) for a in actions],
                        "urgency": int(urgency) if urgency is not None else None,
                        "hints": {str(k): v for k, v in hints.items()},
                        "timeout": int(timeout)})
        del dbus
        return out

    def clear(self):
        bus = self._bus()
        obj = self._mock_obj(bus)
        calls = obj.GetCalls(dbus_interface="org.freedesktop.DBus.Mock")
        obj.ClearCalls(dbus_interface="org.freedesktop.DBus.Mock")
        bus.close()
        self._ids_cleared += sum(1 for _ts, m, args in calls if m == "Notify" and not args[1])

    def invoke_action(self, notification_id, action, close=True):
        """What a server does when the user clicks a button: ActionInvoked(id, action), then,
        with close, NotificationClosed(id, 2 = dismissed by the user)."""
        import dbus
        bus = self._bus()
        obj = self._mock_obj(bus)
        iface = "org.freedesktop.Notifications"
        obj.EmitSignal(iface, "ActionInvoked", "us",
                       [dbus.UInt32(notification_id), dbus.String(action)],
                       dbus_interface="org.freedesktop.DBus.Mock")
        if close:
            obj.EmitSignal(iface, "NotificationClosed", "uu",
                           [dbus.UInt32(notification_id), dbus.UInt32(2)],
                           dbus_interface="org.freedesktop.DBus.Mock")
        bus.close()

    def stop_mock(self):
        """The notification server goes away; the bus stays."""
        if self.mock:
            procs.stop(self.mock)
        self.mock = None

    def stop(self):
        for p in (self.mock, self.daemon):
            if p:
                procs.stop(p)
        self.mock = self.daemon = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
