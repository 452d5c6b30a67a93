"""Where each trace id's current record is: an on-disk index, so memory stays flat.

"Last record of a trace id wins" needs one key per run; at a million runs even that is more
than we want to hold, so the keys live in a temporary SQLite file (real SQLite, no server),
written in batches during the first pass and read back in trail order for the second. The
ledger (``state/ledger.py``) joins this very table to tell pending runs from exported ones.

The file lives in a folder of its own under the temporary folder (``TMPDIR``), named after the
process; an export that was killed leaves it behind, and the next one removes it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..files.scratch import Scratch, remove_abandoned, temporary
from . import state_errors

_BATCH = 5000
STAGES_IN_MEMORY = 65536
"""Stage names held in memory at most, by the lists seen and by the pairs not written yet:
a trail's runs name as many as their lines hold, and none of them sizes what we keep."""
CHARS_IN_MEMORY = 16 * 1024 * 1024
"""Characters of ids and names held in memory at most, by each buffer (runs not written yet,
stage lists seen, stage pairs not written yet): the trail decides how long a trace id, a
pipeline or a stage is (up to a line's 32 MiB), so a buffer is bounded by their length too."""
INDEXED_AS_WRITTEN = 1024
"""A trace id longer than this, and the index by trail position is kept up as rows are written
rather than built when the first pass ends: SQLite builds it by sorting every row, each with
its trace id (the table's key), and held all of them (120 ids of 2 MiB took 240 MB); kept up
as written, it costs each write a little more, so short ids keep the faster way."""
_PREFIX = "olx-index-"
_ADVICE = "point TMPDIR at a folder you can write to"
_FULL = "free some space there, or point TMPDIR at a folder with room"


@dataclass(frozen=True, slots=True)
class Winner:
    """Where the current record of one trace id is, and a fingerprint of its bytes."""

    trace_id: str
    segment: int
    line: int
    fingerprint: bytes
    """What the ledger compares (BLAKE2b of the record)."""
    check: int = 0
    """Length and CRC-32 of the line as read: how the second pass knows it unchanged, for a
    fraction of the fingerprint's cost."""


@dataclass(frozen=True, slots=True)
class RunFilter:
    """Which runs of the index a pass takes (``selection.Selection`` in the index's terms):
    those of one of ``pipelines`` (every pipeline when empty) whose start, in microseconds
    since 1970-01-01 UTC, is at or after ``since`` and before ``until`` (either may be None)."""

    pipelines: tuple[str, ...] = ()
    since: int | None = None
    until: int | None = None

    @property
    def timed(self) -> bool:
        """Whether it compares start times (which a scan then has to keep)."""
        return self.since is not None or self.until is not None

    def sql(self, table: str) -> tuple[str, tuple[object, ...]]:
        """A WHERE condition on ``table`` (the winners, under that name), and its parameters."""
        clauses: list[str] = []
        params: list[object] = []
        if self.pipelines:
            clauses.append(f"{table}.pipeline IN ({', '.join('?' * len(self.pipelines))})")
            params.extend(self.pipelines)
        if self.since is not None:
            clauses.append(f"{table}.started >= ?")
            params.append(self.since)
        if self.until is not None:
            clauses.append(f"{table}.started < ?")
            params.append(self.until)
        return " AND ".join(clauses) or "1", tuple(params)


EVERY_RUN = RunFilter()


class RunIndex:
    """trace id -> (segment, line, fingerprint, pipeline, start) of its last good record."""

    def __init__(self, folder: Path | None = None) -> None:
        parent = temporary(folder)
        with state_errors(f"the temporary folder {parent}", _ADVICE, full=_FULL):
            remove_abandoned(parent, _PREFIX, _running)
            self._scratch = Scratch(_PREFIX, parent)
            self.path = self._scratch.path / "index.sqlite"
            # URIs on: the ledger is attached as it was opened (``files/database.py``).
            self.db = self._scratch.database("index.sqlite")
            for pragma in (
                "journal_mode = OFF",
                "synchronous = OFF",
                "cache_size = -4000",
                "temp_store = FILE",
            ):
                self.db.execute(f"PRAGMA {pragma}")
            self.db.execute(
                "CREATE TABLE winners (trace_id TEXT PRIMARY KEY, pipeline TEXT NOT NULL, "
                "segment INTEGER NOT NULL, line INTEGER NOT NULL, fingerprint BLOB NOT NULL, "
                "check_sum INTEGER NOT NULL, started INTEGER) WITHOUT ROWID"
            )
            self.db.execute(
                "CREATE TABLE stages (pipeline TEXT NOT NULL, stage TEXT NOT NULL, "
                "PRIMARY KEY (pipeline, stage)) WITHOUT ROWID"
            )
        self.starts = False
        """Whether each run's start is kept (a :class:`RunFilter` by time needs them)."""
        self._pending: list[tuple[str, str, int, int, bytes, int, int | None]] = []
        self._new_stages: list[tuple[str, str]] = []
        self._stages_seen: set[tuple[str, tuple[str, ...]]] = set()
        self._names_seen = 0  # the stage names the lists in _stages_seen hold
        self._chars_seen = 0  # ...and their characters, the pipelines' included
        self._pending_chars = 0  # the characters of the ids and pipelines in _pending
        self._new_chars = 0  # ...and in _new_stages
        self._sealed = False
        """Whether the index by position is there (built at the end, or kept up as written)."""
        self._long_ids = False

    def _errors(self) -> contextlib.AbstractContextManager[None]:
        return state_errors(f"the temporary run index {self.path}", _ADVICE, full=_FULL)

    def put(
        self,
        trace_id: str,
        pipeline: str,
        segment: int,
        line: int,
        fingerprint: bytes,
        check: int = 0,
        started: int | None = None,
    ) -> None:
        """Record a good record; a later call for the same trace id replaces it. ``started``:
        the run's start in microseconds since 1970-01-01 UTC, when the index keeps starts."""
        self._pending.append((trace_id, pipeline, segment, line, fingerprint, check, started))
        self._long_ids = self._long_ids or len(trace_id) > INDEXED_AS_WRITTEN
        self._pending_chars += len(trace_id) + len(pipeline)
        if len(self._pending) >= _BATCH or self._pending_chars >= CHARS_IN_MEMORY:
            self._flush()

    def put_stages(self, pipeline: str, stages: tuple[str, ...]) -> None:
        """Note the stages a good record of ``pipeline`` executed (each pair is kept once)."""
        seen = self._stages_seen
        if (pipeline, stages) in seen:  # most records run what the last one of theirs ran
            return
        names = sum(map(len, stages))
        chars = len(pipeline) + names
        if (
            self._names_seen + len(stages) > STAGES_IN_MEMORY
            or self._chars_seen + chars > CHARS_IN_MEMORY
        ):
            seen.clear()  # the table keeps each pair once anyway
            self._names_seen = self._chars_seen = 0
        if len(stages) <= STAGES_IN_MEMORY and chars <= CHARS_IN_MEMORY:
            seen.add((pipeline, stages))
            self._names_seen += len(stages)
            self._chars_seen += chars
        self._new_stages.extend((pipeline, stage) for stage in stages)
        self._new_chars += chars  # the pairs share the one pipeline string
        if len(self._new_stages) >= STAGES_IN_MEMORY or self._new_chars >= CHARS_IN_MEMORY:
            self._flush()

    def _flush(self) -> None:
        if self._pending or self._new_stages:
            with self._errors():
                if self._long_ids and not self._sealed:
                    self.db.execute(
                        "CREATE INDEX by_position ON winners (segment, line)"
                    )  # before the long ids are written
                    self._sealed = True
                self.db.execute("BEGIN")
                self.db.executemany(
                    "INSERT INTO winners VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (trace_id) DO "
                    "UPDATE SET pipeline = excluded.pipeline, segment = excluded.segment, "
                    "line = excluded.line, fingerprint = excluded.fingerprint, "
                    "check_sum = excluded.check_sum, started = excluded.started",
                    self._pending,
                )
                self.db.executemany("INSERT OR IGNORE INTO stages VALUES (?, ?)", self._new_stages)
                self.db.execute("COMMIT")
            self._pending.clear()
            self._new_stages.clear()
            self._pending_chars = self._new_chars = 0

    def seal(self) -> None:
        """End of the first pass: write what is buffered and index by trail position (a watch
        seals again after each read of what is new: only the buffer is written then)."""
        self._flush()
        if not self._sealed:
            with self._errors():
                self.db.execute("CREATE INDEX by_position ON winners (segment, line)")
            self._sealed = True

    def count(self, only: RunFilter = EVERY_RUN) -> int:
        """How many distinct editor runs the trail holds (of them, how many ``only`` takes)."""
        self.seal()
        where, params = self.where(only, "winners")
        with self._errors():
            return int(
                self.db.execute(f"SELECT count(*) FROM winners WHERE {where}", params).fetchone()[0]
            )

    def where(self, only: RunFilter, table: str) -> tuple[str, tuple[object, ...]]:
        """``only`` as a WHERE condition on the winners (named ``table`` in the query)."""
        if only.timed and not self.starts:
            raise ValueError("this run index keeps no start times: scan with starts=True")
        return only.sql(table)

    def pipelines(self) -> set[str]:
        """The pipeline ids that have at least one run."""
        self.seal()
        with self._errors():
            return {row[0] for row in self.db.execute("SELECT DISTINCT pipeline FROM winners")}

    def stages_run(self) -> Iterator[tuple[str, str]]:
        """Each (pipeline id, stage id) that a good record on the trail executed, once."""
        self.seal()
        with self._errors():
            yield from self.db.execute("SELECT pipeline, stage FROM stages")

    def in_trail_order(self, only: RunFilter = EVERY_RUN) -> Iterator[Winner]:
        """Every winner (that ``only`` takes), ordered by (segment, line)."""
        self.seal()
        where, params = self.where(only, "winners")
        with self._errors():
            rows = self.db.execute(
                "SELECT trace_id, segment, line, fingerprint, check_sum "
                f"FROM winners WHERE {where} ORDER BY segment, line",
                params,
            )
            for trace_id, segment, line, fingerprint, check in rows:
                yield Winner(trace_id, segment, line, bytes(fingerprint), check)

    def close(self) -> None:
        """Delete the index file."""
        self.db.close()
        self._scratch.remove()

    def __enter__(self) -> RunIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, but is someone else's
        return True
    return True
