#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""tools/test-summary on made-up inputs in a temporary directory: meson testlogs with failures,
leftovers with multi-line command lines, corrupt lines, a skipped Debian 13 leg, a Debian 13
leg's counts and log, one that ended without its closing line, and the summary's own crash.
Each case compares exact lines: the closing lines, the FAILED lines above them, the slowest.

    test-test-summary.py [PATH-TO-test-summary]
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SUMMARY = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, '..', '..', 'tools',
                                                              'test-summary')
failures = []

# A command line with a newline and a tab: tab-separated records broke on exactly this.
SCRIPT_CMD = '/usr/bin/python3 -c import time\nwhile True:\n\ttime.sleep(1)'
SCRIPT_SHOWN = r'/usr/bin/python3 -c import time\nwhile True:\n\ttime.sleep(1)'


def check(cond, what, detail=''):
    print(('ok   ' if cond else 'FAIL ') + what, flush=True)
    if not cond:
        if detail:
            # Indented: this test's output lands in tools/test's logs, whose closing and FAILED
            # lines are read by position; a quoted summary must never pass for the real one.
            print('     | ' + str(detail).replace('\n', '\n     | '), flush=True)
        failures.append(what)
    return cond


def check_lines(got, want, what):
    check(got == want, what, 'got:\n' + '\n'.join(got) + '\nwant:\n' + '\n'.join(want))


def result(name, res, duration, stdout='', returncode=0, stderr=None):
    """One line of a meson testlog, as meson 1.0's JsonLogfileBuilder writes it."""
    r = {'name': name, 'stdout': stdout, 'result': res, 'starttime': 1700000000.0,
         'duration': duration, 'returncode': returncode, 'env': {}, 'command': ['x']}
    if stderr is not None:
        r['stderr'] = stderr
    return json.dumps(r) + '\n'


def leftover(test, status, pid, cmd):
    """One line of $KEYCTL_LEFTOVERS, as tests/reap-test.py writes it."""
    return json.dumps({'test': test, 'status': status, 'pid': pid, 'cmdline': cmd}) + '\n'


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        f.write(text)
    return path


def run(*args, python_prelude=None):
    """(status, stdout lines, stderr) of tools/test-summary with args."""
    if python_prelude is None:
        cmd = [SUMMARY, *args]
    else:
        # The script run in-process after python_prelude: how its crash handler is reached.
        cmd = ['/usr/bin/python3', '-c', python_prelude + '\nimport runpy, sys\n'
               f'sys.argv = {[SUMMARY, *args]!r}\n'
               f'runpy.run_path({SUMMARY!r}, run_name="__main__")']
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout.splitlines(), r.stderr


def failing_leg(tmp):
    """A Debian 12 leg with a timeout, a failed unit test, a passing test that left a
    multi-line command running, a failed one that did too, and a corrupt line in each file."""
    asan = write(os.path.join(tmp, 'asan', 'meson-logs', 'all.json'), ''.join([
        result('keyctl:integration / daemon-tokens', 'TIMEOUT', 300.41,
               'ok   pcscd up\nok   the token is seen\n'
               'reap-test: test-daemon-tokens.py: stopped by signal 15; every process below it '
               'killed\n', -15),
        result('keyctl:unit / config', 'FAIL', 0.2, '', 134,
               'tests/unit/test-config.c:42: test_parse: c.x == 3: 2 != 3\n==77==ABORTING\n'),
        result('keyctl:integration / faults', 'OK', 512.0),
        result('keyctl:integration / load', 'OK', 201.5),
        result('keyctl:integration / keyring', 'OK', 20.0),
        result('keyctl:fuzz / codec', 'SKIP', 10.0, 'no libFuzzer\n'),
        '{"name": "keyctl:unit / cut short", "res\n',
        result('keyctl:unit / table', 'EXPECTEDFAIL', 0.1),
    ]))
    gcc = write(os.path.join(tmp, 'gcc', 'meson-logs', 'unit-lint.json'), ''.join([
        result('keyctl:integration / notify', 'FAIL', 40.0,
               'ok   a\nFAIL the snooze button is offered\n     actions: []\nok   b\n'
               '1 failed\n', 1),
        result('keyctl:lint / clang-format', 'OK', 100.0),
        result('keyctl:unit / model', 'OK', 0.5),
    ]))
    left = write(os.path.join(tmp, 'leftovers.jsonl'), ''.join([
        leftover('test-notify.py', 1, 11, 'gpg-agent --homedir /tmp/x --daemon'),
        leftover('test-keyring.py', 0, 12, SCRIPT_CMD),
        leftover('test-keyring.py', 0, 13, 'dirmngr --daemon'),
        'test-old.py\t0\t14\ttab-separated, as before\n',
    ]))
    missing = os.path.join(tmp, 'gcc', 'meson-logs', 'valgrind.json')
    return ['--leg', 'debian12', '--seconds', '2501', '--leftovers', left,
            '--testlog', gcc, '--testlog', missing, '--testlog', asan]


FAILING_TAIL = [
    'FAILED: debian12/gcc/integration/notify (FAIL, status 1): FAIL the snooze button is offered',
    'FAILED: debian12/asan/integration/daemon-tokens (TIMEOUT after 300 s): ok   the token is '
    'seen',
    'FAILED: debian12/asan/unit/config (FAIL, status 134): tests/unit/test-config.c:42: '
    'test_parse: c.x == 3: 2 != 3',
    'FAILED: debian12/asan/all.json:7 (an unreadable record): {"name": "keyctl:unit / cut short",'
    ' "res',
    r'FAILED: debian12/leftovers.jsonl:4 (an unreadable record): test-old.py\t0\t14\t'
    'tab-separated, as before',
    'FAILED: debian12/leftovers/test-keyring.py (passed, left 2 process(es) running): [12] '
    + SCRIPT_SHOWN + ', [13] dirmngr --daemon',
]


def case_failing_leg(tmp):
    status, out, err = run(*failing_leg(tmp))
    check(status == 1, 'a leg with failures: status 1', (status, err))
    check(out[:1] == ['=== summary (debian12)'], 'the summary starts with its marker', out)
    check_lines(out[-7:], FAILING_TAIL + ['debian12: 6 passed, 6 failed, 1 skipped'],
                'every failure named with its reason in the last lines, then the counts '
                '(6 passed: the leftover check failed)')
    check(f'leftover check: FAIL: the passing test test-keyring.py left a process running: '
          f'[12] {SCRIPT_SHOWN} (ended)' in out,
          'the multi-line command line of a passing test\'s leftover reported whole, one line',
          out)
    check('leftover check: after the failed test test-notify.py (status 1): '
          '[11] gpg-agent --homedir /tmp/x --daemon (ended)' in out,
          'a failed test\'s leftover listed, not counted', out)
    i = out.index('debian12 leg: 41 min 41 s') if 'debian12 leg: 41 min 41 s' in out else -1
    check_lines(out[i:i + 7] if i >= 0 else [], [
        'debian12 leg: 41 min 41 s',
        'the slowest tests of debian12:',
        '   512.0 s  asan/integration/faults',
        '   300.4 s  asan/integration/daemon-tokens',
        '   201.5 s  asan/integration/load',
        '   100.0 s  gcc/lint/clang-format',
        '    40.0 s  gcc/integration/notify',
    ], 'the leg\'s time and its five slowest tests')
    check(not err, 'nothing on stderr', err)


def case_clean_leg(tmp):
    log = write(os.path.join(tmp, 'b', 'meson-logs', 'all.json'),
                result('keyctl:unit / model', 'OK', 0.5) + result('keyctl:fuzz / x', 'SKIP', 1))
    left = write(os.path.join(tmp, 'clean-leftovers.jsonl'), '')
    status, out, err = run('--leg', 'debian13', '--leftovers', left, '--testlog', log)
    check(status == 0, 'a clean leg: status 0', (status, err))
    check(not [line for line in out if line.startswith('FAILED')], 'a clean leg: no FAILED line',
          out)
    check(out[-1:] == ['debian13: 2 passed, 0 failed, 1 skipped'],
          'a clean leg: its closing line last (the leftover check counts as one pass), '
          'no total without a Debian 13 leg', out)


def case_failed_test_leftover_only(tmp):
    # The second test's last line is a whole JSON document: its FAILED line stays bounded.
    long_line = json.dumps({'keys': ['0x%040X' % i for i in range(20)]})
    log = write(os.path.join(tmp, 'c', 'meson-logs', 'all.json'),
                result('keyctl:integration / upstream', 'FAIL', 3.0, 'FAIL dirmngr asked\n', 1)
                + result('keyctl:integration / status-bed', 'ERROR', 2.0, long_line + '\n\n', 2))
    left = write(os.path.join(tmp, 'c-leftovers.jsonl'),
                 leftover('test-upstream.py', 1, 21, SCRIPT_CMD))
    status, out, err = run('--leg', 'debian12', '--leftovers', left, '--testlog', log)
    check_lines(out[-3:], [
        'FAILED: debian12/c/integration/upstream (FAIL, status 1): FAIL dirmngr asked',
        'FAILED: debian12/c/integration/status-bed (ERROR): ' + long_line[:157] + '...',
        'debian12: 1 passed, 2 failed, 0 skipped',
    ], 'a failed test\'s multi-line leftover: not one more failure; a long reason cut')
    check(f'leftover check: after the failed test test-upstream.py (status 1): '
          f'[21] {SCRIPT_SHOWN} (ended)' in out, 'and it is listed whole', out)


def case_d13_skipped(tmp):
    log = write(os.path.join(tmp, 'skip', 'debian13.log'),
                'debian13: SKIP: needs root (debootstrap, chroot, mounts)\n')
    left = write(os.path.join(tmp, 'skip', 'leftovers.jsonl'), '')
    status, out, err = run('--leg', 'debian12', '--leftovers', left, '--d13-status', '77',
                           '--d13-counts', '', '--d13-log', log, '--d13-seconds', '3')
    check(status == 0, 'a skipped Debian 13 leg is no failure', (status, err))
    check_lines(out[-4:], [
        'debian13 leg: skipped (tools/debian13 exit 77): debian13: SKIP: needs root '
        '(debootstrap, chroot, mounts)',
        'debian12: 1 passed, 0 failed, 0 skipped',
        'debian13: 0 passed, 0 failed, 1 skipped',
        '1 passed, 0 failed, 1 skipped',
    ], 'a skipped Debian 13 leg: said so, one skip, the total last')


def case_d13_counts(tmp):
    log = write(os.path.join(tmp, 'd13', 'debian13.log'), '\n'.join([
        '=== /build/asan: meson test all --no-suite lint',
        # A test's output quoting a summary, before the leg's own summary: never taken for it.
        'FAILED: debian13/quoted/by-a-test (FAIL): not a failure of this run',
        '=== summary (debian13)',
        'debian13 leg: 35 min 0 s',
        'FAILED: debian13/asan/integration/deb (FAIL, status 1): E: keyctl: bad-distribution',
        'FAILED: gcc/unit/log (TIMEOUT after 60 s): ok   rotate',
        'debian13: 93 passed, 2 failed, 1 skipped',
    ]) + '\n')
    status, out, err = run(*failing_leg(tmp), '--d13-status', '1',
                           '--d13-counts', '93 passed, 2 failed, 1 skipped',
                           '--d13-log', log, '--d13-seconds', '2100')
    check(status == 1, 'both legs failing: status 1', (status, err))
    check_lines(out[-11:], FAILING_TAIL + [
        'FAILED: debian13/asan/integration/deb (FAIL, status 1): E: keyctl: bad-distribution',
        'FAILED: debian13/gcc/unit/log (TIMEOUT after 60 s): ok   rotate',
        'debian12: 6 passed, 6 failed, 1 skipped',
        'debian13: 93 passed, 2 failed, 1 skipped',
        '99 passed, 8 failed, 2 skipped',
    ], 'the Debian 13 leg\'s FAILED lines repeated after this leg\'s, its counts, the sum last')
    check('debian13 leg: 35 min 0 s' in out, 'the Debian 13 leg\'s time', out)


def case_d13_no_closing_line(tmp):
    log = write(os.path.join(tmp, 'd13-broken', 'debian13.log'),
                ''.join(f'line {i}\n' for i in range(1, 13))
                + 'debian13: the summary failed (status 3): see above\n')
    left = write(os.path.join(tmp, 'd13-broken', 'leftovers.jsonl'), '')
    status, out, err = run('--leg', 'debian12', '--leftovers', left, '--d13-status', '1',
                           '--d13-counts', '', '--d13-log', log)
    check(status == 1, 'a Debian 13 leg without its closing line: status 1', (status, err))
    check_lines(out[-15:], [
        'debian13 leg: ended (status 1) without its closing line; the last lines of its log:',
        *[f'  line {i}' for i in range(4, 13)],
        '  debian13: the summary failed (status 3): see above',
        'FAILED: debian13 (ended with status 1 without its closing line): debian13: the '
        'summary failed (status 3): see above',
        'debian12: 1 passed, 0 failed, 0 skipped',
        'debian13: 0 passed, 1 failed, 0 skipped',
        '1 passed, 1 failed, 0 skipped',
    ], 'a Debian 13 leg without its closing line: its status and last lines, one failure')


def case_step_failed(tmp):
    left = write(os.path.join(tmp, 'step', 'leftovers.jsonl'), '')
    status, out, err = run('--leg', 'debian12', '--status', '1', '--leftovers', left)
    check_lines(out[-2:], [
        'FAILED: debian12 (a step failed (status 1) though no test did: see above)',
        'debian12: 1 passed, 1 failed, 0 skipped',
    ], 'a failed leg with no failed test is not "0 failed"')
    check(status == 1, 'and its status is 1', (status, err))


def case_internal_error(tmp):
    left = write(os.path.join(tmp, 'crash', 'leftovers.jsonl'), leftover('t', 0, 1, 'x'))
    status, out, err = run('--leg', 'debian12', '--leftovers', left, python_prelude=(
        'import json\n'
        'def boom(*args, **kwargs):\n'
        '    raise RuntimeError("made up")\n'
        'json.loads = boom'))
    check(status == 3, 'the summary\'s own crash: status 3, not 1 (a failed test)', (status, err))
    check('Traceback' in err and err.rstrip().endswith(
        'test-summary: internal error: RuntimeError: made up'),
        'the crash said as the summary\'s, with its traceback', err)
    check(not [line for line in out if 'passed,' in line], 'no counts made up', out)


def main():
    with tempfile.TemporaryDirectory(prefix='keyctl-test-summary-') as tmp:
        for case in (case_failing_leg, case_clean_leg, case_failed_test_leftover_only,
                     case_d13_skipped, case_d13_counts, case_d13_no_closing_line,
                     case_step_failed, case_internal_error):
            case(os.path.join(tmp, case.__name__))
    print(f'{len(failures)} failed' if failures else 'all passed')
    return 1 if failures else 0


sys.exit(main())
