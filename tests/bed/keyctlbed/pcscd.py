# SPDX-License-Identifier: LGPL-2.1-or-later
"""An isolated pcscd with the vpcd virtual reader.

pcscd ignores PCSCLITE_CSOCK_NAME, so it runs in a private mount namespace
where /run/pcscd is a bind mount of our temp dir; clients reach it through
PCSCLITE_CSOCK_NAME=<tmp>/pcscd.comm (libpcsclite honours it).  vpcd listens
on every interface, so pcscd also gets a private network namespace with
only lo up; the card emulator joins it with nsenter.  Two instances never
collide.  Does not touch the system pcscd.
"""

import json
import os
import subprocess
import time

from . import procs

VPCD_DRIVER = "/usr/lib/pcsc/drivers/serial/libifdvpcd.so"
VPCD_PORT = 0x8C7B


class Pcscd:
    """Isolated pcscd.  Use as a context manager or call start()/stop()."""

    def __init__(self, friendly_name="Virtual PCD", port=VPCD_PORT, debug=False, polkit=False):
        self.friendly_name = friendly_name
        self.port = port
        self.debug = debug
        # True: pcsc-lite's own polkit check stays on (the distribution's pcscd as it ships).
        self.polkit = polkit
        self.dir = None
        self.proc = None
        self.cards = []

    # ---- paths and env ---------------------------------------------------
    @property
    def socket(self):
        return os.path.join(self.dir, "run", "pcscd.comm")

    @property
    def env(self):
        """Environment additions for libpcsclite clients."""
        return {"PCSCLITE_CSOCK_NAME": self.socket}

    @property
    def reader_name(self):
        """Reader the card emulator feeds (slot 0 of vpcd)."""
        return f"{self.friendly_name} 00 00"

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def log_path(self):
        return os.path.join(self.dir, "pcscd.log")

    def netns(self):
        return f"/proc/{self.proc.pid}/ns/net"

    # ---- lifecycle -------------------------------------------------------
    def start(self, timeout=5.0):
        for tool in ("/usr/sbin/pcscd", "/usr/bin/unshare", VPCD_DRIVER):
            if not os.path.exists(tool):
                raise procs.BedUnavailable(f"{tool} not installed")
        if self.dir is None:
            self.dir = procs.tmpdir("keyctlbed-pcscd-")
            os.makedirs(os.path.join(self.dir, "run"))
            with open(os.path.join(self.dir, "reader.conf"), "w") as f:
                f.write(f'FRIENDLYNAME "{self.friendly_name}"\n'
                        f"DEVICENAME   /dev/null:0x{self.port:04X}\n"
                        f"LIBPATH      {VPCD_DRIVER}\n"
                        f"CHANNELID    0x{self.port:04X}\n")
        try:
            os.unlink(self.socket)
        except FileNotFoundError:
            pass
        flags = "--foreground" + (" --debug --apdu" if self.debug else "")
        # pcsc-lite 2.x built with polkit (Debian 13) asks polkit about every client and refuses
        # them all where no polkit daemon answers: the bed's pcscd serves its own tests only.
        helptext = subprocess.run(["/usr/sbin/pcscd", "--help"], capture_output=True, text=True)
        if "--disable-polkit" in helptext.stdout + helptext.stderr and not self.polkit:
            flags += " --disable-polkit"
        script = (f"mkdir -p /run/pcscd && mount --bind '{self.dir}/run' /run/pcscd && "
                  f"ip link set lo up && "
                  f"exec /usr/sbin/pcscd {flags} -c '{self.dir}/reader.conf'")
        # Probe first so a refusal gives a clear reason.
        r = subprocess.run(["unshare", "-m", "-n", "--propagation", "private", "true"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise procs.BedUnavailable("unshare -m -n not permitted: " + r.stderr.strip())
        log = open(self.log_path, "ab")
        self.proc = procs.spawn("pcscd", ["unshare", "-m", "-n", "--propagation", "private", "--",
                                          "/bin/sh", "-c", script], stdout=log, stderr=log)
        log.close()
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise procs.BedUnavailable("pcscd exited: " + self.read_log()[-500:])
            if os.path.exists(self.socket):
                return self
            time.sleep(0.02)
        raise procs.BedUnavailable("pcscd did not create its socket: " + self.read_log()[-500:])

    def read_log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def stop(self):
        for c in list(self.cards):
            c.stop()
        if self.proc:
            procs.stop(self.proc)
            self.proc = None

    def restart(self):
        """Kill pcscd and start it again with the same socket path.  Cards
        are re-attached (their emulator re-joins the new netns)."""
        cards = list(self.cards)
        inserted = [c for c in cards if c.started and c.inserted]
        for c in cards:
            c.stop()
        procs.stop(self.proc, sig=9)
        self.proc = None
        self.start()
        for c in cards:
            c.start()
        for c in inserted:
            c.insert()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def card(self, profile, insert=True):
        """A VirtualCard attached to this pcscd (inserted unless insert=False)."""
        from .card import VirtualCard
        c = VirtualCard(profile, self)
        c.start()
        if insert:
            c.insert()
        return c

    # ---- probing (runs pyscard in a child: libpcsclite caches the socket name) --
    def status(self):
        """{reader: atr hex or None} as a PC/SC client sees it."""
        code = ("import json\n"
                "from smartcard.scard import *\n"
                "hr, ctx = SCardEstablishContext(SCARD_SCOPE_USER)\n"
                "hr, rs = SCardListReaders(ctx, [])\n"
                "st = [(r, SCARD_STATE_UNAWARE, []) for r in rs]\n"
                "hr, st = SCardGetStatusChange(ctx, 0, st)\n"
                "print(json.dumps({r: (bytes(atr).hex() if s & SCARD_STATE_PRESENT else None) "
                "for r, s, atr in st}))\n")
        env = dict(os.environ, **self.env)
        r = subprocess.run([procs.PYTHON, "-c", code], env=env, capture_output=True, text=True,
                           timeout=20)
        if r.returncode != 0:
            raise RuntimeError("pcsc probe failed: " + r.stderr)
        return json.loads(r.stdout)

    def wait_card(self, present=True, timeout=5.0):
        """Wait until the vpcd reader shows a card (or none); returns seconds waited."""
        t0 = time.monotonic()
        while True:
            st = self.status().get(self.reader_name)
            if (st is not None) == present:
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"card present={present} not seen in {timeout}s")
            time.sleep(0.05)

    def transmit(self, apdus, timeout=20, reader=None):
        """Send APDUs (hex strings) in one PC/SC connection (shared mode) from a
        child process; returns [(data hex, sw int)] or raises RuntimeError with
        the PC/SC error (e.g. card removed)."""
        code = ("import json, sys\n"
                "from smartcard.System import readers\n"
                "from smartcard.scard import SCARD_SHARE_SHARED\n"
                "r = [x for x in readers() if str(x) == sys.argv[1]][0]\n"
                "c = r.createConnection(); c.connect(mode=SCARD_SHARE_SHARED)\n"
                "out = []\n"
                "for a in json.loads(sys.argv[2]):\n"
                "    d, s1, s2 = c.transmit(list(bytes.fromhex(a)))\n"
                "    out.append((bytes(d).hex(), s1 << 8 | s2))\n"
                "print(json.dumps(out))\n")
        env = dict(os.environ, **self.env)
        r = subprocess.run([procs.PYTHON, "-c", code, reader or self.reader_name,
                            json.dumps(list(apdus))], env=env, capture_output=True, text=True,
                           timeout=timeout)
        if r.returncode != 0:
            raise RuntimeError("transmit failed: " + r.stderr.strip().splitlines()[-1])
        return [tuple(x) for x in json.loads(r.stdout)]
