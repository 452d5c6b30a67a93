"""A SQLite file opened to read only, wherever it is: on a read-only file system too.

``status`` reads the ledger and must not need to write anything: not the ledger, and not the
folder it is in. SQLite opened read-only still makes the write-ahead log's shared-memory file
(``-shm``) beside the database, which a read-only file system (a read-only mount, a folder of
another user's) refuses, as "unable to open database file". There the file is opened
*immutable*: read as it is, without locks or the log. Nobody can be writing it then; what
a killed writer left in its log, and never wrote to the file, is not seen.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect_read_only(path: Path, *, timeout: float) -> tuple[sqlite3.Connection, str]:
    """A connection that reads ``path`` and can write nothing, anywhere; and the URI it was
    opened with, for another connection to ``ATTACH`` the file the same way (that one must be
    opened with ``uri=True``)."""
    uri = path.absolute().as_uri()
    for query in ("?mode=ro", "?mode=ro&immutable=1"):
        try:
            return _connect(uri + query, timeout), uri + query
        except sqlite3.OperationalError:  # (SQLite opens the file at the first statement)
            if query.endswith("immutable=1"):
                raise
    raise AssertionError("unreachable")


def _connect(uri: str, timeout: float) -> sqlite3.Connection:
    db = sqlite3.connect(
        uri, uri=True, isolation_level=None, timeout=timeout, check_same_thread=False
    )
    try:
        db.execute("PRAGMA query_only = ON")
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except BaseException:
        db.close()
        raise
    return db
