# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd.watchdog.InofdObserver against the scenarios of watchdog's own
inotify observer tests (tests/test_emitter.py, test_inotify_c.py of
watchdog 2.2.1): create, modify, close, delete, move within, into and out
of the watch, recursive on and off, os.makedirs trees, shutil.rmtree,
bytes and relative paths, the watch's root deleted, a queue overflow
(RESCAN) in both mappings, schedule/unschedule; on both host backends."""
import os
import queue
import shutil
import threading
import time

import pytest
from watchdog.events import (
    DirCreatedEvent, DirDeletedEvent, DirModifiedEvent, DirMovedEvent,
    FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileModifiedEvent,
    FileMovedEvent, FileSystemEventHandler)
from watchdog.observers.api import EventQueue, ObservedWatch

from inofd.watchdog import InofdEmitter, InofdObserver, RescanEvent


class Harness:
    def __init__(self, root, backend):
        self.root = root
        self.backend = backend
        self.q = EventQueue()
        self.emitter = None

    def p(self, *parts):
        return os.path.join(self.root, *parts)

    def start(self, path=None, recursive=True, **kw):
        path = self.root if path is None else path
        self.emitter = InofdEmitter(self.q, ObservedWatch(path, recursive),
                                    timeout=0.1, backend=self.backend, **kw)
        self.emitter.start()

    def stop(self):
        if self.emitter is not None:
            self.emitter.stop()
            self.emitter.join(5)
            assert not self.emitter.is_alive()

    def events(self, settle=0.2, limit=10):
        """Events until none came for `settle` seconds."""
        out = []
        end = time.monotonic() + limit
        while time.monotonic() < end:
            try:
                ev, _watch = self.q.get(timeout=settle)
            except queue.Empty:
                break
            out.append(ev)
        return out


@pytest.fixture
def h(tmp, backend):
    harness = Harness(tmp, backend)
    yield harness
    harness.stop()


def subsequence(expected, got):
    """expected appear in got in this order (other events may be between)."""
    it = iter(got)
    for e in expected:
        for g in it:
            if g == e and type(g) is type(e):
                break
        else:
            pytest.fail("missing %r (in order) in\n  %s" %
                        (e, "\n  ".join(map(repr, got))))


def touch(path, data=None):
    with open(path, "w") as f:
        if data:
            f.write(data)


def test_create(h):
    h.start()
    touch(h.p("a"))
    subsequence([FileCreatedEvent(h.p("a")), DirModifiedEvent(h.p()),
                 FileClosedEvent(h.p("a"))], h.events())


def test_modify_and_attrib(h):
    touch(h.p("a"))
    h.start()
    with open(h.p("a"), "a") as f:
        f.write("x")
    os.chmod(h.p("a"), 0o600)
    got = h.events()
    subsequence([FileModifiedEvent(h.p("a")), FileClosedEvent(h.p("a"))], got)
    # write + chmod: two on inotify; fanotify may merge them into one
    # event of both bits (README, Backends), one FileModifiedEvent
    n = sum(isinstance(e, FileModifiedEvent) for e in got)
    assert n >= (2 if h.backend == "procfd" else 1)


def test_delete(h):
    touch(h.p("a"))
    os.mkdir(h.p("d"))
    h.start()
    os.unlink(h.p("a"))
    os.rmdir(h.p("d"))
    subsequence([FileDeletedEvent(h.p("a")), DirModifiedEvent(h.p()),
                 DirDeletedEvent(h.p("d"))], h.events())


def test_move_within(h):
    os.makedirs(h.p("dir1"))
    os.makedirs(h.p("dir2"))
    touch(h.p("dir1", "a"))
    h.start()
    os.rename(h.p("dir1", "a"), h.p("dir2", "b"))
    subsequence([FileMovedEvent(h.p("dir1", "a"), h.p("dir2", "b")),
                 DirModifiedEvent(h.p("dir1")), DirModifiedEvent(h.p("dir2"))],
                h.events())


def test_move_dir_within_gives_sub_moved(h):
    os.makedirs(h.p("a", "b"))
    touch(h.p("a", "b", "f"))
    h.start()
    os.rename(h.p("a"), h.p("z"))
    subsequence([DirMovedEvent(h.p("a"), h.p("z")),
                 DirMovedEvent(h.p("a", "b"), h.p("z", "b")),
                 FileMovedEvent(h.p("a", "b", "f"), h.p("z", "b", "f"))],
                h.events())


def test_move_to(h, tmp_path_factory):
    outside = os.path.realpath(str(tmp_path_factory.mktemp("outside")))
    os.makedirs(os.path.join(outside, "d", "e"))
    touch(os.path.join(outside, "d", "e", "f"))
    touch(os.path.join(outside, "g"))
    h.start()
    os.rename(os.path.join(outside, "g"), h.p("g"))
    os.rename(os.path.join(outside, "d"), h.p("d"))
    got = h.events()
    subsequence([FileCreatedEvent(h.p("g")), DirModifiedEvent(h.p()),
                 DirCreatedEvent(h.p("d"))], got)
    # what the directory holds, as watchdog's own observer reports it
    created = {e.src_path for e in got if e.event_type == "created"}
    assert {h.p("d", "e"), h.p("d", "e", "f")} <= created
    assert all(e.is_synthetic for e in got
               if e.event_type == "created" and e.src_path.startswith(h.p("d") + "/"))


def test_move_to_full(h, tmp_path_factory):
    outside = os.path.realpath(str(tmp_path_factory.mktemp("outside")))
    touch(os.path.join(outside, "g"))
    h.start(full_events=True)
    os.rename(os.path.join(outside, "g"), h.p("g"))
    subsequence([FileMovedEvent(None, h.p("g"))], h.events())


def test_move_from(h, tmp_path_factory):
    outside = os.path.realpath(str(tmp_path_factory.mktemp("outside")))
    os.makedirs(h.p("dir1"))
    touch(h.p("dir1", "a"))
    h.start()
    os.rename(h.p("dir1", "a"), os.path.join(outside, "a"))
    os.rename(h.p("dir1"), os.path.join(outside, "dir1"))
    subsequence([FileDeletedEvent(h.p("dir1", "a")), DirModifiedEvent(h.p("dir1")),
                 DirDeletedEvent(h.p("dir1"))], h.events())


def test_move_into_root_parent(tmp, backend):
    """mv root/pre/old.py root/..: the directory above the root is not
    watched by the user, so the file left the watch: deleted, as stock
    watchdog says (the library watches that directory only to follow
    the root)."""
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "pre"))
    touch(os.path.join(root, "pre", "old.py"))
    os.mkdir(os.path.join(root, "sub"))
    h = Harness(root, backend)
    h.start()
    try:
        os.rename(os.path.join(root, "pre", "old.py"),
                  os.path.join(tmp, "old.py"))
        os.rename(os.path.join(root, "sub"), os.path.join(tmp, "sub"))
        subsequence([FileDeletedEvent(h.p("pre", "old.py")),
                     DirDeletedEvent(h.p("sub"))], h.events())
    finally:
        h.stop()


def test_move_from_full(h, tmp_path_factory):
    outside = os.path.realpath(str(tmp_path_factory.mktemp("outside")))
    touch(h.p("a"))
    h.start(full_events=True)
    os.rename(h.p("a"), os.path.join(outside, "a"))
    subsequence([FileMovedEvent(h.p("a"), None)], h.events())


def test_separate_consecutive_moves(h):
    os.mkdir(h.p("dir1"))
    touch(h.p("a"))
    touch(h.p("b"))
    h.start()
    os.rename(h.p("dir1"), h.p("dir2"))
    os.rename(h.p("a"), h.p("c"))
    os.rename(h.p("b"), h.p("d"))
    subsequence([DirMovedEvent(h.p("dir1"), h.p("dir2")),
                 FileMovedEvent(h.p("a"), h.p("c")),
                 FileMovedEvent(h.p("b"), h.p("d"))], h.events())


def test_makedirs_tree_and_rmtree(h):
    h.start()
    os.makedirs(h.p("a", "b", "c", "d"))
    touch(h.p("a", "b", "c", "d", "f"))
    got = h.events()
    created = {e.src_path for e in got if e.event_type == "created"}
    assert created >= {h.p("a"), h.p("a", "b"), h.p("a", "b", "c"),
                       h.p("a", "b", "c", "d"), h.p("a", "b", "c", "d", "f")}
    shutil.rmtree(h.p("a"))
    got = h.events()
    deleted = [e.src_path for e in got if e.event_type == "deleted"]
    assert set(deleted) == {h.p("a"), h.p("a", "b"), h.p("a", "b", "c"),
                            h.p("a", "b", "c", "d"), h.p("a", "b", "c", "d", "f")}
    assert deleted[-1] == h.p("a")


def test_fast_subdirectory_creation_deletion(h):
    sub = h.p("dir_f")
    h.start()
    for _ in range(100):
        os.mkdir(sub)
        os.rmdir(sub)
    got = h.events()
    created = sum(isinstance(e, DirCreatedEvent) and e.src_path == sub for e in got)
    deleted = sum(isinstance(e, DirDeletedEvent) and e.src_path == sub for e in got)
    assert created == deleted == 100


def test_recursive_off(h):
    os.mkdir(h.p("sub"))
    h.start(recursive=False)
    touch(h.p("sub", "a"))
    touch(h.p("b"))
    got = h.events()
    paths = {e.src_path for e in got}
    assert h.p("sub", "a") not in paths
    subsequence([FileCreatedEvent(h.p("b"))], got)


def test_bytes_and_relative_paths(h, monkeypatch):
    os.mkdir(h.p("rel"))
    monkeypatch.chdir(h.root)
    h.start(path=b"rel")
    touch(h.p("rel", "x"))
    subsequence([FileCreatedEvent(b"rel/x"), DirModifiedEvent(b"rel")], h.events())


def test_delete_self(h):
    os.mkdir(h.p("top"))
    h.start(path=h.p("top"))
    os.rmdir(h.p("top"))
    subsequence([DirDeletedEvent(h.p("top"))], h.events())
    h.emitter.join(5)
    assert not h.emitter.is_alive()


def test_watch_file(h):
    touch(h.p("f"))
    h.start(path=h.p("f"), recursive=False)
    with open(h.p("f"), "a") as f:
        f.write("x")
    subsequence([FileModifiedEvent(h.p("f"))], h.events())


def test_nonexistent_raises(h):
    with pytest.raises(FileNotFoundError):
        h.start(path=h.p("nope"))
    h.emitter = None


@pytest.mark.parametrize("mode", ["modified", "snapshot"])
def test_overflow_rescan(tmp, backend, mode):
    """A loss (here the library's queue bound, 16) becomes a RescanEvent
    (a synthetic DirModifiedEvent) on the root; with rescan="snapshot" also the events
    of a snapshot diff (the files made during the loss)."""
    q = EventQueue()
    em = InofdEmitter(q, ObservedWatch(tmp, True), timeout=0.1, backend=backend,
                      rescan=mode, instance_options={"queue_max": 16})
    em.on_thread_start()               # no thread: nothing reads meanwhile
    try:
        for i in range(100):
            touch(os.path.join(tmp, "f%03d" % i))
        em.queue_events(0)
        em.queue_events(0.1)
        got = []
        while not q.empty():
            got.append(q.get()[0])
    finally:
        em.on_thread_stop()
    rescans = [e for e in got if isinstance(e, RescanEvent)]
    assert [(e.src_path, e.is_synthetic) for e in rescans] == [(tmp, True)], got
    assert isinstance(rescans[0], DirModifiedEvent)
    created = {e.src_path for e in got if isinstance(e, FileCreatedEvent)}
    if mode == "snapshot":
        assert created == {os.path.join(tmp, "f%03d" % i) for i in range(100)}
    else:
        assert len(created) < 100      # the loss is real


class Recorder(FileSystemEventHandler):
    def __init__(self):
        self.events = []
        self.lock = threading.Lock()

    def on_any_event(self, event):
        with self.lock:
            self.events.append(event)


def wait_for(pred, limit=5):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_observer_schedule_unschedule(tmp, backend):
    os.mkdir(os.path.join(tmp, "a"))
    os.mkdir(os.path.join(tmp, "b"))
    obs = InofdObserver(backend=backend)
    ra, rb = Recorder(), Recorder()
    wa = obs.schedule(ra, os.path.join(tmp, "a"), recursive=True)
    obs.schedule(rb, os.path.join(tmp, "b"), recursive=False)
    obs.start()
    try:
        touch(os.path.join(tmp, "a", "1"))
        touch(os.path.join(tmp, "b", "1"))
        assert wait_for(lambda: ra.events and rb.events)
        obs.unschedule(wa)
        n = len(ra.events)
        touch(os.path.join(tmp, "a", "2"))
        touch(os.path.join(tmp, "b", "2"))
        assert wait_for(lambda: any(e.src_path.endswith("b/2") for e in rb.events))
        time.sleep(0.1)
        assert len(ra.events) == n
        # scheduled after start: started at once
        rc = Recorder()
        obs.schedule(rc, tmp, recursive=True)
        touch(os.path.join(tmp, "a", "3"))
        assert wait_for(lambda: any(e.src_path.endswith("a/3") for e in rc.events))
    finally:
        obs.stop()
        obs.join(5)
    assert not obs.is_alive()


def test_one_line_swap_same_events(tmp, tmp_path_factory):
    """The stock InotifyObserver and InofdObserver, one handler, one
    script: the same set of (type, path) for a plain scenario."""
    from watchdog.observers.inotify import InotifyObserver

    def run(cls, root):
        os.makedirs(os.path.join(root, "d"))
        obs = cls()
        r = Recorder()
        obs.schedule(r, root, recursive=True)
        obs.start()
        try:
            touch(os.path.join(root, "d", "f"), "x")
            os.rename(os.path.join(root, "d", "f"), os.path.join(root, "g"))
            os.mkdir(os.path.join(root, "e"))
            os.unlink(os.path.join(root, "g"))
            wait_for(lambda: any(e.event_type == "deleted" for e in r.events))
            time.sleep(0.2)
        finally:
            obs.stop()
            obs.join(5)
        return {(e.event_type, os.path.relpath(e.src_path, root),
                 os.path.relpath(e.dest_path, root) if getattr(e, "dest_path", None) else None)
                for e in r.events}
    stock = run(InotifyObserver, os.path.join(tmp, "stock"))
    ours = run(InofdObserver, os.path.join(tmp, "ours"))
    assert ours == stock
