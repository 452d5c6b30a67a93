"""Follow the audit trail as the hub writes it: each look reads only what is new.

A :class:`TrailFollower` keeps, per segment, how far it has read (the offset after the last
line it took, and that line's number) and indexes each good run record in the run index as it
reads it, exactly as the first pass of ``trail.py`` does, so the index, the ledger and the
second pass (:meth:`~.trail.AuditTrail.runs`) work on what it read as on a whole scan.

What it reads, per the contract:

- the segments in the order of their names; once a newer one appears, the older ones are
  closed: their rest is read to the end (from the ``.gz`` when the hub compressed the segment
  meanwhile) and they are never looked at again;
- in the newest segment, only whole lines: a last line without its line break is not there
  yet (the hub is writing it), and is read once it is finished. Once a newer segment appears,
  the hub has finished with it: a line still unfinished then was abandoned, and is read as it is
  (a bad entry unless it is a whole JSON object);
- a look that finds nothing new costs two ``stat`` calls: the folder (for a new segment) and
  the newest segment (for new lines). The folder is listed again only when it changed, or
  changed so recently that a coarse clock could hide a second change.

Memory holds a few numbers per segment, never the runs: they go to the run index (on disk).
"""

from __future__ import annotations

import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import msgspec

from ..errors import WorkspaceError
from ..state.index import RunIndex, Winner
from .model import BadEntry, Run
from .segments import MAX_LINE_BYTES, SegmentProblem, segment_files
from .trail import AuditTrail, TrailScan, fingerprint, quick_check

RECENT_NS = 2_000_000_000
"""A folder changed this recently (ns) is listed again at the next look, whatever its time
says: a file system whose clock is coarse may show a second change at the same time."""


@dataclass(frozen=True, slots=True)
class Found:
    """A good run record the follower read: where it is, and the run."""

    winner: Winner
    run: Run

    @property
    def ended(self) -> bool:
        """Whether the record is final (the run succeeded, failed or was cancelled)."""
        return self.run.status != "running"


class TrailFollower:
    """Reads a workspace's audit trail, then what the hub appends to it, never twice."""

    def __init__(
        self,
        trail: AuditTrail,
        index: RunIndex,
        on_bad: Callable[[BadEntry], None],
        *,
        workspace_marker: Path,
    ) -> None:
        self.trail = trail
        self.scan = TrailScan(segments=[], index=index)
        self._on_bad = on_bad
        self._marker = workspace_marker
        self._numbers: list[int] = []
        """Per segment, the number of the last line taken (``scan.ends`` has its offset)."""
        self._current = 0
        """The segment being followed: those before it are closed and read whole."""
        self._listed_ns: int | None = None
        self._seen_size = -1
        self._problem_said: set[int] = set()
        self._more = False
        """The last read stopped before the end of what was there (``most``)."""

    # -- looking ---------------------------------------------------------------------------

    def look(self) -> bool:
        """Whether the trail may hold something new (a new segment, the newest one grown).

        Raises :class:`WorkspaceError` when the workspace itself is gone (its folder, or its
        ``.workspace`` folder, removed): a watch has nothing left to follow.
        """
        trail = self.trail
        try:
            folder = trail.tree.look(trail.audit)
        except OSError as exc:
            raise WorkspaceError(
                f"cannot read the audit trail {trail.display(trail.audit_dir)}: "
                f"{exc.strerror or exc}"
            ) from None
        if folder is None:
            self._check_workspace()
            return False
        grew = False
        now = time.time_ns()
        if folder.st_mtime_ns != self._listed_ns or now - folder.st_mtime_ns < RECENT_NS:
            self._listed_ns = folder.st_mtime_ns
            grew = self._list()
        if self._current >= len(self.scan.segments):
            return grew
        size = self._size(self.scan.segments[self._current])
        if size != self._seen_size:
            self._seen_size = size
            grew = True
        return grew or self._more or self._current < len(self.scan.segments) - 1

    def _check_workspace(self) -> None:
        tree = self.trail.tree
        try:
            marker = tree.look(self._marker.relative_to(tree.root).parts)
        except OSError:
            marker = None
        if marker is None or not stat.S_ISDIR(marker.st_mode):
            raise WorkspaceError(
                f"the workspace {self._marker.parent} is gone ({self._marker.name} was "
                "removed): nothing left to follow"
            )

    def _list(self) -> bool:
        """Take the new segments of the folder; True when there were any."""
        known = self.scan.segments
        last = _stem(known[-1].name) if known else ""
        trail = self.trail
        new = [path for path in segment_files(trail.tree, trail.audit) if _stem(path.name) > last]
        for path in new:
            known.append(path)
            self.scan.ends.append(0)
            self._numbers.append(0)
        return bool(new)

    # -- reading ---------------------------------------------------------------------------

    def read(self, most: int | None = None) -> Iterator[Found]:
        """Each good run record not read yet, in trail order (every run record is indexed,
        each bad line reported); at most ``most`` of them, the rest left for the next call.
        Call :meth:`look` first to take new segments."""
        taken = 0
        self._more = False
        while self._current < len(self.scan.segments):
            closed = self._current < len(self.scan.segments) - 1
            for found in self._read_segment(self._current, closed):
                yield found
                taken += 1
                if most is not None and taken >= most:
                    self._more = True
                    self.scan.index.seal()
                    return
            if not closed:
                break
            self._current += 1
            self._seen_size = -1
        self.scan.index.seal()

    def _read_segment(self, number: int, closed: bool) -> Iterator[Found]:
        scan = self.scan
        path = scan.segments[number]
        display = self.trail.display(path)
        try:
            with self.trail.segment(path) as segment:
                lines = segment.lines(None, start=scan.ends[number], number=self._numbers[number])
                for line_no, line, after in lines:
                    if not closed and line is not None and not line.endswith(b"\n"):
                        return  # the hub is writing it: not there yet
                    scan.ends[number], self._numbers[number] = after, line_no
                    found = self._take(number, display, line_no, line)
                    if found is not None:
                        yield found
        except SegmentProblem as exc:
            if number not in self._problem_said:  # said once, not at every look
                self._problem_said.add(number)
                self._bad(display, self._numbers[number] + 1, str(exc))

    def _take(self, segment: int, display: str, number: int, line: bytes | None) -> Found | None:
        """One line, as the first pass of ``trail.py`` takes it: a run indexed, or a bad entry."""
        scan = self.scan
        scan.lines += 1
        if line is None:
            self._bad(display, number, f"line longer than {MAX_LINE_BYTES} bytes, skipped")
            return None
        try:
            taken = scan.take_line(line, segment, number, fingerprint)
        except msgspec.DecodeError as exc:
            taken = f"not JSON ({exc})"
        if isinstance(taken, str):
            self._bad(display, number, taken)
        if not isinstance(taken, Run):
            return None
        winner = Winner(taken.trace_id, segment, number, fingerprint(line), quick_check(line))
        return Found(winner, taken)

    def _bad(self, file: str, line: int, reason: str) -> None:
        self.scan.bad_entries += 1
        self._on_bad(BadEntry(file, line, reason))

    def _size(self, path: Path) -> int:
        """The segment's size (-2 when gone, compressed: the next read opens the .gz)."""
        try:
            found = self.trail.tree.look(self.trail.parts(path))
        except OSError:
            found = None
        return -2 if found is None else found.st_size

    @property
    def following(self) -> str | None:
        """The segment being followed, as users see it (None before the first one)."""
        if self._current >= len(self.scan.segments):
            return None
        return self.trail.display(self.scan.segments[self._current])


def _stem(name: str) -> str:
    """A segment's name without ``.gz``: the hub compressing it makes no new segment."""
    return name.removesuffix(".gz")
