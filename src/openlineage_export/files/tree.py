"""A workspace's tree, read and written inside: every file of it reached from its root one
name at a time (``walk.py``), no link below the root ever followed.

Whoever pushed last wrote the tree, links included: a committed ``.workspace/lineage ->
../../other-workspace/.workspace/lineage`` would have us read the user's other workspace and
send it to the pusher's server, and ``settings.json`` as a link the user's other settings. So a
link anywhere below the root (a folder on the way, or the file itself) is :class:`Refused`,
naming it: one bad entry for a segment, one line for settings.json or graph.json. Only regular
files are opened, never waiting on one, and a file is read up to a limit the caller gives: the
size of a file from outside never sizes our memory.

The root itself is the user's choice (``-w``, or the folder an export runs in), found and
resolved by ``host/workspace.py`` through ``named.py``.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .walk import Folder, kind, never, refused, walk


def _checked(parts: Sequence[str]) -> Sequence[str]:
    """``parts`` if they stay below the root: no ``..``, no empty or absolute part."""
    for part in parts:
        if part in ("", ".", "..") or "/" in part or os.sep in part:
            raise refused(Path(*parts), "not a name below the workspace", errno.EINVAL)
    return parts


@dataclass(frozen=True)
class WorkspaceTree:
    """The files below a workspace's ``root``, each reached by its parts below the root
    (``(".workspace", "settings.json")``)."""

    root: Path

    def folder(self, parts: Sequence[str], *, create: bool = False) -> Folder:
        """The folder ``root/parts...`` held open (made when missing and ``create``); the
        caller closes it."""
        return walk(self.root, _checked(parts), never, create=create)

    def path(self, parts: Sequence[str]) -> Path:
        """The path of ``parts`` (for messages)."""
        return self.root.joinpath(*parts)

    def read(self, parts: Sequence[str], *, limit: int) -> bytes:
        """The bytes of the regular file ``parts``, at most ``limit`` of them (more is an
        ``OSError``, ``EFBIG``, saying so)."""
        with self.folder(parts[:-1]) as folder:
            return folder.read(_checked(parts)[-1], limit=limit)

    def stream(self, parts: Sequence[str]) -> tuple[BinaryIO, os.stat_result]:
        """The regular file ``parts`` open to read, and what it was when opened."""
        with self.folder(parts[:-1]) as folder:
            return folder.open_read(_checked(parts)[-1])

    def names(self, parts: Sequence[str]) -> list[str]:
        """The names in the folder ``parts``, as listed (a name that is not UTF-8 holds lone
        surrogates: ``walk.shown_path`` shows it)."""
        with self.folder(parts) as folder:
            return folder.names()

    def look(self, parts: Sequence[str]) -> os.stat_result | None:
        """What ``parts`` is (a link itself, never followed), or None when it is not there (its
        folder missing included)."""
        try:
            with self.folder(parts[:-1]) as folder:
                return folder.look(_checked(parts)[-1])
        except FileNotFoundError:
            return None

    def replace(self, parts: Sequence[str], data: bytes) -> None:
        """Replace the file ``parts`` with ``data`` atomically, keeping its mode (a new file:
        0666 less the umask). Neither it nor a folder on its way may be a link or anything but
        a file (:class:`~.walk.Refused`, before anything is written)."""
        with self.folder(parts[:-1]) as folder:
            self._check_file(folder, _checked(parts)[-1])
            folder.replace(parts[-1], data)

    def check_replaceable(self, parts: Sequence[str]) -> None:
        """Refuse now, before the file is read to be edited, what :meth:`replace` would refuse:
        a link (or no folder) on the way, a link or no file at the name. A folder that is
        missing, or cannot be opened, is left for the write to say."""
        try:
            folder = self.folder(parts[:-1])
        except FileNotFoundError:
            return
        with folder:
            self._check_file(folder, _checked(parts)[-1])

    @staticmethod
    def _check_file(folder: Folder, name: str) -> None:
        found = folder.look(name)
        if found is not None and not stat.S_ISREG(found.st_mode):
            what = f"{kind(found.st_mode)}, not a file of the workspace's own"
            raise refused(folder.path / name, what)
