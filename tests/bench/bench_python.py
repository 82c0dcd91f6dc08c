#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""bench-python: the per-event cost of iterating events from Python
(inofd.Instance) against libinofd's C iterator, in one run, on this host.

The stream is bench 1d's (tests/bench/bench_lib.c): NEV IN_MODIFY events
on 64 files of one directory DEPTH levels below a watch_tree root
(alternating names, so the kernel merges none), queued before the clock
starts, then drained; each consumer reads the first byte of each path.
The C figure is bench_lib's "libinofd iterator" (its median of ROUNDS),
run first by this script; the Python figures are medians of ROUNDS
drains, thread CPU time (time.thread_time), through

    for ev in ino: ev.path[0]                  (iteration)
    for ev in ino.read(0): ev.path[0]          (read() batches)

As root, bench_lib runs as uid 65534 so that it leaves the host's
max_queued_events alone (it would set it to NEV + 1024); NEV must then
stay under that limit (default 16384).

    bench_python.py BENCH_LIB DIR NEV ROUNDS DEPTH
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import inofd

FILES = 64


def c_side(bench_lib, d, nev, rounds, depth):
    cmd = [bench_lib, d, str(nev), str(rounds), str(depth)]
    if os.geteuid() == 0:
        os.makedirs(d, exist_ok=True)
        os.chown(d, 65534, 65534)
        cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    m = re.search(r"libinofd iterator (\d+) events/s", out)
    if not m:
        sys.exit("bench-python: no libinofd figure from bench_lib:\n" + out)
    return float(m.group(1))


def leaf_of(root, depth):
    leaf = root
    for _ in range(depth):
        leaf = os.path.join(leaf, "d")
    os.makedirs(leaf, exist_ok=True)
    paths = [os.path.join(leaf, "file%02d" % i) for i in range(FILES)]
    for p in paths:
        open(p, "w").close()
    return paths


def generate(paths, nev):
    fds = [os.open(p, os.O_WRONLY) for p in paths]
    try:
        for k in range(nev):
            os.pwrite(fds[k % FILES], b"x", 0)
    finally:
        for fd in fds:
            os.close(fd)


def drain_iter(ino, nev):
    n = 0
    acc = 0
    t = time.thread_time()
    for ev in ino:
        acc += ev.path[0]
        n += 1
        if n == nev:
            break
    return time.thread_time() - t, n


def drain_read(ino, nev):
    n = 0
    acc = 0
    t = time.thread_time()
    while n < nev:
        evs = ino.read(0)
        if not evs:
            break
        for ev in evs:
            acc += ev.path[0]
        n += len(evs)
    return time.thread_time() - t, n


def py_side(root, paths, nev, rounds, drain):
    times = []
    for _ in range(rounds):
        with inofd.Instance() as ino:
            ino.watch_tree(root, inofd.IN_MODIFY)
            generate(paths, nev)
            dt, n = drain(ino, nev)
            if n != nev:
                sys.exit("bench-python: %d events, expected %d" % (n, nev))
            times.append(dt)
    return nev / statistics.median(times)


def main():
    bench_lib, d, nev, rounds, depth = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
    c = c_side(bench_lib, os.path.join(d, "c"), nev, rounds, depth)
    root = os.path.join(d, "py")
    paths = leaf_of(root, depth)
    pi = py_side(root, paths, nev, rounds, drain_iter)
    pr = py_side(root, paths, nev, rounds, drain_read)
    shutil.rmtree(root)
    print("python events=%d depth=%d C iterator %.0f events/s (%.0f ns/event)  "
          "Python iteration %.0f events/s (%.0f ns/event)  read() batches "
          "%.0f events/s  ratio py/C time %.2f (iteration), %.2f (read); "
          "target <= 3" % (nev, depth, c, 1e9 / c, pi, 1e9 / pi, pr, c / pi, c / pr))
    return 0


if __name__ == "__main__":
    sys.exit(main())
