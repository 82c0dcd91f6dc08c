# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd.watchdog: a watchdog observer on libinofd.

A watchdog program switches with one line:

    from inofd.watchdog import InofdObserver as Observer

and keeps its handlers: the events are watchdog's own classes
(FileCreatedEvent, DirMovedEvent, FileClosedEvent, ...), queued as
watchdog's inotify observer queues them (the DirModifiedEvent of the
parent after a create, delete or move, the sub-moved events of a directory
renamed in a recursive watch), with what libinofd guarantees:

* recursive schedules are one inofd watch_tree(): a directory made or
  moved into the tree is watched before it is listed, and every entry
  found in it comes as a created event with is_synthetic True, so
  os.makedirs("a/b/c") or a tree moved in reports every directory and
  file that is still there when its directory is listed (an entry may
  come twice; one made and removed before the library watched its new
  directory is not seen);
* moves are paired by the library: a rename within the watch is one
  FileMovedEvent / DirMovedEvent; a move out of the watch is a deleted
  event, a move in a created event (generate_full_events=True: a moved
  event with dest_path / src_path None instead, as watchdog's
  InotifyFullEmitter does);
* a loss (the kernel queue overflowed, the library's queue was full) is
  an inofd RESCAN.  watchdog has no such event; the observer maps it as
  rescan= says:

  "modified" (default): one RescanEvent (a DirModifiedEvent subclass,
      is_synthetic True, handed to on_modified), on the
      watch's root (or, for a RESCAN of one subtree after a mount or
      umount inside the tree, on that directory): "something below here
      changed and the events were lost; look again".  Costs nothing
      until it happens.
  "snapshot": the emitter keeps a watchdog DirectorySnapshot of the watch
      (taken when it starts and after each RESCAN) and on a RESCAN queues
      the events of DirectorySnapshotDiff(old, new), as watchdog's
      PollingObserver does, then the RescanEvent above.  The old
      snapshot is the one of the last RESCAN, so changes already reported
      since may be reported again (at least once, never zero times).  It
      costs a walk and a stat of every entry at start and per RESCAN, and
      the snapshot's memory.

An event the library gives without a path (an event inside a directory
whose rename is still waiting for its pair) is a DirModifiedEvent on the
watch's root with is_synthetic True.  A tree whose root moved where the
library cannot follow (EV_ERROR with EVF_LOST) is reported as a
DirDeletedEvent of the root and the emitter stops, as watchdog does when
the root is deleted; other EV_ERRORs (a directory that could not be
watched) are logged (logger "inofd.watchdog") and reported as a
DirModifiedEvent on that directory.

Paths are the schedule's path joined with the path below it, as given
(relative stays relative, bytes stay bytes), as watchdog does.

backend= picks libinofd's backend (None: the best; "procfd",
"fanotify", "kernel"); it is passed to every emitter's Instance.
"""
import functools
import logging
import os

from watchdog.events import (
    DirCreatedEvent, DirDeletedEvent, DirModifiedEvent, DirMovedEvent,
    FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileModifiedEvent,
    FileMovedEvent, generate_sub_moved_events)
from watchdog.observers.api import (
    DEFAULT_EMITTER_TIMEOUT, DEFAULT_OBSERVER_TIMEOUT, BaseObserver,
    EventEmitter)
from watchdog.utils.dirsnapshot import DirectorySnapshot, DirectorySnapshotDiff

import inofd

__all__ = ["InofdObserver", "InofdEmitter", "RescanEvent", "WATCH_MASK"]

log = logging.getLogger("inofd.watchdog")

WATCH_MASK = (inofd.IN_CREATE | inofd.IN_DELETE | inofd.IN_MODIFY |
              inofd.IN_ATTRIB | inofd.IN_MOVE | inofd.IN_CLOSE_WRITE |
              inofd.IN_DELETE_SELF)
"""The inotify events an emitter asks for (watchdog's set)."""

RESCAN_MODES = ("modified", "snapshot")


class RescanEvent(DirModifiedEvent):
    """The DirModifiedEvent a RESCAN becomes: events below src_path were
    lost, look again.  A DirModifiedEvent (handlers get it in
    on_modified) with is_synthetic True; its own class and key, so that
    watchdog's queue, which drops an event equal to the one before it,
    never takes it for the plain DirModifiedEvent of the same directory."""

    is_synthetic = True

    @property
    def key(self):
        return (self.event_type, self.src_path, self.is_directory, "rescan")


def _synthetic(ev):
    ev.is_synthetic = True
    return ev


class InofdEmitter(EventEmitter):
    """One scheduled watch: one inofd.Instance, read in this thread."""

    def __init__(self, event_queue, watch, timeout=DEFAULT_EMITTER_TIMEOUT,
                 backend=None, rescan="modified", full_events=False,
                 instance_options=None):
        super().__init__(event_queue, watch, timeout)
        self._options = dict(instance_options or {})
        if rescan not in RESCAN_MODES:
            raise ValueError("rescan=%r: not one of %r" % (rescan, RESCAN_MODES))
        self._backend = backend
        self._rescan = rescan
        self._full = full_events
        self._ino = None
        self._wd = -1
        self._snapshot = None
        self._bytes = isinstance(watch.path, bytes)
        self._root = watch.path
        self._abs = b""

    # -- life
    def on_thread_start(self):
        ino = inofd.Instance(backend=self._backend, **self._options)
        try:
            path = os.fsencode(self.watch.path)
            self._wd = -1
            if self.watch.is_recursive:
                try:
                    self._wd = ino.watch_tree(path, WATCH_MASK)
                except NotADirectoryError:
                    pass        # a file: watched as it is, as watchdog does
            if self._wd < 0:
                self._wd = ino.watch_path(path, WATCH_MASK)
            self._abs = ino.wd_path(self._wd) or os.path.abspath(path)
            if self._rescan == "snapshot":
                self._snapshot = self._take_snapshot()
        except BaseException:
            ino.close()
            raise
        self._ino = ino

    def on_thread_stop(self):
        ino, self._ino = self._ino, None
        if ino is not None:
            ino.close()       # wakes a read() blocked in queue_events

    def _take_snapshot(self):
        return DirectorySnapshot(self.watch.path, self.watch.is_recursive)

    # -- paths
    def _path(self, p):
        """A library path (absolute bytes) as the schedule names it."""
        a = self._abs
        if p == a:
            rel = None
        elif p.startswith(a + b"/"):
            rel = p[len(a) + 1:]
        else:
            rel = p                     # outside the root: as it is
            return p if self._bytes else os.fsdecode(p)
        if self._bytes:
            return self._root if rel is None else os.path.join(self._root, rel)
        return self._root if rel is None else os.path.join(self._root, os.fsdecode(rel))

    # -- events
    def queue_events(self, timeout):
        ino = self._ino
        if ino is None:
            return
        try:
            evs = ino.read(timeout)
        except ValueError:            # closed by stop()
            return
        for ev in evs:
            self._queue_one(ev)

    def _root_modified(self):
        self.queue_event(_synthetic(DirModifiedEvent(self._root)))

    def _queue_one(self, ev):
        t = ev.type
        isdir = bool(ev.mask & inofd.IN_ISDIR)
        q = self.queue_event
        if t == inofd.EV_RESCAN:
            self._on_rescan(ev)
            return
        if t == inofd.EV_ERROR:
            if ev.flags & inofd.EVF_LOST:
                log.warning("%s: the watch's root moved where it cannot be "
                            "followed; stopping", self._root)
                q(DirDeletedEvent(self._root))
                self.stop()
                return
            log.warning("%s: %s", ev.fspath, inofd.strerror(ev.error))
            if ev.path is not None:
                q(_synthetic(DirModifiedEvent(self._path(ev.path))))
            return
        if t == inofd.EV_RENAME:
            if ev.path is None:
                self._root_modified()
                return
            dest = self._path(ev.path)
            if ev.from_path is None:
                cls = DirCreatedEvent if isdir else FileCreatedEvent
                q(cls(dest))
                q(DirModifiedEvent(os.path.dirname(dest)))
                return
            src = self._path(ev.from_path)
            q((DirMovedEvent if isdir else FileMovedEvent)(src, dest))
            q(DirModifiedEvent(os.path.dirname(src)))
            q(DirModifiedEvent(os.path.dirname(dest)))
            if isdir and self.watch.is_recursive:
                for sub in generate_sub_moved_events(src, dest):
                    q(sub)
            return
        if ev.path is None:
            if t == inofd.EV_INOTIFY and ev.mask & inofd.IN_IGNORED:
                return
            self._root_modified()
            return
        p = self._path(ev.path)
        if t == inofd.EV_MOVE_OUT:
            if self._full:
                q((DirMovedEvent if isdir else FileMovedEvent)(p, None))
            else:
                q((DirDeletedEvent if isdir else FileDeletedEvent)(p))
            q(DirModifiedEvent(os.path.dirname(p)))
            return
        if t == inofd.EV_MOVE_IN:
            if self._full:
                q((DirMovedEvent if isdir else FileMovedEvent)(None, p))
            else:
                q((DirCreatedEvent if isdir else FileCreatedEvent)(p))
            q(DirModifiedEvent(os.path.dirname(p)))
            # a directory moved into a tree: the library lists it and
            # reports its entries as synthetic IN_CREATE events
            return
        m = ev.mask
        if m & inofd.IN_IGNORED:
            if not ev.flags & inofd.EVF_MEMBER and ev.wd == self._wd:
                self.stop()           # the watch is gone (root deleted)
            return
        # One inofd event may carry several bits (the fanotify backend
        # merges events on one object): each gives its watchdog event, in
        # the order they can happen.
        parent = None
        if m & inofd.IN_CREATE:
            e = (DirCreatedEvent if isdir else FileCreatedEvent)(p)
            if ev.flags & inofd.EVF_SYNTHETIC:
                e.is_synthetic = True
            q(e)
            parent = os.path.dirname(p)
        if m & (inofd.IN_ATTRIB | inofd.IN_MODIFY):
            q((DirModifiedEvent if isdir else FileModifiedEvent)(p))
        if m & inofd.IN_CLOSE_WRITE and not isdir:
            q(FileClosedEvent(p))
            parent = os.path.dirname(p)
        if m & inofd.IN_DELETE:
            q((DirDeletedEvent if isdir else FileDeletedEvent)(p))
            parent = os.path.dirname(p)
        if parent is not None:
            q(DirModifiedEvent(parent))
        if m & inofd.IN_DELETE_SELF and p == self._root:
            q((DirDeletedEvent if isdir or self.watch.is_recursive
               else FileDeletedEvent)(p))
            self.stop()

    def _on_rescan(self, ev):
        where = self._root
        if ev.wd >= 0 and ev.path is not None:
            where = self._path(ev.path)        # one subtree (a mount)
        if self._rescan == "snapshot":
            try:
                new = self._take_snapshot()
            except OSError:
                self.queue_event(DirDeletedEvent(self._root))
                self.stop()
                return
            diff = DirectorySnapshotDiff(self._snapshot, new)
            self._snapshot = new
            q = self.queue_event
            for p in diff.files_deleted:
                q(_synthetic(FileDeletedEvent(p)))
            for p in diff.files_modified:
                q(_synthetic(FileModifiedEvent(p)))
            for p in diff.files_created:
                q(_synthetic(FileCreatedEvent(p)))
            for s, d in diff.files_moved:
                q(_synthetic(FileMovedEvent(s, d)))
            for p in diff.dirs_deleted:
                q(_synthetic(DirDeletedEvent(p)))
            for p in diff.dirs_modified:
                q(_synthetic(DirModifiedEvent(p)))
            for p in diff.dirs_created:
                q(_synthetic(DirCreatedEvent(p)))
            for s, d in diff.dirs_moved:
                q(_synthetic(DirMovedEvent(s, d)))
        self.queue_event(RescanEvent(where))


class InofdObserver(BaseObserver):
    """A watchdog observer on libinofd (see the module's docstring).

    InofdObserver(timeout=1, generate_full_events=False, backend=None,
                  rescan="modified", instance_options=None)

    instance_options: more keyword arguments for each emitter's
    inofd.Instance (pair_timeout_ms, queue_max, ...).
    """

    def __init__(self, timeout=DEFAULT_OBSERVER_TIMEOUT,
                 generate_full_events=False, backend=None, rescan="modified",
                 instance_options=None):
        if rescan not in RESCAN_MODES:
            raise ValueError("rescan=%r: not one of %r" % (rescan, RESCAN_MODES))
        emitter = functools.partial(InofdEmitter, backend=backend,
                                    rescan=rescan,
                                    full_events=generate_full_events,
                                    instance_options=instance_options)
        super().__init__(emitter_class=emitter, timeout=timeout)
