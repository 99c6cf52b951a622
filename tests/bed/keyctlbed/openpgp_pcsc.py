# SPDX-License-Identifier: LGPL-2.1-or-later
"""PC/SC sessions with several connections to the bed's card at once, for the
tests of what a second connection, a reset or a power cycle does to a card in
use (pcscd.transmit() has one connection and leaves the card as it was).

What it does: runs a child /usr/bin/python3 (libpcsclite caches pcscd's socket
name per process) that follows a list of steps on named connections, all
SCARD_SHARE_SHARED: ("connect", c), ("send", c, apdu hex), ("disconnect", c,
"leave"|"reset"|"unpower"), ("reconnect", c, "leave"|"reset"|"unpower").
What it does not do: interpret the answers.
"""

import json
import os
import subprocess

from . import procs

CHILD = r'''
import json, sys
from smartcard.scard import *
steps = json.loads(sys.argv[2])
rc, ctx = SCardEstablishContext(SCARD_SCOPE_USER)
cards, out = {}, []
DISP = {"leave": SCARD_LEAVE_CARD, "reset": SCARD_RESET_CARD, "unpower": SCARD_UNPOWER_CARD}
def check(rc, what):
    if rc != SCARD_S_SUCCESS:
        raise SystemExit(f"{what}: {SCardGetErrorMessage(rc)}")
for st in steps:
    op, name = st[0], st[1]
    if op == "connect":
        rc, h, proto = SCardConnect(ctx, sys.argv[1], SCARD_SHARE_SHARED,
                                    SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1)
        check(rc, "connect")
        cards[name] = (h, proto)
    elif op == "send":
        h, proto = cards[name]
        rc, resp = SCardTransmit(h, proto, list(bytes.fromhex(st[2])))
        check(rc, "transmit " + st[2])
        out.append((bytes(resp[:-2]).hex(), resp[-2] << 8 | resp[-1]))
    elif op == "disconnect":
        check(SCardDisconnect(cards.pop(name)[0], DISP[st[2]]), "disconnect")
    elif op == "reconnect":
        h, proto = cards[name]
        rc, proto = SCardReconnect(h, SCARD_SHARE_SHARED, SCARD_PROTOCOL_T0 | SCARD_PROTOCOL_T1,
                                   DISP[st[2]])
        check(rc, "reconnect")
        cards[name] = (h, proto)
for h, _ in cards.values():
    SCardDisconnect(h, SCARD_LEAVE_CARD)
SCardReleaseContext(ctx)
print(json.dumps(out))
'''


def session(pcscd, steps, timeout=30):
    """Run `steps` (see above) against pcscd's reader; [(data hex, sw)] of each "send"."""
    env = dict(os.environ, **pcscd.env)
    r = subprocess.run([procs.PYTHON, "-c", CHILD, pcscd.reader_name, json.dumps(steps)],
                       env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("PC/SC session failed: " + (r.stderr.strip() or r.stdout)[-400:])
    return [tuple(x) for x in json.loads(r.stdout)]
