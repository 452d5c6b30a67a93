"""SQLite files, opened through the seam: the ledger in the user's state folder (``users.py``)
and the run index in a scratch folder of our own (``scratch.py``).

SQLite opens a database by its name, and the files it keeps beside it (``-wal``, ``-shm``,
``-journal``) by theirs, following links; Python cannot hand it ``SQLITE_OPEN_NOFOLLOW``, and
no ``file:`` URI parameter asks for it. So the database is opened here first, by name in a
folder held open (``walk.Folder``): a regular file, never a link, with no other name (a hard
link); the files beside it must be missing or the same. SQLite is then handed
``/proc/self/fd/N`` for the descriptor held (it reads that link once, to the real path of the
very file that was checked, and keeps its files beside it), and once it is connected the name
is checked to still be that file. Where there is no ``/proc``, the path walked.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .walk import Folder, kind, refused

BESIDE = ("-wal", "-shm", "-journal")
"""The files SQLite keeps beside a database, by the suffix of its name."""

_FDS = Path("/proc/self/fd")


@dataclass
class Database:
    """A connection to a database file opened through the seam, and the name another
    connection attaches it by (:func:`attach`: the same way, read-only included)."""

    db: sqlite3.Connection
    uri: str
    fd: int = field(repr=False)
    """The file held open while the connection lives (what ``uri`` stands for)."""

    def close(self) -> None:
        """Close the connection, and let go of the file."""
        try:
            self.db.close()
        finally:
            if self.fd >= 0:
                os.close(self.fd)
                self.fd = -1


def _check_beside(folder: Folder, name: str) -> None:
    for suffix in ("", *BESIDE):
        found = folder.look(name + suffix)
        if found is None:
            continue
        if not stat.S_ISREG(found.st_mode):
            raise refused(folder.path / (name + suffix), f"{kind(found.st_mode)}, not a file")
        if found.st_nlink > 1:
            raise refused(
                folder.path / (name + suffix), "a file with another name elsewhere (a hard link)"
            )


def connect(
    folder: Folder,
    name: str,
    *,
    create: bool = False,
    read_only: bool = False,
    immutable: bool = False,
    timeout: float = 5.0,
) -> Database:
    """The database ``name`` in ``folder`` (made, 0600, when missing and ``create``;
    ``FileNotFoundError`` otherwise), connected for any thread, in autocommit mode.
    ``read_only`` writes nothing; ``immutable`` reads the file as it is, without locks or the
    log (a read-only file system). :class:`~.walk.Refused` for a link, what is no file, a
    file with another name elsewhere, there or beside it."""
    _check_beside(folder, name)
    fd = folder.open_file(name, (os.O_RDWR | os.O_CREAT) if create else os.O_RDONLY, 0o600)
    try:
        if os.fstat(fd).st_nlink > 1:
            raise refused(folder.path / name, "a file with another name elsewhere (a hard link)")
        held = _FDS / str(fd)
        target = held if _FDS.is_dir() else folder.path / name
        query = "?mode=ro&immutable=1" if immutable else "?mode=ro" if read_only else "?mode=rw"
        uri = target.as_uri() + query
        db = sqlite3.connect(
            uri, uri=True, isolation_level=None, timeout=timeout, check_same_thread=False
        )
        try:
            _check_same(folder, name, fd)
        except BaseException:
            db.close()
            raise
    except BaseException:
        os.close(fd)
        raise
    return Database(db, uri, fd)


def _check_same(folder: Folder, name: str, fd: int) -> None:
    """The name still stands for the file held (no link or other file put there since)."""
    found = folder.look(name)
    held = os.fstat(fd)
    if found is None or (found.st_dev, found.st_ino) != (held.st_dev, held.st_ino):
        raise refused(folder.path / name, "replaced while it was being opened")


def attach(db: sqlite3.Connection, database: Database, alias: str) -> None:
    """Attach ``database`` to the connection ``db`` (opened with URIs on) as ``alias``."""
    db.execute(f"ATTACH DATABASE ? AS {alias}", (database.uri,))


def detach(db: sqlite3.Connection, alias: str) -> None:
    """Detach what :func:`attach` attached as ``alias``."""
    db.execute(f"DETACH DATABASE {alias}")
