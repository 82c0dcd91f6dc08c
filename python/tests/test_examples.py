# SPDX-License-Identifier: LGPL-2.1-or-later
"""docs/python.md's example runs as written (its one ```python block, as
tests/unit does for the README's ```c one), and examples/watchdog-swap.py runs
with the swap and, that line removed, on watchdog's own observer."""
import os
import re
import subprocess
import sys

import inofd

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# the inofd this test imports (a venv's, or the tree's through PYTHONPATH)
ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(inofd.__file__)),
           PYTHONDONTWRITEBYTECODE="1")


def test_readme_example(tmp_path):
    with open(os.path.join(TOP, "docs", "python.md")) as f:
        blocks = re.findall(r"^```python\n(.*?)^```$", f.read(), re.M | re.S)
    assert len(blocks) == 1
    src = tmp_path / "readme_example.py"
    src.write_text(blocks[0])
    out = subprocess.run([sys.executable, str(src)], env=ENV, cwd=str(tmp_path),
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any(" RENAME " in ln and ln.endswith("/src") and "/source <- " in ln
               for ln in lines), lines
    assert any(ln.endswith("/source/lib/a.c") for ln in lines), lines


def run_swap(path, root):
    out = subprocess.run([sys.executable, path, str(root), "--demo"], env=ENV,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_watchdog_swap(tmp_path):
    prog = os.path.join(TOP, "examples", "watchdog-swap.py")
    with open(prog) as f:
        text = f.read()
    swap = [ln for ln in text.splitlines() if ln.endswith("# the one-line swap")]
    assert swap == ["from inofd.watchdog import InofdObserver as Observer  # the one-line swap"]
    (tmp_path / "a").mkdir()
    ours = run_swap(prog, tmp_path / "a")
    for line in ("created src", "created src/lib", "created src/lib/a.c",
                 "moved src -> source", "deleted source"):
        assert line in ours, ours
    stock_prog = tmp_path / "stock.py"
    stock_prog.write_text(text.replace(swap[0] + "\n", ""))
    (tmp_path / "b").mkdir()
    stock = run_swap(str(stock_prog), tmp_path / "b")
    assert "created src" in stock      # the same program ran on watchdog's observer
    # what exists and moves: whatever the stock observer saw, ours saw
    # (not the writes: a file written before its directory was watched
    # is reported by the listing, as created)
    def shape(lines):
        return {ln for ln in lines if ln.split()[0] in ("created", "moved", "deleted")}
    assert shape(stock) <= shape(ours), (stock, ours)
