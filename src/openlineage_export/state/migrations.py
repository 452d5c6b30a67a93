"""The ledger's schema and its history: each change one named migration, applied once, in
order, and recorded in ``_migrations`` in the same transaction as the change."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Literal

Remembered = Literal["namespace", "server", "batch"]
"""What the ledger remembers of a destination between exports: the job namespace of the last
export (a change is worth a warning), the read API its server answered when asked what it
holds (``translate/asking.py``'s name), whether it takes the spec's batches (``yes``, ``no``)."""

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE destinations (
            id INTEGER PRIMARY KEY,
            workspace TEXT NOT NULL,
            destination TEXT NOT NULL,
            last_export_started TEXT,
            last_export_finished TEXT,
            UNIQUE (workspace, destination));
        CREATE TABLE runs (
            destination_id INTEGER NOT NULL REFERENCES destinations (id),
            trace_id TEXT NOT NULL,
            run_id TEXT NOT NULL,
            line_fingerprint BLOB NOT NULL,
            config_fingerprint BLOB NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('delivered', 'failed')),
            events INTEGER NOT NULL,
            reason TEXT,
            PRIMARY KEY (destination_id, trace_id)) WITHOUT ROWID;
    """,
    ),
    (
        "0002_last_export_outcome",
        """
        ALTER TABLE destinations ADD COLUMN last_export_outcome TEXT;
    """,
    ),
    # The job namespace of the last export to a destination: a change is worth a warning.
    (
        "0003_namespace",
        """
        ALTER TABLE destinations ADD COLUMN namespace TEXT;
    """,
    ),
    # Which read API the server answered when last asked what it holds (deliver/http/held.py):
    # one that keeps every event it is given (Feast) is asked again before each export.
    (
        "0004_server",
        """
        ALTER TABLE destinations ADD COLUMN server TEXT;
    """,
    ),
    # Whether the server takes the spec's batches (deliver/http/batching.py): learnt once.
    (
        "0005_batch",
        """
        ALTER TABLE destinations ADD COLUMN batch TEXT;
    """,
    ),
]


def migrate(db: sqlite3.Connection) -> None:
    """Bring the ledger's schema up to date: each migration not yet applied, in order, in a
    transaction of its own (another process may be migrating the same file: it is checked
    again inside the transaction)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            if name not in {r[0] for r in db.execute("SELECT name FROM _migrations")}:
                for statement in filter(str.strip, sql.split(";")):
                    db.execute(statement)
                db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, now()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def now() -> str:
    """Wall-clock time for bookkeeping only (never in an event)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def up_to_date(db: sqlite3.Connection) -> bool:
    """Whether every migration was applied to ``db`` (which may be read-only)."""
    try:
        done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
    except sqlite3.OperationalError:  # no such table: never migrated
        return False
    return all(name in done for name, _ in MIGRATIONS)
