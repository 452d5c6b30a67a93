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

from ..files.database import Database, connect
from ..files.walk import Folder


def connect_read_only(folder: Folder, name: str, *, timeout: float) -> Database:
    """A connection that reads the database ``name`` in ``folder`` and can write nothing,
    anywhere (another connection attaches it the same way: ``Database.uri``)."""
    for immutable in (False, True):
        database = connect(folder, name, read_only=True, immutable=immutable, timeout=timeout)
        try:
            database.db.execute("PRAGMA query_only = ON")
            database.db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.OperationalError:  # (SQLite opens the file at the first statement)
            database.close()
            if immutable:
                raise
            continue
        except BaseException:
            database.close()
            raise
        return database
    raise AssertionError("unreachable")
