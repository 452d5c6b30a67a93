"""The ``file`` destination: every event as one JSON line, in the order it would be sent.

What air-gapped sites upload later, and what the dry run writes (to standard output or
``--output``): the bytes are the same either way. ``openlineage.file.path`` names a file (the
events are appended to it) or a folder (an existing one, or a path ending in ``/``), which
gets ``events-000001.jsonl``, ``events-000002.jsonl``, ... starting a new file once the current
one reaches ``openlineage.file.maxBytes``; a run's events are never split across two files.
The ledger applies as for a server: each export appends only the runs that are new or changed.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, ClassVar, Literal

from ..errors import ConfigError, DestinationError, OutputError
from ..host.setting_row import SettingsGroup, setting
from ..secrecy import Redactor
from ..translate.events import TranslatedRun, encode
from ..trust import confine, inside
from .destination import Opening, RunOutcome, Tally

_ROTATED = re.compile(r"events-(\d{6,})\.jsonl")


@dataclass(frozen=True)
class FileSettings(SettingsGroup):
    """Where the ``file`` destination writes."""

    title: ClassVar[str] = "file destination (openlineage.transport = file)"

    path: str | None = setting(
        "openlineage.file.path", "output", None,
        "File the events are appended to as JSON Lines, or a folder (an existing one, or a "
        "path ending in /) of rotating files events-NNNNNN.jsonl. Relative paths start at the "
        "workspace folder.",
        env="OPENLINEAGE_FILE_PATH", ecosystem="transport.log_file_path")
    max_bytes: int = setting(
        "openlineage.file.maxBytes", "integer", 64 * 1024 * 1024,
        "In a folder: start a new file once the current one reaches this many bytes.",
        minimum=1024, maximum=2**40)


@dataclass(frozen=True)
class FileConfig:
    """A file or a folder to write to (or, for the dry run, a stream the caller owns)."""

    path: Path | None = None
    folder: bool = False
    max_bytes: int = 64 * 1024 * 1024
    stream: BinaryIO | None = None
    confined_to: Path | None = None
    """The folder every file written must stay inside, links followed (the workspace, when
    the path came from its settings.json); None: the user chose the path."""

    @classmethod
    def from_settings(cls, opening: Opening) -> FileConfig:
        """The file or folder ``openlineage.file.path`` names."""
        values = opening.settings.of(FileSettings)
        if not values.path:
            raise ConfigError("openlineage.transport is file: set openlineage.file.path (or "
                              "OPENLINEAGE_FILE_PATH) to a file or a folder, or use --dry-run")
        path = Path(values.path).expanduser()
        if not path.is_absolute():
            path = opening.workspace / path
        confined_to = confine(path, opening.settings, "openlineage.file.path", opening.workspace)
        folder = values.path.endswith(("/", os.sep)) or path.is_dir()
        return cls(path=path.absolute(), folder=folder, max_bytes=values.max_bytes,
                   confined_to=confined_to)

    @property
    def name(self) -> str:
        """``file://`` and the absolute path (``dry run`` for a stream)."""
        if self.path is None:
            return "dry run"
        return self.path.as_uri() + ("/" if self.folder else "")


class FileDestination:
    """Appends each run's events, one line each; sends nothing, needs no server."""

    concurrency = 1
    event_legs = False
    never_waits: Literal[True] = True
    """``send`` writes and returns: the engine needs no task per run (see engine.py)."""
    redact = Redactor()

    def __init__(self, config: FileConfig, supplied: object = None) -> None:
        self.config = config
        self.name = config.name
        self._file: IO[bytes] | None = None
        self._size = 0
        self._number = 0
        if config.stream is None and config.path is not None:
            self._file = self._open_first()

    @classmethod
    def to_stream(cls, stream: BinaryIO) -> FileDestination:
        """The dry run's destination: ``stream`` (the caller owns and closes it)."""
        return cls(FileConfig(stream=stream))

    async def start(self) -> None:
        """Nothing to open: the file was opened (and checked) when the destination was made."""

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        """Write the run's events, one line each (a whole run, or nothing of it)."""
        data = b"".join(encode(event) + b"\n" for event in run.events)
        if self.config.stream is not None:
            try:
                self.config.stream.write(data)
            except (OSError, ValueError) as exc:
                # The dry run's output (standard output, or the file it is built in): not a
                # destination that is down (exit 4); its reader may simply have gone (EPIPE).
                reason = getattr(exc, "strerror", None) or str(exc)
                raise OutputError(f"cannot write the events: {reason}",
                                  getattr(exc, "errno", None), reason) from None
            tally.accepted = len(run.events)
            return RunOutcome(accepted=len(run.events))
        try:
            self._rotate_if_full()
            assert self._file is not None
            self._file.write(data)
            self._file.flush()
            self._size += len(data)
        except OSError as exc:
            raise DestinationError(f"cannot write the events to {self._where()}: "
                                   f"{exc.strerror or exc}") from None
        tally.accepted = len(run.events)
        return RunOutcome(accepted=len(run.events))

    async def close(self) -> None:
        """Flush (and, for a file of ours, write to disk and close)."""
        if self.config.stream is not None:
            try:
                self.config.stream.flush()
            except (OSError, ValueError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise OutputError(f"cannot write the events: {reason}",
                                  getattr(exc, "errno", None), reason) from None
            return
        if self._file is not None:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
            finally:
                self._file.close()
                self._file = None

    def _where(self) -> Path:
        if self.config.path is None:
            return Path("-")  # the dry run's stream
        if not self.config.folder:
            return self.config.path
        return self.config.path / f"events-{self._number:06d}.jsonl"

    def _open_first(self) -> IO[bytes]:
        assert self.config.path is not None
        try:
            if self.config.folder:
                self.config.path.mkdir(parents=True, exist_ok=True)
                numbers = [int(m.group(1)) for p in self.config.path.iterdir()
                           if (m := _ROTATED.fullmatch(p.name))]
                self._number = max(numbers, default=1)
            else:
                self.config.path.parent.mkdir(parents=True, exist_ok=True)
            stream = self._open(self._where())
        except OSError as exc:
            raise ConfigError(f"openlineage.file.path: cannot write to {self._where()} "
                              f"({exc.strerror or exc})") from None
        self._size = stream.tell()
        return stream

    def _rotate_if_full(self) -> None:
        if self.config.folder and self._size >= self.config.max_bytes:
            assert self._file is not None
            self._file.close()
            self._number += 1
            self._file = self._open(self._where())
            self._size = 0

    def _open(self, path: Path) -> IO[bytes]:
        """``path`` to append to; a file the workspace chose stays inside it, whatever links
        it (or a folder on its way) is."""
        root = self.config.confined_to
        if root is not None and not inside(path, root):
            raise ConfigError(
                f"openlineage.file.path in the workspace's settings.json leads outside the "
                f"workspace through a link ({self.config.name}): nothing more was written. A "
                f"workspace may only write inside itself; to write there, set "
                f"OPENLINEAGE_FILE_PATH in your environment")
        return path.open("ab")
