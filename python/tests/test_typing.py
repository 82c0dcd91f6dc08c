# SPDX-License-Identifier: LGPL-2.1-or-later
"""Types: mypy --strict on the examples of python/README and
docs/python.md's block (as a user's program, against the inofd this test
imports), and inspect.signature() on the public API."""
import inspect
import os
import re
import subprocess
import sys
import textwrap

import pytest

import inofd
import inofd.asyncio
import inofd.watchfiles

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


def readme_examples():
    """The indented blocks of python/README that import inofd (the
    watchdog one excepted: watchdog 2.2.1 has no types), and
    docs/python.md's ```python block."""
    with open(os.path.join(TOP, "python", "README")) as f:
        text = f.read()
    blocks = re.findall(r"(?:^(?:    .*)?\n)+", text, re.M)
    out = [textwrap.dedent(b) for b in blocks
           if re.search(r"^    (import|from) .*\binofd\b", b, re.M) and "watchdog" not in b]
    with open(os.path.join(TOP, "docs", "python.md")) as f:
        out += re.findall(r"^```python\n(.*?)^```$", f.read(), re.M | re.S)
    return out


def test_examples_found():
    assert len(readme_examples()) >= 4


def test_mypy_strict_on_the_readme_examples(tmp_path):
    try:
        import mypy  # noqa: F401
    except ImportError:
        pytest.fail("mypy missing: apt-get install python3-mypy (make deps)")
    files = []
    for i, src in enumerate(readme_examples()):
        p = tmp_path / ("example%d.py" % i)
        p.write_text(src)
        compile(src, str(p), "exec")
        files.append(str(p))
    env = dict(os.environ)
    pkg_dir = os.path.dirname(os.path.dirname(inofd.__file__))
    if os.path.basename(pkg_dir) not in ("site-packages", "dist-packages"):
        env["MYPYPATH"] = pkg_dir       # the source tree's inofd
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict",
                        "--cache-dir", str(tmp_path / "cache"), "--no-error-summary"]
                       + files, env=env, cwd=str(tmp_path),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout


def test_signatures():
    for f in (inofd.Instance, inofd.Instance.watch_fd, inofd.Instance.watch_path,
              inofd.Instance.watch_at, inofd.Instance.watch_tree,
              inofd.Instance.read, inofd.Instance.unwatch, inofd.Instance.close,
              inofd.strerror, inofd.library_version, inofd.watch, inofd.awatch,
              inofd.asyncio.events, inofd.watchfiles.watch, inofd.watchfiles.awatch):
        inspect.signature(f)
    assert list(inspect.signature(inofd.Instance).parameters) == \
        ["pair_timeout_ms", "coalesce_ms", "queue_max", "backend", "raw_moves"]
    assert list(inspect.signature(inofd.Instance.read).parameters) == ["self", "timeout"]


def test_event_type_is_an_event_type(tmp):
    with inofd.Instance() as ino:
        ino.watch_path(tmp, inofd.IN_CREATE)
        open(os.path.join(tmp, "f"), "w").close()
        ev = ino.read(timeout=5)[0]
    assert type(ev.type) is inofd.EventType and ev.type == inofd.EV_INOTIFY
    assert "type=EventType.INOTIFY" in repr(ev)
    assert repr(inofd.EventType.RENAME) == "EventType.RENAME"
