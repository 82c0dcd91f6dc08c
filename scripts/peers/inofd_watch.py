# SPDX-License-Identifier: GPL-2.0
# make peers: the Python binding (python/, module inofd): one recursive
# watch, inofd.Instance() with defaults, watch_tree(ROOT, IN_ALL_EVENTS)
# (watch-fd's default mask), events iterated.  One line per event on
# stdout: "<type>\t<mask>\t<path>"; "OVERFLOW" for a rescan (the queue
# overflowed); "READY" once watch_tree() returned.
import os
import sys

import inofd

IN_ALL_EVENTS = getattr(inofd, "IN_ALL_EVENTS", 0xfff)
RESCAN = None
for n in ("EV_RESCAN", "INOFD_EV_RESCAN", "RESCAN"):
    if hasattr(inofd, n):
        RESCAN = getattr(inofd, n)
        break

root = os.fsencode(sys.argv[1])
out = sys.stdout.buffer
inst = inofd.Instance()
inst.watch_tree(root, IN_ALL_EVENTS)
out.write(b"READY\n")
out.flush()
for ev in inst:
    if RESCAN is not None and ev.type == RESCAN:
        out.write(b"OVERFLOW\t%s\n" % (ev.path or b"",))
    else:
        path = ev.path
        if path is None and ev.name is not None:
            path = ev.name
        out.write(b"%d\t0x%x\t%s\n" % (int(ev.type), ev.mask, path or b""))
    out.flush()
