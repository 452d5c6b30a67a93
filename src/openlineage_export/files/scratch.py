"""A scratch folder of our own, for what one process keeps on disk only while it runs (the run
index): made new in the temporary folder (``TMPDIR``), private (0700), named after the process,
and removed at the end; one that a killed process left is removed by the next.

Made new (``mkdtemp``: a name nobody held, ``O_EXCL``), it holds nothing but what we put there;
removing one left behind never follows a link (``shutil.rmtree`` does not).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from pathlib import Path


def temporary(parent: Path | None = None) -> Path:
    """``parent``, or the temporary folder (``TMPDIR``, else the system's) when None."""
    return Path(parent) if parent is not None else Path(tempfile.gettempdir())


class Scratch:
    """A private folder of this process's, removed by :meth:`remove`."""

    def __init__(self, prefix: str, parent: Path | None = None) -> None:
        """Make one in ``parent`` (default: the temporary folder), named ``prefix<pid>-...``."""
        self.parent = temporary(parent)
        self.path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=self.parent))

    def database(self, name: str) -> sqlite3.Connection:
        """A new SQLite file ``name`` in it, connected with URIs on (so that another database
        can be attached by its URI), for any thread, in autocommit mode."""
        return sqlite3.connect(
            (self.path / name).absolute().as_uri(),
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )

    def remove(self) -> None:
        """Remove the folder and all it holds (links removed, never followed)."""
        shutil.rmtree(self.path, ignore_errors=True)


def remove_abandoned(parent: Path | None, prefix: str, running: Callable[[int], bool]) -> None:
    """Remove the scratch folders ``prefix<pid>-...`` in ``parent`` (default: the temporary
    folder) whose process is no longer ``running``."""
    where = temporary(parent)
    try:
        names = os.listdir(where)
    except OSError:
        return
    for name in names:
        if not name.startswith(prefix):
            continue
        pid_text = name.removeprefix(prefix).partition("-")[0]
        if pid_text.isdigit() and not running(int(pid_text)):
            shutil.rmtree(where / name, ignore_errors=True)
