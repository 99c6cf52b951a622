#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""keyctld does its whole job inside the sandbox that keyctld.service asks for.

There is no user manager on the test machine, so the unit's settings are rebuilt by hand, as
close as the machine allows, around the real daemon and the test bed (virtual card in an
isolated pcscd, a keyring whose subkeys are stubs on that card, gpg-agent):
  ProtectSystem=strict, ProtectHome=read-only  every writable mount remounted read-only (bind,
                                               in a private mount namespace), GNUPGHOME and the
                                               runtime dir included
  StateDirectory=keyctl                        $STATE_DIRECTORY bound back read-write
  socket activation                            the Varlink socket is passed as fd 3 (LISTEN_*)
  CapabilityBoundingSet=, NoNewPrivileges=yes  bounding set emptied, PR_SET_NO_NEW_PRIVS
  SystemCallFilter=@system-service ~@privileged @resources, SystemCallErrorNumber=EPERM,
  SystemCallArchitectures=native               a seccomp allow list expanded from
                                               `systemd-analyze syscall-filter` (python3-seccomp)
  RestrictAddressFamilies=AF_UNIX AF_NETLINK   socket() of any other family: EAFNOSUPPORT
  MemoryDenyWriteExecute=yes                   mmap W+X, mprotect/pkey_mprotect +X, shmat
                                               SHM_EXEC: EPERM
  LockPersonality=yes, RestrictNamespaces=yes  personality changes, unshare/setns/clone with
                                               namespace flags: EPERM (clone3: ENOSYS)
Then GetStatus must show the card (serial, maker), the keyring's subkeys tied to it, pcscd up
and the keyring fresh. A probe run in the same sandbox shows each restriction is really there
(so a pass is not a sandbox that silently did nothing). Not rebuilt: PrivateUsers=, PrivateTmp=
(the bed lives in /tmp; /tmp is read-only instead), ProtectKernel*, ProtectClock=, ProtectProc=
(mount-side options that keyctld never touches). Every process is stopped by pid."""

import json
import os
import re
import socket
import subprocess
import sys
import time

PY = "/usr/bin/python3"
FAILED = []

# Filled from systemd's own headers, as systemd applies them (x86-64/generic Linux values).
AF_MAX = 46  # linux/socket.h, 6.x
PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000
CLONE_NS_FLAGS = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                  0x40000000, 0x00000080)  # NEWNS NEWCGROUP NEWUTS NEWIPC NEWUSER NEWPID NEWNET NEWTIME
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24


def check(name, cond, detail=""):
    print(("ok   " if cond else "FAIL ") + name, flush=True)
    if not cond and detail:
        print("     " + str(detail).replace("\n", "\n     "))
    if not cond:
        FAILED.append(name)


# ---- the inner side: runs in the new mount namespace, then execs the program -----------------

def expand(group, seen=None):
    """Syscall names of a systemd filter group, nested groups expanded."""
    seen = seen if seen is not None else set()
    if group in seen:
        return set()
    seen.add(group)
    r = subprocess.run(["systemd-analyze", "syscall-filter", group], capture_output=True,
                       text=True, check=True)
    names = set()
    for line in r.stdout.splitlines()[1:]:
        item = line.strip()
        if not item or item.startswith("#"):
            continue
        names |= expand(item, seen) if item.startswith("@") else {item}
    return names


def unit_filters():
    """SystemCallFilter= and RestrictAddressFamilies= as the built keyctld.service states them,
    so that the sandbox follows the unit: (allowed syscall names, allowed address families)."""
    import socket as so
    unit = os.path.join(os.environ["KEYCTL_BUILDDIR"], "systemd", "keyctld.service")
    allow, deny, families = set(), set(), set()
    with open(unit) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            if key == "SystemCallFilter":
                if value.startswith("~"):
                    for item in value[1:].split():
                        deny |= expand(item) if item.startswith("@") else {item}
                else:
                    for item in value.split():
                        allow |= expand(item) if item.startswith("@") else {item}
            elif key == "RestrictAddressFamilies":
                families |= {getattr(so, name) for name in value.split()}
    if not allow or not families:
        sys.exit("%s: no SystemCallFilter= or RestrictAddressFamilies= allow list" % unit)
    return allow - deny, sorted(int(f) for f in families)


def remount_read_only():
    """ProtectSystem=strict + ProtectHome=read-only: every mount that holds files we could
    write becomes read-only (bind remount: only this namespace's copy changes)."""
    done = []
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for mp in points:
        mp = mp.replace("\\040", " ")
        if mp != "/" and not re.match(r"^/(tmp|run|home|root|var|etc|usr|srv|opt|boot|dev/shm)"
                                      r"(/|$)", mp):
            continue
        r = subprocess.run(["mount", "-o", "remount,bind,ro", mp], capture_output=True,
                           text=True)
        if r.returncode != 0:
            sys.exit("remount %s read-only failed: %s" % (mp, r.stderr))
        done.append(mp)
    return done


def make_writable(paths):
    """ReadWritePaths=/StateDirectory=: a bind mount of each path, remounted read-write."""
    for path in paths:
        for opts in (["--bind", path, path], ["-o", "remount,bind,rw", path]):
            r = subprocess.run(["mount"] + opts, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit("mount %s failed: %s" % (" ".join(opts), r.stderr))


def drop_privileges():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    cap = 0
    while libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0:  # CapabilityBoundingSet=
        cap += 1
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:      # NoNewPrivileges=yes
        sys.exit("PR_SET_NO_NEW_PRIVS failed")


def load_seccomp():
    import errno
    import seccomp as sc
    allow, families = unit_filters()
    # RestrictAddressFamilies= (AF_UNIX AF_NETLINK): every other family below AF_MAX refused.
    f = sc.SyscallFilter(sc.ALLOW)
    no = sc.ERRNO(errno.EAFNOSUPPORT)
    for family in range(0, AF_MAX):  # one comparison per argument and rule
        if family not in families:
            f.add_rule(no, "socket", sc.Arg(0, sc.EQ, family))
    f.add_rule(no, "socket", sc.Arg(0, sc.GE, AF_MAX))
    f.load()
    # LockPersonality=yes: as systemd's seccomp_lock_personality(), any value but the current
    # personality (PER_LINUX, 0) is refused.
    f = sc.SyscallFilter(sc.ALLOW)
    f.add_rule(sc.ERRNO(errno.EPERM), "personality", sc.Arg(0, sc.NE, 0))
    f.load()
    # RestrictNamespaces=yes
    f = sc.SyscallFilter(sc.ALLOW)
    f.add_rule(sc.ERRNO(errno.EPERM), "unshare")
    f.add_rule(sc.ERRNO(errno.EPERM), "setns")
    f.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")  # flags behind a pointer: glibc falls back
    for flag in CLONE_NS_FLAGS:
        f.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    f.load()
    # MemoryDenyWriteExecute=yes: nothing but seccomp() and execve() run after it.
    f = sc.SyscallFilter(sc.ALLOW)
    wx = PROT_WRITE | PROT_EXEC
    f.add_rule(sc.ERRNO(errno.EPERM), "mmap", sc.Arg(2, sc.MASKED_EQ, wx, wx))
    f.add_rule(sc.ERRNO(errno.EPERM), "mprotect", sc.Arg(2, sc.MASKED_EQ, PROT_EXEC, PROT_EXEC))
    f.add_rule(sc.ERRNO(errno.EPERM), "pkey_mprotect",
               sc.Arg(2, sc.MASKED_EQ, PROT_EXEC, PROT_EXEC))
    f.add_rule(sc.ERRNO(errno.EPERM), "shmat", sc.Arg(2, sc.MASKED_EQ, SHM_EXEC, SHM_EXEC))
    f.load()
    # SystemCallFilter= (@system-service, ~@privileged @resources) from the unit: last, as
    # systemd does, since it refuses seccomp() itself.
    f = sc.SyscallFilter(sc.ERRNO(errno.EPERM))
    for name in sorted(allow):
        try:
            f.add_rule(sc.ALLOW, name)
        except (RuntimeError, ValueError):
            pass  # unknown to this libseccomp or this architecture
    f.load()


def inner(argv):
    """--inner FD -- PROGRAM ARGS: runs under `unshare -m`; sandbox, then exec in place.
    $STATE_DIRECTORY, when set, stays writable as StateDirectory= leaves it."""
    fd = int(argv[0])
    prog = argv[2:]
    done = remount_read_only()
    env = dict(os.environ)
    rw = [env["STATE_DIRECTORY"]] if env.get("STATE_DIRECTORY") else []
    make_writable(rw)
    print("sandbox: read-only %s; writable %s" % (" ".join(done), " ".join(rw)),
          file=sys.stderr, flush=True)
    if fd >= 0:
        if fd != 3:
            os.dup2(fd, 3)
            os.close(fd)
        os.set_inheritable(3, True)
        env.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()))  # exec keeps our pid
    drop_privileges()
    load_seccomp()
    os.execve(prog[0], prog, env)


# ---- the outer side: the test ----------------------------------------------------------------

PROBE = r"""
import ctypes, errno, mmap, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
out = {}
def err(f):
    try:
        f(); return 0
    except OSError as e:
        return e.errno
out["write_gnupghome"] = err(lambda: open(os.path.join(sys.argv[1], "probe"), "w"))
out["write_tmp"] = err(lambda: open("/tmp/keyctl-sandbox-probe", "w"))
out["write_runtime"] = err(lambda: open(os.path.join(sys.argv[2], "probe"), "w"))
out["write_state"] = err(lambda: open(os.path.join(os.environ["STATE_DIRECTORY"], "probe"), "w"))
out["af_inet"] = err(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
out["af_inet6"] = err(lambda: socket.socket(socket.AF_INET6, socket.SOCK_DGRAM))
out["af_packet"] = err(lambda: socket.socket(17, socket.SOCK_RAW))
out["af_unix"] = err(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close())
out["af_netlink"] = err(lambda: socket.socket(16, socket.SOCK_RAW, 15).close())
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
p = libc.mmap(None, 4096, 7, 0x22, -1, 0)
out["mmap_wx"] = ctypes.get_errno() if p in (None, ctypes.c_void_p(-1).value) else 0
p = libc.mmap(None, 4096, 3, 0x22, -1, 0)
out["mprotect_x"] = ctypes.get_errno() if libc.mprotect(ctypes.c_void_p(p), 4096, 5) else 0
out["unshare"] = ctypes.get_errno() if libc.unshare(0x00020000) else 0
out["personality"] = ctypes.get_errno() if libc.personality(0x0008) == -1 else 0
out["setrlimit_core"] = err(lambda: __import__("resource").setrlimit(4, (0, 0)))  # as gpg does
out["sethostname"] = ctypes.get_errno() if libc.sethostname(b"x", 1) else 0
out["setpriority"] = ctypes.get_errno() if libc.setpriority(0, 0, 5) else 0
st = open("/proc/self/status").read()
out["capeff"] = [l.split()[1] for l in st.splitlines() if l.startswith("CapEff")][0]
out["capbnd"] = [l.split()[1] for l in st.splitlines() if l.startswith("CapBnd")][0]
out["nonewprivs"] = [l.split()[1] for l in st.splitlines() if l.startswith("NoNewPrivs")][0]
out["seccomp_filters"] = [l.split()[1] for l in st.splitlines() if l.startswith("Seccomp_filters")]
print(__import__("json").dumps(out))
"""


def sandboxed(argv, fd=-1, **kw):
    return ["unshare", "-m", "--propagation", "private", PY, os.path.abspath(__file__),
            "--inner", str(fd), "--"] + argv


def varlink_call(path, method, timeout=10):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(json.dumps({"method": method, "parameters": {}}).encode() + b"\0")
        buf = b""
        while not buf.endswith(b"\0"):
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    return json.loads(buf.rstrip(b"\0").decode())


def test_probe(kb, env, gnupghome, runtime):
    r = subprocess.run(sandboxed([PY, "-c", PROBE, gnupghome, runtime]), env=env,
                       capture_output=True, text=True, timeout=120)
    try:
        p = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        check("the probe runs in the sandbox", False, r.stdout + r.stderr)
        return
    import errno as E
    print("     probe: " + json.dumps(p))
    check("ProtectHome=read-only: GNUPGHOME not writable (EROFS)", p["write_gnupghome"] == E.EROFS)
    check("ProtectSystem=strict: /tmp not writable (EROFS)", p["write_tmp"] == E.EROFS)
    check("runtime dir not writable (EROFS): the socket must be passed",
          p["write_runtime"] == E.EROFS)
    check("StateDirectory=: $STATE_DIRECTORY writable", p["write_state"] == 0)
    check("RestrictAddressFamilies: AF_INET, AF_INET6, AF_PACKET refused (EAFNOSUPPORT)",
          p["af_inet"] == p["af_inet6"] == p["af_packet"] == E.EAFNOSUPPORT)
    check("RestrictAddressFamilies: AF_UNIX and AF_NETLINK allowed",
          p["af_unix"] == 0 and p["af_netlink"] == 0)
    check("MemoryDenyWriteExecute: mmap(W|X) and mprotect(+X) refused (EPERM)",
          p["mmap_wx"] == E.EPERM and p["mprotect_x"] == E.EPERM)
    check("RestrictNamespaces: unshare(CLONE_NEWNS) refused (EPERM)", p["unshare"] == E.EPERM)
    check("LockPersonality: personality(PER_LINUX32) refused (EPERM)",
          p["personality"] == E.EPERM)
    check("SystemCallFilter ~@privileged: sethostname refused (EPERM)",
          p["sethostname"] == E.EPERM)
    check("SystemCallFilter ~@resources: setpriority refused (EPERM)",
          p["setpriority"] == E.EPERM)
    check("setrlimit(RLIMIT_CORE) still allowed (gpg dies if it cannot disable core dumps)",
          p["setrlimit_core"] == 0)
    check("CapabilityBoundingSet=: no capabilities (CapEff %s, CapBnd %s)" %
          (p["capeff"], p["capbnd"]), int(p["capeff"], 16) == 0 and int(p["capbnd"], 16) == 0)
    check("NoNewPrivileges=yes", p["nonewprivs"] == "1")


def test_daemon(kb, keyctld):
    with kb.Pcscd() as pcscd, kb.Keyring(pcscd) as kr:
        key = kr.create_key(subkeys={"sig": 20, "enc": 200, "aut": None})
        prof = kr.card_profile(key, base="yubikey5nfc", serial="87654321")
        card = pcscd.card(prof)
        pcscd.wait_card(True, timeout=20)
        kr.stubs_from_card(key, card)

        tmp = kb.procs.tmpdir("keyctl-sandbox-")
        runtime = os.path.join(tmp, "runtime")
        os.makedirs(os.path.join(runtime, "keyctl"), mode=0o700)
        os.makedirs(os.path.join(tmp, "config"), mode=0o700)
        env = dict(os.environ, **kr.env)
        state = os.path.join(tmp, "state")
        os.makedirs(state, mode=0o700)
        env.update(XDG_RUNTIME_DIR=runtime, XDG_CONFIG_HOME=os.path.join(tmp, "config"), XDG_STATE_HOME=os.path.join(tmp, "state"),
                   STATE_DIRECTORY=state)
        for k in ("LISTEN_FDS", "LISTEN_PID", "NOTIFY_SOCKET", "WATCHDOG_USEC", "JOURNAL_STREAM"):
            env.pop(k, None)
        # LeakSanitizer stops the world with ptrace, which the syscall filter refuses (as it
        # should); leaks are checked by the unsandboxed tests.
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"]))

        test_probe(kb, env, kr.home, runtime)

        path = os.path.join(runtime, "keyctl", "socket")
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(path)
        ls.listen(16)
        log_path = os.path.join(tmp, "keyctld.log")
        with open(log_path, "w") as log:
            d = kb.procs.spawn("keyctld (sandboxed)",
                               sandboxed([keyctld, "--log-level=debug"], fd=ls.fileno()),
                               env=env, stderr=log, stdout=subprocess.DEVNULL,
                               pass_fds=[ls.fileno()])
        ls.close()
        try:
            want = prof.get("serial", "87654321")
            status, last = None, None
            end = time.monotonic() + 60
            while time.monotonic() < end and d.poll() is None:
                try:
                    last = varlink_call(path, "io.keyctl.GetStatus")
                except (OSError, ValueError):
                    time.sleep(0.2)
                    continue
                p = last.get("parameters", {})
                toks = p.get("tokens", [])
                if any(t.get("serial") == want for t in toks) and p.get("keys"):
                    subs = [s for k in p["keys"] for s in k.get("subkeys", [])]
                    if all(s.get("token_id") for s in subs if not s.get("is_primary")):
                        status = p
                        break
                time.sleep(0.3)
            with open(log_path) as f:
                log_text = f.read()
            check("keyctld in the sandbox answers GetStatus with the card and the keys",
                  status is not None, "%s\n%s" % (json.dumps(last)[:1500], log_text[-3000:]))
            if status:
                info = status["daemon"]
                tok = next(t for t in status["tokens"] if t.get("serial") == want)
                print("     token: %s %s serial %s" % (tok.get("kind"), tok.get("model"),
                                                      tok.get("serial")))
                check("pcscd reached through its socket (pcsc_available)",
                      info.get("pcsc_available") is True, info)
                check("keyring listed by gpg inside the sandbox, not stale",
                      info.get("keyring_stale") is False and info.get("keyring_error") == "",
                      info)
                check("the card read in shared mode: kind yubikey, serial %s" % want,
                      tok.get("kind") == "yubikey", tok)
                k = next((k for k in status["keys"] if k.get("fingerprint") == key["fpr"]), {})
                subs = {s["fingerprint"]: s for s in k.get("subkeys", [])}
                on_card = [s for s in ("sig", "enc", "aut") if
                           subs.get(key[s], {}).get("token_id") == tok.get("id")]
                check("all three subkeys tied to the card (%s)" % ",".join(on_card),
                      len(on_card) == 3, subs)
            check("no seccomp/EROFS trouble in the daemon's log", not re.search(
                r"Operation not permitted|Read-only file system|Bad system call", log_text),
                log_text[-2000:])
            saved = sorted(set(os.listdir(state)) - {"probe"})
            check("the remembered tokens are saved in $STATE_DIRECTORY (%s)" % " ".join(saved),
                  saved != [], log_text[-1500:])
            check("nothing the card refused (no VERIFY/PUT DATA)", card.forbidden_count() == 0,
                  card.forbidden())
            kb.procs.stop(d)
            with open(log_path) as f:
                tail = f.read()[-2000:]
            check("SIGTERM: exit 0 in the sandbox", d.returncode == 0,
                  "rc=%r\n%s" % (d.returncode, tail))
        finally:
            kb.procs.stop(d)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--inner":
        return inner(sys.argv[2:])
    try:
        import seccomp  # noqa: F401
    except ImportError:
        print("SKIP python3-seccomp is not installed (apt-get install python3-seccomp)")
        return 77
    if os.geteuid() != 0:
        print("SKIP needs root for mount namespaces")
        return 77
    import keyctlbed as kb
    try:
        test_daemon(kb, os.environ["KEYCTLD"])
    except kb.BedUnavailable as e:
        print("SKIP %s" % e)
        return 77
    left = kb.leftovers()
    check("no process left behind", not left, left)
    print("%d failed" % len(FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
