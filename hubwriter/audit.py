"""The audit trail as the hub writes it: lines in the order they were recorded, appended to
numbered segments (``000001.jsonl``, ``000002.jsonl``...), a closed segment gzip-compressed.

A gzip header here holds no time stamp, so the same lines give the same bytes on every run.
"""

from __future__ import annotations

import gzip
import heapq
import io
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Generic, Protocol, TextIO, TypeVar


def gzip_bytes(data: bytes, *, name: str = "", level: int = 9) -> bytes:
    """``data`` gzip-compressed at ``level``; ``name`` (if any) is the file name in the header."""
    if not name:
        return gzip.compress(data, compresslevel=level, mtime=0)
    buffer = io.BytesIO()
    with gzip.GzipFile(
        filename=name, mode="wb", fileobj=buffer, mtime=0, compresslevel=level
    ) as out:
        out.write(data)
    return buffer.getvalue()


def compress_file(path: Path, level: int) -> None:
    """Replace a closed segment by its gzip form (its name in the header), streamed."""
    with (
        open(path, "rb") as src,
        open(f"{path}.gz", "wb") as raw,
        gzip.GzipFile(
            filename=path.name, mode="wb", fileobj=raw, mtime=0, compresslevel=level
        ) as out,
    ):
        shutil.copyfileobj(src, out, 1 << 20)
    path.unlink()


class AuditWriter:
    """Appends lines to the numbered segments of ``audit``, from ``000001.jsonl`` on.

    A new segment starts at :meth:`rotate`, and by itself every ``lines_per_segment`` lines
    (0: never by itself). The segment it closes is compressed at ``gzip_level`` (its ``.gz``
    replaces it) unless the rotation says otherwise, or ``gzip_closed`` is false; with
    ``background``, on a worker thread (zlib lets go of the GIL, so compression overlaps with
    whatever makes the next lines). Text is written as UTF-8; a lone surrogate stands for the
    byte it escapes (``surrogateescape``), so a deliberately bad line can hold bytes that are not
    UTF-8.
    """

    def __init__(
        self,
        audit: Path,
        *,
        lines_per_segment: int = 0,
        gzip_closed: bool = True,
        gzip_level: int = 9,
        background: bool = False,
    ) -> None:
        self._audit = audit
        self._limit = lines_per_segment
        self._gzip_closed = gzip_closed
        self._level = gzip_level
        self._pool = ThreadPoolExecutor(max_workers=1) if background else None
        self._pending: list[Future[None]] = []
        self.count = 0
        """Segments started so far (the current one's number)."""
        self._in_segment = 0
        self._file: TextIO = self._open()

    def _open(self) -> TextIO:
        self.count += 1
        self._in_segment = 0
        path = self._audit / f"{self.count:06d}.jsonl"
        return open(
            path, "w", encoding="utf-8", errors="surrogateescape", newline="\n", buffering=1 << 20
        )

    def write(self, line: str) -> None:
        """Append one complete line (ending in a newline)."""
        if self._in_segment == self._limit and self._limit:
            self.rotate()
        self._file.write(line)
        self._in_segment += 1

    def rotate(self, *, compress: bool | None = None) -> None:
        """Close the current segment (compressed when ``compress``, by default when
        ``gzip_closed``) and start the next."""
        self._file.close()
        if self._gzip_closed if compress is None else compress:
            path = Path(self._file.name)
            if self._pool is None:
                compress_file(path, self._level)
            else:
                self._pending.append(self._pool.submit(compress_file, path, self._level))
        self._file = self._open()

    def close(self, torn: str = "") -> None:
        """End the newest segment, with the start of a line the hub was still writing
        (``torn``, no newline) if any, and wait for every compression."""
        self._file.write(torn)
        self._file.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            for future in self._pending:
                future.result()  # re-raise a failed compression


class _Moment(Protocol):
    """A moment: anything ordered (epoch milliseconds, a datetime)."""

    def __lt__(self, other: Any, /) -> bool: ...

    def __le__(self, other: Any, /) -> bool: ...


M = TypeVar("M", bound=_Moment)


class RecordingOrder(Generic[M]):
    """Lines queued at the moment the hub records them, handed to ``emit`` in that order
    (moment, then the order they were queued): a run simulated start to end records its
    ``running`` line long before its end, and other runs' lines come in between."""

    def __init__(self, emit: Callable[[M, str], None]) -> None:
        self._emit = emit
        self._pending: list[tuple[M, int, str]] = []
        self._queued = 0

    def later(self, moment: M, line: str) -> None:
        """Queue a line the hub records at ``moment``."""
        self._queued += 1
        heapq.heappush(self._pending, (moment, self._queued, line))

    def flush(self, until: M | None = None) -> None:
        """Hand on every queued line recorded up to ``until`` (all of them: None)."""
        pending, emit = self._pending, self._emit
        while pending and (until is None or pending[0][0] <= until):
            moment, _, line = heapq.heappop(pending)
            emit(moment, line)

    def next(self) -> tuple[M, str] | None:
        """The next queued line and its moment, taken off the queue (None: nothing queued)."""
        if not self._pending:
            return None
        moment, _, line = heapq.heappop(self._pending)
        return moment, line
