"""Where a dry run writes its events: standard output (``-`` or no ``--output``), or a file.

A file is written under a temporary name in its own folder and renamed to its name only when
the dry run finished: an interrupted or failed one leaves no half-written file behind (and an
earlier file of that name as it was). The name is the one the user gave, written through
``files/named.py``: a link a checkout holds there is replaced, never written through, and one
on the way refused; what is not a regular file (``/dev/null``, a FIFO of the user's) is
written to directly.
"""

from __future__ import annotations

import contextlib
import errno
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import ConfigError, OutputError
from ..files import named
from ..files.whose import Checkouts

STDOUT = "-"
"""The path that means standard output, as in most command-line tools."""


def is_stdout(path: Path | None) -> bool:
    """Whether ``path`` stands for standard output (none given, or ``-``)."""
    return path is None or str(path) == STDOUT


def check_output(path: Path, checkouts: Checkouts) -> None:
    """Refuse, before anything is read or sent, an output file that cannot be written (a
    missing or read-only folder, a folder, a link a checkout holds on the way)."""
    try:
        named.check_writable(path, checkouts)
    except OSError as exc:
        raise ConfigError(f"cannot write the events to {path}: {said(exc, path)}") from None


def said(exc: OSError, path: Path) -> str:
    """What an ``OSError`` of ``files/`` says of ``path``, in words."""
    if isinstance(exc, named.Refused):
        return exc.what(path)
    return str(exc.strerror or exc)


class EventsFile:
    """The stream a dry run writes to, and whether it got to keep what it wrote."""

    def __init__(self, stream: BinaryIO, path: Path | None) -> None:
        self.stream = stream
        self.path = path
        """The file, or None for standard output."""
        self.keep = False
        """Set when the dry run finished: only then does the file take its name."""


@contextlib.contextmanager
def events_file(path: Path | None, checkouts: Checkouts) -> Iterator[EventsFile]:
    """The dry run's events stream: standard output, or ``path`` written as a whole, at that
    very name (``files/named.py``: a link a checkout holds there is replaced, never written
    through)."""
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
    check_output(path, checkouts)
    stack = contextlib.ExitStack()
    try:
        new = stack.enter_context(named.replacing(path, checkouts))
    except OSError as exc:
        raise ConfigError(f"cannot write the events to {path}: {said(exc, path)}") from None
    written = EventsFile(new.stream, path)
    try:
        with stack:
            yield written
            new.keep = written.keep
    except OSError as exc:  # the last of it written on closing: a full disk
        raise OutputError(
            f"cannot write the events to {path}: {exc.strerror or exc}",
            exc.errno,
            exc.strerror or str(exc),
        ) from None
