"""Where a workspace keeps what the exporter reads (see ``lineage-hub/CONTRACT.md``).

The one place that knows the layout::

    <workspace>/.workspace/settings.json
    <workspace>/.workspace/lineage/graph.json
    <workspace>/.workspace/lineage/audit/
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import WorkspaceError

MARKER = ".workspace"
"""The folder that makes a folder a workspace."""


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
            raise WorkspaceError(f"{root.absolute()} is not a workspace: it has no {MARKER}/ "
                                 "folder (name the workspace with -w DIR)")
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
        raise WorkspaceError(f"{origin} is not in a workspace: neither it nor a folder above "
                             f"it has a {MARKER}/ folder (name the workspace with -w DIR)")

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
