"""files/whose.py: whose a file is, on real folders laid out as CI and people lay them out.
Unknown means untrusted: a file is the user's only when it is positively outside every
checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from openlineage_export.files.whose import Checkouts


def checkout(path: Path, git: str = "folder") -> Path:
    """A checkout at ``path``, its ``.git`` a folder, a file (a worktree, a submodule) or a
    link."""
    path.mkdir(parents=True, exist_ok=True)
    if git == "folder":
        (path / ".git").mkdir()
    elif git == "file":
        (path / ".git").write_text("gitdir: ../.git/modules/x\n")
    else:
        (path / ".git").symlink_to("/nowhere/.git")
    return path


@pytest.mark.parametrize("git", ["folder", "file", "link"])
def test_a_checkout_inside_home_leaves_the_users_own_folders_theirs(
    tmp_path: Path, git: str
) -> None:
    home = tmp_path / "home"
    ws = checkout(home / "work" / "project", git) / "analytics"
    ws.mkdir()
    seen = Checkouts.around(ws, {"HOME": str(home)})
    assert seen.holding(home / ".openlineage") is None
    assert seen.holding(home) is None  # the current folder above the checkout
    assert seen.holding(ws) == f"the checkout {home / 'work' / 'project'} (it has .git)"
    assert seen.holding(ws / "deep" / "er") is not None


def test_a_submodule_is_no_edge_the_outer_checkout_holds_it_too(tmp_path: Path) -> None:
    outer = checkout(tmp_path / "ci" / "checkout")
    ws = checkout(outer / "data", "file") / "analytics"
    ws.mkdir()
    seen = Checkouts.around(ws, {"HOME": str(tmp_path / "home")})
    assert seen.holding(outer) == f"the checkout {outer} (it has .git)"


def test_no_git_the_workspace_and_every_folder_it_lies_in_are_the_workspaces(
    tmp_path: Path,
) -> None:
    root = tmp_path / "build" / "context"  # a Docker build context: no .git
    ws = root / "analytics"
    ws.mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    seen = Checkouts.around(ws, {"HOME": str(home)})
    why = seen.holding(root)
    assert why is not None and "where its checkout ends cannot be told" in why
    assert seen.holding(tmp_path) is not None  # every folder it lies in
    assert seen.holding(ws / ".workspace") == f"the workspace {ws}"
    assert seen.holding(home / ".openlineage") is None  # the user's home is elsewhere
    assert seen.holding(tmp_path / "elsewhere") is None


def test_home_that_is_the_checkout_makes_its_dot_folders_the_checkouts(tmp_path: Path) -> None:
    home = tmp_path / "builds" / "project"  # HOME=$CI_PROJECT_DIR, no .git (a cache)
    ws = home / "analytics"
    ws.mkdir(parents=True)
    seen = Checkouts.around(ws, {"HOME": str(home)})
    why = seen.holding(home / ".openlineage")
    assert why is not None and why.startswith(f"the home folder {home}")
    assert seen.holding(home / ".config" / "openlineage-export") is not None
    # ... and with a .git, HOME the checkout, and HOME inside a checkout:
    checkout(home)
    assert Checkouts.around(ws, {"HOME": str(home)}).holding(home / ".openlineage") is not None
    inner = home / ".home"
    inner.mkdir()
    seen = Checkouts.around(ws, {"HOME": str(inner)})
    assert seen.holding(inner / ".openlineage") == f"the checkout {home} (it has .git)"


def test_a_workspace_at_the_filesystem_root(tmp_path: Path) -> None:
    # Only the root itself is at or above it: the user's home folder stays theirs.
    seen = Checkouts.around(Path("/"), {"HOME": str(tmp_path)})
    assert seen.holding(Path("/")) is not None
    assert seen.holding(tmp_path / ".openlineage") is None


def test_with_no_workspace_only_git_tells(tmp_path: Path) -> None:
    co = checkout(tmp_path / "co")
    seen = Checkouts()
    assert seen.holding(co / ".config") is not None
    assert seen.holding(tmp_path) is None


def test_a_file_is_judged_where_its_name_sits_and_where_it_leads(tmp_path: Path) -> None:
    co = checkout(tmp_path / "co")
    home = tmp_path / "home"
    home.mkdir()
    (co / "openlineage.yml").write_text("x: 1\n")
    (home / "openlineage.yml").symlink_to(co / "openlineage.yml")
    (co / "mine.yml").symlink_to(home / "openlineage.yml")
    seen = Checkouts()
    led = seen.of_file(home / "openlineage.yml")
    assert led is not None and led.endswith("where it leads")
    assert seen.of_file(co / "mine.yml") is not None  # sits in the checkout
    (home / "own.yml").write_text("x: 1\n")
    assert seen.of_file(home / "own.yml") is None
