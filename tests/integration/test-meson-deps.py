#!/usr/bin/python3
# `meson setup` without one of keyctl's dependencies fails and names the Debian package to
# install. pkg-config is pointed at a copy of the system's .pc files without the one under test.
import glob, os, shutil, subprocess, sys, tempfile
from testlib import check, failures

SRC = os.environ['KEYCTL_SRCDIR']
CASES = [('inih.pc', 'libinih-dev'), ('gpgme.pc', 'libgpgme-dev'),
         ('libpcsclite.pc', 'libpcsclite-dev')]


pcdirs = [d for d in subprocess.run(['pkg-config', '--variable', 'pc_path', 'pkg-config'],
                                    capture_output=True, text=True).stdout.strip().split(':')
          if os.path.isdir(d)]
with tempfile.TemporaryDirectory(prefix='keyctl-deps-') as tmp:
    for missing, package in CASES:
        pc = os.path.join(tmp, 'pc-' + missing)
        os.mkdir(pc)
        found = False
        for d in pcdirs:
            for f in glob.glob(os.path.join(d, '*.pc')):
                if os.path.basename(f) == missing:
                    found = True
                    continue
                dst = os.path.join(pc, os.path.basename(f))
                if not os.path.exists(dst):
                    os.symlink(f, dst)
        check(found, f'{missing} exists on this machine (else the case proves nothing)')
        env = dict(os.environ, PKG_CONFIG_LIBDIR=pc, PKG_CONFIG_PATH='')
        r = subprocess.run(['meson', 'setup', os.path.join(tmp, 'build-' + missing), SRC],
                           capture_output=True, text=True, env=env, timeout=120)
        out = r.stdout + r.stderr
        check(r.returncode != 0, f'without {missing}: meson setup fails')
        check(f'apt-get install {package}' in out,
              f'without {missing}: the message names {package}')
print(f'{len(failures)} failed' if failures else 'all passed')
sys.exit(1 if failures else 0)
