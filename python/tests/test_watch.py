# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd.watchfiles (watchfiles' API) and inofd.watch() (the native one)."""
import asyncio
import inspect
import os
import queue
import threading
import time

import pytest

import inofd
import inofd.watchfiles as wf
from inofd import _watch
from inofd._watch import ChangeKind, Snapshot, Watcher

# watchfiles' parameter names (watchfiles/main.py: watch and awatch)
WATCHFILES_PARAMS = ["paths", "watch_filter", "debounce", "step", "stop_event",
                     "rust_timeout", "yield_on_timeout", "debug", "raise_interrupt",
                     "force_polling", "poll_delay_ms", "recursive",
                     "ignore_permission_denied"]


def test_signatures_are_watchfiles():
    for f in (wf.watch, wf.awatch):
        sig = inspect.signature(f)
        assert list(sig.parameters) == WATCHFILES_PARAMS
        p = sig.parameters
        assert p["paths"].kind is inspect.Parameter.VAR_POSITIONAL
        assert (p["debounce"].default, p["step"].default, p["recursive"].default,
                p["yield_on_timeout"].default, p["stop_event"].default) == \
            (1600, 50, True, False, None)
        assert isinstance(p["watch_filter"].default, wf.DefaultFilter)
    assert inspect.signature(wf.watch).parameters["raise_interrupt"].default is True
    assert inspect.signature(wf.watch).parameters["rust_timeout"].default == 5000
    assert list(inspect.signature(wf.DefaultFilter).parameters) == \
        ["ignore_dirs", "ignore_entity_patterns", "ignore_paths"]
    assert list(inspect.signature(wf.PythonFilter).parameters) == \
        ["ignore_paths", "extra_extensions"]
    assert [c.name for c in wf.Change] == ["added", "modified", "deleted"]
    assert [int(c) for c in wf.Change] == [1, 2, 3]
    assert wf.Change.added.raw_str() == "added"
    assert inspect.signature(inofd.Instance.watch_tree).parameters["exclude"].default == ()


def test_filters():
    d = wf.DefaultFilter()
    assert d(wf.Change.added, "/a/b/c.py")
    assert not d(wf.Change.added, "/a/.git/config")
    assert not d(wf.Change.added, "/a/b/c.pyc")
    assert not d(wf.Change.added, "/a/b/c.py~")
    assert wf.DefaultFilter(ignore_dirs=["x"])(wf.Change.added, "/a/.git/c")
    assert not wf.DefaultFilter(ignore_paths=["/a/b"])(wf.Change.added, "/a/b/c")
    p = wf.PythonFilter(extra_extensions=(".pyi",))
    assert p(wf.Change.modified, "/a/m.py") and p(wf.Change.modified, "/a/m.pyi")
    assert not p(wf.Change.modified, "/a/m.txt")
    assert not p(wf.Change.modified, "/a/__pycache__/m.py")
    assert "DefaultFilter(" in repr(d)


def _bursts(tmp, bursts, **kw):
    """Run each burst (a function) once the set of the one before came;
    return the sets watch() yielded, one per burst expected."""
    stop = threading.Event()
    go = queue.Queue()
    sets = []

    def producer():
        time.sleep(0.3)                 # watch() set up
        for b in bursts:
            b()
            go.get(timeout=10)
        stop.set()

    t = threading.Thread(target=producer)
    t.start()
    try:
        for changes in wf.watch(tmp, stop_event=stop, **kw):
            sets.append(changes)
            go.put(None)
    finally:
        stop.set()
        t.join()
    return sets


def test_editor_bursts_give_one_set_each(tmp):
    a = os.path.join(tmp, "a.py")
    with open(a, "w") as f:
        f.write("0")

    def save_by_rename():               # write a temp file, rename it over
        with open(a + "~", "w") as f:
            f.write("1" * 1000)
        os.rename(a + "~", a)

    def save_in_place():
        for i in range(5):              # several writes, one burst
            with open(a, "a") as f:
                f.write(str(i))

    def mkdir_and_move():
        os.mkdir(os.path.join(tmp, "pkg"))
        os.rename(a, os.path.join(tmp, "pkg", "b.py"))

    # step: the quiet that ends a burst; wide, so a loaded host's stall
    # inside a burst does not split it (make python-check saw that at 200)
    sets = _bursts(tmp, [save_by_rename, save_in_place, mkdir_and_move],
                   debounce=4000, step=700)
    b = os.path.join(tmp, "pkg", "b.py")
    assert sets == [
        {(wf.Change.added, a)},         # the temp file's are filtered (~$)
        {(wf.Change.modified, a)},
        {(wf.Change.added, os.path.join(tmp, "pkg")),
         (wf.Change.deleted, a), (wf.Change.added, b)},
    ]


def test_debounce_bounds_a_long_burst(tmp):
    """Writes every 50 ms for 1.2 s with debounce=400: several sets, each
    handed out about debounce after its first change, none lost."""
    stop = threading.Event()
    n = 24

    def writer():
        time.sleep(0.3)
        for i in range(n):
            open(os.path.join(tmp, "f%02d" % i), "w").close()
            time.sleep(0.05)
        time.sleep(0.5)
        stop.set()

    t = threading.Thread(target=writer)
    t.start()
    sets = list(wf.watch(tmp, stop_event=stop, debounce=400, step=100,
                         watch_filter=None))
    t.join()
    assert len(sets) >= 2, sets        # one set only: no debounce bound
    added = set().union(*sets)
    assert added == {(wf.Change.added, os.path.join(tmp, "f%02d" % i)) for i in range(n)}


WATCHFILES_PROGRAM = '''
from inofd.watchfiles import awatch, watch, Change, PythonFilter, DefaultFilter

def rebuild_loop(root, stop_event, rebuilt):
    for changes in watch(root, watch_filter=PythonFilter(), stop_event=stop_event,
                         raise_interrupt=False, debounce=300):
        rebuilt.extend(sorted({path for change, path in changes
                               if change != Change.deleted}))

async def arebuild(root, stop_event, seen):
    async for changes in awatch(root, stop_event=stop_event, debounce=300,
                                watch_filter=DefaultFilter(ignore_dirs=["build"])):
        seen.update(changes)
'''


def test_code_written_for_watchfiles_runs(tmp):
    ns = {}
    exec(compile(WATCHFILES_PROGRAM, "watchfiles_program", "exec"), ns)
    stop = threading.Event()
    rebuilt = []

    def edit():
        time.sleep(0.3)
        for n in ("m.py", "notes.txt"):
            with open(os.path.join(tmp, n), "w") as f:
                f.write("x")
        time.sleep(0.8)
        stop.set()

    t = threading.Thread(target=edit)
    t.start()
    ns["rebuild_loop"](tmp, stop, rebuilt)
    t.join()
    assert rebuilt == [os.path.join(tmp, "m.py")]

    async def amain():
        ev = asyncio.Event()
        seen = set()
        os.mkdir(os.path.join(tmp, "build"))

        async def edit():
            await asyncio.sleep(0.3)
            open(os.path.join(tmp, "build", "out.o"), "w").close()
            open(os.path.join(tmp, "x.c"), "w").close()
            await asyncio.sleep(0.7)
            ev.set()
        task = asyncio.ensure_future(edit())
        await ns["arebuild"](tmp, ev, seen)
        await task
        return seen
    assert asyncio.run(asyncio.wait_for(amain(), 10)) == \
        {(wf.Change.added, os.path.join(tmp, "x.c"))}


def test_rescan_yields_what_a_rewalk_finds(tmp):
    """A loss (the library's queue bound, 16, while nothing reads) is a
    RESCAN; watchfiles' sets then hold what a re-walk found: every file."""
    keep = os.path.join(tmp, "keep")
    gone = os.path.join(tmp, "gone")
    for p in (keep, gone):
        open(p, "w").close()
    w = Watcher([tmp], queue_max=16)
    try:
        snap = Snapshot(w.roots.values())
        for i in range(100):
            open(os.path.join(tmp, "f%03d" % i), "w").close()
        os.unlink(gone)
        changes = set()
        for _ in range(20):
            batch = w.collect(200, 50, 500, None)
            if isinstance(batch, str):
                break
            assert any(c.kind is ChangeKind.RESCAN for c in batch) or changes
            changes |= wf._sets(w, snap, batch, None)
    finally:
        w.close()
    want = {(wf.Change.added, os.path.join(tmp, "f%03d" % i)) for i in range(100)}
    assert want <= changes
    assert (wf.Change.deleted, gone) in changes
    assert not any(p == keep for _c, p in changes)


def _one(w, snap, kind, path, old=None):
    """watchfiles' set for one change of the library's, as _sets() makes it."""
    return wf._sets(w, snap, [_watch.Change(kind, path, old, True)], None)


def test_rescan_reports_files_of_a_new_directory_whose_events_were_lost(tmp):
    """make peers, 2026-12-07: a directory a git checkout made again was
    handed out after files were made in it, and their events were lost to
    an overflow; the snapshot took the files from the disk when it took
    the directory, so the RESCAN's re-walk found nothing new and 8 probes
    were never reported.  The snapshot holds what was told."""
    d = os.path.join(tmp, "d")
    w = Watcher([tmp])
    try:
        snap = Snapshot(w.roots.values())
        os.mkdir(d)
        f = os.path.join(d, "probe")
        open(f, "w").close()            # its event: taken by the loss
        assert _one(w, snap, ChangeKind.ADDED, d) == {(wf.Change.added, d)}
        got = _one(w, snap, ChangeKind.RESCAN, tmp)
    finally:
        w.close()
    assert got == {(wf.Change.added, f)}


def test_snapshot_follows_a_moved_directory(tmp):
    """A rename handed out moves what was known below it: the next RESCAN
    reports what changed since, not the moved directory's files again."""
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    os.mkdir(a)
    open(os.path.join(a, "x"), "w").close()
    w = Watcher([tmp])
    try:
        snap = Snapshot(w.roots.values())
        os.rename(a, b)
        open(os.path.join(b, "y"), "w").close()     # its event: lost
        assert _one(w, snap, ChangeKind.MOVED, b, a) == \
            {(wf.Change.deleted, a), (wf.Change.added, b)}
        got = _one(w, snap, ChangeKind.RESCAN, tmp)
    finally:
        w.close()
    assert got == {(wf.Change.added, os.path.join(b, "y"))}


def test_native_watch_pairs_moves(tmp, backend):
    stop = threading.Event()
    got = []

    def work():
        time.sleep(0.3)
        os.mkdir(os.path.join(tmp, "d"))
        with open(os.path.join(tmp, "d", "x"), "w") as f:
            f.write("1")
        time.sleep(0.5)                 # a batch: d (and x) are known
        os.rename(os.path.join(tmp, "d", "x"), os.path.join(tmp, "y"))
        os.rename(os.path.join(tmp, "d"), os.path.join(tmp, "e"))
        time.sleep(0.6)
        stop.set()

    t = threading.Thread(target=work)
    t.start()
    for batch in inofd.watch(tmp, stop_event=stop, debounce=300, step=100,
                             backend=backend):
        got.extend(batch)
    t.join()
    C, K = inofd.Change, inofd.ChangeKind
    j = os.path.join
    assert C(K.MOVED, j(tmp, "y"), j(tmp, "d", "x"), False) in got
    assert C(K.MOVED, j(tmp, "e"), j(tmp, "d"), True) in got
    assert C(K.ADDED, j(tmp, "d"), None, True) in got
    assert all(isinstance(c.path, str) for c in got)


def test_native_rescan_and_timeout(tmp):
    gen = inofd.watch(tmp, queue_max=16, timeout=300, debounce=200, step=50)
    assert next(gen) == []              # nothing happened: the timeout's batch
    for i in range(100):
        open(os.path.join(tmp, "f%03d" % i), "w").close()
    batch = next(gen)
    gen.close()
    rescans = [c for c in batch if c.kind is inofd.ChangeKind.RESCAN]
    assert rescans and rescans[0].path in (tmp, "")


def test_native_awatch(tmp):
    async def main():
        stop = asyncio.Event()
        got = []

        async def work():
            await asyncio.sleep(0.2)
            open(os.path.join(tmp, "a"), "w").close()
            os.rename(os.path.join(tmp, "a"), os.path.join(tmp, "b"))
            await asyncio.sleep(0.5)
            stop.set()
        task = asyncio.ensure_future(work())
        async for batch in inofd.awatch(tmp, stop_event=stop, debounce=200):
            got.extend(batch)
        await task
        return got
    got = asyncio.run(asyncio.wait_for(main(), 10))
    assert inofd.Change(inofd.ChangeKind.MOVED, os.path.join(tmp, "b"),
                        os.path.join(tmp, "a"), False) in got


def test_watch_a_file_and_errors(tmp):
    f = os.path.join(tmp, "f")
    open(f, "w").close()
    gen = wf.watch(f, debounce=200, step=50, rust_timeout=2000)

    def later():
        time.sleep(0.3)
        with open(f, "a") as fh:
            fh.write("x")
    threading.Thread(target=later).start()
    assert next(gen) == {(wf.Change.modified, f)}
    gen.close()
    with pytest.raises(FileNotFoundError) as info:
        next(wf.watch(os.path.join(tmp, "nope")))
    assert info.value.filename == os.path.join(tmp, "nope")
    with pytest.raises(ValueError):
        next(inofd.watch())


RUN_PROCESS_PROGRAM = '''
import sys
from inofd.watchfiles import run_process

def callback(changes):
    print("changes", sorted(p for _c, p in changes), flush=True)

n = run_process(sys.argv[1], target=[sys.executable, "-c",
                "import os; print('started', os.environ['WATCHFILES_CHANGES'], flush=True);"
                "import time; time.sleep(60)"],
                callback=callback, debounce=300, step=50)
print("reloads", n, flush=True)
'''


def test_run_process_restarts_on_python_changes(tmp, tmp_path):
    """watchfiles' run_process: a command restarted when a .py changes
    (PythonFilter), not for a .txt; Ctrl-C ends it with the reload count."""
    import signal
    import subprocess
    import sys
    prog = tmp_path / "prog.py"
    prog.write_text(RUN_PROCESS_PROGRAM)
    watched = os.path.join(tmp, "w")
    os.mkdir(watched)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(inofd.__file__)))
    # Ctrl-C as a terminal sends it: SIGINT handled, even where this test
    # runs with it ignored (a shell's background job), which the program
    # and its targets would inherit
    p = subprocess.Popen([sys.executable, str(prog), watched], stdout=subprocess.PIPE,
                         text=True, env=env,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    lines = []
    got = queue.Queue()
    threading.Thread(target=lambda: [got.put(ln) for ln in p.stdout], daemon=True).start()

    def expect(prefix):
        try:
            line = got.get(timeout=60)
        except queue.Empty:
            line = "(nothing in 60 s)"
        lines.append(line)
        assert line.startswith(prefix), lines
    try:
        expect("started []")
        time.sleep(0.3)
        open(os.path.join(watched, "notes.txt"), "w").close()
        time.sleep(0.5)
        open(os.path.join(watched, "app.py"), "w").close()
        expect("changes ['%s']" % os.path.join(watched, "app.py"))
        expect('started [["added", "%s"]]' % os.path.join(watched, "app.py"))
        p.send_signal(signal.SIGINT)
        expect("reloads 1")
        assert p.wait(10) == 0
    finally:
        p.kill()
        p.wait()
    assert list(inspect.signature(wf.run_process).parameters) == [
        "paths", "target", "args", "kwargs", "target_type", "callback", "watch_filter",
        "grace_period", "debounce", "step", "debug", "sigint_timeout",
        "sigkill_timeout", "recursive", "ignore_permission_denied"]
    assert wf.detect_target_type("pkg.mod.func") == "function"
    assert wf.detect_target_type("./serve.py") == "command"
    assert wf.detect_target_type(print) == "function"
