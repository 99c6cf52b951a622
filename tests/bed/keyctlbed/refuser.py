# SPDX-License-Identifier: LGPL-2.1-or-later
"""A pcscd that refuses: a listening socket that accepts each connection and closes it at once,
which is what libpcsclite sees when pcsc-lite 2.x's polkit check turns a client away (no active
session, a container, an ssh login). Remembers when each connection came."""

import os
import socket
import threading
import time


class Refuser(threading.Thread):
    def __init__(self, path):
        super().__init__(daemon=True)
        self.path = path
        if os.path.exists(path):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(64)
        self.accepted = []  # time.monotonic() of each connection
        self.stopped = False
        self.start()

    def run(self):
        while not self.stopped:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.accepted.append(time.monotonic())
            c.close()

    def stop(self):
        """Stops accepting and removes the socket file; safe to call twice."""
        if self.stopped:
            return
        self.stopped = True
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass
