"""One export at a time per (workspace, destination): a lock file in the state folder.

Two exports of one workspace to one destination side by side would both send the runs neither
has recorded yet (most of them, twice). The second one is refused, naming the process that
holds the lock, rather than made to wait: an export can take hours, and a scheduler that
started it again wants to know at once (exit code 5; run it again later).

The lock is ``flock`` on a file in ``<state dir>/locks/`` (opened through ``files/``: never a
link, the state folder the user's own, outside every checkout): the kernel releases it when
its holder ends, however it ends (even ``kill -9``), so a killed export never leaves one
behind. The file stays (removing it would race with the next export opening it); it holds the
holder's process id, for the message. The holder writes that id just after it takes the lock,
so a refused export may look in between: it then waits, up to :data:`NAMING_WAIT` seconds, for
a live process's id to appear (an id left by a killed holder is never named), and says
"another process" only if none does. A dry run takes no lock.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from pathlib import Path

from ..errors import ExportBusy
from ..files.walk import try_lock
from ..files.whose import NOWHERE, Checkouts
from . import state_errors
from .folder import state_folder as state_folder_of

LOCKS = "locks"
"""The folder of lock files, in the state folder."""

NAMING_WAIT = 2.0
"""Seconds a refused export waits for the holder, which has just taken the lock, to write its
process id (a matter of microseconds, unless the machine is very busy)."""


class ExportLock:
    """Held while one export of a workspace to a destination runs; :meth:`release` it."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    @classmethod
    def acquire(
        cls,
        state_folder: Path,
        workspace: str,
        destination: str,
        checkouts: Checkouts = NOWHERE,
    ) -> ExportLock:
        """Take the lock of (workspace, destination), or raise :class:`ExportBusy` naming the
        process that holds it. ``StateError`` when the state folder cannot hold a lock file,
        or is not the user's (it lies in a checkout: ``checkouts``)."""
        key = hashlib.blake2b(f"{workspace}\x00{destination}".encode(), digest_size=10)
        path = state_folder / LOCKS / f"{key.hexdigest()}.lock"
        with state_errors(
            f"the lock file {path}",
            f"check that {state_folder} is a folder you can write to, or set "
            "OPENLINEAGE_EXPORT_STATE_DIR to another one",
            full="free some space there, or set OPENLINEAGE_EXPORT_STATE_DIR to a folder with room",
        ):
            with (
                state_folder_of(state_folder, checkouts, create=True) as folder,
                folder.child(LOCKS, create=True, mode=0o700) as locks,
            ):
                fd = locks.lock_file(path.name)  # never a link: a committed one is refused
            try:
                _take(fd, workspace, destination)
            except BaseException:
                os.close(fd)
                raise
            try:
                line = f"{os.getpid()}\n{workspace}\n{destination}\n".encode()
                os.pwrite(fd, line, 0)
                os.ftruncate(fd, len(line))
            except OSError:
                pass  # the pid is for the message only; the lock is what counts
        return cls(path, fd)

    def release(self) -> None:
        """Let the next export of this workspace to this destination start."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # no id left behind to name once it is not the holder's
            os.close(fd)  # closing the last descriptor releases the flock

    def __enter__(self) -> ExportLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _take(fd: int, workspace: str, destination: str) -> None:
    """Take the flock on ``fd``, or raise :class:`ExportBusy` naming its holder."""
    deadline = time.monotonic() + NAMING_WAIT
    while not try_lock(fd):
        holder = _holder(fd)
        if holder is None and time.monotonic() < deadline:
            time.sleep(0.01)  # the holder is writing its id, or about to
            continue
        who = f"process {holder}" if holder else "another process"
        raise ExportBusy(
            f"another export of {workspace} to {destination} is running ({who}); "
            "nothing was sent: wait for it to finish, or stop it, then export again"
        )


def _holder(fd: int) -> int | None:
    """The id of the live process the lock's holder wrote, if it got to write it yet."""
    try:
        first = os.pread(fd, 64, 0).split(b"\n", 1)[0]
    except OSError:
        return None
    if not first.isdigit():
        return None
    pid = int(first)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # left by a holder that was killed: the new one has not written yet
    except OSError:
        pass  # alive, another user's
    return pid
