"""The export ledger: which runs each destination has accepted, so exports send only changes.

One SQLite file in the user's state directory (never in the workspace, nor in any checkout:
``folder.state_folder``; opened through ``files/database.py``), keyed by workspace and
destination. A run enters it only once every one of its events was accepted; a run whose
record line changed since (a run exported while running has ended), or that was exported with
other settings, is *pending* again. Records are buffered and written in short transactions
(never held open while a server is slow), and the buffer is written before the export returns,
on cancel too: an interrupted export loses nothing, and the next one sends exactly what was
not yet accepted. Records are also written at least every second while the export waits on
a slow destination, so ``status`` shows them and a killed export sends them no second time.
Several processes may use one ledger at once (WAL, a busy timeout).

When a write fails (a full disk, a damaged file), the ledger stops recording: the error is
raised once, by :meth:`Ledger.record`, :meth:`Ledger.flush` or :meth:`Ledger.finished`, and
no later write is tried. A run is never recorded that the destination did not accept.
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..errors import StateError
from ..files.database import Database, attach, connect, detach
from ..files.walk import Folder
from ..files.whose import NOWHERE, Checkouts
from . import state_errors
from .answers import Classified, DestinationStatus
from .folder import ADVICE, DAMAGED, FULL, STATE_DIR_ENV, state_dir, state_folder
from .index import EVERY_RUN, RunFilter, RunIndex, Winner
from .migrations import Remembered, migrate, now, up_to_date
from .readonly import connect_read_only

BUSY_TIMEOUT_MS = 30_000
"""How long a write waits for another process's short transaction to end."""

_FLUSH_EVERY = 100
_FLUSH_AFTER = 1.0  # seconds: a recorded run reaches the file at most this much later


def config_fingerprint(*parts: str | None) -> bytes:
    """A fingerprint of everything besides the record that shapes a run's events."""
    return hashlib.blake2b("\x00".join(p or "" for p in parts).encode(), digest_size=12).digest()


class Ledger:
    """The ledger file; one connection, used from the export's thread (and, to write what is
    recorded while the export waits, from a timer thread of its own, under one lock)."""

    def __init__(
        self, path: Path, *, read_only: bool = False, checkouts: Checkouts = NOWHERE
    ) -> None:
        """The ledger file ``path`` (made when missing, unless ``read_only``), in a folder of
        the user's: outside every checkout (``checkouts``), never through a link."""
        self.path = path
        self.read_only = read_only
        with self._errors():
            with state_folder(path.parent, checkouts, create=not read_only) as folder:
                if read_only:
                    self._database = self._read_only(folder)
                else:
                    self._database = self._writable(folder, create=True)
            self.db = self._database.db
            self._check_whole()
            if not read_only:
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = NORMAL")
                migrate(self.db)
        self._buffer: list[tuple[object, ...]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._timer: threading.Thread | None = None
        self._broken: StateError | None = None

    def _writable(self, folder: Folder, *, create: bool = False) -> Database:
        database = connect(folder, self.path.name, create=create, timeout=BUSY_TIMEOUT_MS / 1000)
        database.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return database

    def _read_only(self, folder: Folder) -> Database:
        """The ledger to read, writing nothing (on a read-only file system too); a ledger an
        older version wrote is brought up to date first, as an export would."""
        database = connect_read_only(folder, self.path.name, timeout=BUSY_TIMEOUT_MS / 1000)
        database.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if up_to_date(database.db):
            return database
        database.close()
        writable = self._writable(folder)
        try:
            migrate(writable.db)
        finally:
            writable.close()
        database = connect_read_only(folder, self.path.name, timeout=BUSY_TIMEOUT_MS / 1000)
        database.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        return database

    @classmethod
    def open(cls, environ: Mapping[str, str], checkouts: Checkouts = NOWHERE) -> Ledger:
        """The user's ledger, created on first use (its folder outside every checkout)."""
        return cls(state_dir(environ) / "ledger.sqlite", checkouts=checkouts)

    @classmethod
    def open_read_only(
        cls, environ: Mapping[str, str], checkouts: Checkouts = NOWHERE
    ) -> Ledger | None:
        """The user's ledger to read (``status``), or None when there is none yet."""
        path = state_dir(environ) / "ledger.sqlite"
        try:
            with state_folder(path.parent, checkouts, create=False) as folder:
                if folder.look(path.name) is None:
                    return None  # never exported from here
        except FileNotFoundError:
            return None
        except OSError as exc:  # the state folder is a file, or cannot be searched
            raise StateError(
                f"cannot read the export ledger {path} ({exc.strerror or exc}); "
                + ADVICE.format(folder=path.parent, env=STATE_DIR_ENV)
            ) from None
        return cls(path, read_only=True, checkouts=checkouts)

    def _errors(self) -> contextlib.AbstractContextManager[None]:
        return state_errors(
            f"the export ledger {self.path}",
            ADVICE.format(folder=self.path.parent, env=STATE_DIR_ENV),
            full=FULL.format(env=STATE_DIR_ENV),
            damaged=DAMAGED.format(path=self.path),
        )

    def _check_whole(self) -> None:
        """SQLite's structural check of the whole file (``PRAGMA quick_check``): a damage the
        export's own reads may never touch (a destination's row overwritten, while its index
        still points there) would otherwise make every run pending again without a word.
        Reads every page once: a few milliseconds for thousands of runs."""
        found = self.db.execute("PRAGMA quick_check(1)").fetchone()
        if found is not None and found[0] != "ok":
            problem = str(found[0]).strip().splitlines()[-1]
            raise StateError(
                f"the export ledger {self.path} cannot be used (damaged: "
                f"{problem}); {DAMAGED.format(path=self.path)}"
            )

    def find_destination(self, workspace: str, destination: str) -> int | None:
        """The id of (workspace, destination), or None when it was never exported to."""
        with self._lock, self._errors():
            row = self.db.execute(
                "SELECT id FROM destinations WHERE workspace = ? AND destination = ?",
                (workspace, destination),
            ).fetchone()
        return None if row is None else int(row[0])

    def destination_id(self, workspace: str, destination: str) -> int:
        """The id of (workspace, destination), created on first use."""
        with self._lock, self._errors():
            self.db.execute(
                "INSERT OR IGNORE INTO destinations (workspace, destination) VALUES (?, ?)",
                (workspace, destination),
            )
        found = self.find_destination(workspace, destination)
        assert found is not None
        return found

    def remembered(self, destination_id: int, column: Remembered) -> str | None:
        """What is remembered of the destination (None: nothing yet): see :data:`Remembered`."""
        with self._errors():
            row = self.db.execute(  # one constant statement, as remember's
                "SELECT CASE ?1 WHEN 'namespace' THEN namespace WHEN 'server' THEN server"
                " WHEN 'batch' THEN batch END FROM destinations WHERE id = ?2",
                (column, destination_id),
            ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def remember(self, destination_id: int, column: Remembered, value: str) -> None:
        """Remember ``value`` of the destination, for the next export to it."""
        with self._errors():
            self.db.execute(  # one constant statement (tests/test_seam.py), any column
                "UPDATE destinations SET namespace = CASE ?1 WHEN 'namespace' THEN ?2 ELSE"
                " namespace END, server = CASE ?1 WHEN 'server' THEN ?2 ELSE server END,"
                " batch = CASE ?1 WHEN 'batch' THEN ?2 ELSE batch END WHERE id = ?3",
                (column, value, destination_id),
            )

    def started(self, destination_id: int) -> None:
        """Note when an export to this destination began."""
        with self._lock, self._errors():
            self.db.execute(
                "UPDATE destinations SET last_export_started = ?, "
                "last_export_outcome = NULL WHERE id = ?",
                (now(), destination_id),
            )

    def finished(self, destination_id: int, outcome: str = "finished") -> None:
        """Write what is buffered and note when (and how) the export ended."""
        self.flush()
        with self._lock, self._errors():
            self.db.execute(
                "UPDATE destinations SET last_export_finished = ?, "
                "last_export_outcome = ? WHERE id = ?",
                (now(), outcome, destination_id),
            )

    def classify(
        self,
        index: RunIndex,
        destination_id: int | None,
        config: bytes,
        only: RunFilter = EVERY_RUN,
    ) -> Iterator[Classified]:
        """Every run of the trail (that ``only`` takes) in trail order, ``pending`` when it
        must be sent."""
        where, params = index.where(only, "w")
        with self.attached(index) as db, self._errors():
            rows = db.execute(
                "SELECT w.trace_id, w.segment, w.line, w.fingerprint, w.check_sum, "
                "  (r.state IS NOT 'delivered' OR r.line_fingerprint IS NOT w.fingerprint "
                "   OR r.config_fingerprint IS NOT ?) "
                "FROM winners AS w LEFT JOIN ledger.runs AS r "
                "  ON r.destination_id = ? AND r.trace_id = w.trace_id "
                f"WHERE {where} ORDER BY w.segment, w.line",
                (config, -1 if destination_id is None else destination_id, *params),
            )
            for trace_id, segment, line, fingerprint, check, pending in rows:
                yield Classified(
                    Winner(trace_id, segment, line, bytes(fingerprint), check), bool(pending)
                )

    def accepted_any(self, destination_id: int) -> bool:
        """Whether the ledger holds any run this destination accepted (under any settings)."""
        self.flush()
        with self._lock, self._errors():
            row = self.db.execute(
                "SELECT 1 FROM runs WHERE destination_id = ? AND state = 'delivered' LIMIT 1",
                (destination_id,),
            ).fetchone()
        return row is not None

    def accepted_sample(
        self,
        index: RunIndex,
        destination_id: int,
        config: bytes,
        limit: int,
        only: RunFilter = EVERY_RUN,
    ) -> list[str]:
        """The run ids of the last ``limit`` runs of the trail (that ``only`` takes) the ledger
        holds as accepted (this very record, these settings), the last first: what to ask a
        server about."""
        where, params = index.where(only, "w")
        with self.attached(index) as db, self._errors():
            rows = db.execute(
                "SELECT r.run_id FROM winners AS w JOIN ledger.runs AS r "
                "  ON r.destination_id = ? AND r.trace_id = w.trace_id "
                "WHERE r.state = 'delivered' AND r.line_fingerprint = w.fingerprint "
                f"  AND r.config_fingerprint = ? AND {where} "
                "ORDER BY w.segment DESC, w.line DESC LIMIT ?",
                (destination_id, config, *params, limit),
            ).fetchall()
        return [str(row[0]) for row in rows]

    @contextlib.contextmanager
    def attached(self, index: RunIndex) -> Iterator[sqlite3.Connection]:
        """The run index's connection, with this ledger attached to it as ``ledger`` (what
        either still holds in memory written first); detached when done."""
        self.flush()
        index.seal()
        with self._errors():
            attach(index.db, self._database, "ledger")
        try:
            yield index.db
        finally:
            with contextlib.suppress(sqlite3.Error):  # the export may end before the last row
                detach(index.db, "ledger")

    def record(
        self,
        destination_id: int,
        winner: Winner,
        run_id: str,
        config: bytes,
        *,
        delivered: bool,
        events: int,
        reason: str | None = None,
    ) -> None:
        """Record a run as delivered (all its events accepted) or failed (with the reason).

        Durable within :data:`_FLUSH_AFTER` seconds, or at :meth:`flush`; raises the
        :class:`StateError` of a write that failed meanwhile.
        """
        with self._lock:
            if self._broken is not None:
                raise self._broken
            self._buffer.append(
                (
                    destination_id,
                    winner.trace_id,
                    run_id,
                    winner.fingerprint,
                    config,
                    "delivered" if delivered else "failed",
                    events,
                    reason,
                )
            )
            if len(self._buffer) >= _FLUSH_EVERY:
                self._write()
        if self._timer is None:
            self._timer = threading.Thread(
                target=self._flush_regularly, daemon=True, name="ledger-flush"
            )
            self._timer.start()

    def flush(self) -> None:
        """Make every recorded run durable, in one short transaction."""
        with self._lock:
            self._write()

    def _flush_regularly(self) -> None:
        while not self._closing.wait(_FLUSH_AFTER):
            with self._lock:
                try:
                    self._write()
                except StateError:
                    return  # kept in _broken (a write that failed before raises it too)

    def _write(self) -> None:
        if self._broken is not None:
            raise self._broken
        if not self._buffer:
            return
        try:
            with self._errors():
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    self.db.executemany(
                        "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT "
                        "(destination_id, trace_id) DO UPDATE SET run_id = excluded.run_id, "
                        "line_fingerprint = excluded.line_fingerprint, "
                        "config_fingerprint = excluded.config_fingerprint, "
                        "state = excluded.state, events = excluded.events, "
                        "reason = excluded.reason",
                        self._buffer,
                    )
                    self.db.execute("COMMIT")
                except BaseException:
                    with contextlib.suppress(sqlite3.Error):
                        self.db.execute("ROLLBACK")
                    raise
        except StateError as exc:
            self._broken = exc
            raise
        self._buffer.clear()

    def status(self, workspace: str) -> list[DestinationStatus]:
        """What the ledger knows of each destination this workspace was exported to."""
        with self._lock, self._errors():
            rows = self.db.execute(
                "SELECT d.destination, "
                "  (SELECT count(*) FROM runs r WHERE r.destination_id = d.id "
                "     AND r.state = 'delivered'), "
                "  (SELECT count(*) FROM runs r WHERE r.destination_id = d.id "
                "     AND r.state = 'failed'), "
                "  d.last_export_started, d.last_export_finished, d.last_export_outcome "
                "FROM destinations d WHERE d.workspace = ? ORDER BY d.destination",
                (workspace,),
            ).fetchall()
        return [DestinationStatus(*row) for row in rows]

    def forget(self, workspace: str, destination: str) -> bool:
        """Drop everything the ledger knows of one destination of a workspace; True if known."""
        found = self.find_destination(workspace, destination)
        if found is None:
            return False
        with self._lock, self._errors():
            self.db.execute("BEGIN IMMEDIATE")
            self.db.execute("DELETE FROM runs WHERE destination_id = ?", (found,))
            self.db.execute("DELETE FROM destinations WHERE id = ?", (found,))
            self.db.execute("COMMIT")
        return True

    def close(self) -> None:
        """Write what is buffered and close (a ledger whose writes failed only closes)."""
        self._closing.set()
        if self._timer is not None:
            self._timer.join()
        try:
            if not self.read_only and self._broken is None:
                self.flush()
        finally:
            self._database.close()
