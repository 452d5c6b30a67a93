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
from ..files import named
from ..files.tree import WorkspaceTree
from ..files.walk import shown_path
from ..files.whose import NOWHERE

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
        shown = shown_path(root.absolute())
        kind = named.kind_at(root)
        if kind is None:
            raise WorkspaceError(f"the workspace folder {shown} does not exist")
        if kind != "folder":
            raise WorkspaceError(f"the workspace {shown} is not a folder")
        if named.kind_at(root / MARKER) != "folder":
            below = workspaces_below(root)
            hint = (
                NAME_IT
                if not below
                else "workspaces below it: "
                + ", ".join(shown_path(w) for w in below[:_LISTED])
                + (f" and {len(below) - _LISTED} more" if len(below) > _LISTED else "")
                + "; "
                + NAME_ONE
            )
            raise WorkspaceError(f"{shown} is not a workspace: it has no {MARKER}/ folder ({hint})")
        return cls(_real(root))

    @classmethod
    def at(cls, where: Path | str | Workspace) -> Workspace:
        """``where`` itself when it is a :class:`Workspace`, else :meth:`open` it."""
        return where if isinstance(where, Workspace) else cls.open(where)

    @classmethod
    def find(cls, start: Path | str) -> Workspace:
        """The workspace holding ``start``: it, or the nearest folder above it, as git finds a
        repository. A :class:`WorkspaceError` naming ``start`` when there is none."""
        origin = Path(start).expanduser().absolute()
        if named.kind_at(origin) is None:
            raise WorkspaceError(f"the workspace folder {shown_path(origin)} does not exist")
        for folder in (origin, *origin.parents):
            if named.kind_at(folder / MARKER) == "folder":
                return cls(_real(folder))
        raise WorkspaceError(
            f"{shown_path(origin)} is not in a workspace: neither it nor a folder above "
            f"it has a {MARKER}/ folder ({NAME_IT})"
        )

    @property
    def tree(self) -> WorkspaceTree:
        """The workspace's files, read and written inside it (``files/tree.py``)."""
        return WorkspaceTree(self.root)

    @property
    def key(self) -> str:
        """The workspace as the ledger and the lock know it: its path (a byte of it that is
        not UTF-8 written ``\\xff``)."""
        return shown_path(self.root)

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

    def parts(self, path: Path) -> tuple[str, ...]:
        """``path`` (one of the properties above) as parts below the root, for :attr:`tree`."""
        return path.relative_to(self.root).parts

    def display(self, path: Path) -> str:
        """A path as users see it: relative to the workspace root."""
        try:
            return shown_path(path.relative_to(self.root).as_posix())
        except ValueError:
            return shown_path(path)


def _real(root: Path) -> Path:
    """The workspace folder's real path: links on the way followed, unless a checkout holds
    one (a committed ``analytics -> ~/private-ws``: the user's other workspace)."""
    try:
        return named.real(root, NOWHERE)
    except named.Refused as exc:
        raise WorkspaceError(
            f"the workspace {shown_path(root.absolute())} cannot be used: {exc.what(root)}"
        ) from None
    except OSError as exc:
        raise WorkspaceError(
            f"the workspace {shown_path(root.absolute())} cannot be used: {exc.strerror or exc}"
        ) from None


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
                    name for name in named.subfolders(parent) if not name.startswith(".")
                )
            except OSError:
                continue
            for name in children:
                visits += 1
                if visits > _VISITS:
                    return sorted(found)
                child = parent / name
                (found if named.kind_at(child / MARKER) == "folder" else deeper).append(child)
        level = deeper
    cwd = Path.cwd()
    return sorted(p.relative_to(cwd) if p.is_relative_to(cwd) else p for p in found)
