# SPDX-License-Identifier: GPL-2.0
# make peers: the Python binding's watchfiles-compatible API, as a
# watchfiles program would use it, defaults only:
#   for changes in inofd.watchfiles.watch(ROOT): ...
# (DefaultFilter, debounce 1600 ms, step 50 ms, recursive).  One line per
# change on stdout: "<change>\t<path>".  No ready line: the generator sets
# its watches up when iterated (the sentinel files say when it is ready).
import sys

from inofd.watchfiles import watch

for changes in watch(sys.argv[1], raise_interrupt=False):
    sys.stdout.write("".join("%s\t%s\n" % (c.name, p) for c, p in changes))
    sys.stdout.flush()
