"""An asyncio event loop on a virtual clock, for tests of timing *logic*.

Its ``time()`` only moves when the loop would wait: instead of sleeping until the next timer,
it jumps there. Sends scripted to take 0.5 s and 0.01 s then overlap, or not, exactly as
their durations say, whatever the machine's speed or load; a test of the engine's order and
bounds is then a fact about the engine, never a race. Work from other threads
(``call_soon_threadsafe``) is still seen: the loop looks at real I/O without waiting, and
waits for it (briefly, for real) only when no timer is left.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

R = TypeVar("R")


class _JumpingSelector(selectors.DefaultSelector):
    """A selector that never waits while a timer is due later: it moves the clock instead."""

    loop: VirtualClockLoop

    def select(self, timeout: float | None = None) -> list[tuple[Any, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return list(ready)
        if timeout is None:  # nothing scheduled: only another thread can wake us
            return list(super().select(0.01))
        self.loop.now += timeout
        return []


class VirtualClockLoop(asyncio.SelectorEventLoop):
    """The loop; ``now`` is its clock, starting at 0."""

    def __init__(self) -> None:
        selector = _JumpingSelector()
        super().__init__(selector)
        selector.loop = self
        self.now = 0.0

    def time(self) -> float:
        return self.now


def run_on_virtual_clock(work: Coroutine[Any, Any, R]) -> R:
    """Run ``work`` to the end on a new :class:`VirtualClockLoop`."""
    with asyncio.Runner(loop_factory=VirtualClockLoop) as runner:
        return runner.run(work)
