# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd.Instance and inofd.Event: the API, its errors, data ownership."""
import asyncio
import errno
import gc
import os
import pathlib
import selectors
import threading
import time
import weakref

import pytest

import inofd
import inofd.asyncio
from conftest import drain

ALL = inofd.IN_ALL_EVENTS


def test_constants_and_enums():
    assert inofd.IN_CREATE == 0x100
    assert inofd.EventType.RESCAN == inofd.EV_RESCAN
    assert inofd.Backend.FANOTIFY == inofd.BACKEND_FANOTIFY
    assert inofd.EVF_SYNTHETIC == 1
    assert inofd.library_version() == (inofd.VERSION_MAJOR, inofd.VERSION_MINOR)
    assert "no such file" in inofd.strerror(-errno.ENOENT).lower()


def test_basic_events(tmp, backend):
    with inofd.Instance(backend=backend) as ino:
        assert ino.backend == inofd.Backend[backend.upper()]
        wd = ino.watch_path(tmp, ALL, data="root")
        assert ino.watch_count == 1
        assert ino.wd_path(wd) == os.fsencode(tmp)
        assert ino.wd_data(wd) == "root"
        with open(os.path.join(tmp, "f"), "w") as f:
            f.write("x")
        os.rename(os.path.join(tmp, "f"), os.path.join(tmp, "g"))
        evs = drain(ino)
        creates = [e for e in evs if e.mask & inofd.IN_CREATE]
        assert creates and creates[0].name == b"f"
        assert creates[0].path == os.fsencode(tmp) + b"/f"
        assert creates[0].fspath == tmp + "/f" and creates[0].fsname == "f"
        assert creates[0].data == "root" and creates[0].wd == wd
        ren = [e for e in evs if e.type == inofd.EV_RENAME]
        assert len(ren) == 1
        r = ren[0]
        assert (r.from_name, r.name, r.from_wd, r.from_data) == (b"f", b"g", wd, "root")
        assert r.fsfrom_path == tmp + "/f" and not r.is_dir
        seqs = [e.seq for e in evs]
        assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))
        assert "seq=" in repr(r)
        with pytest.raises(AttributeError):
            r.seq = 5                  # immutable
        with pytest.raises(AttributeError):
            r.anything = 1


def test_paths_str_bytes_pathlike_and_non_utf8(tmp, backend):
    with inofd.Instance(backend=backend) as ino:
        ino.watch_path(pathlib.Path(tmp), inofd.IN_CREATE)
        ino.watch_path(os.fsencode(tmp), inofd.IN_CREATE)
        bad = os.fsencode(tmp) + b"/caf\xe9"       # not UTF-8
        open(bad, "w").close()
        evs = [e for e in drain(ino) if e.mask & inofd.IN_CREATE]
        assert len(evs) == 2
        assert evs[0].name == b"caf\xe9"
        assert evs[0].fsname == os.fsdecode(b"caf\xe9")
        assert os.path.exists(evs[0].fspath)


def test_watch_fd_and_at(tmp, backend):
    with inofd.Instance(backend=backend) as ino:
        fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
        try:
            wd1 = ino.watch_fd(fd, inofd.IN_CREATE, data=1)
            os.mkdir(os.path.join(tmp, "sub"))
            wd2 = ino.watch_at(fd, "sub", inofd.IN_CREATE, data=2)
        finally:
            os.close(fd)              # the watches outlive the fd
        open(os.path.join(tmp, "sub", "x"), "w").close()
        evs = drain(ino)
        assert [(e.wd, e.name, e.data) for e in evs if e.mask & inofd.IN_CREATE] == \
            [(wd1, b"sub", 1), (wd2, b"x", 2)]
        with open(os.path.join(tmp, "y"), "w") as f:   # an object with fileno()
            wd3 = ino.watch_fd(f, inofd.IN_CLOSE_WRITE)
        assert any(e.wd == wd3 for e in drain(ino))


def test_watch_tree_options(tmp, backend):
    os.makedirs(os.path.join(tmp, "a/b/c"))
    os.makedirs(os.path.join(tmp, ".git/x"))
    with inofd.Instance(backend=backend) as ino:
        wd = ino.watch_tree(tmp, inofd.IN_CREATE, exclude=[".git", b"nope"],
                            max_depth=2, data="t")
        for d in ("a/n1", ".git/x/n2", "a/b/n3", "a/b/c/n4"):
            open(os.path.join(tmp, d), "w").close()
        got = {e.fspath[len(tmp) + 1:] for e in drain(ino)}
        assert got == {"a/n1", "a/b/n3"}
        assert ino.wd_data(wd) == "t"


def test_tree_dirfd(tmp, backend):
    os.mkdir(os.path.join(tmp, "d"))
    fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with inofd.Instance(backend=backend) as ino:
            wd = ino.watch_tree("d", inofd.IN_CREATE, dirfd=fd)
            assert ino.wd_path(wd) == os.fsencode(tmp) + b"/d"
    finally:
        os.close(fd)


def oserr(e):
    return lambda exc: isinstance(exc, OSError) and exc.errno == e


# (description, call(ino, tmp), exception class, errno or None)
BAD = [
    ("bad fd", lambda i, t: i.watch_fd(-1, ALL), OSError, errno.EBADF),
    ("closed fd", lambda i, t: i.watch_fd(987654, ALL), OSError, errno.EBADF),
    ("huge fd", lambda i, t: i.watch_fd(2**40, ALL), OSError, errno.EBADF),
    ("fd of wrong type", lambda i, t: i.watch_fd("x", ALL), TypeError, None),
    ("fd None", lambda i, t: i.watch_fd(None, ALL), TypeError, None),
    ("mask 0", lambda i, t: i.watch_path(t, 0), OSError, errno.EINVAL),
    ("mask negative", lambda i, t: i.watch_path(t, -1), ValueError, None),
    ("mask > 32 bits", lambda i, t: i.watch_path(t, 1 << 40), ValueError, None),
    ("mask a str", lambda i, t: i.watch_path(t, "IN_CREATE"), TypeError, None),
    ("mask a float", lambda i, t: i.watch_path(t, 1.0), TypeError, None),
    ("nonexistent path", lambda i, t: i.watch_path(t + "/nope", ALL),
     FileNotFoundError, errno.ENOENT),
    ("path an int", lambda i, t: i.watch_path(3, ALL), TypeError, None),
    ("path with NUL", lambda i, t: i.watch_path("a\0b", ALL), ValueError, None),
    ("tree of a file", lambda i, t: i.watch_tree(t + "/file", ALL),
     NotADirectoryError, errno.ENOTDIR),
    ("tree nonexistent", lambda i, t: i.watch_tree(t + "/nope", ALL),
     FileNotFoundError, errno.ENOENT),
    ("tree IN_ONESHOT", lambda i, t: i.watch_tree(t, ALL | inofd.IN_ONESHOT),
     OSError, errno.EINVAL),
    ("exclude one str", lambda i, t: i.watch_tree(t, ALL, exclude=".git"), TypeError, None),
    ("exclude an int item", lambda i, t: i.watch_tree(t, ALL, exclude=[1]), TypeError, None),
    ("exclude with /", lambda i, t: i.watch_tree(t, ALL, exclude=["a/b"]), OSError, errno.EINVAL),
    ("exclude empty", lambda i, t: i.watch_tree(t, ALL, exclude=[""]), OSError, errno.EINVAL),
    ("tree flag of elsewhere", lambda i, t: i.watch_tree(t, ALL, flags=inofd.RAW_MOVES),
     OSError, errno.EINVAL),
    ("max_depth negative", lambda i, t: i.watch_tree(t, ALL, max_depth=-1), ValueError, None),
    ("dirfd bad", lambda i, t: i.watch_at(987654, "x", ALL), OSError, errno.EBADF),
    ("dirfd a str", lambda i, t: i.watch_at("x", "x", ALL), TypeError, None),
    ("watch_at bad flags", lambda i, t: i.watch_at(None, t, ALL, flags=1 << 30),
     OSError, errno.EINVAL),
    ("unwatch bad wd", lambda i, t: i.unwatch(12345), OSError, errno.EINVAL),
    ("unwatch negative wd", lambda i, t: i.unwatch(-1), OSError, errno.EINVAL),
    ("unwatch huge wd", lambda i, t: i.unwatch(2**70), OSError, errno.EINVAL),
    ("unwatch a str", lambda i, t: i.unwatch("1"), TypeError, None),
    ("wd_path bad wd", lambda i, t: i.wd_path(999), OSError, errno.EINVAL),
    ("wd_data bad wd", lambda i, t: i.wd_data(999), OSError, errno.EINVAL),
    ("read negative timeout", lambda i, t: i.read(-1), ValueError, None),
    ("read str timeout", lambda i, t: i.read("1"), TypeError, None),
    ("missing mask", lambda i, t: i.watch_path(t), TypeError, None),
]


@pytest.mark.parametrize("what,call,exc,err", BAD, ids=[b[0] for b in BAD])
def test_bad_input(tmp, backend, what, call, exc, err):
    open(os.path.join(tmp, "file"), "w").close()
    with inofd.Instance(backend=backend) as ino:
        with pytest.raises(exc) as info:
            call(ino, tmp)
        if err is not None:
            assert info.value.errno == err, what
            # the library's text, or one naming what is wrong (test_fixes)
            assert info.value.strerror == inofd.strerror(-err) or \
                info.value.strerror.startswith(("mask:", "unwatch(", "wd_path(",
                                                "wd_data("))
        assert ino.watch_count == 0    # nothing half made
        ino.watch_path(tmp, ALL)       # and the instance still works


BAD_NEW = [
    ({"backend": "nope"}, ValueError, None),
    ({"backend": 99}, ValueError, None),
    ({"backend": 1.5}, TypeError, None),
    ({"backend": "kernel"}, OSError, errno.ENOSYS),   # stock host kernel
    ({"pair_timeout_ms": -1}, ValueError, None),
    ({"queue_max": 2**33}, ValueError, None),
    ({"coalesce_ms": "x"}, TypeError, None),
]


@pytest.mark.parametrize("kw,exc,err", BAD_NEW, ids=[str(b[0]) for b in BAD_NEW])
def test_bad_instance(kw, exc, err):
    if kw.get("backend") == "kernel" and os.path.exists("/proc/self/fdinfo") and \
            _kernel_backend():
        pytest.skip("this kernel has INOTIFY_IOC_WATCH")
    with pytest.raises(exc) as info:
        inofd.Instance(**kw)
    if err is not None:
        assert info.value.errno == err


def _kernel_backend():
    try:
        inofd.Instance(backend="kernel").close()
        return True
    except OSError:
        return False


CLOSED_CALLS = [
    lambda i: i.watch_path("/", ALL), lambda i: i.watch_fd(0, ALL),
    lambda i: i.watch_at(None, "/", ALL), lambda i: i.watch_tree("/", ALL),
    lambda i: i.unwatch(1), lambda i: i.wd_path(1), lambda i: i.wd_data(1),
    lambda i: i.fileno(), lambda i: i.read(0), lambda i: i.timeout(),
    lambda i: i.backend, lambda i: i.watch_count, lambda i: next(i),
    lambda i: iter(i), lambda i: i.__enter__(),
]


@pytest.mark.parametrize("call", CLOSED_CALLS)
def test_closed_instance(call):
    ino = inofd.Instance()
    ino.close()
    ino.close()                        # idempotent
    assert ino.closed
    with pytest.raises(ValueError):
        call(ino)


def test_data_kept_until_ignored(tmp, backend):
    class D:
        pass
    d = D()
    r = weakref.ref(d)
    ino = inofd.Instance(backend=backend)
    wd = ino.watch_path(tmp, ALL, data=d)
    del d
    gc.collect()
    assert r() is not None             # the instance holds it
    ino.unwatch(wd)
    gc.collect()
    assert r() is not None             # until IN_IGNORED is handed out
    evs = drain(ino)
    ign = [e for e in evs if e.mask & inofd.IN_IGNORED]
    assert len(ign) == 1 and ign[0].data is r()
    del evs, ign
    gc.collect()
    assert r() is None                 # then released
    ino.close()


def test_data_released_by_close_and_deleted_object(tmp, backend):
    class D:
        pass
    d1, d2 = D(), D()
    r1, r2 = weakref.ref(d1), weakref.ref(d2)
    sub = os.path.join(tmp, "sub")
    os.mkdir(sub)
    ino = inofd.Instance(backend=backend)
    ino.watch_path(tmp, ALL, data=d1)
    ino.watch_path(sub, ALL, data=d2)
    d2.ino = ino                       # a cycle through the data
    del d1, d2
    os.rmdir(sub)                      # the kernel ends that watch
    drain(ino)
    gc.collect()
    assert r2() is None and r1() is not None
    ino.close()
    gc.collect()
    assert r1() is None
    # a cycle instance -> data -> instance is collected
    ino = inofd.Instance(backend=backend)
    d = D()
    d.ino = ino
    ino.watch_path(tmp, ALL, data=d)
    r = weakref.ref(d)
    del d, ino
    gc.collect()
    assert r() is None


def test_read_timeout_and_iteration(tmp, backend):
    with inofd.Instance(backend=backend) as ino:
        ino.watch_path(tmp, inofd.IN_CREATE)
        t0 = time.monotonic()
        assert ino.read(timeout=0.1) == []
        assert 0.09 <= time.monotonic() - t0 < 2
        assert ino.read(timeout=0) == []
        assert ino.timeout() == -1

        def later():
            time.sleep(0.1)
            open(os.path.join(tmp, "late"), "w").close()
        threading.Thread(target=later).start()
        ev = next(iter(ino))           # blocks, GIL released
        assert ev.name == b"late"


def test_move_out_waits_for_pair_timeout(tmp, backend):
    os.mkdir(os.path.join(tmp, "w"))
    with inofd.Instance(backend=backend, pair_timeout_ms=50) as ino:
        ino.watch_path(os.path.join(tmp, "w"), ALL)
        open(os.path.join(tmp, "w", "f"), "w").close()
        drain(ino)
        os.rename(os.path.join(tmp, "w", "f"), os.path.join(tmp, "f"))
        t0 = time.monotonic()
        evs = ino.read()               # no timeout: inofd_timeout() wakes it
        assert [e.type for e in evs] == [inofd.EV_MOVE_OUT]
        assert 0.04 <= time.monotonic() - t0 < 2


def test_raw_moves(tmp, backend):
    with inofd.Instance(backend=backend, raw_moves=True) as ino:
        ino.watch_path(tmp, inofd.IN_MOVE | inofd.IN_CREATE)
        open(os.path.join(tmp, "a"), "w").close()
        os.rename(os.path.join(tmp, "a"), os.path.join(tmp, "b"))
        masks = [e.mask for e in drain(ino)]
        assert masks == [inofd.IN_CREATE, inofd.IN_MOVED_FROM, inofd.IN_MOVED_TO]


def test_close_from_another_thread_wakes_read(backend, tmp):
    ino = inofd.Instance(backend=backend)
    ino.watch_path(tmp, ALL)
    threading.Timer(0.1, ino.close).start()
    with pytest.raises(ValueError):
        ino.read()                     # would block forever
    assert ino.closed
    with pytest.raises(ValueError):
        ino.read()


def test_selectors(tmp, backend):
    with inofd.Instance(backend=backend) as ino, selectors.DefaultSelector() as sel:
        ino.watch_path(tmp, inofd.IN_CREATE)
        sel.register(ino, selectors.EVENT_READ)
        open(os.path.join(tmp, "s"), "w").close()
        assert sel.select(timeout=5)
        assert ino.read(0)[0].name == b"s"


def test_asyncio(tmp, backend):
    async def main():
        with inofd.Instance(backend=backend, pair_timeout_ms=20) as ino:
            ino.watch_path(tmp, inofd.IN_CREATE | inofd.IN_MOVE)
            loop = asyncio.get_running_loop()
            loop.call_later(0.05, lambda: open(os.path.join(tmp, "x"), "w").close())
            loop.call_later(0.1, lambda: os.rename(os.path.join(tmp, "x"), "/tmp/inofd-py-out"))
            got = []
            async for ev in inofd.asyncio.events(ino):
                got.append((ev.type, ev.name))
                if ev.type == inofd.EV_MOVE_OUT:   # needs the pairing timer
                    break
            return got
    try:
        got = asyncio.run(asyncio.wait_for(main(), 5))
    finally:
        if os.path.exists("/tmp/inofd-py-out"):
            os.unlink("/tmp/inofd-py-out")
    assert got == [(inofd.EV_INOTIFY, b"x"), (inofd.EV_MOVE_OUT, b"x")]
