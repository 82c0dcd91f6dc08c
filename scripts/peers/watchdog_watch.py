# SPDX-License-Identifier: GPL-2.0
# make peers: Python watchdog's documented recursive watch, defaults only:
# Observer() (inotify on Linux), schedule(handler, ROOT, recursive=True).
# One line per event on stdout: "<event_type>\t<src_path>" (and
# "\t-> <dest_path>" for moves); "READY" once observer.start() returned
# (watchdog adds every inotify watch before start() returns).
import sys
import time

from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer


class Print(FileSystemEventHandler):
    def on_any_event(self, event):
        dest = getattr(event, "dest_path", "")
        line = "%s\t%s" % (event.event_type, event.src_path)
        if dest:
            line += "\t-> " + dest
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


obs = Observer()
obs.schedule(Print(), sys.argv[1], recursive=True)
obs.start()
print("READY", flush=True)
try:
    while obs.is_alive():
        time.sleep(0.5)
finally:
    obs.stop()
