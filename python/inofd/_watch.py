# SPDX-License-Identifier: LGPL-2.1-or-later
"""The high-level watch loop shared by inofd.watch() and inofd.watchfiles.

One Instance watches every path given (a directory recursively with
watch_tree, a file as it is); its events become Change tuples (str paths,
moves paired by the library) gathered into batches with watchfiles'
debounce: a batch is handed out once no event came for `step` ms, or
`debounce` ms after its first change, whichever is first.
"""
from __future__ import annotations

import asyncio
import enum
import os
import stat
import time
from typing import (Any, AsyncIterator, Dict, Iterable, Iterator, List,
                    NamedTuple, Optional, Sequence, Tuple, Union)

from . import _inofd

StrPath = Union[str, "os.PathLike[str]"]
Entry = Tuple[bool, int, int, int]      # is_dir, st_ino, st_size, st_mtime_ns

MASK = (_inofd.IN_CREATE | _inofd.IN_DELETE | _inofd.IN_MODIFY |
        _inofd.IN_ATTRIB | _inofd.IN_MOVE | _inofd.IN_DELETE_SELF |
        _inofd.IN_MOVE_SELF)


class ChangeKind(enum.Enum):
    """What happened to Change.path."""
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    MOVED = "moved"         # from Change.old_path to Change.path (one rename)
    RESCAN = "rescan"       # events below path were lost: look again

    def __repr__(self) -> str:
        return "ChangeKind.%s" % self.name


class Change(NamedTuple):
    """One change of a batch of inofd.watch()."""
    kind: ChangeKind
    path: str
    old_path: Optional[str] = None      # MOVED: where it was
    is_dir: bool = False


class Watcher:
    """An Instance watching paths, turning its events into Changes."""

    def __init__(self, paths: Sequence[StrPath], recursive: bool = True,
                 exclude: Iterable[str] = (), backend: Optional[str] = None,
                 **options: Any) -> None:
        if not paths:
            raise ValueError("no path to watch")
        self.ino = _inofd.Instance(backend=backend, **options)
        self.roots: Dict[int, str] = {}
        try:
            for p in paths:
                self._add(os.fspath(p), recursive, list(exclude))
        except BaseException:
            self.ino.close()
            raise

    def _add(self, path: str, recursive: bool, exclude: List[str]) -> None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        wd = -1
        if recursive:
            try:
                wd = self.ino.watch_tree(path, MASK, exclude=exclude)
            except NotADirectoryError:
                pass                    # a file: watched as it is
        if wd < 0:
            wd = self.ino.watch_path(path, MASK)
        where = self.ino.wd_path(wd)
        self.roots[wd] = os.fsdecode(where) if where else os.path.abspath(path)

    def close(self) -> None:
        self.ino.close()

    def changes(self, evs: Iterable[_inofd.Event]) -> List[Change]:
        out: List[Change] = []
        for ev in evs:
            c = self._change(ev)
            if c is not None:
                out.append(c)
        return out

    def _change(self, ev: _inofd.Event) -> Optional[Change]:
        t, m = ev.type, ev.mask
        isdir = bool(m & _inofd.IN_ISDIR)
        if t == _inofd.EV_RESCAN:
            if ev.path is not None:
                where = os.fsdecode(ev.path)
            elif ev.wd in self.roots:
                where = self.roots[ev.wd]
            else:                       # every watch
                return Change(ChangeKind.RESCAN, "", None, True)
            return Change(ChangeKind.RESCAN, where, None, True)
        if t == _inofd.EV_ERROR:
            if ev.flags & _inofd.EVF_LOST and ev.wd in self.roots:
                return Change(ChangeKind.DELETED, self.roots[ev.wd], None, True)
            if ev.path is None:
                return None
            return Change(ChangeKind.RESCAN, os.fsdecode(ev.path), None, True)
        if ev.path is None:
            return None                 # inside a directory whose rename is pending
        p = os.fsdecode(ev.path)
        if t == _inofd.EV_RENAME:
            if ev.from_path is None:
                return Change(ChangeKind.ADDED, p, None, isdir)
            return Change(ChangeKind.MOVED, p, os.fsdecode(ev.from_path), isdir)
        if t == _inofd.EV_MOVE_OUT:
            return Change(ChangeKind.DELETED, p, None, isdir)
        if t == _inofd.EV_MOVE_IN:
            return Change(ChangeKind.ADDED, p, None, isdir)
        if m & _inofd.IN_IGNORED:
            return None
        if m & _inofd.IN_CREATE:
            return Change(ChangeKind.ADDED, p, None, isdir)
        if m & _inofd.IN_DELETE:
            return Change(ChangeKind.DELETED, p, None, isdir)
        if m & (_inofd.IN_DELETE_SELF | _inofd.IN_MOVE_SELF):
            if ev.flags & _inofd.EVF_MEMBER or p not in self.roots.values():
                return None             # a member: its parent reports it
            return Change(ChangeKind.DELETED, p, None, isdir)
        if m & (_inofd.IN_MODIFY | _inofd.IN_ATTRIB):
            return Change(ChangeKind.MODIFIED, p, None, isdir)
        return None

    # -- batches (watchfiles' debounce)
    def collect(self, debounce: int, step: int, timeout: int,
                stop_event: Optional[Any]) -> Union[List[Change], str]:
        """A batch, or "stop" (stop_event set) or "timeout" (nothing in
        timeout ms; 0: no limit)."""
        b = _Batch(debounce, step, timeout)
        while True:
            if stop_event is not None and stop_event.is_set():
                return "stop"
            evs = self.ino.read(timeout=b.wait())
            r = b.add(self, evs)
            if r is not None:
                return r

    async def acollect(self, debounce: int, step: int, timeout: int,
                       stop_event: Optional[Any]) -> Union[List[Change], str]:
        """collect() on the running loop (add_reader, never a thread)."""
        b = _Batch(debounce, step, timeout)
        loop = asyncio.get_running_loop()
        while True:
            if stop_event is not None and stop_event.is_set():
                return "stop"
            evs = self.ino.read(timeout=0)
            if not evs:
                await self._readable(loop, b.wait())
                if stop_event is not None and stop_event.is_set():
                    return "stop"
                evs = self.ino.read(timeout=0)
            r = b.add(self, evs)
            if r is not None:
                return r

    async def _readable(self, loop: asyncio.AbstractEventLoop, wait: float) -> None:
        t = self.ino.timeout()          # a rename half waiting for its pair
        if t >= 0:
            wait = min(wait, t / 1000.0)
        fut = loop.create_future()
        fd = self.ino.fileno()

        def wake() -> None:
            if not fut.done():
                fut.set_result(None)
        loop.add_reader(fd, wake)
        handle = loop.call_later(wait, wake)
        try:
            await fut
        finally:
            loop.remove_reader(fd)
            handle.cancel()


class _Batch:
    """The debounce of one batch: watchfiles' rule, in ms."""

    def __init__(self, debounce: int, step: int, timeout: int) -> None:
        self.debounce = debounce / 1000.0
        self.step = step / 1000.0
        self.timeout = timeout / 1000.0
        self.start = time.monotonic()
        self.first = 0.0                # time of the batch's first change
        self.last = 0.0                 # time of the last event
        self.changes: List[Change] = []

    def wait(self) -> float:
        """How long the next read may wait."""
        now = time.monotonic()
        if not self.changes:
            return self.step if not self.timeout else \
                max(0.0, min(self.step, self.start + self.timeout - now))
        return max(0.0, min(self.last + self.step, self.first + self.debounce) - now)

    def add(self, w: Watcher, evs: List[_inofd.Event]) -> Union[List[Change], str, None]:
        now = time.monotonic()
        if evs:
            self.last = now
            new = w.changes(evs)
            if new and not self.changes:
                self.first = now
            self.changes.extend(new)
        if self.changes:
            if now - self.last >= self.step or now - self.first >= self.debounce:
                return self.changes
        elif self.timeout and now - self.start >= self.timeout:
            return "timeout"
        return None


def walk(root: str) -> Dict[str, Entry]:
    """path -> (is_dir, ino, size, mtime_ns) of root and everything below."""
    snap: Dict[str, Entry] = {}
    try:
        st = os.lstat(root)
    except OSError:
        return snap
    snap[root] = (os.path.isdir(root), st.st_ino, st.st_size, st.st_mtime_ns)
    if not snap[root][0]:
        return snap
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            it = os.scandir(d)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                isdir = e.is_dir(follow_symlinks=False)
                snap[e.path] = (isdir, st.st_ino, st.st_size, st.st_mtime_ns)
                if isdir:
                    stack.append(e.path)
    return snap


class Snapshot:
    """What the consumer was told, to answer a RESCAN with changes: a walk
    at start, then kept from the changes handed out (never from what is
    on disk beyond them), compared with a new walk of the subtree a
    RESCAN names.  A file made in a new directory whose event a loss
    took is then in the re-walk and not in the snapshot: reported."""

    def __init__(self, roots: Iterable[str]) -> None:
        self.snap: Dict[str, Entry] = {}
        for r in roots:
            self.snap.update(walk(r))

    def _below(self, path: str) -> List[str]:
        pre = path.rstrip("/") + "/"
        return [k for k in self.snap if k == path or k.startswith(pre)]

    def refresh(self, path: str) -> None:
        """After a change of path: its own entry as it is now.  Not what a
        new directory holds: the library reports that (a directory made
        or moved in is listed after it is watched), each entry a change
        of its own; taking it from the disk here would hide from the
        next RESCAN a file whose event was lost (make peers, 2026-12-07:
        8 probes in directories a git checkout made again)."""
        try:
            st = os.lstat(path)
        except OSError:
            for k in self._below(path):
                del self.snap[k]
            return
        old = self.snap.get(path)
        isdir = stat.S_ISDIR(st.st_mode)
        if old is not None and (old[1] != st.st_ino or old[0] != isdir):
            for k in self._below(path):
                del self.snap[k]
        self.snap[path] = (isdir, st.st_ino, st.st_size, st.st_mtime_ns)

    def move(self, old: str, new: str) -> None:
        """A rename handed out: what was known at and below old is at and
        below new (replacing what was known there)."""
        moved = {new + k[len(old):]: self.snap.pop(k) for k in self._below(old)}
        for k in self._below(new):
            del self.snap[k]
        self.snap.update(moved)

    def rescan(self, where: str) -> List[Change]:
        """The changes below where since the snapshot; the snapshot is then
        the new walk."""
        old = {k: self.snap.pop(k) for k in self._below(where)}
        new = walk(where)
        self.snap.update(new)
        out = [Change(ChangeKind.DELETED, k, None, v[0])
               for k, v in old.items() if k not in new]
        for k, v in new.items():
            if k not in old:
                out.append(Change(ChangeKind.ADDED, k, None, v[0]))
            elif old[k] != v and not (v[0] and old[k][0] and old[k][1] == v[1]):
                out.append(Change(ChangeKind.MODIFIED, k, None, v[0]))
        return out


def watch(*paths: StrPath, recursive: bool = True, exclude: Iterable[str] = (),
          debounce: int = 1600, step: int = 50, stop_event: Optional[Any] = None,
          timeout: int = 0, backend: Optional[str] = None,
          pair_timeout_ms: int = 0, queue_max: int = 0) -> Iterator[List[Change]]:
    """Batches of changes below paths (directories, recursive unless
    recursive=False; files are watched as they are).

    Each batch is a list of Change(kind, path, old_path, is_dir) in the
    order they happened, with str paths (absolute): ADDED, MODIFIED,
    DELETED, MOVED (one rename, paired by the library: old_path -> path;
    a move out of the watched paths is DELETED, a move in ADDED) and
    RESCAN (events below path were lost, a queue overflowed: look again;
    path "" means every watched path).  A directory made or moved in is
    watched before it is listed, and what it holds comes as ADDED.

    exclude: fnmatch patterns of directory names not watched (".git").
    debounce, step (ms): as watchfiles, a batch is handed out when no
    event came for step ms, or debounce ms after its first change.
    stop_event: anything with is_set(), checked every step.  timeout (ms,
    0: none): an empty batch when nothing happened in that time.
    backend, pair_timeout_ms, queue_max: those of inofd.Instance.
    """
    w = Watcher(paths, recursive, exclude, backend,
                pair_timeout_ms=pair_timeout_ms, queue_max=queue_max)
    try:
        while True:
            r = w.collect(debounce, step, timeout, stop_event)
            if r == "stop":
                return
            yield [] if isinstance(r, str) else r
    finally:
        w.close()


async def awatch(*paths: StrPath, recursive: bool = True, exclude: Iterable[str] = (),
                 debounce: int = 1600, step: int = 50, stop_event: Optional[Any] = None,
                 timeout: int = 0, backend: Optional[str] = None,
                 pair_timeout_ms: int = 0,
                 queue_max: int = 0) -> AsyncIterator[List[Change]]:
    """watch() on the running asyncio loop: the instance's descriptor is
    waited on with loop.add_reader (no thread); same arguments."""
    w = Watcher(paths, recursive, exclude, backend,
                pair_timeout_ms=pair_timeout_ms, queue_max=queue_max)
    try:
        while True:
            r = await w.acollect(debounce, step, timeout, stop_event)
            if r == "stop":
                return
            yield [] if isinstance(r, str) else r
    finally:
        w.close()
