"""Where a workspace keeps what the exporter reads (see ``lineage-hub/CONTRACT.md``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import WorkspaceError


@dataclass(frozen=True, slots=True)
class Workspace:
    """A workspace folder: its settings, its Lineage hub graph and its audit trail."""

    root: Path

    @classmethod
    def open(cls, path: Path | str) -> Workspace:
        """The workspace at ``path``; a :class:`WorkspaceError` when there is none."""
        root = Path(path).expanduser()
        if not root.is_dir():
            raise WorkspaceError(f"{root} is not a folder")
        if not (root / ".workspace").is_dir():
            raise WorkspaceError(f"{root} is not a workspace: it has no .workspace/ folder")
        return cls(root.resolve())

    @property
    def settings_file(self) -> Path:
        """``.workspace/settings.json``."""
        return self.root / ".workspace" / "settings.json"

    @property
    def graph_file(self) -> Path:
        """``.workspace/lineage/graph.json``."""
        return self.root / ".workspace" / "lineage" / "graph.json"

    @property
    def audit_dir(self) -> Path:
        """``.workspace/lineage/audit/``, the segments of the audit trail."""
        return self.root / ".workspace" / "lineage" / "audit"

    def display(self, path: Path) -> str:
        """A path as users see it: relative to the workspace root."""
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)
