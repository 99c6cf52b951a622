#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A pinentry for the bed: speaks the Assuan pinentry protocol to gpg-agent,
answers GETPIN from a script and writes down every prompt.

gpg-agent runs it as its pinentry-program (through the small shell wrapper
pinentry.py writes, which passes the state directory first). The directory
holds pinentry.json: {"user": PIN, "admin": Admin PIN, "queue": [...]}, where
each GETPIN takes the queue's first entry if any ("cancel": the user pressed
Cancel; "wrong": a wrong PIN; "slow:SECONDS": the right PIN after that long;
anything else: that text) and else answers the user or Admin PIN, chosen by the
prompt gpg-agent sets ("Admin PIN" for PW3, gnupg agent/divert-scd.c getpin_cb).
Each GETPIN, CONFIRM and MESSAGE appends a JSON line to prompts.jsonl.

What it does not do: show anything, read a terminal, keep a PIN anywhere else.
"""

import fcntl
import json
import os
import sys
import time

ERR_CANCELED = "ERR 83886179 Operation cancelled <Pinentry>"


def unescape(s):
    """Assuan's %XX escapes undone (gpg-agent escapes %, CR, LF in SETDESC)."""
    out, i = "", 0
    while i < len(s):
        if s[i] == "%" and i + 3 <= len(s):
            out += chr(int(s[i + 1:i + 3], 16))
            i += 3
        else:
            out += s[i]
            i += 1
    return out


def escape(s):
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


class Pinentry:
    def __init__(self, state_dir):
        self.dir = state_dir
        self.fields = {}

    def take_answer(self):
        """The answer for this GETPIN: the queue's head (consumed) or the configured PIN."""
        path = os.path.join(self.dir, "pinentry.json")
        with open(path, "r+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            conf = json.load(f)
            queue = conf.get("queue", [])
            head = queue.pop(0) if queue else None
            f.seek(0)
            f.truncate()
            json.dump(conf, f)
        admin = "Admin" in self.fields.get("SETPROMPT", "") + self.fields.get("SETDESC", "")
        kind = "admin" if admin else "user"
        if head is None:
            return kind, "pin", conf["admin" if admin else "user"]
        if head == "wrong":
            return kind, "wrong", "999999999"
        if head == "cancel":
            return kind, "cancel", None
        if head.startswith("slow:"):
            # A user who takes a while to type the PIN (the touch detector must not call the
            # prompt a touch).
            time.sleep(float(head[5:]))
            return kind, "pin", conf["admin" if admin else "user"]
        return kind, "text", head

    def record(self, what, **extra):
        line = dict(what=what, time=time.time(), pid=os.getpid(),
                    prompt=self.fields.get("SETPROMPT", ""), desc=self.fields.get("SETDESC", ""),
                    error=self.fields.get("SETERROR", ""), **extra)
        with open(os.path.join(self.dir, "prompts.jsonl"), "a") as f:
            f.write(json.dumps(line) + "\n")

    def command(self, line):
        """The reply lines to one Assuan command; None ends the session."""
        cmd, _, arg = line.partition(" ")
        cmd = cmd.upper()
        if cmd == "BYE":
            return None
        if cmd == "GETPIN":
            kind, answer, pin = self.take_answer()
            self.record("getpin", kind=kind, answer=answer)
            self.fields.pop("SETERROR", None)
            return [ERR_CANCELED] if pin is None else ["D " + escape(pin), "OK"]
        if cmd in ("CONFIRM", "MESSAGE"):
            self.record(cmd.lower())
            return ["OK"]
        if cmd == "GETINFO":
            info = {"pid": str(os.getpid()), "flavor": "bed", "version": "1.0"}.get(arg)
            return (["D " + info] if info else []) + ["OK"]
        if cmd.startswith("SET"):
            self.fields[cmd] = unescape(arg)
        return ["OK"]  # OPTION, SET*, RESET, ...

    def run(self, rfile, wfile):
        wfile.write("OK Pleased to meet you, bed pinentry\n")
        wfile.flush()
        for raw in rfile:
            reply = self.command(raw.rstrip("\r\n"))
            if reply is None:
                wfile.write("OK closing connection\n")
                wfile.flush()
                return
            wfile.write("".join(r + "\n" for r in reply))
            wfile.flush()


def main():
    Pinentry(sys.argv[1]).run(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
