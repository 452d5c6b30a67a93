"""Read the audit trail: segments in name order, gzip or plain, last record of a trace id wins.

Reading is two streaming passes over the segments. The first validates every ``run`` line and
records, per trace id, only *where* its last good record is (segment, line) and a fingerprint
of its bytes in an on-disk index; the second reads those lines again and yields the runs in
trail order. Memory holds neither the runs nor their keys, and a bad later record of a trace id
leaves its last good one in place.

The hub may append to the newest segment, and gzip a closed one, while an export reads them.
The first pass therefore reads each segment only as far as it reached when the pass opened it,
and stops before a last line that is not complete yet; the second pass reads exactly those
bytes again (from the ``.gz`` when the hub compressed the segment meanwhile), and trusts a line
whose length and CRC-32 still match what the first pass saw, without checking it again.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

import msgspec

from ..errors import WorkspaceError
from ..files.tree import WorkspaceTree
from ..files.walk import shown_path
from ..state.index import RunIndex
from .model import BadEntry, BadRecord, Run, quoted
from .records import kind_of, parse_run, parse_trusted
from .segments import MAX_LINE_BYTES, Segment, SegmentProblem, segment_files, segment_size
from .times import start_microseconds

_POSITION_EVERY = 2048
"""Lines between two reports of how far a segment has been read."""


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

    @property
    def check(self) -> int:
        """The :func:`quick_check` of the record's line as the first pass read it."""
        ...


P = TypeVar("P", bound=Position)


def _no_fingerprint(line: bytes) -> bytes:
    return b""


def _no_start(started_at: str) -> None:
    return None


@dataclass
class TrailScan:
    """What the first pass learnt: the index of winning positions and a few counts."""

    segments: list[Path]
    index: RunIndex
    ends: list[int] = field(default_factory=list)
    """Per segment, how many bytes (uncompressed) the first pass used: up to the end of its
    last complete line. The second pass reads exactly these bytes."""
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

    def take_line(
        self,
        line: bytes,
        segment: int,
        number: int,
        fingerprint_of: Callable[[bytes], bytes],
        start_of: Callable[[str], int | None] = _no_start,
    ) -> Run | str | None:
        """One whole line of a segment, as the first pass (and the follower) takes it: a good
        run record is indexed as its trace id's current one and returned; for a bad entry, the
        reason is returned; a record of another kind is None. A line that is not JSON raises
        ``msgspec.DecodeError``: the caller knows whether the hub may still be writing it."""
        try:
            kind, trace_id = kind_of(line)
        except BadRecord as exc:
            return str(exc)
        if kind != "run":
            if kind is None:
                return "missing required field 'kind'"
            return None if isinstance(kind, str) else "'kind' must be a string"
        self.run_lines += 1
        try:
            run = parse_run(line)
        except BadRecord as exc:
            if isinstance(trace_id, str) and trace_id:
                return f"run {quoted(trace_id)}: {exc}"
            return str(exc)
        self.index.put(
            run.trace_id,
            run.pipeline,
            segment,
            number,
            fingerprint_of(line),
            quick_check(line),
            start_of(run.started_at),
        )
        if run.stages:
            self.index.put_stages(
                run.pipeline,
                tuple(
                    [
                        s.stage
                        for s in run.stages
                        if s.status != "skipped" and s.started_at is not None
                    ]
                ),
            )
        return run


def fingerprint(line: bytes) -> bytes:
    """A short, stable fingerprint of a record's bytes (what the ledger compares)."""
    return hashlib.blake2b(line.rstrip(b"\r\n"), digest_size=12).digest()


def quick_check(line: bytes) -> int:
    """The line's length and CRC-32 in one number: what the second pass compares to know a
    line unchanged since the first (a fraction of the fingerprint's cost)."""
    return len(line) << 32 | zlib.crc32(line)


class AuditTrail:
    """The audit trail of one workspace, read per the Lineage hub contract."""

    def __init__(self, audit_dir: Path, *, display_root: Path | None = None) -> None:
        """The trail in ``audit_dir``, walked from the workspace root ``display_root`` (no
        link below it followed; when None, from ``audit_dir`` itself: its path is trusted)."""
        self.audit_dir = audit_dir
        self._root = display_root
        self.tree = WorkspaceTree(display_root if display_root is not None else audit_dir)
        """The files the trail is read from (``files/tree.py``)."""
        self.audit = self.parts(audit_dir)
        """The audit folder's parts below the tree's root."""

    def parts(self, path: Path) -> tuple[str, ...]:
        """``path`` (the audit folder, or a segment in it) as parts below the tree's root."""
        return path.relative_to(self.tree.root).parts

    def segment(self, path: Path) -> Segment:
        """The segment ``path`` opened (:meth:`Segment.open`)."""
        return Segment.open(self.tree, self.parts(path))

    def display(self, path: Path) -> str:
        """A segment's name as users see it: relative to the workspace root (a byte of it
        that is not UTF-8 written ``\\xff``)."""
        if self._root is not None:
            try:
                return shown_path(path.relative_to(self._root).as_posix())
            except ValueError:
                pass
        return shown_path(path)

    def where(self, scan: TrailScan, position: Position) -> str:
        """``<segment>:<line>`` of a position, as a bad entry names it."""
        return f"{self.display(scan.segments[position.segment])}:{position.line}"

    def scan(
        self,
        on_bad: Callable[[BadEntry], None],
        *,
        fingerprints: bool = True,
        starts: bool = False,
        on_read: Callable[[int, int], None] | None = None,
    ) -> TrailScan:
        """First pass: validate every run line, index where each trace id's last good one is.

        ``fingerprints=False`` leaves out what only the ledger compares (a dry run's choice):
        every winner's fingerprint is then empty. ``starts=True`` keeps each run's start in
        the index too, for a selection by time (``state.index.RunFilter``).
        ``on_read(bytes_done, bytes_total)``, when given, is called as each segment starts,
        every few thousand lines and at the end: how much of the segments (their sizes on
        disk) has been read.
        """
        index = RunIndex()
        index.starts = starts
        scan = TrailScan(segments=segment_files(self.tree, self.audit), index=index)
        try:
            self._scan(
                scan,
                on_bad,
                fingerprint if fingerprints else _no_fingerprint,
                start_microseconds if starts else _no_start,
                on_read,
            )
        except BaseException:
            scan.index.close()  # a full temporary folder must not keep our index
            raise
        return scan

    def _scan(
        self,
        scan: TrailScan,
        on_bad: Callable[[BadEntry], None],
        fingerprint_of: Callable[[bytes], bytes],
        start_of: Callable[[str], int | None],
        on_read: Callable[[int, int], None] | None,
    ) -> None:
        last = len(scan.segments) - 1
        sizes = (
            [segment_size(self.tree, self.parts(path)) for path in scan.segments]
            if on_read is not None
            else []
        )
        total = sum(sizes)
        passed = 0  # the sizes of the segments before this one: a running total, not a sum each
        for index, path in enumerate(scan.segments):
            display = self.display(path)
            end = 0
            number = 0
            before = passed
            if on_read is not None:
                passed += sizes[index]
                on_read(before, total)
            try:
                with self.segment(path) as segment:
                    for number, line, after in segment.lines(segment.length):
                        scan.lines += 1
                        if on_read is not None and number % _POSITION_EVERY == 0:
                            on_read(before + min(segment.raw_position(), sizes[index]), total)
                        if line is None:
                            self._bad(
                                scan,
                                on_bad,
                                display,
                                number,
                                f"line longer than {MAX_LINE_BYTES} bytes, skipped",
                            )
                            end = after
                            continue
                        try:
                            taken = scan.take_line(line, index, number, fingerprint_of, start_of)
                        except msgspec.DecodeError as exc:
                            if index == last and not line.endswith(b"\n"):
                                # The hub is still writing it: not there yet.
                                scan.lines -= 1
                                scan.incomplete_tail = True
                                break
                            taken = f"not JSON ({exc})"
                        end = after
                        if isinstance(taken, str):
                            self._bad(scan, on_bad, display, number, taken)
            except SegmentProblem as exc:
                self._bad(scan, on_bad, display, number + 1 if number else 0, str(exc))
            scan.ends.append(end)
        scan.index.seal()
        if on_read is not None:
            on_read(total, total)

    def runs(
        self, scan: TrailScan, wanted: Iterable[P], on_bad: Callable[[BadEntry], None] | None = None
    ) -> Iterator[tuple[Run, P]]:
        """Second pass: yield the current run at each wanted position, in trail order.

        ``wanted`` (in trail order) may narrow the pass, e.g. to the runs not yet exported;
        ``scan.index.in_trail_order()`` is every trace id's current record.

        A segment that no longer holds what the first pass read (rewritten, cut short, gone
        with no ``.gz`` in its place) is reported to ``on_bad`` and its remaining runs are
        skipped: they stay for the next export. Without ``on_bad`` it is a
        :class:`WorkspaceError`.
        """
        ordered = iter(wanted)
        current = next(ordered, None)
        while current is not None:
            segment_no = current.segment
            path = scan.segments[segment_no]
            display = self.display(path)
            problem: str | None = None
            try:
                with self.segment(path) as segment:
                    for number, line, _ in segment.lines(scan.ends[segment_no]):
                        if number != current.line:
                            continue
                        if line is None or quick_check(line) != current.check:
                            problem = f"line {number} changed while it was being exported"
                            break
                        yield parse_trusted(line), current
                        current = next(ordered, None)
                        if current is None or current.segment != segment_no:
                            break
                    else:
                        problem = "got shorter while it was being exported"
            except SegmentProblem as exc:
                problem = str(exc)
            if problem is None:
                continue
            left = 0
            while current is not None and current.segment == segment_no:
                left += 1
                current = next(ordered, None)
            message = (
                f"{problem}; its {left} remaining run{'s' if left != 1 else ''} "
                "were left for the next export"
            )
            if on_bad is None:
                raise WorkspaceError(f"{display}: {message}")
            on_bad(BadEntry(display, 0, message))

    @staticmethod
    def _bad(
        scan: TrailScan, on_bad: Callable[[BadEntry], None], file: str, line: int, reason: str
    ) -> None:
        scan.bad_entries += 1
        on_bad(BadEntry(file, line, reason))
