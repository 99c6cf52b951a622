#!/usr/bin/python3
# Runs one libFuzzer harness for a bounded time over a copy of its seed corpus, so that the
# checked-in corpus is never rewritten by a test run. A crash fails the test and leaves the
# reproducer next to the build directory's copy.
import os, shutil, subprocess, sys, tempfile

fuzzer, corpus, seconds = sys.argv[1], sys.argv[2], sys.argv[3]
with tempfile.TemporaryDirectory(prefix='keyctl-fuzz-') as tmp:
    work = os.path.join(tmp, 'corpus')
    shutil.copytree(corpus, work)
    art = os.path.join(os.getcwd(), 'fuzz-artifacts') + '/'
    os.makedirs(art, exist_ok=True)
    # libFuzzer exits 77 when it finds a crash, a leak or an out-of-memory, which meson reads
    # as a skip: a finding was once counted among the skipped tests. Any finding exits 1.
    r = subprocess.run([fuzzer, f'-max_total_time={seconds}', '-max_len=70000',
                        '-timeout=10', '-rss_limit_mb=2048', '-error_exitcode=1',
                        '-timeout_exitcode=1', f'-artifact_prefix={art}', work])
    sys.exit(r.returncode)
