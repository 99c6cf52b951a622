# SPDX-License-Identifier: LGPL-2.1-or-later
"""The test side of the bed's scripted pinentry (pinentry_scripted.py): puts it
in a GNUPGHOME, tells it what to answer, and reads back what it was asked.

What it does: writes a wrapper script (gpg-agent runs pinentry-program without
arguments of ours) and pinentry.json in a directory of the home; prompts()
parses prompts.jsonl. What it does not do: start or configure gpg-agent
(Keyring.use_scripted_pinentry() does).
"""

import json
import os

from . import procs

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pinentry_scripted.py")


class ScriptedPinentry:
    def __init__(self, home, user="123456", admin="12345678"):
        self.dir = os.path.join(home, "bed-pinentry")
        os.makedirs(self.dir, exist_ok=True)
        self.program = os.path.join(self.dir, "pinentry")
        with open(self.program, "w") as f:
            f.write(f"#!/bin/sh\nexec {procs.PYTHON} {SCRIPT} {self.dir} \"$@\"\n")
        os.chmod(self.program, 0o755)
        self.conf = {"user": user, "admin": admin, "queue": []}
        self._write()

    def _write(self):
        tmp = os.path.join(self.dir, "pinentry.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.conf, f)
        os.rename(tmp, os.path.join(self.dir, "pinentry.json"))

    def answer_next(self, *answers):
        """Queue answers for the next GETPINs: "cancel", "wrong" or a literal text."""
        with open(os.path.join(self.dir, "pinentry.json")) as f:
            self.conf = json.load(f)
        self.conf["queue"] += list(answers)
        self._write()

    def prompts(self, what="getpin"):
        """Every GETPIN (or "confirm", "message") so far: dicts with kind (user/admin),
        answer (pin/wrong/cancel/text), prompt, desc, error, pid, time."""
        try:
            with open(os.path.join(self.dir, "prompts.jsonl")) as f:
                lines = [json.loads(x) for x in f if x.strip()]
        except FileNotFoundError:
            return []
        return [x for x in lines if x["what"] == what]

    def count(self, kind=None):
        return sum(1 for x in self.prompts() if kind is None or x["kind"] == kind)
