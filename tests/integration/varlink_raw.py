# SPDX-License-Identifier: LGPL-2.1-or-later
"""An independent Varlink client for tests: a raw AF_UNIX stream socket and Python's json, no
code of ours (https://varlink.org/Method-Call: JSON objects, each followed by one NUL byte).

    with Conn(path) as c:
        reply = c.call("io.keyctl.GetStatus")          # {"parameters": ...} or {"error": ...}
        c.send_raw(b"garbage\\0")                       # anything, in any number of writes
        c.recv(timeout=5)                               # next message (dict), None at EOF
        c.closed_by_peer(timeout=5)                     # True once the daemon closed

Every wait has a timeout; nothing here blocks forever."""

import errno
import json
import select
import socket
import time


class Closed(Exception):
    """The peer closed the connection (EOF or ECONNRESET) before a whole message arrived."""


class Conn:
    def __init__(self, path, timeout=10.0, connect=True):
        self.path = path
        self.timeout = timeout
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.buf = b""
        self.eof = False
        if connect:
            self.sock.settimeout(timeout)
            self.sock.connect(path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def fileno(self):
        return self.sock.fileno()

    # ---- sending ----------------------------------------------------------------------------
    @staticmethod
    def encode(method, parameters=None, more=False, oneway=False, **extra):
        msg = {"method": method}
        if parameters is not None:
            msg["parameters"] = parameters
        if more:
            msg["more"] = True
        if oneway:
            msg["oneway"] = True
        msg.update(extra)
        return json.dumps(msg).encode() + b"\0"

    def send_raw(self, data, chunk=None, pause=0.0):
        """Writes data whole, or in chunks of `chunk` bytes with `pause` seconds between."""
        self.sock.settimeout(self.timeout)
        if not chunk:
            self.sock.sendall(data)
            return
        for i in range(0, len(data), chunk):
            self.sock.sendall(data[i:i + chunk])
            if pause:
                time.sleep(pause)

    def send(self, method, parameters=None, **kw):
        self.send_raw(self.encode(method, parameters, **kw))

    # ---- receiving --------------------------------------------------------------------------
    def recv_bytes(self, timeout=None):
        """Next raw message (without its NUL). Raises Closed at EOF, socket.timeout on time."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while b"\0" not in self.buf:
            if self.eof:
                raise Closed()
            left = end - time.monotonic()
            if left <= 0:
                raise socket.timeout("no message")
            r, _, _ = select.select([self.sock], [], [], left)
            if not r:
                raise socket.timeout("no message")
            try:
                d = self.sock.recv(1 << 20)
            except ConnectionResetError:
                d = b""
            if not d:
                self.eof = True
                continue
            self.buf += d
        msg, self.buf = self.buf.split(b"\0", 1)
        return msg

    def recv(self, timeout=None):
        """Next message as a dict; None when the peer closed first."""
        try:
            return json.loads(self.recv_bytes(timeout))
        except Closed:
            return None

    def call(self, method, parameters=None, timeout=None, **kw):
        self.send(method, parameters, **kw)
        return self.recv(timeout)

    def closed_by_peer(self, timeout=5.0):
        """Reads (and drops) until EOF; True when the peer closed within timeout."""
        end = time.monotonic() + timeout
        self.sock.setblocking(False)
        try:
            while time.monotonic() < end:
                if self.eof:
                    return True
                r, _, _ = select.select([self.sock], [], [], max(0.0, end - time.monotonic()))
                if not r:
                    continue
                try:
                    d = self.sock.recv(1 << 20)
                except ConnectionResetError:
                    d = b""
                except BlockingIOError:
                    continue
                if not d:
                    self.eof = True
                    return True
                self.buf += d
            return self.eof
        finally:
            self.sock.setblocking(True)


def call_once(path, method, parameters=None, timeout=10.0):
    """One call on a fresh connection; returns the reply dict (None if the peer closed)."""
    with Conn(path, timeout) as c:
        return c.call(method, parameters)


def fd_count(pid):
    """Open fds of a process (from /proc), or -1 when it is gone."""
    import os
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError):
        return -1


def socket_fds(pid):
    """The number of socket fds of a process."""
    import os
    n = 0
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


__all__ = ["Conn", "Closed", "call_once", "fd_count", "socket_fds", "errno"]
