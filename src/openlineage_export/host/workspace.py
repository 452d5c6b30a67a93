"""Where a workspace keeps what the exporter reads (see ``lineage-hub/CONTRACT.md``).

The one place that knows the layout::

    <workspace>/.workspace/settings.json
    <workspace>/.workspace/lineage/graph.json
    <workspace>/.workspace/lineage/audit/
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import WorkspaceError

MARKER = ".workspace"
"""The folder that makes a folder a workspace."""


NAME_IT = "name the workspace with -w DIR"
"""How a person at the command line names the workspace (a host words it its way:
``cli/host_words.py``)."""
NAME_ONE = "name one with -w DIR"
"""How a person at the command line picks one of the workspaces below a folder."""


@dataclass(frozen=True, slots=True)
class Workspace:
    """A workspace folder: its settings, its Lineage hub graph and its audit trail."""

    root: Path

    @classmethod
    def open(cls, path: Path | str) -> Workspace:
        """The workspace at ``path``; a :class:`WorkspaceError` when there is none."""
        root = Path(path).expanduser()
        if not root.exists():
            raise WorkspaceError(f"the workspace folder {root.absolute()} does not exist")
        if not root.is_dir():
            raise WorkspaceError(f"the workspace {root.absolute()} is not a folder")
        if not (root / MARKER).is_dir():
            below = workspaces_below(root)
            hint = (
                NAME_IT
                if not below
                else "workspaces below it: "
                + ", ".join(str(w) for w in below[:_LISTED])
                + (f" and {len(below) - _LISTED} more" if len(below) > _LISTED else "")
                + "; "
                + NAME_ONE
            )
            raise WorkspaceError(
                f"{root.absolute()} is not a workspace: it has no {MARKER}/ folder ({hint})"
            )
        return cls(root.resolve())

    @classmethod
    def at(cls, where: Path | str | Workspace) -> Workspace:
        """``where`` itself when it is a :class:`Workspace`, else :meth:`open` it."""
        return where if isinstance(where, Workspace) else cls.open(where)

    @classmethod
    def find(cls, start: Path | str) -> Workspace:
        """The workspace holding ``start``: it, or the nearest folder above it, as git finds a
        repository. A :class:`WorkspaceError` naming ``start`` when there is none."""
        origin = Path(start).expanduser().absolute()
        if not origin.exists():
            raise WorkspaceError(f"the workspace folder {origin} does not exist")
        for folder in (origin, *origin.parents):
            if (folder / MARKER).is_dir():
                return cls(folder.resolve())
        raise WorkspaceError(
            f"{origin} is not in a workspace: neither it nor a folder above "
            f"it has a {MARKER}/ folder ({NAME_IT})"
        )

    @property
    def settings_file(self) -> Path:
        """``.workspace/settings.json``."""
        return self.root / MARKER / "settings.json"

    @property
    def graph_file(self) -> Path:
        """``.workspace/lineage/graph.json``."""
        return self.root / MARKER / "lineage" / "graph.json"

    @property
    def audit_dir(self) -> Path:
        """``.workspace/lineage/audit/``, the segments of the audit trail."""
        return self.root / MARKER / "lineage" / "audit"

    def display(self, path: Path) -> str:
        """A path as users see it: relative to the workspace root."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)


_KINDS = {
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFSOCK: "a socket",
}


_LISTED = 5
_DEPTH = 3
_VISITS = 2000


def workspaces_below(folder: Path) -> list[Path]:
    """The workspaces in the folders below ``folder`` (at most three levels down, hidden
    folders skipped, a bounded number visited), as paths relative to the current folder
    when below it; sorted."""
    found: list[Path] = []
    level, visits = [folder.absolute()], 0
    for _ in range(_DEPTH):
        deeper: list[Path] = []
        for parent in level:
            try:
                children = sorted(
                    e.name for e in os.scandir(parent) if not e.name.startswith(".") and e.is_dir()
                )
            except OSError:
                continue
            for name in children:
                visits += 1
                if visits > _VISITS:
                    return sorted(found)
                child = parent / name
                (found if (child / MARKER).is_dir() else deeper).append(child)
        level = deeper
    cwd = Path.cwd()
    return sorted(p.relative_to(cwd) if p.is_relative_to(cwd) else p for p in found)


def file_kind(mode: int) -> str:
    """What a file of ``st_mode`` is, in words: ``a named pipe (FIFO)``, ``a folder``..."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_file(path: Path, *, limit: int | None = None) -> bytes:
    """The bytes of a workspace file, which must be a regular file (or a link to one).

    A FIFO would make a plain read wait forever and a link to ``/dev/zero`` fill the memory:
    anything but a regular file is an :class:`OSError` whose ``strerror`` says what it is, and
    so is a file of more than ``limit`` bytes.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    with open(fd, "rb") as stream:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"it is {file_kind(info.st_mode)}, not a file", str(path))
        if limit is None:
            return stream.read()
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise OSError(errno.EFBIG, f"it is larger than {limit:,} bytes", str(path))
        return data
