# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd.watchfiles: watchfiles' main API on libinofd.

Code written for watchfiles runs after one changed import:

    from inofd.watchfiles import watch, awatch, Change, DefaultFilter

watch() and awatch() take watchfiles' arguments (names, defaults, types)
and yield set[tuple[Change, str]] after watchfiles' debounce (a set once
no event came for `step` ms, or `debounce` ms after its first change).
Paths are absolute str.  What differs, from libinofd:

* a rename is paired by the library and given as watchfiles gives one:
  (deleted, old) and (added, new); a directory made or moved in is watched
  before it is listed, so what it holds comes as added;
* a RESCAN (events were lost: the kernel's queue overflowed) is answered
  with the changes a re-walk of the subtree finds against a snapshot
  kept since the start (one walk of the watched paths when watch()
  starts, a stat per changed path after);
* force_polling, poll_delay_ms, rust_timeout's 0 and debug are accepted
  for compatibility; there is no polling (libinofd needs none), debug
  logs each set at DEBUG level on logger "inofd.watchfiles".

A DefaultFilter's ignore_dirs are also not watched at all (passed to the
library as exclude patterns), which saves the watches and their events.
"""
from __future__ import annotations

import importlib
import json
import logging
import multiprocessing
import os
import re
import shlex
import signal
import subprocess
import time
import warnings
from enum import IntEnum
from pathlib import Path
from typing import (TYPE_CHECKING, Any, AsyncGenerator, Callable, Dict, Generator,
                    List, Optional, Sequence, Set, Tuple, Union)

if TYPE_CHECKING:
    from typing import Literal

from ._watch import Change as _NC
from ._watch import ChangeKind as _K
from ._watch import Snapshot, Watcher

if TYPE_CHECKING:
    from typing import Protocol

    class AbstractEvent(Protocol):
        def is_set(self) -> bool: ...

__all__ = ["watch", "awatch", "Change", "FileChange", "BaseFilter",
           "DefaultFilter", "PythonFilter", "run_process", "detect_target_type"]

logger = logging.getLogger("inofd.watchfiles")


class Change(IntEnum):
    """The kind of a change (watchfiles.Change)."""
    added = 1
    modified = 2
    deleted = 3

    def raw_str(self) -> str:
        return self.name


FileChange = Tuple[Change, str]


class BaseFilter:
    """A callable filter (watchfiles.BaseFilter): ignore_dirs (names),
    ignore_entity_patterns (regexes on the last part) and ignore_paths
    (prefixes).  Subclass and set those class attributes."""

    __slots__ = ("_ignore_dirs", "_ignore_entity_regexes", "_ignore_paths")
    ignore_dirs: Sequence[str] = ()
    ignore_entity_patterns: Sequence[str] = ()
    ignore_paths: Sequence[Union[str, Path]] = ()

    def __init__(self) -> None:
        self._ignore_dirs = frozenset(self.ignore_dirs)
        self._ignore_entity_regexes = tuple(re.compile(p) for p in self.ignore_entity_patterns)
        self._ignore_paths = tuple(str(p) for p in self.ignore_paths)

    def __call__(self, change: Change, path: str) -> bool:
        """True: keep this change."""
        parts = path.lstrip(os.sep).split(os.sep)
        if not self._ignore_dirs.isdisjoint(parts):
            return False
        name = parts[-1]
        if any(r.search(name) for r in self._ignore_entity_regexes):
            return False
        return not (self._ignore_paths and path.startswith(self._ignore_paths))

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, ", ".join(
            "%s=%r" % (k, getattr(self, k, None)) for k in self.__slots__))


class DefaultFilter(BaseFilter):
    """Ignores what a project tree holds and nobody edits (watchfiles'
    list: VCS and tool directories, compiled Python, editor temp files)."""

    ignore_dirs: Sequence[str] = (
        "__pycache__", ".git", ".hg", ".svn", ".tox", ".venv", "site-packages",
        ".idea", "node_modules")
    ignore_entity_patterns: Sequence[str] = (
        r"\.py[cod]$", r"\.___jb_...___$", r"\.sw.$", "~$", r"^\.\#",
        r"^\.DS_Store$", r"^flycheck_")

    def __init__(self, *, ignore_dirs: Optional[Sequence[str]] = None,
                 ignore_entity_patterns: Optional[Sequence[str]] = None,
                 ignore_paths: Optional[Sequence[Union[str, Path]]] = None) -> None:
        if ignore_dirs is not None:
            self.ignore_dirs = ignore_dirs
        if ignore_entity_patterns is not None:
            self.ignore_entity_patterns = ignore_entity_patterns
        if ignore_paths is not None:
            self.ignore_paths = ignore_paths
        super().__init__()


class PythonFilter(DefaultFilter):
    """DefaultFilter, and only files ending .py, .pyx, .pyd (and
    extra_extensions)."""

    def __init__(self, *, ignore_paths: Optional[Sequence[Union[str, Path]]] = None,
                 extra_extensions: Sequence[str] = ()) -> None:
        self.extensions = (".py", ".pyx", ".pyd") + tuple(extra_extensions)
        super().__init__(ignore_paths=ignore_paths)

    def __call__(self, change: Change, path: str) -> bool:
        return path.endswith(self.extensions) and super().__call__(change, path)


def _exclude(watch_filter: Optional[Callable[[Change, str], bool]]) -> List[str]:
    """Directory names the filter drops whatever happens in them."""
    if not isinstance(watch_filter, BaseFilter):
        return []
    return [d for d in watch_filter._ignore_dirs
            if d and "/" not in d and not any(c in d for c in "*?[")]


def _sets(w: Watcher, snap: Snapshot, batch: List[_NC],
          watch_filter: Optional[Callable[[Change, str], bool]]) -> Set[FileChange]:
    out: Set[FileChange] = set()
    for c in batch:
        if c.kind is _K.RESCAN:
            for where in ([c.path] if c.path else list(w.roots.values())):
                for r in snap.rescan(where):
                    out.add((_CHANGE[r.kind], r.path))
            continue
        if c.kind is _K.MOVED:
            assert c.old_path is not None
            out.add((Change.deleted, c.old_path))
            out.add((Change.added, c.path))
            snap.move(c.old_path, c.path)
        else:
            out.add((_CHANGE[c.kind], c.path))
        snap.refresh(c.path)        # in order: a later move takes it along
    if watch_filter is not None:
        out = {c for c in out if watch_filter(c[0], c[1])}
    if out:
        logger.debug("%d change%s: %s", len(out), "" if len(out) == 1 else "s", out)
    return out


_CHANGE = {_K.ADDED: Change.added, _K.MODIFIED: Change.modified,
           _K.DELETED: Change.deleted}


def _start(paths: Sequence[Union[Path, str]], recursive: bool,
           watch_filter: Optional[Callable[[Change, str], bool]]) -> Tuple[Watcher, Snapshot]:
    w = Watcher(paths, recursive, _exclude(watch_filter))
    try:
        return w, Snapshot(w.roots.values())
    except BaseException:
        w.close()
        raise


def watch(
    *paths: Union[Path, str],
    watch_filter: Optional[Callable[[Change, str], bool]] = DefaultFilter(),
    debounce: int = 1_600,
    step: int = 50,
    stop_event: Optional[AbstractEvent] = None,
    rust_timeout: int = 5_000,
    yield_on_timeout: bool = False,
    debug: Optional[bool] = None,
    raise_interrupt: bool = True,
    force_polling: Optional[bool] = None,
    poll_delay_ms: int = 300,
    recursive: bool = True,
    ignore_permission_denied: Optional[bool] = None,
) -> Generator[Set[FileChange], None, None]:
    """Yield a set of (Change, path) whenever files below paths change
    (watchfiles.watch).  rust_timeout (ms, 0: none): with
    yield_on_timeout, an empty set when nothing changed in that time.
    raise_interrupt=False: Ctrl-C ends the iteration instead of raising.
    stop_event: anything with is_set(), looked at every step ms."""
    w, snap = _start(paths, recursive, watch_filter)
    yield from _sets_of(w, snap, watch_filter, debounce, step, rust_timeout,
                        stop_event, yield_on_timeout, raise_interrupt)


def _sets_of(w: Watcher, snap: Snapshot,
             watch_filter: Optional[Callable[[Change, str], bool]],
             debounce: int, step: int, rust_timeout: int,
             stop_event: Optional[AbstractEvent], yield_on_timeout: bool,
             raise_interrupt: bool) -> Generator[Set[FileChange], None, None]:
    """watch()'s loop on a watch already made (_start()); closes it."""
    try:
        while True:
            try:
                r = w.collect(debounce, step, rust_timeout, stop_event)
            except KeyboardInterrupt:
                if raise_interrupt:
                    raise
                logger.warning("KeyboardInterrupt caught, stopping watch")
                return
            if r == "stop":
                return
            if isinstance(r, str):
                if yield_on_timeout:
                    yield set()
                continue
            changes = _sets(w, snap, r, watch_filter)
            if changes:
                yield changes
    finally:
        w.close()


async def awatch(
    *paths: Union[Path, str],
    watch_filter: Optional[Callable[[Change, str], bool]] = DefaultFilter(),
    debounce: int = 1_600,
    step: int = 50,
    stop_event: Optional[AbstractEvent] = None,
    rust_timeout: Optional[int] = None,
    yield_on_timeout: bool = False,
    debug: Optional[bool] = None,
    raise_interrupt: Optional[bool] = None,
    force_polling: Optional[bool] = None,
    poll_delay_ms: int = 300,
    recursive: bool = True,
    ignore_permission_denied: Optional[bool] = None,
) -> AsyncGenerator[Set[FileChange], None]:
    """watch() on the running asyncio loop (watchfiles.awatch); the
    descriptor is waited on with loop.add_reader, no thread.  rust_timeout
    None is 5000.  raise_interrupt is deprecated there as in watchfiles
    (Ctrl-C cancels the task)."""
    if raise_interrupt is not None:
        warnings.warn("raise_interrupt is deprecated: KeyboardInterrupt cancels "
                      "the task and is raised by asyncio.run", DeprecationWarning)
    timeout = 5_000 if rust_timeout is None else rust_timeout
    w, snap = _start(paths, recursive, watch_filter)
    try:
        while True:
            r = await w.acollect(debounce, step, timeout, stop_event)
            if r == "stop":
                return
            if isinstance(r, str):
                if yield_on_timeout:
                    yield set()
                continue
            changes = _sets(w, snap, r, watch_filter)
            if changes:
                yield changes
    finally:
        w.close()


# ---------------------------------------------------------------- run_process

Target = Union[str, List[str], Callable[..., Any]]


def detect_target_type(target: Target) -> Literal["function", "command"]:
    """"function" for a callable or a dotted name (pkg.mod.func), else
    "command" (a command line, a list of arguments, a .py or .sh file)."""
    if callable(target):
        return "function"
    if isinstance(target, list):
        if len(target) != 1:
            return "command"
        target = target[0]
    assert isinstance(target, str)
    if target.endswith((".py", ".sh")) or not re.fullmatch(r"\w+(\.\w+)+", target):
        return "command"
    return "function"


def _call_dotted(name: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> None:
    module, _, attr = name.strip().rpartition(".")
    getattr(importlib.import_module(module), attr)(*args, **kwargs)


class _Child:
    """The target, running: a spawned process (function) or a command."""

    def __init__(self, target: Target, kind: str, args: Tuple[Any, ...],
                 kwargs: Optional[Dict[str, Any]],
                 changes: Optional[Set[FileChange]]) -> None:
        os.environ["WATCHFILES_CHANGES"] = json.dumps(
            [[c.raw_str(), p] for c, p in sorted(changes or ())])
        self.process: Optional[multiprocessing.process.BaseProcess] = None
        self.popen: Optional["subprocess.Popen[bytes]"] = None
        if kind == "function":
            if isinstance(target, list):
                target = target[0]
            if isinstance(target, str):
                fn: Callable[..., Any] = _call_dotted
                args, kwargs = (target, args, kwargs or {}), {}
            else:
                fn = target
            self.process = multiprocessing.get_context("spawn").Process(
                target=fn, args=args, kwargs=kwargs or {})
            self.process.start()
            self.pid = self.process.pid
        else:
            assert not callable(target)
            argv = shlex.split(target) if isinstance(target, str) else list(target)
            self.popen = subprocess.Popen(argv)
            self.pid = self.popen.pid

    def _wait(self, timeout: float) -> Optional[int]:
        if self.popen is not None:
            try:
                return self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
        assert self.process is not None
        self.process.join(timeout)
        return self.process.exitcode

    def stop(self, sigint_timeout: float, sigkill_timeout: float) -> None:
        """SIGINT, then SIGKILL after sigint_timeout seconds."""
        os.environ.pop("WATCHFILES_CHANGES", None)
        pid = self.pid
        if pid is None or self._wait(0) is not None:
            return
        os.kill(pid, signal.SIGINT)
        if self._wait(sigint_timeout) is None:
            logger.warning("process %d did not end on SIGINT, sending SIGKILL", pid)
            os.kill(pid, signal.SIGKILL)
            self._wait(sigkill_timeout)


def run_process(
    *paths: Union[Path, str],
    target: Target,
    args: Tuple[Any, ...] = (),
    kwargs: Optional[Dict[str, Any]] = None,
    target_type: Literal["function", "command", "auto"] = "auto",
    callback: Optional[Callable[[Set[FileChange]], None]] = None,
    watch_filter: Optional[Callable[[Change, str], bool]] = PythonFilter(),
    grace_period: float = 0,
    debounce: int = 1_600,
    step: int = 50,
    debug: Optional[bool] = None,
    sigint_timeout: int = 5,
    sigkill_timeout: int = 1,
    recursive: bool = True,
    ignore_permission_denied: bool = False,
) -> int:
    """Run target (a function, in a spawned process, or a command) and
    restart it whenever files below paths change (watchfiles.run_process);
    returns how often it was restarted, when Ctrl-C ends the watch.
    callback(changes) is called before each restart; the target finds the
    changes that restarted it in $WATCHFILES_CHANGES (JSON)."""
    kind = detect_target_type(target) if target_type == "auto" else target_type
    # the watch is made before the target starts: what the target sees
    # change from its first line on restarts it (watchfiles starts the
    # target first, and a change made while its watcher starts is lost)
    w, snap = _start(paths, recursive, watch_filter)
    try:
        child = _Child(target, kind, args, kwargs, None)
    except BaseException:
        w.close()
        raise
    reloads = 0
    try:
        if grace_period:
            time.sleep(grace_period)
        for changes in _sets_of(w, snap, watch_filter, debounce, step, 5_000,
                                None, False, False):
            if callback is not None:
                callback(changes)
            child.stop(sigint_timeout, sigkill_timeout)
            child = _Child(target, kind, args, kwargs, changes)
            reloads += 1
    finally:
        child.stop(sigint_timeout, sigkill_timeout)
    return reloads
