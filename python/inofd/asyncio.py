# SPDX-License-Identifier: LGPL-2.1-or-later
"""inofd.asyncio: events of an inofd.Instance on the running event loop.

    import asyncio, inofd, inofd.asyncio

    async def main():
        with inofd.Instance() as ino:
            ino.watch_tree("src", inofd.IN_CREATE | inofd.IN_MOVE)
            async for ev in inofd.asyncio.events(ino):
                print(ev.fspath)

The loop waits on ino.fileno() with loop.add_reader (never in a thread)
and wakes at inofd_timeout() as well, so a rename half waiting for its
pair becomes an EV_MOVE_OUT on time even when nothing else happens.
"""
from __future__ import annotations

import asyncio as _asyncio
from typing import AsyncIterator, List

from ._inofd import Event, Instance

__all__ = ["events", "Events"]


class Events(AsyncIterator[Event]):
    """Async iterator over the events of an Instance (one consumer).

    Each __anext__ returns one Event; iteration ends when the instance is
    closed, also while __anext__ waits (from a task or another thread).  The instance is read with read(timeout=0) only, so the loop
    never blocks.
    """

    def __init__(self, instance: Instance) -> None:
        self._ino = instance
        self._ready: List[Event] = []
        self._pos = 0

    def __aiter__(self) -> Events:
        return self

    async def __anext__(self) -> Event:
        if self._pos < len(self._ready):
            ev = self._ready[self._pos]
            self._pos += 1
            return ev
        try:
            return await self._wait(_asyncio.get_running_loop())
        except ValueError:
            # closed by another thread between two of our calls
            if self._ino.closed:
                raise StopAsyncIteration from None
            raise

    async def _wait(self, loop: _asyncio.AbstractEventLoop) -> Event:
        """The next event, reading and waiting as often as needed; a
        ValueError if the instance was closed under us."""
        while True:
            if self._ino.closed:
                raise StopAsyncIteration
            batch = self._ino.read(timeout=0)
            if batch:
                self._ready, self._pos = batch, 1
                return batch[0]
            t = self._ino.timeout()
            if t == 0:
                continue
            fut = loop.create_future()
            fd = self._ino.fileno()

            def wake() -> None:
                if not fut.done():
                    fut.set_result(None)

            def closing() -> None:
                # close(): in the loop's thread the reader goes before the
                # descriptor does; from another thread the loop is woken
                if _in_loop(loop):
                    loop.remove_reader(fd)
                    wake()
                else:
                    try:
                        loop.call_soon_threadsafe(wake)
                    except RuntimeError:    # that loop is closed
                        pass

            loop.add_reader(fd, wake)
            try:
                self._ino._add_close_hook(closing)
            except BaseException:
                loop.remove_reader(fd)
                raise
            handle = loop.call_later(t / 1000.0, wake) if t > 0 else None
            try:
                await fut
            finally:
                loop.remove_reader(fd)
                if not self._ino.closed:
                    self._ino._remove_close_hook(closing)
                if handle is not None:
                    handle.cancel()


def _in_loop(loop: _asyncio.AbstractEventLoop) -> bool:
    try:
        return _asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def events(instance: Instance) -> Events:
    """An async iterator over instance's events on the running loop."""
    return Events(instance)
