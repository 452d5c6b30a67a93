"""One segment of the audit trail, read as numbered lines: plain or gzip-compressed, only
regular files, up to a byte limit, a line too long skipped without holding it whole. The
segments are listed in name order (:func:`segment_files`); ``trail.py`` makes runs of them.
"""

from __future__ import annotations

import contextlib
import gzip
import stat
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from ..errors import WorkspaceError
from ..files.tree import WorkspaceTree
from ..files.walk import Refused, shown_path

MAX_LINE_BYTES = 32 * 1024 * 1024
"""A longer line is one bad entry, skipped without ever being held in memory whole."""

MAX_GZIP_RATIO = 100
"""A compressed segment is read up to this many times its size on disk (and at least
:data:`GZIP_FLOOR` bytes); past it, the rest is one bad entry. The hub's run lines compress
4-20 times; gzip reaches ~1,030 times on repeated bytes, so a small committed ``.gz`` of
millions of short lines would otherwise cost a thousand times its size in work."""
GZIP_FLOOR = 1024 * 1024
"""The least a compressed segment may inflate to: a hostile but valid line of a few hundred KB
(a deeply bracketed value compresses a thousand times) is still read, and the good runs after
it; at most about a second of work for any small ``.gz``."""

_PLAIN, _GZIP = ".jsonl", ".jsonl.gz"
_SKIP_CHUNK = 1 << 20


def segment_files(tree: WorkspaceTree, audit: tuple[str, ...]) -> list[Path]:
    """The segments of the trail (the folder ``audit`` of ``tree``), in the order of their
    names.

    A segment found both plain and compressed is being compressed by the hub right now: the
    plain one is read (and, should it be gone by then, its ``.gz``). A folder on the way that
    is a link is not followed (:class:`WorkspaceError`, naming it).
    """
    folder = tree.path(audit)
    try:
        names = {name for name in tree.names(audit) if name.endswith((_PLAIN, _GZIP))}
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(
            f"cannot list the audit trail {shown_path(exc.filename or folder)}: {_why(exc)}"
        ) from None
    names -= {name + ".gz" for name in names if name.endswith(_PLAIN)}
    return [folder / name for name in sorted(names)]


def _why(exc: OSError) -> str:
    """What an ``OSError`` of the seam says: ``it is a link, ...``, or the system's words."""
    if isinstance(exc, Refused):
        return f"it is {exc.strerror}"
    return str(exc.strerror or exc)


class SegmentProblem(Exception):
    """A segment cannot be read (or no longer reads as it did); the message says why."""


def segment_size(tree: WorkspaceTree, parts: tuple[str, ...]) -> int:
    """The segment's size on disk (0 when it cannot be told, or it is no file)."""
    try:
        found = tree.look(parts)
    except OSError:
        return 0
    return found.st_size if found is not None and stat.S_ISREG(found.st_mode) else 0


class Segment:
    """One open segment: numbered lines, up to a byte limit, plain or gzip-compressed."""

    def __init__(
        self,
        stream: IO[bytes],
        closing: contextlib.ExitStack,
        length: int | None,
        compressed: bool,
        on_disk: int = 0,
    ) -> None:
        self._stream = stream
        self._closing = closing
        self.length = length
        """The plain segment's size as it was opened (what the first pass reads); None for a
        compressed one, which the hub no longer writes."""
        self.compressed = compressed
        self.on_disk = on_disk
        """The compressed segment's size on disk."""
        self.inflate_cap = max(GZIP_FLOOR, MAX_GZIP_RATIO * on_disk) if compressed else None
        """The uncompressed bytes a compressed segment is read to at most; None for a plain
        one (its size on disk is what is read)."""

    @classmethod
    def open(cls, tree: WorkspaceTree, parts: tuple[str, ...]) -> Segment:
        """Open the segment ``parts`` of ``tree``, or its ``.gz`` when the hub compressed it
        since it was listed.

        Only a regular file is a segment: a link (it may lead out of the workspace, to the
        user's other files), a FIFO or a device is refused, never followed, never waited on.
        Raises :class:`SegmentProblem`.
        """
        try:
            try:
                raw, info = tree.stream(parts)
            except FileNotFoundError:
                if not parts[-1].endswith(_PLAIN):
                    raise
                parts = (*parts[:-1], parts[-1] + ".gz")
                raw, info = tree.stream(parts)
        except Refused as exc:
            raise SegmentProblem(
                f"skipped: it is {(exc.strerror or '').removesuffix(', not a file')}, "
                "not a file of the audit trail"
            ) from None
        except OSError as exc:
            raise SegmentProblem(f"cannot read this segment ({exc.strerror or exc})") from None
        closing = contextlib.ExitStack()
        closing.enter_context(raw)
        if parts[-1].endswith(".gz"):
            stream: IO[bytes] = closing.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))  # type: ignore[arg-type]
            return cls(stream, closing, None, True, info.st_size)
        return cls(raw, closing, info.st_size, False)

    def raw_position(self) -> int:
        """Bytes of the file itself read so far (the compressed ones for a gzip segment)."""
        raw = self._stream.fileobj if isinstance(self._stream, gzip.GzipFile) else self._stream
        try:
            return int(raw.tell()) if raw is not None else 0
        except (OSError, ValueError):
            return 0

    def __enter__(self) -> Segment:
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.close()

    def lines(
        self, limit: int | None, *, start: int = 0, number: int = 0
    ) -> Iterator[tuple[int, bytes | None, int]]:
        """``(number, line, offset after it)`` of each line in the first ``limit`` bytes (all,
        when None); ``None`` stands for a line too long to hold. The last line may lack its
        line break (the limit, or the end of the file, came first). Blank lines (nothing but
        white space) are counted but not yielded: they are no entries.

        ``start`` and ``number`` resume a read that stopped after line ``number``, ending at
        offset ``start`` (uncompressed), as a watch does: only what is new is read."""
        offset = start
        stream = self._stream
        peek: Callable[[int], bytes] | None = getattr(stream, "peek", None)
        cap = self.inflate_cap
        if cap is not None:  # read one byte past it, to tell it was passed
            limit = cap + 1 if limit is None else min(limit, cap + 1)
        try:
            if start:
                stream.seek(start)
            while limit is None or offset < limit:
                want = (
                    MAX_LINE_BYTES + 1 if limit is None else min(MAX_LINE_BYTES + 1, limit - offset)
                )
                line = stream.readline(want)
                if not line:
                    return
                number += 1
                offset += len(line)
                if cap is not None and offset > cap:
                    raise SegmentProblem(self._inflates(number))
                if line.isspace():
                    # A blank line is no entry (the hub writes none; an editor may): counted
                    # and passed over, a run of them at once (16 MiB of line breaks in a
                    # 16 KB gzip must not cost a Python round per line).
                    if line == b"\n" and peek is not None:
                        skipped = _skip_line_breaks(
                            stream, peek, None if limit is None else limit - offset
                        )
                        number += skipped
                        offset += skipped
                        if cap is not None and offset > cap:
                            raise SegmentProblem(self._inflates(number))
                    continue
                if len(line) > MAX_LINE_BYTES:
                    while not line.endswith(b"\n") and (limit is None or offset < limit):
                        line = stream.readline(
                            _SKIP_CHUNK if limit is None else min(_SKIP_CHUNK, limit - offset)
                        )
                        if not line:
                            break
                        offset += len(line)
                    if cap is not None and offset > cap:
                        raise SegmentProblem(self._inflates(number))
                    yield number, None, offset
                    continue
                yield number, line, offset
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise SegmentProblem(
                f"gzip segment is truncated or corrupt after line {number} ({exc})"
            ) from None
        except OSError as exc:
            raise SegmentProblem(f"cannot read this segment ({exc.strerror or exc})") from None

    def _inflates(self, number: int) -> str:
        return (
            f"the gzip segment inflates to more than {MAX_GZIP_RATIO} times its "
            f"{self.on_disk:,} bytes on disk (at line {number}); the rest of it is skipped"
        )


def _skip_line_breaks(stream: IO[bytes], peek: Callable[[int], bytes], limit: int | None) -> int:
    """Consume the line breaks that come next in ``stream`` (at most ``limit`` bytes), a
    buffer at a time; returns how many."""
    skipped = 0
    while limit is None or skipped < limit:
        ahead = peek(_SKIP_CHUNK)
        count = len(ahead) - len(ahead.lstrip(b"\n"))
        if limit is not None:
            count = min(count, limit - skipped)
        if count == 0:
            break
        stream.read(count)
        skipped += count
        if count < len(ahead):
            break
    return skipped
