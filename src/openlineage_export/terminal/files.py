"""Where a dry run writes its events: standard output (``-`` or no ``--output``), or a file.

A file is written under a temporary name in its own folder and renamed to its name only when
the dry run finished: an interrupted or failed one leaves no half-written file behind (and an
earlier file of that name as it was). What is not a regular file (``/dev/null``, a FIFO) is
written to directly.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import ConfigError, OutputError

STDOUT = "-"
"""The path that means standard output, as in most command-line tools."""


def is_stdout(path: Path | None) -> bool:
    """Whether ``path`` stands for standard output (none given, or ``-``)."""
    return path is None or str(path) == STDOUT


def check_output(path: Path) -> None:
    """Refuse, before anything is read or sent, an output file that cannot be written."""
    folder = path.absolute().parent
    if not folder.is_dir():
        raise ConfigError(f"cannot write the events to {path}: folder {folder} does not exist")
    if path.is_dir():
        raise ConfigError(f"cannot write the events to {path}: it is a folder")
    if not os.access(folder, os.W_OK) and not path.exists():
        raise ConfigError(f"cannot write the events to {path}: folder {folder} is not writable")


class EventsFile:
    """The stream a dry run writes to, and whether it got to keep what it wrote."""

    def __init__(self, stream: BinaryIO, path: Path | None) -> None:
        self.stream = stream
        self.path = path
        """The file, or None for standard output."""
        self.keep = False
        """Set when the dry run finished: only then does the file take its name."""


@contextlib.contextmanager
def events_file(path: Path | None) -> Iterator[EventsFile]:
    """The dry run's events stream: standard output, or ``path`` written as a whole."""
    if is_stdout(path):
        if sys.stdout is None:  # started with >&-
            raise OutputError(
                "cannot write the events to standard output: it is closed",
                errno.EBADF,
                "it is closed",
            )
        yield EventsFile(sys.stdout.buffer, None)
        return
    assert path is not None
    check_output(path)
    target = path.resolve() if path.is_symlink() else path
    if target.exists() and not stat.S_ISREG(target.stat().st_mode):
        with _opened(target, "wb") as stream:  # a device or a FIFO: no rename over it
            yield EventsFile(stream, path)
        return
    try:
        handle, temp = tempfile.mkstemp(
            dir=target.absolute().parent, prefix=f".{target.name}.", suffix=".part"
        )
    except OSError as exc:
        raise ConfigError(f"cannot write the events to {path}: {exc.strerror}") from None
    written = EventsFile(os.fdopen(handle, "wb"), path)
    try:
        try:
            with written.stream:
                yield written
        except OSError as exc:  # the last of it written on closing: a full disk
            raise OutputError(
                f"cannot write the events to {path}: {exc.strerror or exc}",
                exc.errno,
                exc.strerror or str(exc),
            ) from None
        if written.keep:
            os.chmod(temp, _mode_for(target))
            os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


@contextlib.contextmanager
def _opened(path: Path, mode: str) -> Iterator[BinaryIO]:
    try:
        stream = path.open(mode)
    except OSError as exc:
        raise ConfigError(f"cannot write the events to {path}: {exc.strerror}") from None
    with stream:
        yield stream  # type: ignore[misc]


def _mode_for(target: Path) -> int:
    """The permissions the file would have had if written in place: its own, else the
    default for a new file (mkstemp makes it private)."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
