"""The workspace layout: what makes a folder a workspace, and finding it from inside, as git does."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import WorkspaceMaker

from openlineage_export.errors import WorkspaceError
from openlineage_export.host.workspace import Workspace


def test_the_layout_is_the_contracts(ws: WorkspaceMaker) -> None:
    workspace = Workspace.open(ws.root)
    assert workspace.root == ws.root.resolve()
    assert workspace.settings_file == ws.root.resolve() / ".workspace" / "settings.json"
    assert workspace.graph_file == ws.root.resolve() / ".workspace" / "lineage" / "graph.json"
    assert workspace.audit_dir == ws.audit.resolve()
    assert (
        workspace.display(workspace.audit_dir / "000001.jsonl")
        == ".workspace/lineage/audit/000001.jsonl"
    )
    assert workspace.display(Path("/elsewhere/x")) == "/elsewhere/x"


@pytest.mark.parametrize(
    "inside", [".", ".workspace", ".workspace/lineage", ".workspace/lineage/audit", "src/deep/er"]
)
def test_the_workspace_is_found_from_any_folder_inside_it(ws: WorkspaceMaker, inside: str) -> None:
    start = ws.root / inside
    start.mkdir(parents=True, exist_ok=True)
    assert Workspace.find(start).root == ws.root.resolve()


def test_the_nearest_workspace_wins(ws: WorkspaceMaker) -> None:
    nested = WorkspaceMaker(ws.root / "sub" / "inner")
    assert Workspace.find(nested.audit).root == nested.root.resolve()


def test_no_workspace_above_says_where_it_looked_and_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    with pytest.raises(WorkspaceError) as caught:
        Workspace.find(tmp_path / "a" / "b")
    message = str(caught.value)
    assert str(tmp_path / "a" / "b") in message and "-w DIR" in message


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: None, "does not exist"),
        (lambda p: p.write_text("x"), "is not a folder"),
        (lambda p: p.mkdir(), "is not a workspace: it has no .workspace/ folder"),
    ],
)
def test_open_names_the_absolute_path_and_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: object, says: str
) -> None:
    monkeypatch.chdir(tmp_path)
    make(tmp_path / "ws")  # type: ignore[operator]
    with pytest.raises(WorkspaceError, match=says) as caught:
        Workspace.open("ws")
    assert str(tmp_path / "ws") in str(caught.value)


def test_at_takes_a_workspace_or_a_path(ws: WorkspaceMaker) -> None:
    workspace = Workspace.open(ws.root)
    assert Workspace.at(workspace) is workspace
    assert Workspace.at(ws.root) == workspace
