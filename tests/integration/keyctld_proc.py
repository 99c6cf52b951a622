# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld as a test subject: started with a private XDG tree on top of a bed environment
(pcscd + keyring), talked to with the independent Varlink client (varlink_raw), measured through
/proc (open fds, RSS) and stopped by pid, also when the test fails.

    d = Keyctld(dict(kr.env), conf="[daemon]\\nmax-clients = 8\\n")
    d.start(); d.status(); d.wait(lambda s: ..., timeout=30); d.fds(); d.rss_kib()
    d.stop()   # SIGTERM, returns the exit code (kill -9 after a grace period)"""

import os
import signal
import socket
import subprocess
import time

from keyctlbed import procs
import varlink_raw

KEYCTLD = os.environ.get('KEYCTLD', '')


class Keyctld:
    def __init__(self, env, conf=None, prefix=(), extra_env=None, label='keyctld'):
        self.tmp = procs.tmpdir('keyctl-qa-')
        for d in ('runtime', 'config/keyctl', 'state'):
            os.makedirs(os.path.join(self.tmp, d), mode=0o700, exist_ok=True)
        self.conf_path = os.path.join(self.tmp, 'config', 'keyctl', 'keyctl.conf')
        if conf is not None:
            self.write_conf(conf)
        self.socket = os.path.join(self.tmp, 'runtime', 'keyctl', 'socket')
        self.log_path = os.path.join(self.tmp, 'keyctld.log')
        self.env = dict(os.environ, **env, HOME=self.tmp,
                        XDG_RUNTIME_DIR=os.path.join(self.tmp, 'runtime'),
                        XDG_CONFIG_HOME=os.path.join(self.tmp, 'config'),
                        XDG_STATE_HOME=os.path.join(self.tmp, 'state'))
        # GIT_CONFIG_GLOBAL too: git's config is the temporary HOME's, not the developer's.
        for k in ('JOURNAL_STREAM', 'NOTIFY_SOCKET', 'KEYCTL_RENEWAL_URL', 'KEYCTL_TIME_OFFSET',
                  'GIT_CONFIG_GLOBAL'):
            self.env.pop(k, None)
        self.env.update(extra_env or {})
        self.prefix = list(prefix)
        self.label = label
        self.proc = None

    def write_conf(self, text):
        with open(self.conf_path + '.tmp', 'w') as f:
            f.write(text)
        os.rename(self.conf_path + '.tmp', self.conf_path)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self, args=(), timeout=60, wait=True):
        """Starts the daemon; True once its socket answers GetStatus (at once when not wait)."""
        self.proc = procs.spawn(self.label, self.prefix + [KEYCTLD, '--foreground'] + list(args),
                                env=self.env, stdout=subprocess.DEVNULL,
                                stderr=open(self.log_path, 'a'))
        return bool(self.wait(lambda s: True, timeout)) if wait else True

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def call(self, method, parameters=None, timeout=30):
        """The reply dict, or None when the daemon closed, refused or did not answer."""
        try:
            return varlink_raw.call_once(self.socket, method, parameters, timeout=timeout)
        except (OSError, socket.timeout, ValueError):
            return None

    def status(self, timeout=30):
        r = self.call('io.keyctl.GetStatus', timeout=timeout)
        return r.get('parameters') if r and 'parameters' in r else None

    def wait(self, pred, timeout=30, step=0.1):
        """Polls GetStatus until pred(status) is true; returns that status or None."""
        end = time.monotonic() + timeout
        while True:
            s = self.status()
            if s is not None and pred(s):
                return s
            if time.monotonic() > end or not self.alive():
                return None
            time.sleep(step)

    def fds(self):
        return len(os.listdir(f'/proc/{self.pid}/fd'))

    def fd_targets(self):
        out = []
        for n in os.listdir(f'/proc/{self.pid}/fd'):
            try:
                out.append(os.readlink(f'/proc/{self.pid}/fd/{n}'))
            except OSError:
                pass
        return sorted(out)

    def rss_kib(self):
        with open(f'/proc/{self.pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1])
        return 0

    def threads(self):
        return len(os.listdir(f'/proc/{self.pid}/task'))

    def log(self):
        try:
            with open(self.log_path, errors='replace') as f:
                return f.read()
        except FileNotFoundError:
            return ''

    def signal(self, sig):
        os.kill(self.pid, sig)

    def stop(self, timeout=30):
        """SIGTERM, wait; SIGKILL after timeout. Returns the exit code (None if never started)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode
