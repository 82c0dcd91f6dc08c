# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixtures: the host backends (procfd and fanotify; the kernel one needs
the patched kernel and is skipped here) and a scratch directory."""
import os

import pytest

import inofd

HOST_BACKENDS = ["procfd", "fanotify"]


def backend_available(name):
    try:
        inofd.Instance(backend=name).close()
        return True
    except OSError:
        return False


@pytest.fixture(params=HOST_BACKENDS)
def backend(request):
    if not backend_available(request.param):
        pytest.skip("backend %s not available here" % request.param)
    return request.param


@pytest.fixture
def tmp(tmp_path):
    """A real (not symlinked) scratch directory, as str."""
    return os.path.realpath(str(tmp_path))


def drain(ino, quiet=0.05, limit=10.0):
    """Every event until none came for `quiet` seconds."""
    import time
    out = []
    end = time.monotonic() + limit
    while time.monotonic() < end:
        evs = ino.read(timeout=quiet)
        if not evs:
            break
        out.extend(evs)
    return out
