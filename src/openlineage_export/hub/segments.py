"""One segment of the audit trail, read as numbered lines: plain or gzip-compressed, only
regular files, up to a byte limit, a line too long skipped without holding it whole. The
segments are listed in name order (:func:`segment_files`); ``trail.py`` makes runs of them.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import stat
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from ..errors import WorkspaceError
from ..files.confine import file_kind

MAX_LINE_BYTES = 32 * 1024 * 1024
"""A longer line is one bad entry, skipped without ever being held in memory whole."""

_PLAIN, _GZIP = ".jsonl", ".jsonl.gz"
_SKIP_CHUNK = 1 << 20


def segment_files(audit_dir: Path) -> list[Path]:
    """The segments of the trail, in the order of their names.

    A segment found both plain and compressed is being compressed by the hub right now: the
    plain one is read (and, should it be gone by then, its ``.gz``).
    """
    try:
        names = {p.name for p in audit_dir.iterdir() if p.name.endswith((_PLAIN, _GZIP))}
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise WorkspaceError(f"cannot list the audit trail {audit_dir}: {exc.strerror}") from None
    names -= {name + ".gz" for name in names if name.endswith(_PLAIN)}
    return [audit_dir / name for name in sorted(names)]


class SegmentProblem(Exception):
    """A segment cannot be read (or no longer reads as it did); the message says why."""


def _open_regular(path: Path) -> int:
    """Open ``path`` for reading without ever waiting on a FIFO or a device (``O_NONBLOCK``).

    A regular file that another program holds a lease on (a file server, a sync tool) refuses
    a non-blocking open until it lets go, which the kernel asks it to do and bounds by
    ``/proc/sys/fs/lease-break-time``: that wait is taken, not reported as an unreadable
    segment. Only regular files are leased, so the blocking open is never a FIFO's.
    """
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0)
    try:
        return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))
    except BlockingIOError:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise
        return os.open(path, flags)


def segment_size(path: Path) -> int:
    """The segment's size on disk (0 when it cannot be told)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


class Segment:
    """One open segment: numbered lines, up to a byte limit, plain or gzip-compressed."""

    def __init__(
        self, stream: IO[bytes], closing: contextlib.ExitStack, length: int | None, compressed: bool
    ) -> None:
        self._stream = stream
        self._closing = closing
        self.length = length
        """The plain segment's size as it was opened (what the first pass reads); None for a
        compressed one, which the hub no longer writes."""
        self.compressed = compressed

    @classmethod
    def open(cls, path: Path) -> Segment:
        """Open ``path``, or its ``.gz`` when the hub compressed it since it was listed.

        Only a regular file (or a link to one) is a segment: a FIFO or a device would never
        end. Raises :class:`SegmentProblem`.
        """
        try:
            try:
                fd = _open_regular(path)
            except FileNotFoundError:
                if not path.name.endswith(_PLAIN):
                    raise
                path = path.with_name(path.name + ".gz")
                fd = _open_regular(path)
        except OSError as exc:
            raise SegmentProblem(f"cannot read this segment ({exc.strerror or exc})") from None
        closing = contextlib.ExitStack()
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise SegmentProblem(
                    f"skipped: it is {file_kind(info.st_mode)}, not a file of the audit trail"
                )
            raw = closing.enter_context(os.fdopen(fd, "rb", buffering=1 << 16))
        except BaseException:
            closing.close()
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        if path.name.endswith(".gz"):
            stream: IO[bytes] = closing.enter_context(gzip.GzipFile(fileobj=raw, mode="rb"))  # type: ignore[arg-type]
            return cls(stream, closing, None, True)
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
                    continue
                if len(line) > MAX_LINE_BYTES:
                    while not line.endswith(b"\n") and (limit is None or offset < limit):
                        line = stream.readline(
                            _SKIP_CHUNK if limit is None else min(_SKIP_CHUNK, limit - offset)
                        )
                        if not line:
                            break
                        offset += len(line)
                    yield number, None, offset
                    continue
                yield number, line, offset
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise SegmentProblem(
                f"gzip segment is truncated or corrupt after line {number} ({exc})"
            ) from None
        except OSError as exc:
            raise SegmentProblem(f"cannot read this segment ({exc.strerror or exc})") from None


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
