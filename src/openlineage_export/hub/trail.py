"""Read the audit trail: segments in name order, gzip or plain, last record of a trace id wins.

Reading is two streaming passes over the segments. The first validates every ``run`` line and
records, per trace id, only *where* its last good record is (segment, line) in an on-disk
index; the second reads those lines again and yields the runs in trail order. Memory holds
neither the runs nor their keys, and a bad later record of a trace id leaves its last good
one in place.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, TypeVar

import msgspec

from ..errors import WorkspaceError
from ..state.index import RunIndex
from .model import BadEntry, Run
from .records import BadRecord, kind_of, parse_run

MAX_LINE_BYTES = 32 * 1024 * 1024
"""A longer line is one bad entry, skipped without ever being held in memory whole."""

_SEGMENT_SUFFIXES = (".jsonl", ".jsonl.gz")


class Position(Protocol):
    """Where a trace id's current record is (a :class:`~..state.index.Winner`, or more)."""

    @property
    def trace_id(self) -> str:
        """The trace id whose record it is."""
        ...

    @property
    def segment(self) -> int:
        """The segment's position in name order (0 is the first)."""
        ...

    @property
    def line(self) -> int:
        """The line number in the segment (1 is the first)."""
        ...


P = TypeVar("P", bound=Position)


@dataclass
class TrailScan:
    """What the first pass learnt: the index of winning positions and a few counts."""

    segments: list[Path]
    index: RunIndex
    lines: int = 0
    run_lines: int = 0
    bad_entries: int = 0
    incomplete_tail: bool = False

    @property
    def runs(self) -> int:
        """How many distinct editor runs the trail holds."""
        return self.index.count()

    @property
    def pipelines(self) -> set[str]:
        """The pipeline ids with at least one run on the trail."""
        return self.index.pipelines()


def fingerprint(line: bytes) -> bytes:
    """A short, stable fingerprint of a record's bytes (what the ledger compares)."""
    return hashlib.blake2b(line.rstrip(b"\r\n"), digest_size=12).digest()


def segment_files(audit_dir: Path) -> list[Path]:
    """The segments of the trail, in the order of their names."""
    try:
        names = sorted(p.name for p in audit_dir.iterdir() if p.name.endswith(_SEGMENT_SUFFIXES))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(f"cannot list the audit trail {audit_dir}: {exc.strerror}") from None
    return [audit_dir / name for name in names]


class AuditTrail:
    """The audit trail of one workspace, read per the Lineage hub contract."""

    def __init__(self, audit_dir: Path, *, display_root: Path | None = None) -> None:
        self.audit_dir = audit_dir
        self._root = display_root

    def display(self, path: Path) -> str:
        """A segment's name as users see it: relative to the workspace root."""
        if self._root is not None:
            try:
                return path.relative_to(self._root).as_posix()
            except ValueError:
                pass
        return str(path)

    def scan(self, on_bad: Callable[[BadEntry], None],
             run_index: RunIndex | None = None, *,
             on_read: Callable[[int, int], None] | None = None) -> TrailScan:
        """First pass: validate every run line, index where each trace id's last good one is.

        ``on_read(bytes_done, bytes_total)``, when given, is called as each segment starts,
        every few thousand lines and at the end: how much of the segments (their sizes on
        disk) has been read.
        """
        scan = TrailScan(segments=segment_files(self.audit_dir), index=run_index or RunIndex())
        put = scan.index.put
        last = len(scan.segments) - 1
        sizes = [_size(path) for path in scan.segments] if on_read is not None else []
        for index, path in enumerate(scan.segments):
            display = self.display(path)
            position = None
            if on_read is not None:
                position = functools.partial(_read_so_far, on_read, sum(sizes[:index]), sum(sizes))
                position(0)
            for number, line in self._lines(path, display, on_bad, scan, position):
                scan.lines += 1
                if line is None:
                    self._bad(scan, on_bad, display, number,
                              f"line longer than {MAX_LINE_BYTES} bytes, skipped")
                    continue
                try:
                    kind, trace_id = kind_of(line)
                except msgspec.DecodeError as exc:
                    if index == last and not line.endswith(b"\n"):
                        scan.incomplete_tail = True  # the hub is still writing it
                        continue
                    self._bad(scan, on_bad, display, number, f"not JSON ({exc})")
                    continue
                except BadRecord as exc:
                    self._bad(scan, on_bad, display, number, str(exc))
                    continue
                if kind != "run":
                    if not isinstance(kind, str):
                        reason = ("missing required field 'kind'" if kind is None
                                  else "'kind' must be a string")
                        self._bad(scan, on_bad, display, number, reason)
                    continue
                scan.run_lines += 1
                try:
                    run = parse_run(line)
                except BadRecord as exc:
                    named = isinstance(trace_id, str) and trace_id
                    self._bad(scan, on_bad, display, number,
                              f"run {trace_id!r}: {exc}" if named else str(exc))
                    continue
                put(run.trace_id, run.pipeline, index, number, fingerprint(line))
        scan.index.seal()
        if on_read is not None:
            on_read(sum(sizes), sum(sizes))
        return scan

    def runs(self, scan: TrailScan, wanted: Iterable[P]) -> Iterator[tuple[Run, P]]:
        """Second pass: yield the current run at each wanted position, in trail order.

        ``wanted`` (in trail order) may narrow the pass, e.g. to the runs not yet exported;
        ``scan.index.in_trail_order()`` is every trace id's current record.
        """
        ordered = iter(wanted)
        current = next(ordered, None)
        while current is not None:
            segment = current.segment
            path = scan.segments[segment]
            display = self.display(path)
            for number, line in self._lines(path, display, None, None):
                if number != current.line:
                    continue
                if line is None:
                    raise WorkspaceError(f"{display}:{number} changed while it was being exported")
                try:
                    run = parse_run(line)
                except BadRecord as exc:
                    raise WorkspaceError(
                        f"{display}:{number} changed while it was being exported ({exc})") from None
                if run.trace_id != current.trace_id:
                    raise WorkspaceError(f"{display}:{number} changed while it was being exported")
                yield run, current
                current = next(ordered, None)
                if current is None or current.segment != segment:
                    break
            else:
                raise WorkspaceError(f"{display} got shorter while it was being exported")

    @staticmethod
    def _bad(scan: TrailScan, on_bad: Callable[[BadEntry], None], file: str, line: int,
             reason: str) -> None:
        scan.bad_entries += 1
        on_bad(BadEntry(file, line, reason))

    def _lines(self, path: Path, display: str, on_bad: Callable[[BadEntry], None] | None,
               scan: TrailScan | None, on_position: Callable[[int], None] | None = None,
               ) -> Iterator[tuple[int, bytes | None]]:
        """Numbered lines of one segment; ``None`` stands for a line too long to hold.

        ``on_position`` gets the bytes of the file read so far, every few thousand lines.
        """
        number = 0
        try:
            with _open(path) as stream:
                while True:
                    line = stream.readline(MAX_LINE_BYTES + 1)
                    if not line:
                        return
                    number += 1
                    if on_position is not None and number % _POSITION_EVERY == 0:
                        on_position(_raw_position(stream))
                    if len(line) > MAX_LINE_BYTES:
                        while line and not line.endswith(b"\n"):
                            line = stream.readline(1 << 20)
                        yield number, None
                        continue
                    yield number, line
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            reason = f"gzip segment is truncated or corrupt after line {number} ({exc})"
        except OSError as exc:
            reason = f"cannot read this segment ({exc.strerror or exc})"
        if on_bad is None or scan is None:
            raise WorkspaceError(f"{display}: {reason}")
        self._bad(scan, on_bad, display, number + 1 if number else 0, reason)


_POSITION_EVERY = 2048
"""Lines between two reports of how far a segment has been read."""


def _read_so_far(on_read: Callable[[int, int], None], before: int, total: int, at: int) -> None:
    on_read(before + at, total)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _raw_position(stream: IO[bytes]) -> int:
    """Bytes of the file itself read so far (the compressed ones for a gzip segment)."""
    raw = stream.fileobj if isinstance(stream, gzip.GzipFile) else stream
    try:
        return int(raw.tell()) if raw is not None else 0
    except (OSError, ValueError):
        return 0


def _open(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return path.open("rb", buffering=1 << 16)
