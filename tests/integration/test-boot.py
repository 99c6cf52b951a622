#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctl as users meet it: the Debian 13 root booted with systemd as PID 1 (tools/boot-root:
its own namespaces, an overlay over the root, so the root stays clean), the keyctl packages
installed in it with apt, a user logging in through PAM (pam_systemd: a logind session of class
user, active on seat0) and getting a user manager. Then, as that user, with nothing started by
hand: keyctld.socket listens; keyctl-status answers through socket activation; the card (the
bed's virtual card behind pcscd.socket's vpcd reader) and the keyring are read; the user's
journal has KEYCTL_RULE and KEYCTL_TOKEN; a reload with a bad file keeps the old configuration
and says so; a restart keeps what was announced; with `[session] lock-on-removal = any-known`,
the token's USB device removed (umockdev's: no udevd here) makes keyctld ask the real logind to
lock alice's session, which a screen locker's LockedHint confirms; logout stops it all.

Debian 13's pcscd asks polkitd about keyctld, which runs in user@UID.service, in no session:
the test measures what it decides with (a) an active local session, (b) the session made
inactive by another user's in front of seat0, (c) lingering and no session, and (c) again
with doc/polkit-70-keyctl-pcsc.rules installed; doc/polkit.md carries the answers.

Run by test-deb.py on the Debian 13 leg with the packages it built (--debs DIR): the packages
are built once. Exits 77 (a skip, with the reason) where it cannot boot: not root, not the
Debian 13 leg (KEYCTL_TEST_LEG), no --debs. KEYCTL_BOOT_LOWER (default /) is the root booted:
by hand from the host, the leg's cached root. Every process is ended with the booted PID 1."""
import argparse
import glob
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.environ.get("KEYCTL_SRCDIR") or os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "bed"))
import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
from keyctlbed.card import VirtualCard  # noqa: E402
from testlib import check, failures, wait_until  # noqa: E402

USER, UID = "alice", 1000
OTHER = "bob"
RUNTIME = f"/run/user/{UID}"
# umockdev's preload made safe across fork() (tests/integration/umockdev-fork.c), for keyctld.
SHIM = os.environ.get("KEYCTL_UMOCKDEV_FORK", "")
VPCD_PORT = 0x8C7B  # /etc/reader.conf.d/vpcd of vsmartcard-vpcd


class Booted:
    """tools/boot-root in the background; run() is nsenter into it."""

    def __init__(self, debs, binds=()):
        self.state = tempfile.mkdtemp(prefix="keyctl-boot-test-")
        self.pidfile = os.path.join(self.state, "pid")
        self.console = open(os.path.join(self.state, "console"), "wb")
        lower = os.environ.get("KEYCTL_BOOT_LOWER", "/")
        self.proc = subprocess.Popen(
            [os.path.join(SRC, "tools", "boot-root"), "--pidfile", self.pidfile,
             "--bind", debs + ":/mnt/keyctl-debs"] +
            [x for b in binds for x in ("--bind", b)] + [lower],
            stdout=self.console, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        self.pid = None

    def wait_pid(self):
        def read():
            try:
                with open(self.pidfile) as f:
                    return int(f.read().strip() or 0)
            except (FileNotFoundError, ValueError):
                return 0
        def systemd():  # the pid is bash's until it execs systemd through chroot
            pid = read()
            try:
                return pid if os.readlink(f"/proc/{pid}/exe").endswith("/systemd") else 0
            except OSError:
                return 0
        self.pid = wait_until(lambda: systemd() or self.proc.poll() is not None, 20)
        if self.pid is True:
            self.pid = None
        return self.pid

    def enter(self, user=None, env=()):
        pre = ["nsenter", "-t", str(self.pid), "-m", "-u", "-i", "-n", "-p", "-C", "-r", "-w"]
        if user:
            pre += ["setpriv", "--reuid", user, "--regid", user, "--init-groups",
                    "env", "HOME=/home/" + user, "XDG_RUNTIME_DIR=" + RUNTIME,
                    "DBUS_SESSION_BUS_ADDRESS=unix:path=" + RUNTIME + "/bus"] + list(env)
        return pre

    def spawn(self, label, *cmd, user=None, env=()):
        """A process inside that talks over pipes, one line at a time; it ends when its stdin
        is closed (and stop_all() ends what is left of it by pid)."""
        return procs.spawn(label, self.enter(user, env) + list(cmd), stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           bufsize=1)

    def run(self, *cmd, user=None, timeout=60, input=None, env=()):
        pre = self.enter(user, env)
        try:
            return subprocess.run(pre + list(cmd), capture_output=True, text=True,
                                  timeout=timeout, input=input)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, 124, e.stdout or "", "timeout")

    def out(self, *cmd, **kw):
        return self.run(*cmd, **kw).stdout.strip()

    def console_text(self):
        with open(os.path.join(self.state, "console"), errors="replace") as f:
            return f.read()[-3000:]

    def stop(self):
        """Power off; SIGKILL to PID 1 (the whole pid namespace with it) if it does not."""
        if self.proc.poll() is None and self.pid:
            os.kill(self.pid, signal.SIGRTMIN + 4)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            if self.pid:
                os.kill(self.pid, signal.SIGKILL)
            self.proc.wait(20)
        self.console.close()
        rc = self.proc.returncode
        shutil.rmtree(self.state, ignore_errors=True)
        return rc


class BootPcscd:
    """What keyctlbed's VirtualCard needs of a Pcscd: the booted system's network namespace,
    where pcscd.socket's pcscd loads vpcd, and a directory for the emulator's files."""

    def __init__(self, pid):
        self.proc = type("P", (), {"pid": pid})()
        self.dir = procs.tmpdir("keyctl-boot-card-")
        self.port = VPCD_PORT
        self.cards = []

    def netns(self):
        return f"/proc/{self.proc.pid}/ns/net"


def status(b):
    # Its exit status says whether there are findings; the JSON is there either way.
    r = b.run("keyctl-status", "--json", user=USER, timeout=30)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return None


def card_read(s):
    return s is not None and s["daemon"].get("pcsc_available") and any(
        t.get("openpgp") for t in s.get("tokens", []))


def finding(s, rule):
    return next((f for f in (s or {}).get("findings", []) if f["rule"] == rule), None)


def user_ctl(b, *args):
    return b.out("systemctl", "--user", *args, user=USER)


def install(b, debs):
    """The packages test-deb built, installed with apt (no network in the booted system: every
    dependency is in the root already) and their units accepted by systemd-analyze."""
    r = b.run("env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-q",
              "--no-install-recommends", *["/mnt/keyctl-debs/" + os.path.basename(d)
                                           for d in debs], timeout=300)
    if not check(r.returncode == 0, "apt installs keyctl and keyctl-notify, dependencies "
                 "resolved", r.stdout[-2000:] + r.stderr[-2000:]):
        return False
    for prog in ("keyctld", "keyctl-status", "keyctl-notify"):
        r = b.run("/usr/bin/" + prog, "--version")
        check(r.returncode == 0 and "0." in r.stdout + r.stderr,
              "installed %s --version" % prog, r.stdout + r.stderr)
    units = ["/usr/lib/systemd/user/" + u for u in
             ("keyctld.service", "keyctld.socket", "keyctl-notify.service")]
    r = b.run("sh", "-c", 'XDG_RUNTIME_DIR=$(mktemp -d) exec systemd-analyze verify --user '
              '--man=no "$@"', "sh", *units)
    check(r.returncode == 0 and "keyctl" not in r.stderr,
          "systemd-analyze verify --user accepts the installed units", r.stdout + r.stderr)
    return True


def make_users(b, kr):
    """alice with the bed's keyring as her ~/.gnupg, bob to take seat0 from her; a persistent
    journal as a new Debian 13 install has (systemd's postinst makes /var/log/journal), so
    journalctl --user finds the user's own file."""
    for u in (USER, OTHER):
        b.run("useradd", "-m", "-s", "/bin/bash", u)
    b.run("sh", "-c", "mkdir -p /var/log/journal && systemd-tmpfiles --create --prefix "
          "/var/log/journal && journalctl --flush")
    kr.stop()
    for conf in ("gpg-agent.conf", "scdaemon.conf"):  # no log files in the bed's temp dir
        p = os.path.join(kr.home, conf)
        with open(p) as f:
            keep = [line for line in f if not line.startswith("log-file")]
        with open(p, "w") as f:
            f.writelines(keep)
    tar = subprocess.run(["tar", "-C", kr.home, "--exclude=S.*", "-c", "."], capture_output=True)
    r = subprocess.run(["nsenter", "-t", str(b.pid), "-m", "-p", "-r", "-w", "sh", "-c",
                        f"mkdir -m 700 /home/{USER}/.gnupg && tar -C /home/{USER}/.gnupg -x && "
                        f"chown -R {USER}: /home/{USER}/.gnupg"], input=tar.stdout,
                       capture_output=True)
    return check(r.returncode == 0, "users made, alice's GnuPG home in place", r.stderr)


# What a desktop brings to a session, as a few user units (the root has no desktop): a session
# bus at $XDG_RUNTIME_DIR/bus (dbus-user-session's units, by the same names: the user manager
# connects to the bus, as Type=dbus needs, when dbus.service starts), a notification server on
# it (python-dbusmock's, logging every Notify call), and a session target bound to
# graphical-session.target, which the login starts as gnome-session starts its own.
DESKTOP = {
    "dbus.socket": "[Socket]\nListenStream=%t/bus\n",
    "dbus.service": "[Service]\nExecStart=/usr/bin/dbus-daemon --session "
    "--address=systemd: --nofork --nopidfile --systemd-activation\n",
    "keyctl-test-notifications.service": "[Unit]\nRequires=dbus.socket\n"
    "After=dbus.socket\n[Service]\nType=dbus\nBusName=org.freedesktop."
    "Notifications\nEnvironment=DBUS_SESSION_BUS_ADDRESS=unix:path=%t/bus\n"
    "ExecStart=/usr/bin/python3 -m dbusmock --session -t notification_daemon "
    "-l %t/notifications.log\n",
    "keyctl-test-desktop.target": "[Unit]\nBindsTo=graphical-session.target\n"
    "Before=graphical-session.target\nWants=keyctl-test-notifications.service\n",
}


def write_desktop(b):
    for name, text in DESKTOP.items():
        b.run("sh", "-c", "cat >/etc/systemd/user/" + name, input=text)


def login(b, user, seat=True, desktop=False):
    """A login through PAM's `login` stack (pam_systemd opens the logind session), held by a
    service as a getty's login shell would be; with XDG_SEAT=seat0 it is a local seat session."""
    env = ["-p", "Environment=XDG_SESSION_TYPE=tty", "-p", "Environment=XDG_SESSION_CLASS=user"]
    if seat:
        env += ["-p", "Environment=XDG_SEAT=seat0"]
    r = b.run("systemd-run", "--unit=login-" + user, "-p", "PAMName=login", "-p", "User=" + user,
              *env, "sh", "-c", "systemctl --user set-environment "
              "DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus; "
              "systemctl --user start keyctl-test-desktop.target; "
              "exec sleep infinity" if desktop else "exec sleep infinity")
    if r.returncode != 0:
        return None
    uid = b.out("id", "-u", user)
    return wait_until(lambda: b.out("loginctl", "show-user", user, "-p", "State", "--value")
                      in ("active", "online") and b.out(
                          "systemctl", "is-active", f"user@{uid}.service") == "active", 20)


def logout(b, user):
    b.run("systemctl", "stop", "login-" + user)


def session_props(b, user):
    sid = (sessions(b, user) or [None])[0]
    if not sid:
        return {}
    out = b.out("loginctl", "show-session", sid, "-p", "Class", "-p", "Type", "-p", "Active",
                "-p", "Seat", "-p", "Remote", "-p", "State")
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def journal(b):
    out = b.out("journalctl", "--user", "-o", "json", "--no-pager", user=USER)
    entries = []
    for line in out.splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            pass
    return entries


def in_session(b, card):
    """Item 1: what the user meets after logging in, nothing started by hand."""
    p = session_props(b, USER)
    check(p.get("Class") == "user" and p.get("Active") == "yes" and p.get("Seat") == "seat0"
          and p.get("Remote") == "no", "alice's login: a local session of class user, "
          "active on seat0", p)
    check(user_ctl(b, "is-active", "keyctld.socket") == "active",
          "keyctld.socket listens at login")
    t0 = time.monotonic()
    s = wait_until(lambda: (lambda s: s if card_read(s) and s.get("keys") else None)(
        status(b)), 40, 0.5)
    check(s is not None, "keyctl-status answers through socket activation; card and keyring "
          "read (%.1f s)" % (time.monotonic() - t0), "%s\n%s" % (
              b.run("keyctl-status", user=USER), b.out("journalctl", "--user", "--no-pager",
                                                       "-n", "40", user=USER)))
    check(user_ctl(b, "show", "-p", "TriggeredBy", "--value", "keyctld.service")
          == "keyctld.socket" and user_ctl(b, "is-active", "keyctld.service") == "active",
          "keyctld.service was started by keyctld.socket")
    j = wait_until(lambda: (lambda j: j if any(e.get("KEYCTL_RULE") for e in j) and any(
        e.get("KEYCTL_TOKEN") for e in j) else None)(journal(b)), 20, 0.5) or journal(b)
    check(any(e.get("KEYCTL_RULE") for e in j) and any(e.get("KEYCTL_TOKEN") for e in j),
          "journalctl --user -o json: KEYCTL_RULE and KEYCTL_TOKEN", [
              e.get("MESSAGE") for e in j if e.get("SYSLOG_IDENTIFIER") == "keyctld"][-20:])
    r = b.run("systemd-analyze", "security", "--user", "--no-pager", "keyctld.service",
              user=USER)
    m = re.search(r"Overall exposure level for keyctld.service: ([0-9.]+)", r.stdout)
    check(m and float(m.group(1)) <= 2.0, "systemd-analyze security --user keyctld.service in "
          "the booted root: %s (at most 2.0)" % (m.group(1) if m else "?"), r.stdout[-1500:])
    return s


def reload_bad(b):
    conf = f"/home/{USER}/.config/keyctl/keyctl.conf"
    pid = user_ctl(b, "show", "-p", "MainPID", "--value", "keyctld.service")
    b.run("sh", "-c", f"mkdir -p {os.path.dirname(conf)} && printf '[nonsense\\n' >{conf}",
          user=USER)
    r = b.run("systemctl", "--user", "reload", "keyctld.service", user=USER)
    said = wait_until(lambda: [e for e in journal(b) if "keeping the running configuration"
                               in str(e.get("MESSAGE"))], 10, 0.3)
    check(r.returncode == 0 and said and user_ctl(b, "show", "-p", "MainPID", "--value",
                                                  "keyctld.service") == pid
          and card_read(status(b)),
          "systemctl --user reload with a bad file: the old configuration kept, the journal "
          "says so", r.stderr)
    b.run("rm", conf, user=USER)


def restart_keeps(b, s):
    """An acknowledged finding (what keyctl-notify no longer announces) stays acknowledged
    across systemctl --user restart."""
    f = next((f for f in s.get("findings", []) if f.get("id") and not f.get("acked")), None)
    if not check(f is not None, "a finding to acknowledge", s.get("findings")):
        return
    r = b.run("keyctl-status", "--ack=" + f["id"], user=USER)
    check(r.returncode == 0, "keyctl-status --ack " + f["rule"], r.stdout + r.stderr)
    pid = user_ctl(b, "show", "-p", "MainPID", "--value", "keyctld.service")
    r = b.run("systemctl", "--user", "restart", "keyctld.service", user=USER)
    s2 = wait_until(lambda: (lambda s: s if card_read(s) else None)(status(b)), 30, 0.5)
    again = next((g for g in (s2 or {}).get("findings", []) if g.get("id") == f["id"]), None)
    check(r.returncode == 0 and user_ctl(b, "show", "-p", "MainPID", "--value",
                                         "keyctld.service") != pid
          and again is not None and again.get("acked"),
          "systemctl --user restart: a new keyctld, the finding still acknowledged", again)


# A screen locker, as far as logind sees one: it follows its session's Lock and Unlock signals
# and sets LockedHint, as GNOME's and KDE's lockers do. Ends when its stdin closes.
LOCKER = r"""
import sys, dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib
DBusGMainLoop(set_as_default=True)
bus = dbus.SystemBus()
path = bus.get_object("org.freedesktop.login1", "/org/freedesktop/login1").GetSession(
    sys.argv[1], dbus_interface="org.freedesktop.login1.Manager")
session = dbus.Interface(bus.get_object("org.freedesktop.login1", path),
                         "org.freedesktop.login1.Session")
def hint(locked):
    session.SetLockedHint(locked)
    print("locked" if locked else "unlocked", flush=True)
for sig, locked in (("Lock", True), ("Unlock", False)):
    bus.add_signal_receiver(lambda locked=locked: hint(locked), sig,
                            "org.freedesktop.login1.Session", "org.freedesktop.login1", path)
loop = GLib.MainLoop()
GLib.io_add_watch(sys.stdin, GLib.IO_IN | GLib.IO_HUP, lambda *a: loop.quit())
print("ready", flush=True)
loop.run()
"""
# What keyctld.service needs to see the fake token's USB device (the test's drop-in, not the
# product's: the service's PrivateTmp and read-only /run/user would hide the testbed).
UDEV_DROPIN = f"/home/{USER}/.config/systemd/user/keyctld.service.d/udev-testbed.conf"


def bus_label(text):
    """A logind session id as it appears in its object path (sd-bus's bus_label_escape)."""
    return "".join(c if c.isascii() and (c.isalpha() or (i and c.isdigit())) else "_%02x" % ord(c)
                   for i, c in enumerate(text))


def line_of(p, timeout=20):
    """The next line p writes, or "" after timeout seconds or at its end."""
    ready = select.select([p.stdout], [], [], timeout)[0]
    return p.stdout.readline().strip() if ready else ""


def lock_on_removal(b, s):
    """Item 3 against the real logind: keyctld of the user manager (in no session) finds alice's
    session on seat0, asks logind to lock it when the token's USB device goes, and a screen
    locker's LockedHint confirms it. The token's USB device is umockdev's (no udevd here)."""
    tok = next((t for t in s.get("tokens", []) if t.get("openpgp")), None)
    serial = (tok or {}).get("id", "").rpartition("-")[2]
    sid = (sessions(b, USER) or [""])[0]
    srv = b.spawn("udev-serve", "umockdev-wrapper", "python3", "-m", "keyctlbed.udev_serve",
                  user=USER, env=("TMPDIR=" + RUNTIME, "PYTHONPATH=/mnt/keyctl-bed"))
    first = line_of(srv)
    env = dict(x.split("=", 1) for x in first.split()[1:]) if first.startswith("env ") else {}
    if not check(serial.isdigit() and sid and env.get("UMOCKDEV_DIR"),
                 "a umockdev testbed in alice's runtime directory for the token's USB device",
                 (first, serial, sid)):
        return
    preload = ":".join(["/mnt/keyctl-shim/" + os.path.basename(SHIM), env["LD_PRELOAD"]])
    b.run("sh", "-c", f"mkdir -p {os.path.dirname(UDEV_DROPIN)} && cat >{UDEV_DROPIN} && "
          "mkdir -p ~/.config/keyctl && printf '[session]\\nlock-on-removal = any-known\\n' "
          ">~/.config/keyctl/keyctl.conf", user=USER,
          input=f"[Service]\nEnvironment=UMOCKDEV_DIR={env['UMOCKDEV_DIR']} "
          f"LD_PRELOAD={preload}\nReadWritePaths={env['UMOCKDEV_DIR']}\n")
    user_ctl(b, "daemon-reload")
    user_ctl(b, "restart", "keyctld.service")
    locker = b.spawn("screen-locker", "python3", "-c", LOCKER, sid, user=USER)
    check(line_of(locker) == "ready", "a screen locker follows alice's session")
    srv.stdin.write(f"add yubikey5nfc {serial}\n")
    added = line_of(srv)
    seen = wait_until(lambda: (lambda s: s if s and any(
        t["id"] == tok["id"] and t.get("present") and t.get("usb_vendor") and any(
            sk.get("token_id") == tok["id"] for k in s.get("keys", [])
            for sk in k.get("subkeys", [])) for t in s.get("tokens", [])) else None)(
        status(b)), 30, 0.5)
    check(added.startswith("added") and seen, f"keyctld under the user manager sees "
          f"{tok['id']} on USB and PC/SC, holding alice's key", (added, status(b)))
    t0 = time.monotonic()
    srv.stdin.write("remove\n")
    check(line_of(srv) == "removed", "the token's USB device removed")
    got = line_of(locker, 10)
    t_locked = time.monotonic() - t0
    hint = b.out("loginctl", "show-session", sid, "-p", "LockedHint", "--value")
    def lock_lines():
        j = [e for e in journal(b) if e.get("KEYCTL_LOCK")]
        return j if any(e.get("KEYCTL_LOCK") == "logind" for e in j) else None
    j = wait_until(lock_lines, 10, 0.5) or [e for e in journal(b) if e.get("KEYCTL_LOCK")]
    check(got == "locked" and hint == "yes"
          and [e.get("KEYCTL_LOCK") for e in j] == ["asked", "logind"]
          and all(e.get("KEYCTL_TOKEN") == tok["id"] for e in j)
          and f"session/{bus_label(sid)})" in str(j[-1].get("MESSAGE")),
          f"removed: logind locks alice's session {sid} {t_locked:.1f} s later, LockedHint set; "
          "keyctld's journal: KEYCTL_LOCK=asked, then =logind, once each",
          (got, hint, [e.get("MESSAGE") for e in j], keyctld_said(b)))
    b.run("loginctl", "unlock-session", sid)
    check(line_of(locker, 10) == "unlocked", "unlocked again (loginctl unlock-session)")
    for p in (locker, srv):
        p.stdin.close()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            pass
        procs.stop(p)
    # The next case restarts keyctld without the testbed. The restart above is the test's, not
    # the user's: its count toward the unit's start limit (5 in 10 s) goes with it.
    b.run("rm", "-f", UDEV_DROPIN, f"/home/{USER}/.config/keyctl/keyctl.conf", user=USER)
    user_ctl(b, "daemon-reload")
    user_ctl(b, "reset-failed", "keyctld.service")


def restart_and_look(b, timeout=25):
    """keyctld started anew by the user manager (the way the user meets a change of session:
    at the next login or boot), then what it gets from pcscd: 'card', 'refused' (with the
    finding), or None when it could not tell."""
    b.run("systemctl", "--user", "restart", "keyctld.service", user=USER)

    def verdict():
        s = status(b)
        if card_read(s):
            return ("card", None)
        f = finding(s, "pcsc-refused")
        return ("refused", f) if f else None
    return wait_until(verdict, timeout, 0.5) or (None, status(b))


def pcscd_said(b, since):
    return [line for line in b.out("journalctl", "-u", "pcscd.service", "--since", since,
                                   "-o", "cat", "--no-pager").splitlines()
            if "authorized" in line]


def notified(b):
    """The summaries of keyctl-notify's Notify calls about the subkey that expires in 5 days
    (one for the key, one for the token that holds it), in order, repeats included."""
    log = b.out("cat", RUNTIME + "/notifications.log")
    return [line.split('"')[5] for line in log.splitlines()
            if " Notify " in line and line.count('"') > 5 and "5 days" in line.split('"')[5]]


def notify_once(b, after_restart):
    if not after_restart:
        check(user_ctl(b, "is-active", "keyctl-notify.service") == "active",
              "keyctl-notify.service runs in the session (graphical-session.target)",
              b.out("journalctl", "--user", "-u", "keyctl-notify", "--no-pager", user=USER))
        n = wait_until(lambda: notified(b), 20, 0.5)
    else:
        # keyctl-notify reconnects to the new keyctld (its Watch: a connection that stays on
        # keyctld's socket) and gets the same findings in the first reply; a repeat would
        # follow within milliseconds, so 2 s after the reconnection is a bounded look for one.
        sock = RUNTIME + "/keyctl/socket"
        wait_until(lambda: sock in b.out("ss", "-xHn", "state", "connected"), 20, 0.5)
        wait_until(lambda: len(notified(b)) > len(set(notified(b))), 2, 0.5)
        n = notified(b)
    check(n and len(n) == len(set(n)), "keyctl-notify shows the 5-day warning once%s (%s)"
          % (" (keyctld restarted since)" if after_restart else "", "; ".join(n)),
          b.out("cat", RUNTIME + "/notifications.log") + b.out(
              "journalctl", "--user", "-u", "keyctl-notify", "-u", "keyctl-test-notifications",
              "--no-pager", user=USER))


def keyctld_said(b):
    """For a failure's reader: keyctl-status's own words and keyctld's last journal lines."""
    r = b.run("keyctl-status", user=USER, timeout=30)
    return "keyctl-status (%s): %s%s\n%s" % (r.returncode, r.stdout[-800:], r.stderr[-400:], b.out(
        "journalctl", "--user", "-u", "keyctld", "-n", "25", "--no-pager", user=USER))


def show(answer):
    """A case's outcome as the doc gives it: what keyctld got, and its finding's words."""
    what, f = answer
    return what if not f else "%s: %s (hint: %s)" % (what, f.get("message"), f.get("hint"))


def says(answer, *words):
    """The pcsc-refused finding names the case (daemon/watch-pcsc.c, login_standing())."""
    msg = (answer[1] or {}).get("message", "")
    return any(w in msg for w in words)


def polkit_active_inactive(b, card, answers):
    """Item 2, measured: with Debian 13's pcscd and polkitd, keyctld (in user@1000.service, in
    no session) and the card, for each kind of session alice has; (a) and (b) here."""
    answers["a"] = restart_and_look(b)
    check(answers["a"][0] == "card", "(a) active local session: keyctld gets the card",
          show(answers["a"]))
    # (b) bob in front of seat0: alice's session stays, inactive.
    login(b, OTHER)
    p = session_props(b, USER)
    check(p.get("Active") == "no", "bob's login on seat0 makes alice's session inactive", p)
    card.remove()
    card.insert()
    s = wait_until(lambda: (lambda s: s if card_read(s) else None)(status(b)), 10, 0.5)
    answers["b-running"] = ("card" if s else "lost", None)
    answers["b"] = restart_and_look(b)
    print("     (b) a keyctld already running, card re-inserted: %s; a new keyctld: %s"
          % (answers["b-running"][0], show(answers["b"])))
    check(answers["b"][0] == "refused" and says(answers["b"], "not the active one"),
          "(b) inactive session: pcscd refuses a new keyctld, pcsc-refused says why",
          "%s\n%s" % (show(answers["b"]), keyctld_said(b)))
    # bob leaves; on a seat without VTs logind puts no session in front by itself, so alice's
    # is activated as a switch back to her VT would. The refused keyctld then gets in at its
    # next attempt (its backoff: 1 s doubling to 5 min) without a restart.
    logout(b, OTHER)
    wait_until(lambda: len(sessions(b, OTHER)) == 0, 15)
    p = session_props(b, USER)
    print("     bob logged out: alice's session Active=%s" % p.get("Active"))
    t0 = time.monotonic()
    b.run("loginctl", "activate", sessions(b, USER)[0])
    s = wait_until(lambda: (lambda s: s if card_read(s) else None)(status(b)), 40, 0.5)
    check(s is not None, "alice's session in front again: the refused keyctld reads the card "
          "by itself (%.1f s)" % (time.monotonic() - t0), "%s\n%s" % (status(b), keyctld_said(b)))


def sessions(b, user):
    return [line.split()[0] for line in b.out("loginctl", "list-sessions",
                                              "--no-legend").splitlines()
            if len(line.split()) > 2 and line.split()[2] == user and "manager" not in line]


def polkit_linger(b, answers):
    """(c) lingering and no session, then the rule of doc/polkit.md."""
    b.run("loginctl", "enable-linger", USER)
    active = wait_until(lambda: b.out("systemctl", "is-active", f"user@{UID}.service")
                        == "active", 15)
    check(active and not sessions(b, USER), "lingering: alice's user manager runs, no session")
    answers["c"] = restart_and_look(b)
    check(answers["c"][0] == "refused" and says(answers["c"], "no session (lingering)"),
          "(c) lingering, no session: pcscd refuses keyctld, pcsc-refused says why",
          show(answers["c"]))
    # polkitd reloads its rules by itself; keyctld is started anew as in the other cases.
    with open(os.path.join(SRC, "doc", "polkit-70-keyctl-pcsc.rules")) as f:
        rule = f.read().replace('"alice"', '"%s"' % USER)
    b.run("sh", "-c", "cat >/etc/polkit-1/rules.d/70-keyctl-pcsc.rules", input=rule)
    answers["c-rule"] = restart_and_look(b)
    check(answers["c-rule"][0] == "card", "(c) with doc/polkit-70-keyctl-pcsc.rules: keyctld "
          "gets the card", show(answers["c-rule"]))
    b.run("loginctl", "disable-linger", USER)
    stopped(b, "linger disabled")


def stopped(b, why):
    """The user manager, keyctld and every process of alice's gone."""
    # logind stops the user manager UserStopDelaySec= (10 s) after the last session.
    left = wait_until(lambda: b.out("pgrep", "-u", USER) == "" and b.out(
        "systemctl", "is-active", f"user@{UID}.service") != "active", 30, 0.5)
    check(left, "%s: alice's user manager, keyctld and every process of hers stop" % why,
          b.out("ps", "-u", USER, "-o", "pid,cmd") + "\n" + b.out("loginctl", "--no-pager")
          + "\n" + b.out("loginctl", "show-user", USER, "--no-pager") + "\n" + b.out(
              "journalctl", "-u", "systemd-logind", "-n", "15", "--no-pager"))


def scenario(b, debs):
    t0 = time.monotonic()
    if not b.wait_pid() and b.proc.wait() == 77:
        return 77  # tools/boot-root said why (its output: the console, below)
    if not check(b.pid, "tools/boot-root started systemd as PID 1"):
        return None
    # "offline", or no answer, until systemd's own socket is there, a moment after exec.
    r = wait_until(lambda: (lambda r: r if r.stdout.strip() not in ("offline", "") else None)(
        b.run("systemctl", "is-system-running", "--wait", timeout=60)), 10, 0.1)
    check(r.stdout.strip() == "running", "booted to multi-user, no failed unit (%.1f s)"
          % (time.monotonic() - t0), "%r\n%s" % (r, b.out("systemctl", "--failed", "--no-legend")))
    if not install(b, debs):
        return
    kr = kb.Keyring()
    key = kr.create_key(subkeys={"sig": 5, "enc": None, "aut": None})
    profile = kr.card_profile(key)
    if not make_users(b, kr):
        return
    card = VirtualCard(profile, BootPcscd(b.pid)).start()
    card.insert()
    write_desktop(b)
    if not check(login(b, USER, desktop=True), "alice logs in through PAM and gets a user "
                 "manager", b.out("journalctl", "-b", "-n", "40", "--no-pager")):
        return
    s = in_session(b, card)
    if s:
        notify_once(b, False)
        reload_bad(b)
        restart_keeps(b, s)
        notify_once(b, True)
        if os.path.exists(SHIM):
            lock_on_removal(b, s)
        else:
            print("note: lock on removal not tried: no KEYCTL_UMOCKDEV_FORK (run from meson)")
    answers = {}
    since = b.out("date", "+%Y-%m-%d %H:%M:%S")
    polkit_active_inactive(b, card, answers)
    logout(b, USER)
    stopped(b, "logout")
    polkit_linger(b, answers)
    print("     pcscd's journal: " + " | ".join(pcscd_said(b, since)[-4:]))
    card.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--debs", help="the directory of the keyctl packages to install")
    a = ap.parse_args()
    leg = os.environ.get("KEYCTL_TEST_LEG", "debian12")
    if os.geteuid() != 0:
        print("SKIP: needs root (it boots a root with systemd as PID 1)")
        sys.exit(77)
    if leg != "debian13" and "KEYCTL_BOOT_LOWER" not in os.environ:
        print("SKIP: boots the Debian 13 root: run on the Debian 13 leg (KEYCTL_TEST_LEG=%s)"
              % leg)
        sys.exit(77)
    debs = sorted(glob.glob(os.path.join(a.debs or "/nonexistent", "keyctl_*.deb")) +
                  glob.glob(os.path.join(a.debs or "/nonexistent", "keyctl-notify_*.deb")))
    if not debs:
        print("SKIP: no keyctl packages (test-deb.py runs this with --debs DIR)")
        sys.exit(77)
    t0 = time.monotonic()
    b = Booted(os.path.abspath(a.debs), [os.path.join(SRC, "tests", "bed") + ":/mnt/keyctl-bed"]
               + ([os.path.dirname(SHIM) + ":/mnt/keyctl-shim"] if os.path.exists(SHIM) else []))
    skipped = None
    try:
        skipped = scenario(b, debs)
    finally:
        procs.stop_all()
        console = b.console_text()
        rc = b.stop()
        if skipped:
            print("SKIP: " + console.strip())
            sys.exit(77)
        check(rc == 0, "the booted system powered off (tools/boot-root exit %s)" % rc, console)
        print("boot test: %.1f s" % (time.monotonic() - t0))
    sys.exit(1 if failures else 0)


main()
