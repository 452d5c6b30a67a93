"""The export ledger: which runs each destination has accepted, so exports send only changes.

One SQLite file in the user's state directory (never in the workspace), keyed by workspace
and destination. A run enters it only once every one of its events was accepted; a run whose
record line changed since (a run exported while running has ended), or that was exported with
other settings, is pending again. Writes are transactional, batched, and committed before the
export returns, on cancel too, so an interrupted export loses nothing: the next one sends
exactly what was not yet accepted.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..errors import ConfigError
from ..hub.index import RunIndex, Winner

STATE_DIR_ENV = "OPENLINEAGE_EXPORT_STATE_DIR"

_MIGRATIONS: list[tuple[str, str]] = [
    ("0001_initial", """
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
    """),
]


def state_dir(environ: Mapping[str, str]) -> Path:
    """``$OPENLINEAGE_EXPORT_STATE_DIR``, else ``$XDG_STATE_HOME/openlineage-export``."""
    if environ.get(STATE_DIR_ENV):
        return Path(environ[STATE_DIR_ENV]).expanduser()
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base).expanduser() / "openlineage-export"


def config_fingerprint(*parts: str | None) -> bytes:
    """A fingerprint of everything besides the record that shapes a run's events."""
    return hashlib.blake2b("\x00".join(p or "" for p in parts).encode(), digest_size=12).digest()


@dataclass(frozen=True, slots=True)
class DestinationStatus:
    """What the ledger knows about one destination of a workspace."""

    destination: str
    delivered: int
    failed: int
    last_export_started: str | None
    last_export_finished: str | None


class Ledger:
    """The ledger file; one connection, used from one thread (the export's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            path.touch(mode=0o600, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None, timeout=30)
            self.db.execute("PRAGMA journal_mode = WAL")
            self.db.execute("PRAGMA synchronous = NORMAL")
            self._migrate()
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open the export ledger {path}: {exc}") from None
        self._unsaved = 0
        self._last_commit = time.monotonic()

    @classmethod
    def open(cls, environ: Mapping[str, str]) -> Ledger:
        """The user's ledger."""
        return cls(state_dir(environ) / "ledger.sqlite")

    def _migrate(self) -> None:
        self.db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, "
                        "applied_at TEXT NOT NULL)")
        done = {row[0] for row in self.db.execute("SELECT name FROM _migrations")}
        for name, sql in _MIGRATIONS:
            if name in done:
                continue
            self.db.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, sql.split(";")):
                self.db.execute(statement)
            self.db.execute("INSERT INTO _migrations VALUES (?, ?)", (name, _now()))
            self.db.execute("COMMIT")

    def destination_id(self, workspace: str, destination: str) -> int:
        """The id of (workspace, destination), created on first use."""
        self.db.execute("INSERT OR IGNORE INTO destinations (workspace, destination) "
                        "VALUES (?, ?)", (workspace, destination))
        row = self.db.execute("SELECT id FROM destinations WHERE workspace = ? AND "
                              "destination = ?", (workspace, destination)).fetchone()
        return int(row[0])

    def started(self, destination_id: int) -> None:
        """Note when an export to this destination began."""
        self.db.execute("UPDATE destinations SET last_export_started = ? WHERE id = ?",
                        (_now(), destination_id))

    def finished(self, destination_id: int) -> None:
        """Commit what is pending and note when the export ended."""
        self._begin()
        self.db.execute("UPDATE destinations SET last_export_finished = ? WHERE id = ?",
                        (_now(), destination_id))
        self.commit()

    def classify(self, index: RunIndex, destination_id: int,
                 config: bytes) -> Iterator[Winner]:
        """Every winner of the trail in trail order, ``pending`` when it must be sent."""
        self.commit()
        index.db.execute("ATTACH DATABASE ? AS ledger", (str(self.path),))
        try:
            rows = index.db.execute(
                "SELECT w.trace_id, w.segment, w.line, w.fingerprint, "
                "  (r.state IS NOT 'delivered' OR r.line_fingerprint IS NOT w.fingerprint "
                "   OR r.config_fingerprint IS NOT ?) "
                "FROM winners AS w LEFT JOIN ledger.runs AS r "
                "  ON r.destination_id = ? AND r.trace_id = w.trace_id "
                "ORDER BY w.segment, w.line", (config, destination_id))
            for trace_id, segment, line, fingerprint, pending in rows:
                yield Winner(trace_id, segment, line, bytes(fingerprint), bool(pending))
        finally:
            with contextlib.suppress(sqlite3.Error):  # the export may end before the last row
                index.db.execute("DETACH DATABASE ledger")

    def record(self, destination_id: int, winner: Winner, run_id: str, config: bytes,
               *, delivered: bool, events: int, reason: str | None = None) -> None:
        """Record a run as delivered (all its events accepted) or failed (with the reason)."""
        self._begin()
        self.db.execute(
            "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (destination_id, "
            "trace_id) DO UPDATE SET run_id = excluded.run_id, "
            "line_fingerprint = excluded.line_fingerprint, "
            "config_fingerprint = excluded.config_fingerprint, state = excluded.state, "
            "events = excluded.events, reason = excluded.reason",
            (destination_id, winner.trace_id, run_id, winner.fingerprint, config,
             "delivered" if delivered else "failed", events, reason))
        self._unsaved += 1
        if self._unsaved >= 500 or time.monotonic() - self._last_commit > 1.0:
            self.commit()

    def _begin(self) -> None:
        if not self.db.in_transaction:
            self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Make every recorded run durable."""
        if self.db.in_transaction:
            self.db.execute("COMMIT")
        self._unsaved = 0
        self._last_commit = time.monotonic()

    def status(self, workspace: str) -> list[DestinationStatus]:
        """What the ledger knows of each destination this workspace was exported to."""
        rows = self.db.execute(
            "SELECT d.destination, "
            "  (SELECT count(*) FROM runs r WHERE r.destination_id = d.id "
            "     AND r.state = 'delivered'), "
            "  (SELECT count(*) FROM runs r WHERE r.destination_id = d.id "
            "     AND r.state = 'failed'), "
            "  d.last_export_started, d.last_export_finished "
            "FROM destinations d WHERE d.workspace = ? ORDER BY d.destination", (workspace,))
        return [DestinationStatus(*row) for row in rows]

    def close(self) -> None:
        """Commit and close."""
        self.commit()
        self.db.close()


def _now() -> str:
    """Wall-clock time for bookkeeping only (never in an event)."""
    return datetime.now(UTC).isoformat(timespec="seconds")
