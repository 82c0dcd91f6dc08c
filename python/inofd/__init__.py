# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd: inotify watches by file descriptor (libinofd) for Python.

    import inofd
    with inofd.Instance() as ino:
        ino.watch_tree("src", inofd.IN_CREATE | inofd.IN_DELETE | inofd.IN_MOVE,
                       exclude=[".git"])
        for ev in ino:                  # blocks; ev is an inofd.Event
            print(inofd.EventType(ev.type).name, ev.fspath)

Instance and Event come from the C part (inofd._inofd); every field of
struct inofd_event is an attribute of Event, names and paths as bytes
(fsname, fspath, fsfrom_name, fsfrom_path: the same as str, through
os.fsdecode).  Errors of the library are OSError with its errno (and the
path, for the calls that take one); misuse from Python is TypeError or
ValueError; any use of a closed Instance is ValueError.

inofd.watch() and inofd.watchfiles are the high-level APIs, and
inofd.watchdog a watchdog observer.  The package's README says how to use
each and gives the semantics (rename pairing, recursive watches, RESCAN
after a loss): /usr/share/doc/python3-inofd/README from the Debian
package, importlib.metadata.metadata("inofd")["Description"] from pip,
python/README in the source.
"""
from __future__ import annotations

import enum as _enum

try:
    from . import _inofd
except ImportError:   # not "circular import": say what is missing
    import sys as _sys
    raise ImportError(
        "inofd: its C part (inofd._inofd) is not built for this Python "
        "(%s, %s): pip install --no-build-isolation ./python in this "
        "interpreter's venv, or make -C python PYTHON=%s"
        % (_sys.executable, _sys.version.split()[0], _sys.executable)) from None
from ._inofd import *  # noqa: F401,F403  Instance, Event, IN_*, EV_*, EVF_*, ...
from ._inofd import Event as Event, Instance as Instance  # noqa: F401
from ._inofd import library_version as library_version, strerror as strerror  # noqa: F401
from ._watch import Change as Change, ChangeKind as ChangeKind  # noqa: F401
from ._watch import awatch as awatch, watch as watch  # noqa: F401

__all__ = ["Instance", "Event", "EventType", "Backend", "strerror", "mask_names",
           "library_version", "event_str", "watch", "awatch", "Change",
           "ChangeKind"] + \
    [n for n in dir(_inofd) if n.isupper()]


class EventType(_enum.IntEnum):
    """Event.type (enum inofd_event_type); compares equal to the EV_* ints."""
    INOTIFY = _inofd.EV_INOTIFY
    RENAME = _inofd.EV_RENAME
    MOVE_OUT = _inofd.EV_MOVE_OUT
    MOVE_IN = _inofd.EV_MOVE_IN
    RESCAN = _inofd.EV_RESCAN
    CHANGED = _inofd.EV_CHANGED
    ERROR = _inofd.EV_ERROR


    def __repr__(self) -> str:
        return "EventType.%s" % self.name

    __str__ = __repr__


_inofd._set_event_types(tuple(
    EventType(v) if v in EventType._value2member_map_ else None
    for v in range(max(EventType) + 1)))


class Backend(_enum.IntEnum):
    """Instance.backend (enum inofd_backend)."""
    KERNEL = _inofd.BACKEND_KERNEL
    PROCFD = _inofd.BACKEND_PROCFD
    FANOTIFY = _inofd.BACKEND_FANOTIFY


_MASK_NAMES = [(getattr(_inofd, n), n) for n in (
    "IN_ACCESS", "IN_MODIFY", "IN_ATTRIB", "IN_CLOSE_WRITE",
    "IN_CLOSE_NOWRITE", "IN_OPEN", "IN_MOVED_FROM", "IN_MOVED_TO",
    "IN_CREATE", "IN_DELETE", "IN_DELETE_SELF", "IN_MOVE_SELF",
    "IN_UNMOUNT", "IN_Q_OVERFLOW", "IN_IGNORED", "IN_ISDIR")]


def mask_names(mask: int) -> str:
    """The IN_* names of the bits of mask, joined with '|'."""
    return "|".join(n for b, n in _MASK_NAMES if mask & b) or "0"


def event_str(ev: Event) -> str:
    """One line for an event, as watch-fd would say it (for logs)."""
    s = "%s %s %s" % (EventType(ev.type).name, mask_names(ev.mask),
                      ev.fspath or "-")
    if ev.from_path is not None:
        s += " <- %s" % ev.fsfrom_path
    if ev.error:
        s += " (%s)" % strerror(ev.error)
    return s
