#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small watchdog program.  One line picks the observer: watchdog's own
(inotify) or libinofd's (inofd.watchdog, python/).  Nothing else changes.

    watchdog-swap.py DIR            print DIR's events (recursive) until ^C
    watchdog-swap.py DIR --demo     make a few changes in DIR, print, exit

With PYTHONPATH=python from the source tree, or after make install.
"""
import os
import shutil
import sys
import time

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
from inofd.watchdog import InofdObserver as Observer  # the one-line swap


class Printer(FileSystemEventHandler):
    def __init__(self, root):
        self.root = root

    def rel(self, p):
        return os.path.relpath(p, self.root)

    def on_any_event(self, event):
        if event.event_type == "moved":
            print(event.event_type, self.rel(event.src_path), "->",
                  self.rel(event.dest_path), flush=True)
        elif not (event.event_type == "modified" and event.is_directory):
            print(event.event_type, self.rel(event.src_path), flush=True)


def demo(root):
    # a tree made at once (as git checkout or tar would), then moved and
    # removed at a human pace
    os.makedirs(os.path.join(root, "src", "lib"))
    with open(os.path.join(root, "src", "lib", "a.c"), "w") as f:
        f.write("int a;\n")
    time.sleep(0.3)
    os.rename(os.path.join(root, "src"), os.path.join(root, "source"))
    time.sleep(0.3)
    shutil.rmtree(os.path.join(root, "source"))


def main():
    root = os.path.realpath(sys.argv[1])
    observer = Observer()
    observer.schedule(Printer(root), root, recursive=True)
    observer.start()
    try:
        if "--demo" in sys.argv[2:]:
            demo(root)
            time.sleep(0.5)
        else:
            while True:
                time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        observer.stop()
        observer.join()


if __name__ == "__main__":
    main()
