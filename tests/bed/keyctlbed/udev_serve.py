# SPDX-License-Identifier: LGPL-2.1-or-later
"""A udev testbed (keyctlbed.udev) served over stdin and stdout, for a test that cannot hold one
in its own process: the boot test drives a system booted in other namespaces from outside, and
its keyctld is a service of the user's manager there. Run inside, as the user, under
umockdev-wrapper, with TMPDIR where the service can reach (its PrivateTmp hides /tmp):

    umockdev-wrapper python3 -m keyctlbed.udev_serve

The first line out says what the service needs: `env UMOCKDEV_DIR=... LD_PRELOAD=...`, or
`unavailable REASON` (then exit 77). Then one command a line in, one answer a line out:

    add NAME SERIAL   -> added SYSPATH   (data/NAME.umockdev, every node's uevent)
    remove            -> removed         (the last one added, children first)

anything else -> `error ...`. The end of input ends it, and the testbed's directory with it.
"""
import sys

from . import procs, udev


def serve(bed, lines, out):
    for line in lines:
        words = line.split()
        try:
            if len(words) == 3 and words[0] == "add":
                dev = bed.add(words[1], serial=words[2])
                out.write("added %s\n" % dev.syspath)
            elif words == ["remove"] and bed.devices:
                bed.remove(bed.devices[-1])
                out.write("removed\n")
            else:
                out.write("error unknown command: %s\n" % line.strip())
        except (AssertionError, OSError, RuntimeError) as e:
            out.write("error %s\n" % str(e).replace("\n", " "))
        out.flush()


def main():
    try:
        bed = udev.Udev()
    except procs.BedUnavailable as e:
        print("unavailable %s" % e, flush=True)
        return 77
    print("env " + " ".join("%s=%s" % kv for kv in sorted(bed.env.items())), flush=True)
    serve(bed, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
