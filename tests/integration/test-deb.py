#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Debian package: `dpkg-buildpackage -us -uc -b` (nocheck: the tests run elsewhere) builds
keyctl and keyctl-notify from a clean copy of the source tree, without a compiler warning;
lintian reports no error and no warning (overrides carry their reasons in
debian/*.lintian-overrides); the packages hold what they should and keyctl-notify alone pulls in
libnotify.

On the Debian 13 leg (a throwaway root, KEYCTL_TEST_LEG=debian13) the built packages are then
installed with apt, dependencies resolved, in that root booted with systemd as PID 1 on an
overlay (so the root stays as it is), and used there by a user who logs in: test-boot.py, the
boot test, run from here so that the packages are built once. Where it cannot boot they are
installed in the root itself: `keyctld --version` and `keyctl-status --version` run, and
`systemd-analyze verify --user` accepts the installed units (test-boot.py checks the same);
both packages are purged afterwards, since the root is reused. On the host leg nothing is
installed: the test never changes the machine it runs on. Exits 77 where dpkg-buildpackage or
debhelper is missing."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("KEYCTL_SRCDIR") or os.path.join(os.path.dirname(__file__), "..", "..")
LEG = os.environ.get("KEYCTL_TEST_LEG", "debian12")
failed = []


def check(name, cond, detail=""):
    print(("ok: " if cond else "FAIL: ") + name)
    if not cond:
        print("   " + str(detail)[-3000:])
        failed.append(name)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def copy_tree(dst):
    """The source as a checkout has it: tracked files when there is a git tree, else everything
    but build directories (the Debian 13 leg's copy has no .git)."""
    if os.path.isdir(os.path.join(SRC, ".git")):
        files = run(["git", "-C", SRC, "ls-files", "-z"]).stdout.split("\0")
        for f in filter(None, files):
            os.makedirs(os.path.join(dst, os.path.dirname(f)), exist_ok=True)
            shutil.copy2(os.path.join(SRC, f), os.path.join(dst, f), follow_symlinks=False)
        return

    def ignore(d, names):
        return [n for n in names if n == ".git" or
                os.path.isdir(os.path.join(d, n, "meson-private"))]
    shutil.copytree(SRC, dst, symlinks=True, ignore=ignore, dirs_exist_ok=True)


def contents(deb):
    out = run(["dpkg-deb", "-c", deb]).stdout
    return {line.split()[-1].lstrip(".") for line in out.splitlines()}


def install_and_run(debs):
    r = run(["apt-get", "install", "-y", "-q", "--no-install-recommends"] + debs,
            env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), timeout=600)
    check("apt installs both packages, dependencies resolved", r.returncode == 0,
          r.stdout + r.stderr)
    if r.returncode != 0:
        return
    try:
        for prog in ("keyctld", "keyctl-status", "keyctl-notify"):
            r = run(["/usr/bin/" + prog, "--version"], timeout=30)
            check("installed %s --version" % prog,
                  r.returncode == 0 and re.search(r"\b0\.\d+\.\d+", r.stdout + r.stderr),
                  r.stdout + r.stderr)
        units = ["/usr/lib/systemd/user/" + u for u in
                 ("keyctld.service", "keyctld.socket", "keyctl-notify.service")]
        with tempfile.TemporaryDirectory(prefix="keyctl-deb-run-") as rt:
            r = run(["systemd-analyze", "verify", "--user", "--man=no"] + units,
                    env=dict(os.environ, XDG_RUNTIME_DIR=rt), timeout=60)
        check("systemd-analyze verify --user accepts the installed units",
              r.returncode == 0 and "keyctl" not in r.stderr, r.stdout + r.stderr)
        r = run(["dpkg-query", "-W", "-f", "${Status}", "keyctl"])
        check("dpkg knows keyctl as installed", "install ok installed" in r.stdout, r.stdout)
    finally:
        r = run(["apt-get", "purge", "-y", "-q", "keyctl", "keyctl-notify"],
                env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), timeout=300)
        check("both packages purged again (the root is reused)", r.returncode == 0,
              r.stdout + r.stderr)


def booted(debs_dir):
    """The packages installed and used in the Debian 13 root booted with systemd as PID 1
    (test-boot.py: apt, a PAM login, the user's keyctld.socket, polkit's pcscd), so that they
    are built once. False where it cannot boot (its exit 77, the reason printed): then they
    are installed in the root itself, as before."""
    sys.stdout.flush()
    r = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "test-boot.py"),
                        "--debs", debs_dir], timeout=600)
    if r.returncode == 77:
        print("note: the boot test skipped (above): the packages are installed in the root")
        return False
    check("the boot test (test-boot.py) passes", r.returncode == 0, "its output is above")
    return True


def main():
    for tool in ("dpkg-buildpackage", "dh", "lintian"):
        if not shutil.which(tool):
            print("SKIP: %s not installed (debhelper, dpkg-dev and lintian build the package)"
                  % tool)
            sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="keyctl-deb-") as tmp:
        tree = os.path.join(tmp, "keyctl")
        copy_tree(tree)
        # nocheck: the leg runs the unit suite on its own builds already; without it the
        # package build builds no test either (debian/rules), a third of the CPU this test took.
        r = run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=tree, timeout=1500,
                env=dict(os.environ, DEB_BUILD_OPTIONS="nocheck"))
        check("dpkg-buildpackage -us -uc -b builds", r.returncode == 0,
              r.stdout[-3000:] + r.stderr[-3000:])
        if r.returncode != 0:
            sys.exit(1)
        # The package build has -Dwerror=false (a newer compiler must not break a distribution
        # build), and its flags are Debian's (-O2, _FORTIFY_SOURCE, hardening), not the legs':
        # a warning there is one no other build would show.
        warnings = [x for x in (r.stdout + r.stderr).splitlines() if "warning:" in x]
        check("the package build compiles without a warning", not warnings, "\n".join(warnings))
        check("nocheck builds no test (-Dtests=false)",
              not glob.glob(os.path.join(tree, "obj-*", "tests", "*")),
              glob.glob(os.path.join(tree, "obj-*", "tests", "*"))[:5])
        debs = sorted(glob.glob(os.path.join(tmp, "*.deb")))
        main_deb = [d for d in debs if os.path.basename(d).startswith("keyctl_")]
        notify_deb = [d for d in debs if os.path.basename(d).startswith("keyctl-notify_")]
        check("two packages: keyctl and keyctl-notify", len(main_deb) == 1 and
              len(notify_deb) == 1, debs)
        if failed:
            sys.exit(1)

        r = run(["lintian", "--fail-on", "error,warning"] + glob.glob(os.path.join(tmp, "*.changes")), timeout=600)
        print(r.stdout + r.stderr)
        check("lintian: no error, no warning", r.returncode == 0 and
              not re.search(r"^[EW]: ", r.stdout, re.M), r.stdout + r.stderr)

        have = contents(main_deb[0])
        for f in ("/usr/bin/keyctld", "/usr/bin/keyctl-status",
                  "/usr/lib/systemd/user/keyctld.service", "/usr/lib/systemd/user/keyctld.socket",
                  "/usr/share/bash-completion/completions/keyctl-status",
                  "/usr/share/man/man8/keyctld.8.gz", "/usr/share/man/man1/keyctl-status.1.gz",
                  "/usr/share/man/man5/keyctl.conf.5.gz"):
            check("keyctl holds " + f, f in have, sorted(have))
        check("keyctl holds the udev rules under /usr/lib/udev",
              "/usr/lib/udev/rules.d/70-keyctl.rules" in have,
              sorted(have))
        check("keyctl does not hold keyctl-notify", "/usr/bin/keyctl-notify" not in have)
        have_n = contents(notify_deb[0])
        check("keyctl-notify holds its program, unit and man page",
              {"/usr/bin/keyctl-notify", "/usr/lib/systemd/user/keyctl-notify.service",
               "/usr/share/man/man1/keyctl-notify.1.gz"} <= have_n, sorted(have_n))
        dep = run(["dpkg-deb", "-f", main_deb[0], "Depends"]).stdout
        dep_n = run(["dpkg-deb", "-f", notify_deb[0], "Depends"]).stdout
        check("keyctl needs gnupg and scdaemon, not libnotify",
              "gnupg" in dep and "scdaemon" in dep and "libnotify" not in dep, dep)
        check("keyctl-notify needs libnotify and keyctl", "libnotify" in dep_n and
              re.search(r"\bkeyctl \(= ", dep_n), dep_n)
        rec = run(["dpkg-deb", "-f", main_deb[0], "Recommends"]).stdout
        check("keyctl recommends pcscd", "pcscd" in rec, rec)
        post = subprocess.run(["dpkg-deb", "--ctrl-tarfile", main_deb[0]], capture_output=True)
        check("keyctl enables its user units the Debian way (deb-systemd-helper --user)",
              b"deb-systemd-helper --user enable 'keyctld.socket'" in post.stdout)

        if LEG == "debian13" and os.geteuid() == 0:
            booted(tmp) or install_and_run(main_deb + notify_deb)
        else:
            print("note: not installed on the %s leg: the host is not a throwaway root" % LEG)
    if failed:
        print("FAILED: " + ", ".join(failed))
        sys.exit(1)


main()
