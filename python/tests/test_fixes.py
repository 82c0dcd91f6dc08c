# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bugs a new user met (each test failed before its fix)."""
import asyncio
import errno
import os
import pathlib
import threading
import time

import pytest

import inofd
import inofd.asyncio


def _wait_then_close(closer, backend, tmp):
    """An `async for` waits on an instance; closer(ino, loop) closes it."""
    async def main():
        ino = inofd.Instance(backend=backend)
        ino.watch_path(tmp, inofd.IN_CREATE)
        loop = asyncio.get_running_loop()
        closer(ino, loop)
        got = []
        async for ev in inofd.asyncio.events(ino):
            got.append(ev)
        return got

    # before the fix the iteration never ended: wait_for raised TimeoutError
    # (a bound on a hang only: a loaded machine may take seconds)
    got = asyncio.run(asyncio.wait_for(main(), 60))
    assert got == []


def test_async_for_ends_when_closed_by_a_task(tmp, backend):
    _wait_then_close(lambda ino, loop: loop.call_later(0.1, ino.close), backend, tmp)


def test_async_for_ends_when_closed_by_a_thread(tmp, backend):
    def closer(ino, loop):
        threading.Timer(0.1, ino.close).start()
    _wait_then_close(closer, backend, tmp)


class _ClosedUnder:
    """An instance that another thread closes during the call named
    `at`: the call raises ValueError, as Instance's do once closed."""

    def __init__(self, at, fd):
        self.at, self.fd, self.closed, self.hooks = at, fd, False, []

    def _call(self, name, value):
        if name == self.at:
            self.closed = True
            raise ValueError("I/O operation on closed instance")
        return value

    def read(self, timeout=None):
        return self._call("read", [])

    def timeout(self):
        return self._call("timeout", -1)

    def fileno(self):
        return self._call("fileno", self.fd)

    def _add_close_hook(self, hook):
        self._call("_add_close_hook", None)
        self.hooks.append(hook)

    def _remove_close_hook(self, hook):
        self.hooks.remove(hook)


@pytest.mark.parametrize("at", ["read", "timeout", "fileno", "_add_close_hook"])
def test_async_for_ends_when_closed_between_two_calls(at):
    """A thread's close() can come between the iterator's check and any
    of its calls: the iteration ends, it does not raise ValueError, and
    no reader is left on the loop (before the fix: ValueError)."""
    r, w = os.pipe()
    ino = _ClosedUnder(at, r)

    async def main():
        got = [ev async for ev in inofd.asyncio.events(ino)]
        loop = asyncio.get_running_loop()
        # a reader left on r would make remove_reader() say True
        return got, loop.remove_reader(r)
    try:
        assert asyncio.run(asyncio.wait_for(main(), 60)) == ([], False)
    finally:
        os.close(r)
        os.close(w)


def test_close_hooks_see_a_closed_instance(backend):
    """While close() runs its hooks (Python code: another thread may run
    then), the instance is closed: a hook registered then would never be
    called, so registering fails.  Before the fix an async for whose
    thread registered its hook just then waited forever (seen in
    python-check under load)."""
    seen = []
    ino = inofd.Instance(backend=backend)

    def first():
        seen.append(ino.closed)
        try:
            ino._add_close_hook(lambda: seen.append("late hook ran"))
        except ValueError:
            seen.append("refused")
    ino._add_close_hook(first)
    ino.close()
    assert seen == [True, "refused"]


def test_async_events_after_a_wait_still_come(tmp, backend):
    """The close hook is removed after each wait: events keep coming."""
    async def main():
        with inofd.Instance(backend=backend) as ino:
            ino.watch_path(tmp, inofd.IN_CREATE)
            loop = asyncio.get_running_loop()
            for i in range(3):
                loop.call_later(0.05 * (i + 1), open(os.path.join(tmp, "f%d" % i), "w").close)
            names = []
            async for ev in inofd.asyncio.events(ino):
                names.append(ev.fsname)
                if len(names) == 3:
                    break
            return names
    assert sorted(asyncio.run(asyncio.wait_for(main(), 5))) == ["f0", "f1", "f2"]


def test_observer_schedules_a_file_recursively(tmp, backend):
    """watchdog watches a file given with recursive=True; so does InofdObserver."""
    pytest.importorskip("watchdog")
    from watchdog.events import FileSystemEventHandler
    from inofd.watchdog import InofdObserver

    path = os.path.join(tmp, "file.txt")
    with open(path, "w") as f:
        f.write("a")
    seen = []
    done = threading.Event()

    class H(FileSystemEventHandler):
        def on_modified(self, event):
            seen.append(event)
            done.set()

    obs = InofdObserver(backend=backend)
    obs.schedule(H(), path, recursive=True)     # NotADirectoryError before
    obs.start()
    try:
        time.sleep(0.1)
        with open(path, "a") as f:
            f.write("b")
        assert done.wait(5)
    finally:
        obs.stop()
        obs.join()
    assert any(e.src_path == path and not e.is_directory for e in seen)


@pytest.mark.parametrize("make", [str, os.fsencode, pathlib.Path],
                         ids=["str", "bytes", "PathLike"])
def test_oserror_filename_is_what_the_caller_passed(tmp, make):
    name = make(os.path.join(tmp, "nope"))
    with inofd.Instance() as ino:
        for call in (lambda: ino.watch_path(name, inofd.IN_CREATE),
                     lambda: ino.watch_at(None, name, inofd.IN_CREATE),
                     lambda: ino.watch_tree(name, inofd.IN_CREATE)):
            with pytest.raises(FileNotFoundError) as info:
                call()
            # bytes for a str before the fix
            assert info.value.filename == name
            assert type(info.value.filename) is type(name)


def test_einval_messages_name_the_cause(tmp):
    msgs = []
    with pytest.raises(OSError) as info:
        inofd.Instance(pair_timeout_ms=10**6)
    msgs.append(info.value)
    with inofd.Instance() as ino:
        with pytest.raises(OSError) as info:
            ino.unwatch(12345)
        msgs.append(info.value)
        with pytest.raises(OSError) as info:
            ino.watch_path(tmp, 0)
        msgs.append(info.value)
    assert [e.errno for e in msgs] == [errno.EINVAL] * 3
    texts = [e.strerror for e in msgs]
    assert len(set(texts)) == 3                     # one text before the fix
    assert "pair_timeout_ms" in texts[0] and "60000" in texts[0]
    assert "unwatch(12345)" in texts[1] and "no such watch" in texts[1]
    assert texts[2].startswith("mask:") and "no event bit" in texts[2]
    assert not any("anonymous inode" in t for t in texts)


def test_kernel_backend_on_a_stock_kernel_says_why():
    try:
        inofd.Instance(backend="kernel").close()
        pytest.skip("this kernel has INOTIFY_IOC_WATCH")
    except OSError as e:
        assert e.errno == errno.ENOSYS
        assert "INOTIFY_IOC_WATCH" in e.strerror
        assert "/proc is not mounted" not in e.strerror     # said so before


def test_import_without_the_c_part_says_so(tmp_path):
    """The pure-Python files without a module built for this Python: the
    error names the missing build, not a circular import (pyenv's 3.12
    with PYTHONPATH=python said "partially initialized module")."""
    import shutil
    import subprocess
    import sys
    src = os.path.dirname(inofd.__file__)
    dst = tmp_path / "inofd"
    dst.mkdir()
    for n in os.listdir(src):
        if n.endswith(".py"):
            shutil.copy(os.path.join(src, n), str(dst / n))
    r = subprocess.run([sys.executable, "-c", "import inofd"], cwd=str(tmp_path),
                       env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                       stderr=subprocess.PIPE, text=True)
    assert r.returncode != 0
    assert "not built for this Python" in r.stderr, r.stderr
    assert "circular" not in r.stderr
