"""The ``file`` destination: every event as one JSON line, in the order it would be sent.

What air-gapped sites upload later, and what the dry run writes (to standard output or
``--output``): the bytes are the same either way. ``openlineage.file.path`` names a file (the
events are appended to it) or a folder (an existing one, or a path ending in ``/``), which
gets ``events-000001.jsonl``, ``events-000002.jsonl``, ... starting a new file once the current
one reaches ``openlineage.file.maxBytes``; a run's events are never split across two files.
The ledger applies as for a server: each export appends only the runs that are new or changed.

The path is the user's to choose (``OPENLINEAGE_FILE_PATH``): anywhere, written at that very
name, their own links followed, never a link a checkout holds, on the way or at the name
(``files/named.py``: refused in one line). From the workspace's settings.json it is confined to
``.workspace/exports/`` (``trust.workspace_output``), walked from the workspace root without
following a link (``files/tree.py``). Either way only a regular file is written, opened
without blocking: a FIFO, a device or a socket is refused, never waited on.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO, ClassVar, Literal

from ..errors import ConfigError, DestinationError, OutputError
from ..files import named
from ..files.tree import WorkspaceTree
from ..files.walk import Folder, Refused
from ..files.whose import NOWHERE, Checkouts
from ..guards.secrecy import Redactor
from ..guards.trust import EXPORTS, outside_exports, workspace_output
from ..host.setting_row import SettingsGroup, setting
from ..translate.encoded import TranslatedRun
from .destination import Opening, RunOutcome, Tally

_ROTATED = re.compile(r"events-(\d{6,})\.jsonl")


@dataclass(frozen=True)
class FileSettings(SettingsGroup):
    """Where the ``file`` destination writes."""

    title: ClassVar[str] = "file destination (openlineage.transport = file)"

    path: str | None = setting(
        "openlineage.file.path",
        "output",
        None,
        "File the events are appended to as JSON Lines, or a folder (an existing one, or a "
        "path ending in /) of rotating files events-NNNNNN.jsonl. Relative paths start at the "
        "workspace folder. From the workspace's settings.json only in .workspace/exports/ "
        "(anywhere else: yours to set, in the environment).",
        env="OPENLINEAGE_FILE_PATH",
        ecosystem="transport.log_file_path",
    )
    max_bytes: int = setting(
        "openlineage.file.maxBytes",
        "integer",
        64 * 1024 * 1024,
        "In a folder: start a new file once the current one reaches this many bytes.",
        minimum=1024,
        maximum=2**40,
    )


@dataclass(frozen=True)
class FileConfig:
    """A file or a folder to write to (or, for the dry run, a stream the caller owns)."""

    path: Path | None = None
    folder: bool = False
    max_bytes: int = 64 * 1024 * 1024
    stream: BinaryIO | None = None
    below: tuple[str, ...] | None = None
    """The path's parts below ``root`` (``.workspace``, ``exports``, ...) when the workspace's
    settings.json named it: opened one by one, never through a link. None: the user chose the
    path (their links followed, never one a checkout holds: ``files/named.py``)."""
    root: Path | None = None
    checkouts: Checkouts = NOWHERE
    """Where checkouts are, seen from the workspace (whose a link on the way is)."""

    @classmethod
    def from_settings(cls, opening: Opening) -> FileConfig:
        """The file or folder ``openlineage.file.path`` names."""
        values = opening.settings.of(FileSettings)
        if not values.path:
            raise ConfigError(
                "openlineage.transport is file: set openlineage.file.path (or "
                "OPENLINEAGE_FILE_PATH) to a file or a folder, or use --dry-run"
            )
        ends_in_slash = values.path.endswith(("/", os.sep))
        below = workspace_output(
            values.path, opening.settings, "openlineage.file.path", opening.workspace
        )
        if below is not None:
            path = opening.workspace.joinpath(*below)
            try:
                found = WorkspaceTree(opening.workspace).look(below)
            except OSError:  # a link on the way: refused, naming it, when it is opened
                found = None
            folder = (
                ends_in_slash
                or below == EXPORTS
                or (found is not None and stat.S_ISDIR(found.st_mode))
            )
            return cls(
                path=path,
                folder=folder,
                max_bytes=values.max_bytes,
                below=below,
                root=opening.workspace,
            )
        path = Path(values.path).expanduser()
        if not path.is_absolute():
            path = opening.workspace / path
        folder = ends_in_slash or named.kind_at(path) == "folder"
        return cls(
            path=path.absolute(),
            folder=folder,
            max_bytes=values.max_bytes,
            checkouts=Checkouts.around(opening.workspace, opening.environ),
        )

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
        self._folder: Folder | None = None
        """The folder the files are opened in, held open (a link swapped in cannot move it)."""
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
        data = b"\n".join(run.bodies) + b"\n" if run.bodies else b""
        if self.config.stream is not None:
            try:
                self.config.stream.write(data)
            except (OSError, ValueError) as exc:
                # The dry run's output (standard output, or the file it is built in): not a
                # destination that is down (exit 4); its reader may simply have gone (EPIPE).
                reason = getattr(exc, "strerror", None) or str(exc)
                raise OutputError(
                    f"cannot write the events: {reason}", getattr(exc, "errno", None), reason
                ) from None
            tally.accepted = len(run)
            return RunOutcome(accepted=len(run))
        try:
            self._rotate_if_full()
            assert self._file is not None
            self._file.write(data)
            self._file.flush()
            self._size += len(data)
        except OSError as exc:
            raise DestinationError(
                f"cannot write the events to {self._where()}: {exc.strerror or exc}"
            ) from None
        tally.accepted = len(run)
        return RunOutcome(accepted=len(run))

    async def close(self) -> None:
        """Flush (and, for a file of ours, write to disk and close)."""
        if self.config.stream is not None:
            try:
                self.config.stream.flush()
            except (OSError, ValueError) as exc:
                reason = getattr(exc, "strerror", None) or str(exc)
                raise OutputError(
                    f"cannot write the events: {reason}", getattr(exc, "errno", None), reason
                ) from None
            return
        try:
            if self._file is not None:
                self._file.flush()
                os.fsync(self._file.fileno())
        finally:
            if self._file is not None:
                self._file.close()
                self._file = None
            self._drop_folder()

    def _drop_folder(self) -> None:
        if self._folder is not None:
            self._folder.close()
            self._folder = None

    def _where(self) -> Path:
        if self.config.path is None:
            return Path("-")  # the dry run's stream
        if not self.config.folder:
            return self.config.path
        return self.config.path / f"events-{self._number:06d}.jsonl"

    def _open_first(self) -> IO[bytes]:
        try:
            self._folder = self._open_folder()
            if self.config.folder:
                numbers = [
                    int(m.group(1))
                    for name in self._folder.names()
                    if (m := _ROTATED.fullmatch(name))
                ]
                self._number = max(numbers, default=1)
            stream = self._open(self._where())
        except Refused as exc:  # a link, a FIFO...: said as what the user can change
            self._drop_folder()
            raise self._refused(exc) from None
        except OSError as exc:
            self._drop_folder()
            raise ConfigError(
                f"openlineage.file.path: cannot write to {self._where()} ({exc.strerror or exc})"
            ) from None
        except BaseException:
            self._drop_folder()
            raise
        self._size = os.fstat(stream.fileno()).st_size
        return stream

    def _open_folder(self) -> Folder:
        """The folder the files go in, made if missing, held open: walked from the workspace
        without following a link when the workspace named it; the user's path walked as they
        wrote it, their links followed, never one a checkout holds."""
        config = self.config
        assert config.path is not None
        if config.below is not None:
            assert config.root is not None
            return WorkspaceTree(config.root).folder(
                config.below if config.folder else config.below[:-1], create=True
            )
        folder = config.path if config.folder else config.path.parent
        return named.folder_of(folder, config.checkouts, create=True)

    def _rotate_if_full(self) -> None:
        if self.config.folder and self._size >= self.config.max_bytes:
            assert self._file is not None
            self._file.close()
            self._file = None
            self._number += 1
            try:
                self._file = self._open(self._where())
            except Refused as exc:
                raise self._refused(exc) from None
            self._size = 0

    def _open(self, path: Path) -> IO[bytes]:
        """``path`` to append to, in the folder held open: a regular file, never waited on; a
        file the workspace chose is never a link (nor one of another name: a hard link)."""
        assert self._folder is not None
        if self.config.below is not None:
            return self._folder.append(path.name, shared=False)
        return named.append_in(self._folder, path.name, self.config.checkouts)

    def _refused(self, exc: Refused) -> ConfigError:
        if self.config.below is not None:
            row = FileSettings.rows()[0]
            return ConfigError(
                outside_exports(
                    row.key, row.env, f"leads to {exc.filename}, which is {exc.strerror}"
                )
            )
        return ConfigError(
            f"openlineage.file.path: cannot write to {self._where()}: "
            f"{exc.what(self._where())} (the file destination appends to regular files; a "
            "dry run writes the events to standard output)"
        )
