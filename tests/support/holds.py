"""Holding a real export still at a point of our choosing, so a test's premise is something
it observes, never a sleep, a size or a speed.

:class:`OpenHold` takes a write lease (``fcntl(F_SETLEASE)``) on one file of the trail: the
next ``open()`` of it by another process waits in the kernel until we let go, and we see that
it waits. An export reads each segment once to scan the trail and once more to build the
events, in order, so a hold on a segment stops it *reading* (first open) or *building* (second
open) with everything before that segment done. The kernel lets the opener through by itself
after ``/proc/sys/fs/lease-break-time`` (45 s by default): a test lets go long before.

:class:`BuildingHold` chains two holds so that the second open is held for certain: the first
pass is stopped at the last segment, which proves the held segment was read and closed, before
the hold on it is taken again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

DEADLINE = 120.0
"""Seconds a test waits for what it observes before it fails saying what it waited for."""


def wait_until(
    condition: Callable[[], bool],
    what: str | Callable[[], str],
    timeout: float = DEADLINE,
    while_waiting: Callable[[], object] | None = None,
) -> None:
    """Return once ``condition()`` holds; fail naming ``what`` (or what it returns then)
    after ``timeout`` seconds.

    ``while_waiting`` runs between two looks (e.g. reading a terminal so the child never
    blocks on its output)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"waited {timeout:.0f} s for {said}")
        if while_waiting is not None:
            while_waiting()
        else:
            time.sleep(0.005)


class OpenHold:
    """The next open of ``path`` by another process waits until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDONLY)
        try:
            # The kernel tells a lease's holder that someone waits with a signal, SIGIO unless
            # said otherwise, which would end the test process: SIGWINCH is ignored by default.
            fcntl.fcntl(self._fd, fcntl.F_SETSIG, signal.SIGWINCH)
            fcntl.fcntl(self._fd, fcntl.F_SETLEASE, fcntl.F_WRLCK)
        except OSError:
            os.close(self._fd)
            self._fd = None
            raise

    @property
    def waiting(self) -> bool:
        """Whether someone is waiting to open the file (the kernel asks us to let go)."""
        assert self._fd is not None, "the hold was released"
        return bool(fcntl.fcntl(self._fd, fcntl.F_GETLEASE) != fcntl.F_WRLCK)

    def wait(self, what: str, while_waiting: Callable[[], object] | None = None) -> None:
        """Return once the export waits to open the file."""
        wait_until(
            lambda: self.waiting,
            f"the export to open {self.path.name} ({what})",
            while_waiting=while_waiting,
        )

    def release(self) -> None:
        """Let the opener through (and any later open)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.fcntl(self._fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            os.close(self._fd)
            self._fd = None


def segments(workspace: Path) -> list[Path]:
    """The trail's segments in the order an export reads them."""
    return sorted((workspace / ".workspace" / "lineage" / "audit").glob("*.jsonl*"))


@dataclass
class Holds:
    """Holds on a workspace's segments; every one is let go on leaving :func:`holding`."""

    held: list[OpenHold]

    def take(self, path: Path) -> OpenHold:
        hold = OpenHold(path)
        self.held.append(hold)
        return hold

    def release_all(self) -> None:
        for hold in self.held:
            hold.release()


@contextlib.contextmanager
def holding() -> Iterator[Holds]:
    holds = Holds([])
    try:
        yield holds
    finally:
        holds.release_all()


def hold_reading(holds: Holds, workspace: Path) -> OpenHold:
    """Take, before the export starts, a hold that stops its first pass at the second
    segment (the first one read: bytes done > 0). Wait on it with :meth:`OpenHold.wait`."""
    trail = segments(workspace)
    assert len(trail) >= 3, f"the trail needs three segments or more, it has {len(trail)}"
    return holds.take(trail[1])


class BuildingHold:
    """Stops an export's second pass (building events) at the second segment for certain.

    Taken before the export starts: a hold on the last segment stops the first pass there,
    which proves the second segment was read and closed; then the second segment is held
    again and the first pass let go. The second pass builds the first segment's runs and
    waits to open the second. Call :meth:`wait` once the export runs."""

    def __init__(self, holds: Holds, workspace: Path) -> None:
        trail = segments(workspace)
        assert len(trail) >= 3, f"the trail needs three segments or more, it has {len(trail)}"
        self._holds = holds
        self._second = trail[1]
        self._last = holds.take(trail[-1])
        self.hold: OpenHold | None = None

    def wait(self, while_waiting: Callable[[], object] | None = None) -> OpenHold:
        """Return once the export waits to open the second segment for its second pass."""
        self._last.wait("reading the last segment", while_waiting)
        self.hold = self._holds.take(self._second)  # read and closed: the first pass is past it
        self._last.release()
        self.hold.wait("building events from it", while_waiting)
        return self.hold
