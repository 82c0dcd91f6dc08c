# SPDX-License-Identifier: GPL-2.0
# make peers: the Python binding's watchdog observer, as a watchdog
# program uses it (watchdog_watch.py with one import changed):
# InofdObserver(), schedule(handler, ROOT, recursive=True).  One line per
# event on stdout: "<event_type>\t<src_path>" (and "\t-> <dest_path>" for
# moves); "OVERFLOW" for a RescanEvent (events were lost); "READY" once
# observer.start() returned (the emitter's watch_tree() is made in
# start()).
import sys
import time

from watchdog.events import FileSystemEventHandler

from inofd.watchdog import InofdObserver, RescanEvent


class Print(FileSystemEventHandler):
    def on_any_event(self, event):
        if isinstance(event, RescanEvent):
            sys.stdout.write("OVERFLOW\t%s\n" % event.src_path)
            sys.stdout.flush()
            return
        dest = getattr(event, "dest_path", "")
        line = "%s\t%s" % (event.event_type, event.src_path)
        if dest:
            line += "\t-> " + dest
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


obs = InofdObserver()
obs.schedule(Print(), sys.argv[1], recursive=True)
obs.start()
print("READY", flush=True)
try:
    while obs.is_alive():
        time.sleep(0.5)
finally:
    obs.stop()
