"""files/whose.py: whose a file is, on real folders laid out as CI and people lay them out.
Unknown means untrusted: a file is the user's only when it is positively outside every
checkout."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from openlineage_export.files.whose import Checkouts, is_repository


def git_init(path: Path) -> Path:
    """A real repository made by git at ``path``; its ``.git``."""
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=60)
    return path / ".git"


def checkout(path: Path, git: str = "folder") -> Path:
    """A checkout at ``path``, its ``.git`` a repository's folder, the ``gitdir:`` file of a
    worktree or a submodule (its repository elsewhere, really there), or a link to one."""
    path.mkdir(parents=True, exist_ok=True)
    if git == "folder":
        git_init(path)
    else:
        repository = git_init(path.parent / f"{path.name}-repository")
        if git == "file":
            (path / ".git").write_text(f"gitdir: {repository}\n")
        else:
            (path / ".git").symlink_to(repository)
    return path


def not_a_repository(path: Path, form: str) -> Path:
    """A ``.git`` at ``path`` that a tree brought itself, no repository: an empty file, an
    empty folder, a submodule's ``gitdir:`` whose superproject's ``.git`` was left out, a
    link to nowhere."""
    path.mkdir(parents=True, exist_ok=True)
    git = path / ".git"
    if form == "empty file":
        git.write_text("")
    elif form == "empty folder":
        git.mkdir()
    elif form == "dangling gitdir":
        git.write_text("gitdir: ../.git/modules/data\n")
    else:
        git.symlink_to("/nowhere/.git")
    return path


FORMS = ["empty file", "empty folder", "dangling gitdir", "dangling link"]


@pytest.mark.parametrize("form", FORMS)
def test_a_git_that_is_no_repository_leaves_the_edge_unknown(tmp_path: Path, form: str) -> None:
    """Attack D, 1: a build context of a recursive clone without its outer .git keeps the
    submodule's gitdir: file, dangling; a tarball may bring an empty .git. Neither tells where
    the checkout ends: the folders the workspace lies in stay the workspace's."""
    context = tmp_path / "app"
    ws = not_a_repository(context / "data", form) / "analytics"
    ws.mkdir()
    assert not is_repository(context / "data" / ".git")
    seen = Checkouts.around(ws, {"HOME": str(tmp_path / "home")})
    assert not seen.edge_known
    why = seen.holding(context)
    assert why is not None and "where its checkout ends cannot be told" in why
    # Still, whatever lies at or below that .git is held (unknown means untrusted):
    assert seen.holding(context / "data") == f"the checkout {context / 'data'} (it has .git)"


@pytest.mark.parametrize("git", ["folder", "file", "link"])
def test_a_real_repository_tells_the_edge(tmp_path: Path, git: str) -> None:
    co = checkout(tmp_path / "co", git)
    assert is_repository(co / ".git")
    seen = Checkouts.around(co, {"HOME": str(tmp_path / "home")})
    assert seen.edge_known and seen.holding(tmp_path) is None


def test_a_worktree_whose_repository_keeps_its_objects_in_the_main_one(tmp_path: Path) -> None:
    main = checkout(tmp_path / "main")
    subprocess.run(
        ["git", "-C", str(main), "commit", "-q", "--allow-empty", "-m", "x"],
        check=True,
        timeout=60,
        env={
            "GIT_AUTHOR_NAME": "a",
            "GIT_AUTHOR_EMAIL": "a@a",
            "GIT_COMMITTER_NAME": "a",
            "GIT_COMMITTER_EMAIL": "a@a",
            "PATH": "/usr/bin:/bin",
        },
    )
    subprocess.run(
        ["git", "-C", str(main), "worktree", "add", "-q", str(tmp_path / "wt")],
        check=True,
        timeout=60,
    )
    assert (tmp_path / "wt" / ".git").is_file()
    assert is_repository(tmp_path / "wt" / ".git")
    (main / ".git" / "objects").rename(tmp_path / "objects-gone")
    assert not is_repository(tmp_path / "wt" / ".git")


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


def test_home_the_root_holds_every_workspace_its_dot_folders_are_the_checkouts(
    tmp_path: Path,
) -> None:
    """Attack D, 2: HOME=/ (a container run under a uid with no passwd entry, whose / may be
    the checkout): with no .git to tell, /.openlineage and /.config are not the user's."""
    ws = tmp_path / "analytics"
    ws.mkdir()
    seen = Checkouts.around(ws, {"HOME": "/"})
    why = seen.holding(Path("/.openlineage"))
    assert why is not None and why.startswith("the home folder /,")
    assert seen.holding(Path("/.config/openlineage-export")) is not None
    assert seen.holding(tmp_path.parent / "elsewhere") is None  # not all the machine
    git_init(tmp_path)  # a repository tells the edge: the root's dot-folders are no checkout's
    assert Checkouts.around(ws, {"HOME": "/"}).holding(Path("/.openlineage")) is None


def test_a_relative_home_is_judged_where_it_leads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack D, 3: HOME=. names the current folder; "~" leads there."""
    ws = tmp_path / "app" / "analytics"
    ws.mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "app")
    seen = Checkouts.around(ws, {"HOME": "."})
    why = seen.holding(tmp_path / "app" / ".openlineage")
    assert why is not None and why.startswith(f"the home folder {tmp_path / 'app'}")


def test_with_no_workspace_the_current_folder_stands_in_for_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack D, 4: a command with no workspace judges from the current folder, never from
    nowhere: with no .git, the folders it lies in and a HOME holding it (HOME=$CI_PROJECT_DIR)
    are not the user's; the home the user database gives the user stays theirs."""
    project = tmp_path / "builds" / "project"
    project.mkdir(parents=True)
    seen = Checkouts.from_folder(project, {"HOME": str(project)})
    why = seen.holding(project / ".config" / "openlineage-export")
    assert why is not None and "which holds the current folder (no workspace named" in why
    assert seen.holding(tmp_path) is not None  # a folder it lies in
    assert seen.holding(tmp_path / "elsewhere") is None
    # What lies below the current folder is not held for itself (it is no workspace):
    assert (
        Checkouts.from_folder(project, {"HOME": str(tmp_path / "h")}).holding(project / "cfg")
        is None
    )
    # A terminal opened in one's own home (the user database's):
    monkeypatch.setattr("openlineage_export.files.whose.users_home", lambda: project)
    assert (
        Checkouts.from_folder(project, {"HOME": str(project)}).holding(project / ".config") is None
    )
    git_init(project)  # in a repository, only .git tells, as before
    seen = Checkouts.from_folder(project / "sub", {"HOME": str(tmp_path)})
    assert seen.holding(tmp_path / ".config") is None
