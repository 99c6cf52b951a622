#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The hygiene audit of the real keyctld against real GnuPG homes and virtual cards.

For each rule: a case where the finding appears (rule id, level, message words, hint), a case
where it stays quiet, and, where a user can fix it, the finding going away after the fix:
subkey-expiring, subkey-expired-no-replacement, subkey-no-expiry, subkey-expiry-too-far,
primary-secret-on-disk, subkey-secret-on-disk, revoked-default-key (keys on disk);
pin-retries-low, admin-pin-retries-low, touch-off-signing, revoked-key-on-card,
counter-went-down, backup-token (the hint names gpg-connect-agent "learn --force" and the stubs
still name the first card afterwards: the daemon ran nothing), card-slot-unknown-key (cards;
cleared by importing the key and adding it to [keyring] track, then Reload).
git-signing-key-unusable: a real ~/.gitconfig (HOME is the daemon's temporary directory) naming
a key not here, then an expired subkey with '!'; each fixed as the hint says, the finding clears
through the inotify watch alone; gpg.format = ssh silences it; the XDG file counts too; and the
expiry warning of the subkey git signs with says so.
Against real git and gpg (a temporary HOME, XDG_CONFIG_HOME and GNUPGHOME): `git commit -S` and
`gpg --sign`, the key that signed read from the signature with gpg --list-packets, and keyctld's
Subkey.git_signs and findings agree for ~/.config/git/config made after the start (and made
again after its directory is removed), commit.gpgSign without user.signingkey (git signs as
"Name <email>"), user.signingkey on an expired subkey with and without '!' (the hint names the
same key's new subkey), and gpg.conf with two default-key lines (gpg uses the last it may).
card-key-no-stub: a card holding subkeys whose secrets were deleted and never learnt (no
stubs) raises one per slot; gpg --card-status, the hint, writes the stubs and clears them.
card-not-seen: the daemon remembers tokens across restarts (daemon/state.c), so a restart 31 days
later (KEYCTL_TIME_OFFSET) without the card raises it, and one 29 days later does not.
Hints that run: each hint a check above meets is run as its user would (testlib.run_hint)
against a copy of the keyring it was made for, and must do what it says: gpg --quick-set-expire
moves the expiry (for a key whose primary is offline, the hint says so: gpg refuses here, and
it works on a copy taken before the primary left), gpg --refresh-keys / --recv-keys get as far
as the keyserver (none reachable), git config sets what gpg then signs with, a default-key hint
makes gpg --sign work, the offline backup and deletion leave sec#, and "key N" selects the
finding's subkey. Hints no test can run are listed in HINT_NOT_RUN with the reason. A tracked
key's expiry hint is gpg --refresh-keys and its message says only its owner can renew it;
subkey-expiry-too-far judges the validity (Vic: made 400 days ago for 800); default-key's
expired case is default-key-expired.
Helpers come from test-daemon-keys.py. Every process is stopped by pid, also on failure.
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time

_spec = importlib.util.spec_from_file_location(
    'daemon_keys', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                'test-daemon-keys.py'))
dk = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(dk)

import keyctlbed as kb  # noqa: E402
from keyctlbed import procs  # noqa: E402
import testlib  # noqa: E402

DAY = dk.DAY
check = dk.check
LEARN_HINT = 'gpg-connect-agent "scd serialno" "learn --force" /bye'


# Hints with no command a test can run, and why; every other hint a test meets is run
# (testlib.run_hint) against a copy of the keyring it was made for, and must do what it says.
HINT_NOT_RUN = {
    'pin-retries-low': 'gpg --card-edit, admin, passwd asks for PINs in pinentry, by hand; '
                       'test_cards resets the counters through the bed instead',
    'admin-pin-retries-low': 'advice ("do not guess"), no command',
    'counter-went-down': 'advice, no command',
    'touch-off-signing': 'ykman asks for the admin PIN, which this test card has locked to raise '
                         'admin-pin-retries-low; test_cards turns touch on through the bed',
    'revoked-key-on-card': '"key N" is a valid subkey the user picks, and keytocard needs the '
                           'locked admin PIN',
    'backup-token': 'learn --force rewrites the stubs from the inserted card, which keyctld '
                    'reads at that moment; test_cards asserts nothing ran it',
    'card-key-no-stub': 'gpg --card-status is run by test_card_key_no_stub on the real home, '
                        'which asserts the finding clears',
    'card-not-seen': '"key N", "revkey" revokes a subkey the user picks',
}
HINT_KINDS = set()  # the kinds run, to check each was
OFFLINE_HOMES = {}  # fpr -> a copy of the home taken before its primary secret was removed


def hint_runs(home, f):
    """The finding's hint run as its user would (testlib.run_hint), or why it cannot be."""
    if not f.get('hint'):
        return
    r = testlib.run_hint(home, f['hint'], subkey=f.get('subkey'),
                         primary_home=OFFLINE_HOMES.get(f.get('key')))
    if not r.ran:
        why = HINT_NOT_RUN.get(f['rule'])
        check(why is not None, 'hint of %s not run: %s' % (f['rule'], why or r.why),
              f['hint'])
        return
    HINT_KINDS.add(r.kind + (' offline' if testlib.OFFLINE in f['hint'] else ''))
    check(r.ok, 'hint of %s runs (%s): %s' % (f['rule'], r.kind, r.why),
          '%s\n%s' % (f['hint'], r.out[-1500:]))


def find(st, rule, **match):
    """Findings of `rule` whose fields equal match (key=, subkey=, token=)."""
    if not st:
        return []
    return [f for f in st['findings'] if f['rule'] == rule and
            all(f.get(k) == v for k, v in match.items())]


def fires(dm, rule, words=(), level=None, hint=None, timeout=15, **match):
    st = dm.wait_status(lambda s: find(s, rule, **match), timeout=timeout)
    fs = find(st, rule, **match)
    f = fs[0] if fs else {}
    ok = (len(fs) == 1 and all(w in f['message'] for w in words) and
          (level is None or f['level'] == level) and (hint is None or hint in f['hint']))
    check(ok, '%s fires (%s): %s' % (rule, ', '.join('%s=%s' % (k, v[-8:])
                                                     for k, v in match.items()),
                                     f.get('message', 'none')),
          '%d findings; level %s; hint %r' % (len(fs), f.get('level'), f.get('hint')))
    if f:
        hint_runs(dm.env['GNUPGHOME'], f)
    return f


def quiet(st, rule, why, **match):
    fs = find(st, rule, **match)
    check(not fs, '%s quiet: %s' % (rule, why), [f['message'] for f in fs])


def gone(dm, rule, why, timeout=60, **match):
    # A bound, not a wait: a finding clears as soon as the listing after the change is done,
    # which on a machine running both legs' package builds took over 15 s once.
    t0 = time.monotonic()
    st = dm.wait_status(lambda s: not find(s, rule, **match), timeout=timeout)
    check(st is not None and not find(st, rule, **match),
          '%s cleared after: %s (%.1f s)' % (rule, why, time.monotonic() - t0))


def write_gpg_conf(kr, default_key):
    with open(os.path.join(kr.home, 'gpg.conf'), 'w') as f:
        f.write('no-auto-check-trustdb\n')
        if default_key:
            f.write('default-key %s\n' % default_key)


def revoke_key(kr, fpr):
    """Revokes the whole key with the certificate gpg left in openpgp-revocs.d."""
    with open(os.path.join(kr.home, 'openpgp-revocs.d', fpr + '.rev')) as f:
        cert = f.read().replace(':-----BEGIN', '-----BEGIN')
    kr.import_keys(cert.encode())


def test_keys(pcscd):
    with kb.Keyring(pcscd) as kr:
        alice = kr.create_key(uid='Alice Tester <alice@example.org>',
                              subkeys={'sig': 5, 'enc': -10, 'aut': None})
        # Bob: an encryption subkey expired 5 days ago but replaced by a 400-day one.
        bob = kr.create_key(uid='Bob Tester <bob@example.org>',
                            subkeys={'sig': 1000, 'enc': -5, 'aut': 400})
        bob['enc2'] = dk.add_subkey(kr, bob['fpr'], 'cv25519', 'encr', '400d')
        carol = kr.create_key(uid='Carol Tester <carol@example.org>',
                              subkeys={'sig': 200, 'enc': 200, 'aut': 200})
        kr.remove_primary_secret(carol['fpr'])
        rex = kr.create_key(uid='Rex Revoked <rex@example.org>', subkeys={'sig': 100})
        revoke_key(kr, rex['fpr'])
        write_gpg_conf(kr, rex['fpr'])
        # Pia: her own key, primary offline (sec#) as with a card; the offline machine is a copy
        # of the home taken before the primary secret left.
        pia = kr.create_key(uid='Pia Offline <pia@example.org>', subkeys={'sig': 5})
        OFFLINE_HOMES[pia['fpr']] = testlib.copy_home(kr.home)
        kr.remove_primary_secret(pia['fpr'])
        # Tom: someone else's key, tracked; only he can renew it.
        with kb.Keyring() as other:
            tom = other.create_key(uid='Tom Tracked <tom@example.net>', subkeys={'sig': 5})
            kr.import_keys(other.export(tom['fpr']))
        # Vic: a subkey made 400 days ago for 800 days: 400 days left, but valid for 800.
        vic = kr.create_key(uid='Vic Validity <vic@example.org>', subkeys={'sig': 400},
                            created=int(time.time()) - 400 * DAY)

        dm = dk.Daemon(kr.env, conf='[keyring]\ntrack = %s\n' % tom['fpr']).start()
        try:
            st = dm.wait_status(lambda s: len(s['keys']) >= 7)
            check(st and len(st['keys']) == 7,
                  'keys: Alice, Bob, Carol, revoked Rex, Pia, tracked Tom and Vic listed')

            # Fire.
            fires(dm, 'subkey-expiring', ('Signing subkey', alice['sig'][-16:],
                                          'Alice Tester', 'expires in 5 days'), 'warning',
                  'gpg --quick-set-expire %s 1y %s' % (alice['fpr'], alice['sig']),
                  key=alice['fpr'], subkey=alice['sig'])
            fires(dm, 'subkey-expired-no-replacement', ('Encryption subkey',
                                                        'expired 10 days ago',
                                                        'nothing replaces it'), 'critical',
                  key=alice['fpr'], subkey=alice['enc'])
            fires(dm, 'subkey-no-expiry', ('Authentication subkey', 'never expires'), 'notice',
                  'gpg --quick-set-expire %s 2y %s' % (alice['fpr'], alice['aut']),
                  subkey=alice['aut'])
            # Bob's key was made 35 days ago (his expired subkey): valid for 1035 days.
            fires(dm, 'subkey-expiry-too-far', ('Signing subkey', 'Bob Tester',
                                                'is valid for 1035 days, more than 730',
                                                'expires in 1000 days'), 'notice',
                  subkey=bob['sig'])
            fires(dm, 'subkey-expiry-too-far', ('Vic Validity', 'is valid for 80',
                                                'more than 730'), 'notice',
                  subkey=vic['sig'])
            fires(dm, 'subkey-expiring', ('Pia Offline', 'expires in 5 days'), 'warning',
                  testlib.OFFLINE + 'gpg --quick-set-expire %s 1y %s' % (pia['fpr'], pia['sig']),
                  subkey=pia['sig'])
            f = fires(dm, 'subkey-expiring', ('Tom Tracked', 'expires in 5 days',
                                              'only its owner can renew it'), 'warning',
                      'gpg --refresh-keys %s' % tom['fpr'], subkey=tom['sig'])
            check('quick-set-expire' not in f.get('hint', 'quick-set-expire'),
                  "the tracked key's hint does not renew it here: %s" % f.get('hint'))
            fires(dm, 'primary-secret-on-disk', ("secret primary key of Alice Tester",
                                                 "on this computer's disk"), 'notice',
                  'gpg --delete-secret-keys %s!' % alice['fpr'], key=alice['fpr'])
            fires(dm, 'subkey-secret-on-disk', ('Signing subkey', alice['sig'][-16:],
                                                'not on a token'), 'notice', 'keytocard',
                  subkey=alice['sig'])
            fires(dm, 'revoked-default-key', ('gpg.conf names Rex Revoked', 'default-key',
                                              'is revoked'), 'warning', key=rex['fpr'])

            # Quiet.
            st = dm.status()
            quiet(st, 'subkey-expiring', 'a subkey 400 days from expiry', subkey=bob['aut'])
            quiet(st, 'subkey-expired-no-replacement', 'an expired subkey with a successor',
                  subkey=bob['enc'])
            quiet(st, 'subkey-no-expiry', 'subkeys that expire', key=bob['fpr'],
                  subkey=bob['sig'])
            quiet(st, 'subkey-expiry-too-far', 'a subkey valid for 400 days (max 730)',
                  subkey=bob['enc2'])
            quiet(st, 'primary-secret-on-disk', 'sec# (primary secret removed)',
                  key=carol['fpr'])
            quiet(st, 'subkey-expiring', 'a revoked key is not nagged about', key=rex['fpr'])

            # Fix, one at a time.
            kr.gpg('--quick-set-expire', alice['fpr'], '1y', alice['sig'])
            gone(dm, 'subkey-expiring', 'gpg --quick-set-expire 1y', subkey=alice['sig'])
            kr.gpg('--quick-add-key', alice['fpr'], 'cv25519', 'encr', '1y')
            gone(dm, 'subkey-expired-no-replacement', 'a new encryption subkey was added',
                 subkey=alice['enc'])
            kr.gpg('--quick-set-expire', alice['fpr'], '1y', alice['aut'])
            gone(dm, 'subkey-no-expiry', 'an expiry was set', subkey=alice['aut'])
            kr.gpg('--quick-set-expire', bob['fpr'], '1y', bob['sig'])
            gone(dm, 'subkey-expiry-too-far', 'expiry brought to 1 year', subkey=bob['sig'])
            write_gpg_conf(kr, bob['fpr'])
            gone(dm, 'revoked-default-key', 'default-key now names Bob', key=rex['fpr'])
            quiet(dm.status(), 'revoked-default-key', 'default-key names a valid key')
            kr.remove_primary_secret(alice['fpr'])
            gone(dm, 'primary-secret-on-disk', 'the primary secret was removed (sec#)',
                 key=alice['fpr'])
            kr.remove_subkey_secrets(alice['fpr'], [alice['sig']])
            gone(dm, 'subkey-secret-on-disk', "the subkey's secret left the disk",
                 subkey=alice['sig'])
            check(dm.alive(), 'the daemon is still running')
        finally:
            rc = dm.stop()
        check(rc == 0, 'keyctld exits 0 on SIGTERM, no leak under ASan (%s)' % rc)


def write_git(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.tmp', 'w') as f:
        f.write(text)
    os.rename(path + '.tmp', path)  # as editors save


def test_git_signing(pcscd):
    with kb.Keyring(pcscd) as kr:
        gina = kr.create_key(uid='Gina Git <gina@example.org>', subkeys={'sig': 5, 'enc': 300})
        olga = kr.create_key(uid='Olga Old <olga@example.org>',
                             subkeys={'sig': -5, 'enc': 300})
        rule = 'git-signing-key-unusable'
        dm = dk.Daemon(kr.env)
        gitconfig = os.path.join(dm.tmp, '.gitconfig')
        xdg = os.path.join(dm.tmp, 'config', 'git', 'config')
        write_git(gitconfig, '[user]\n\tname = Gina\n\tsigningkey = 0x0123456789ABCDEF\n')
        write_git(xdg, '# nothing yet\n')
        dm.start()
        try:
            fires(dm, rule, ("git's user.signingkey (0x0123456789ABCDEF)",
                             'names no key with a secret part', 'git cannot sign commits'),
                  'critical', 'git config --global user.signingkey')
            # The hint's fix, written as an editor does: the watch alone clears it.
            write_git(gitconfig, '[User]\n\tSigningKey = "%s" # mine\n' % gina['fpr'])
            gone(dm, rule, '~/.gitconfig names Gina')
            st = dm.status()
            quiet(st, rule, 'Gina can sign')
            fires(dm, 'subkey-expiring', ('Gina Git', 'expires in 5 days',
                                          '(git signs with it)'), 'warning',
                  subkey=gina['sig'])
            marked = [s['fingerprint'] for k in dm.status()['keys'] for s in k['subkeys']
                      if s.get('git_signs')]
            check(marked == [gina['sig']],
                  'GetStatus marks the subkey git signs with, and only it: %r' % marked)
            # Six days on by keyctld's clock the 5-day subkey has expired, though gpg does not say
            # so yet: git cannot sign with it, and no subkey is marked.
            dm.stop()
            dm.start(offset=6 * DAY)
            fires(dm, rule, ('Gina Git',), 'critical')
            marked = [s['fingerprint'] for k in dm.status()['keys'] for s in k['subkeys']
                      if s.get('git_signs')]
            check(marked == [], 'an expired subkey is not marked once time passed it: %r' % marked)
            dm.stop()
            dm.start()

            # Exactly Olga's expired signing subkey ('!', long key id).
            write_git(gitconfig, '[user]\n\tsigningkey = 0x%s!\n' % olga['sig'][-16:])
            f = fires(dm, rule, ('Signing subkey', olga['sig'][-16:], 'Olga Old',
                                 'has expired'), 'critical',
                      'gpg --quick-set-expire %s 1y %s' % (olga['fpr'], olga['sig']),
                      key=olga['fpr'], subkey=olga['sig'])
            st = dm.status()
            check('(git signs with it)' not in ' '.join(
                x['message'] for x in find(st, 'subkey-expiring', subkey=gina['sig'])),
                  'the expiry warning no longer names git once git signs with Olga')
            check(not any(s.get('git_signs') for k in st['keys'] for s in k['subkeys']),
                  'an expired subkey git names is not marked as the one git signs with')
            kr.gpg('--quick-set-expire', olga['fpr'], '1y', olga['sig'])
            gone(dm, rule, 'the hint: gpg --quick-set-expire 1y')

            # gpg.format = ssh: user.signingkey is not an OpenPGP key.
            write_git(gitconfig, '[user]\n\tsigningkey = ~/.ssh/id_ed25519.pub\n'
                      '[gpg]\n\tformat = ssh\n')
            time.sleep(1.5)
            quiet(dm.status(), rule, 'gpg.format = ssh')
            # The XDG file is read too (~/.gitconfig sets no signing key now).
            write_git(gitconfig, '[gpg]\n\tformat = openpgp\n')
            write_git(xdg, '[user]\n\tsigningkey = DEADBEEF\n')
            fires(dm, rule, ("git's user.signingkey (DEADBEEF)",), 'critical')
            os.unlink(xdg)
            gone(dm, rule, 'the XDG git config was removed')
            check(dm.alive(), 'the daemon is still running')
        finally:
            rc = dm.stop()
        check(rc == 0, 'keyctld exits 0 on SIGTERM, no leak under ASan (%s)' % rc)


def git_env(dm, kr):
    """git as the user runs it: the daemon's HOME and XDG_CONFIG_HOME, the test's GNUPGHOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('GIT_') and k != 'EMAIL'}
    env.update(HOME=dm.tmp, XDG_CONFIG_HOME=os.path.join(dm.tmp, 'config'),
               GNUPGHOME=kr.home, GIT_CONFIG_NOSYSTEM='1')
    return env


def issuer(kr, armored):
    """The issuer fingerprint of a detached signature, as gpg --list-packets shows it."""
    r = kr.gpg('--list-packets', input=armored, check=False)
    m = re.search(r'issuer fpr v4 ([0-9A-F]{40})', r.stdout.decode(errors='replace'))
    return m.group(1) if m else None


def git_signer(dm, kr, repo):
    """The subkey `git commit -S` signs with here, or None when git cannot sign."""
    env = git_env(dm, kr)
    r = subprocess.run(['git', '-C', repo, 'commit', '-q', '-S', '--allow-empty', '-m', 'x'],
                       env=env, capture_output=True, timeout=60)
    if r.returncode != 0:
        return None
    obj = subprocess.run(['git', '-C', repo, 'cat-file', '-p', 'HEAD'], env=env,
                         capture_output=True, text=True, check=True).stdout
    sig, inside = [], False
    for line in obj.splitlines():
        if line.startswith('gpgsig '):
            inside = True
            line = line[len('gpgsig '):]
        elif inside and line.startswith(' '):
            line = line[1:]
        elif inside:
            break
        if inside:
            sig.append(line)
    return issuer(kr, ('\n'.join(sig) + '\n').encode())


def gpg_signer(kr):
    """The subkey plain `gpg --sign` signs with in kr (gpg.conf's default-key), or None."""
    r = kr.gpg('--armor', '--sign', '-o', '-', input=b'x', check=False)
    return issuer(kr, r.stdout) if r.returncode == 0 and r.stdout else None


def agrees(dm, kr, repo, why, words=(), hint=None):
    """keyctld's Subkey.git_signs and git-signing-key-unusable say what `git commit -S` does; when
    git cannot sign, the finding's message has words (that tell it from the one before)."""
    signer = git_signer(dm, kr, repo)
    rule = 'git-signing-key-unusable'

    def same(st):
        marked = [s['fingerprint'] for k in st['keys'] for s in k['subkeys']
                  if s.get('git_signs')]
        fs = find(st, rule)
        return (marked == ([signer] if signer else []) and bool(fs) == (not signer) and
                (not fs or all(w in fs[0]['message'] for w in words)))
    st = dm.wait_status(same, timeout=15)
    marked = [s['fingerprint'] for k in st['keys'] for s in k['subkeys'] if s.get('git_signs')]
    fs = find(st, rule)
    check(same(st), '%s: git signs with %s, keyctld marks %s and %s' %
          (why, signer, marked, fs[0]['message'] if fs else 'no finding'))
    if hint is not None:
        check(fs and hint in fs[0]['hint'], '%s: the hint says %r: %r' %
              (why, hint, fs[0]['hint'] if fs else None))
    if fs:
        hint_runs(kr.home, fs[0])
    return signer, fs[0] if fs else None


DEFAULT_KEY_RULES = ('revoked-default-key', 'default-key-expired', 'default-key-missing')


def default_key_agrees(dm, kr, lines, why, rule=None):
    """A default-key rule fires exactly when gpg --sign with gpg.conf's lines cannot sign: rule
    (one of DEFAULT_KEY_RULES) and no other."""
    with open(os.path.join(kr.home, 'gpg.conf'), 'w') as f:
        f.write('no-auto-check-trustdb\n' + ''.join('default-key %s\n' % x for x in lines))
    signer = gpg_signer(kr)
    time.sleep(2)  # the change read (a quiet rule must not pass on the view from before)

    def default_findings(s):
        return [f for r in DEFAULT_KEY_RULES for f in find(s, r)]
    st = dm.wait_status(lambda s: bool(default_findings(s)) == (not signer), timeout=15)
    fs = default_findings(st)
    check(bool(fs) == (not signer) and (not fs or rule is None or
                                        [f['rule'] for f in fs] == [rule]),
          '%s: gpg --sign signs with %s; keyctld: %s' %
          (why, signer, ['%s: %s' % (f['rule'], f['message']) for f in fs] or 'no finding'))
    for f in fs:
        hint_runs(kr.home, f)
    return signer


def test_git_gpg_real():
    """keyctld's view of the signing key against real git commit -S and gpg --sign."""
    with kb.Keyring() as kr:
        alice = kr.create_key(uid='Alice Tester <alice@example.org>',
                              subkeys={'sig': 300, 'enc': 300})
        # Bob: his signing subkey expired 5 days ago; a new one replaces it.
        bob = kr.create_key(uid='Bob Tester <bob@example.org>', subkeys={'sig': -5, 'enc': 300})
        bob['sig2'] = dk.add_subkey(kr, bob['fpr'], 'ed25519', 'sign', '1y')
        # Carol: her only signing subkey expired; her encryption subkey is fine.
        carol = kr.create_key(uid='Carol Tester <carol@example.org>',
                              subkeys={'sig': -5, 'enc': 300})
        rex = kr.create_key(uid='Rex Revoked <rex@example.org>', subkeys={'sig': 100})
        revoke_key(kr, rex['fpr'])
        dm = dk.Daemon(kr.env)
        xdg = os.path.join(dm.tmp, 'config', 'git', 'config')
        repo = os.path.join(dm.tmp, 'repo')
        subprocess.run(['git', 'init', '-q', repo], env=git_env(dm, kr), check=True)
        check(not os.path.exists(os.path.dirname(xdg)), '~/.config/git does not exist yet')
        dm.start()
        try:
            dm.wait_status(lambda s: len(s['keys']) >= 3)
            # Made after the start: the watch waits for ~/.config/git.
            write_git(xdg, '[user]\n\tname = Carol Tester\n\temail = carol@example.org\n'
                      '[commit]\n\tgpgSign = true\n')
            signer, f = agrees(dm, kr, repo, 'gpgSign, no signingkey, Carol (expired)',
                               ('Carol Tester <carol@example.org>',))
            check(signer is None and f and 'Carol Tester <carol@example.org>' in f['message']
                  and 'has expired' in f['message'],
                  'the XDG file made after the start counts; Carol\'s expiry is reported: %s'
                  % (f and f['message']))
            write_git(xdg, '[user]\n\tname = Alice Tester\n\temail = alice@example.org\n'
                      '[commit]\n\tgpgSign = true\n')
            signer, _ = agrees(dm, kr, repo, 'gpgSign, no signingkey, Alice')
            check(signer == alice['sig'], 'git signs with Alice\'s subkey: %s' % signer)
            # git hands gpg "Name <email>", a part of a user id: the name must match too.
            write_git(xdg, '[user]\n\tname = Alice\n\temail = alice@example.org\n'
                      '[commit]\n\tgpgSign = true\n')
            signer, _ = agrees(dm, kr, repo, 'user.name not in the user id',
                               ('(Alice <alice@example.org>)',))
            check(signer is None, 'git cannot sign as "Alice <alice@example.org>"')
            # Bob's expired subkey exactly: the hint names his new one, not Alice's key.
            write_git(xdg, '[user]\n\tname = Bob Tester\n\temail = bob@example.org\n'
                      '\tsigningkey = %s!\n' % bob['sig'])
            agrees(dm, kr, repo, "signingkey on Bob's expired subkey!", (bob['sig'][-16:],),
                   hint='git config --global user.signingkey %s!' % bob['sig2'])
            subprocess.run(['git', 'config', '--global', 'user.signingkey', bob['sig2'] + '!'],
                           env=git_env(dm, kr), check=True)
            signer, _ = agrees(dm, kr, repo, 'the hint applied')
            check(signer == bob['sig2'], "git signs with Bob's new subkey: %s" % signer)
            # Without '!', gpg takes Bob's newest usable signing subkey.
            write_git(xdg, '[user]\n\tname = Bob Tester\n\temail = bob@example.org\n'
                      '\tsigningkey = %s\n' % bob['sig'])
            signer, _ = agrees(dm, kr, repo, "signingkey on Bob's expired subkey, no '!'")
            check(signer == bob['sig2'], "gpg picks Bob's new subkey: %s" % signer)
            # Removing ~/.config/git and making it again is seen too.
            shutil.rmtree(os.path.dirname(xdg))
            write_git(xdg, '[user]\n\tname = Bob Tester\n\temail = bob@example.org\n'
                      '\tsigningkey = %s\n' % carol['fpr'])
            agrees(dm, kr, repo, 'Carol, in a new ~/.config/git', ('Carol Tester',))

            # gpg.conf: the last default-key gpg may use wins.
            s = default_key_agrees(dm, kr, [rex['fpr'], alice['fpr']], 'revoked, then Alice')
            check(s == alice['sig'], 'gpg signs with Alice: %s' % s)
            s = default_key_agrees(dm, kr, [alice['fpr'], bob['fpr']], 'Alice, then Bob')
            check(s == bob['sig2'], 'gpg signs with Bob, the last: %s' % s)
            s = default_key_agrees(dm, kr, [alice['fpr'], carol['fpr']], 'Alice, then Carol',
                                   'default-key-expired')
            check(s is None, 'gpg takes Carol and cannot sign: %s' % s)
            s = default_key_agrees(dm, kr, [alice['fpr'], rex['fpr']], 'Alice, then revoked')
            check(s == alice['sig'], 'gpg passes over the revoked key: %s' % s)
        finally:
            rc = dm.stop()
        check(rc == 0, 'keyctld exits 0 on SIGTERM (%s)' % rc)


def test_cards(pcscd):
    with kb.Keyring(pcscd) as kr:
        carla = kr.create_key(uid='Carla Card <carla@example.org>',
                              subkeys={'sig': 100, 'enc': 100, 'aut': 100})
        prof_a = kr.card_profile(carla, serial='11111111')  # touch off in every slot
        prof_a['pin_retries'] = {'pw1': 1, 'rc': 0, 'pw3': 0}
        prof_a['signature_counter'] = 50
        card = pcscd.card(prof_a)
        pcscd.wait_card(True)
        kr.stubs_from_card(carla)
        kr.revoke_subkey(carla['fpr'], carla['enc'])
        stub_serials = {r[4]: r[14] for r in kr.list_secret() if r[0] == 'ssb'}
        kr.stop()  # the daemon reads the card itself, over PC/SC
        tok_a, tok_b = 'yubikey-11111111', 'yubikey-22222222'

        dm = dk.Daemon(kr.env).start()
        try:
            st = dm.wait_status(lambda s: s['keys'] and any(
                t['id'] == tok_a and t.get('openpgp') for t in s['tokens']))
            check(st and any(t['id'] == tok_a for t in st['tokens']),
                  'card A (YubiKey #11111111) is seen')
            fires(dm, 'pin-retries-low', ('user PIN of YubiKey #11111111', '1 tries left'),
                  'warning', 'gpg --card-edit', token=tok_a)
            fires(dm, 'admin-pin-retries-low', ('admin PIN of YubiKey #11111111', 'locked'),
                  'critical', token=tok_a)
            fires(dm, 'touch-off-signing', ('YubiKey #11111111 signs without a touch',),
                  'notice', 'ykman openpgp keys set-touch sig on', token=tok_a)
            fires(dm, 'revoked-key-on-card', ('encryption slot of YubiKey #11111111',
                                              'Encryption subkey', 'which is revoked'),
                  'warning', key=carla['fpr'], subkey=carla['enc'], token=tok_a)
            st = dm.status()
            quiet(st, 'revoked-key-on-card', 'the signing slot holds a valid subkey',
                  subkey=carla['sig'])
            quiet(st, 'subkey-secret-on-disk', 'subkeys on the card', key=carla['fpr'])
            quiet(st, 'card-slot-unknown-key', 'every slot is a known subkey')
            quiet(st, 'backup-token', 'the stubs name the inserted card')
            quiet(st, 'counter-went-down', 'first sighting, counter 50')

            # PINs reset and touch turned on: re-read on reinsertion.
            card.remove()
            card.update(pin_retries={'pw1': 3, 'rc': 3, 'pw3': 3}, signature_counter=60)
            card.update_slot('sig', touch='on')
            time.sleep(1.2)
            card.insert()
            for rule in ('pin-retries-low', 'admin-pin-retries-low', 'touch-off-signing'):
                gone(dm, rule, 'PINs 3/3/3 and touch on, card reinserted', token=tok_a)
            st = dm.wait_status(lambda s: any(t['id'] == tok_a and t['present'] and (
                t.get('openpgp') or {}).get('signature_counter') == 60 for t in s['tokens']))
            quiet(st, 'counter-went-down', 'counter went up 50 -> 60')
            quiet(st, 'pin-retries-low', '3 tries left (low is <= 2)')

            # The same serial with a lower counter.
            card.remove()
            card.update(signature_counter=10)
            time.sleep(1.2)
            card.insert()
            fires(dm, 'counter-went-down', ('signature counter of YubiKey #11111111',
                                            'went down'), 'warning', token=tok_a)

            # A backup token: card B, other serial, same keys. The stubs name card A.
            prof_b = kr.card_profile(carla, serial='22222222')
            card.swap(prof_b, gap=1.2)
            f = fires(dm, 'backup-token', ('YubiKey #22222222 holds the same keys of Carla Card',
                                           'card #11111111', 'backup token'), 'notice',
                      LEARN_HINT, key=carla['fpr'], token=tok_b)
            check(f.get('hint', '').endswith(LEARN_HINT), 'backup-token hint: %s'
                  % f.get('hint'))
            time.sleep(2)
            st = dm.status()
            subs = dk.subkeys_of(st)
            check(all('11111111' in subs[carla[s]]['card_serial'] for s in ('sig', 'enc', 'aut')),
                  'daemon: the stubs still name card A')
            after = {r[4]: r[14] for r in kr.list_secret() if r[0] == 'ssb'}
            kr.stop()
            check(after == stub_serials and all('11111111' in v for v in after.values()),
                  'gpg --list-secret-keys: stubs still point at card A (%s): nothing ran '
                  'learn --force' % sorted(set(after.values())))
            quiet(st, 'backup-token', 'card A itself is not a backup', token=tok_a)

            # A card whose keys nobody here has.
            other = kb.Keyring()
            try:
                stranger = other.create_key(uid='Sam Stranger <sam@example.org>',
                                            subkeys={'sig': 100, 'enc': 100, 'aut': 100})
                prof_c = other.card_profile(stranger, serial='33333333')
                prof_c['slots']['sig']['touch'] = 'on'
                stranger_pub = other.export(stranger['fpr'])
            finally:
                other.stop()
            card.swap(prof_c, gap=1.2)
            fires(dm, 'card-slot-unknown-key', ('signature slot of YubiKey #33333333',
                                                stranger['sig'], 'in none of the keys'),
                  'notice', '[keyring] track', token='yubikey-33333333', subkey=stranger['sig'])
            st = dm.status()
            check(len(find(st, 'card-slot-unknown-key', token='yubikey-33333333')) == 3,
                  'card-slot-unknown-key: one per slot (3)')
            # The hint's fix: import the key and track it; a Reload applies the new list.
            kr.import_keys(stranger_pub)
            kr.stop()
            dm.write_conf('[keyring]\ntrack = %s\n' % stranger['fpr'])
            check(dm.call('io.keyctl.Reload') == {}, 'Reload after adding [keyring] track')
            gone(dm, 'card-slot-unknown-key', 'key imported, tracked, Reload',
                 token='yubikey-33333333')
            check(stranger['fpr'] in dk.keys_of(dm.status()) and
                  dk.keys_of(dm.status())[stranger['fpr']]['tracked'],
                  'the newly tracked key is listed (tracked: true)')
            check(dm.alive(), 'the daemon is still running')
        finally:
            rc = dm.stop()
        check(rc == 0, 'keyctld exits 0 on SIGTERM, no leak under ASan (%s)' % rc)


def test_card_key_no_stub(pcscd):
    with kb.Keyring(pcscd) as kr:
        nora = kr.create_key(uid='Nora Nostub <nora@example.org>',
                             subkeys={'sig': 100, 'enc': 100, 'aut': 100})
        card = pcscd.card(kr.card_profile(nora, serial='44444444'))
        pcscd.wait_card(True)
        # The secrets leave the disk, and gpg never saw the card: no stubs.
        kr.remove_subkey_secrets(nora['fpr'], [nora[s] for s in ('sig', 'enc', 'aut')])
        kr.stop()
        tok = 'yubikey-44444444'
        dm = dk.Daemon(kr.env).start()
        try:
            fires(dm, 'card-key-no-stub', ('signature slot of YubiKey #44444444',
                                           nora['sig'][-16:], 'Nora Nostub', 'no stub'),
                  'warning', 'gpg --card-status', key=nora['fpr'], subkey=nora['sig'],
                  token=tok)
            st = dm.status()
            check(len(find(st, 'card-key-no-stub', token=tok)) == 3,
                  'card-key-no-stub: one per slot (3)')
            quiet(st, 'card-slot-unknown-key', 'the public keys are known', token=tok)
            kr.card_status()
            kr.scdaemon_pid()
            gone(dm, 'card-key-no-stub', 'gpg --card-status wrote the stubs', timeout=30,
                 token=tok)
            check(dm.alive(), 'the daemon is still running')
        finally:
            rc = dm.stop()
            card.remove()
        check(rc == 0, 'keyctld exits 0 on SIGTERM, no leak under ASan (%s)' % rc)


def test_card_not_seen(pcscd):
    with kb.Keyring(pcscd) as kr:
        dana = kr.create_key(uid='Dana Away <dana@example.org>',
                             subkeys={'sig': 100, 'enc': 100, 'aut': 100})
        prof = kr.card_profile(dana, serial='33333333')
        card = pcscd.card(prof)
        pcscd.wait_card(True)
        kr.stubs_from_card(dana)
        kr.stop()
        tok = 'yubikey-33333333'
        dm = dk.Daemon(kr.env).start()
        try:
            st = dm.wait_status(lambda s: s['keys'] and any(
                t['id'] == tok and t['present'] and t.get('openpgp') for t in s['tokens']))
            check(st is not None, 'card #33333333 is seen')
            quiet(st, 'card-not-seen', 'the card is present', token=tok)
            card.remove()
            st = dm.wait_status(lambda s: any(t['id'] == tok and not t['present']
                                              for t in s['tokens']))
            quiet(st, 'card-not-seen', 'removed just now', token=tok)
            dm.stop()

            # A login 31 days later: the daemon remembers when it last saw the card.
            dm.start(offset=31 * DAY)
            fires(dm, 'card-not-seen', ('YubiKey #33333333', 'last seen 31 days ago'), 'notice',
                  'revkey', key=dana['fpr'], token=tok)
            dm.stop()

            dm.start(offset=29 * DAY)
            st = dm.wait_status(lambda s: s['keys'] and any(
                t['id'] == tok and not t['present'] for t in s['tokens']))
            check(st is not None, 'the absent card is remembered after a restart')
            quiet(st, 'card-not-seen', '29 days is within card-unseen-days (30)', token=tok)
        finally:
            dm.stop()


def main():
    if not dk.KEYCTLD:
        print('SKIP: KEYCTLD not set')
        return 77
    test_git_gpg_real()
    if os.environ.get('KEYCTL_AUDIT_RULES_ONLY') == 'git-gpg':
        return 1 if dk.failures else 0  # a shortcut while working on these rules
    with kb.Pcscd() as pcscd:
        test_keys(pcscd)
        test_git_signing(pcscd)
        test_cards(pcscd)
    # A pcscd of its own: no card of the tests above may stand in for the absent one.
    with kb.Pcscd() as pcscd:
        test_card_not_seen(pcscd)
    with kb.Pcscd() as pcscd:
        test_card_key_no_stub(pcscd)
    want = {'set-expire', 'set-expire offline', 'keyserver', 'git-config', 'default-key',
            'offline-primary', 'edit-key'}
    check(HINT_KINDS == want, 'every kind of hint the suite meets was run: %s' %
          sorted(HINT_KINDS), 'not run: %s' % sorted(want - HINT_KINDS))
    check(not procs.leftovers(), 'no process left running: %s' % procs.leftovers())
    return 1 if dk.failures else 0


if __name__ == '__main__':
    try:
        rc = main()
    except kb.BedUnavailable as ex:
        print('SKIP: %s' % ex)
        rc = 77
    finally:
        procs.stop_all()
    for f in dk.failures:
        print('FAILED:', f)
    sys.exit(rc)
