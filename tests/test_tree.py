"""files/tree.py: a workspace's tree is read and written inside, one name at a time from its
root: no link below the root is followed, a folder on the way included."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from fakeserver import FakeServer, fake_server_fixture  # noqa: F401 (the fixture)
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.files.tree import WorkspaceTree
from openlineage_export.files.walk import Refused

SETTINGS = (".workspace", "settings.json")


@pytest.fixture
def tree(tmp_path: Path) -> WorkspaceTree:
    (tmp_path / "ws" / ".workspace" / "lineage" / "audit").mkdir(parents=True)
    (tmp_path / "ws" / ".workspace" / "settings.json").write_text("{}\n")
    (tmp_path / "private" / "lineage" / "audit").mkdir(parents=True)
    (tmp_path / "private" / "lineage" / "graph.json").write_text('{"secret": 1}')
    (tmp_path / "private" / "lineage" / "audit" / "000001.jsonl").write_text("secret\n")
    return WorkspaceTree(tmp_path / "ws")


def test_a_link_to_a_folder_on_the_way_is_refused_naming_it(tree: WorkspaceTree) -> None:
    marker = tree.root / ".workspace"
    (marker / "lineage" / "audit").rmdir()
    (marker / "lineage").rmdir()
    (marker / "lineage").symlink_to("../../private/lineage")
    for attempt in (
        lambda: tree.read((".workspace", "lineage", "graph.json"), limit=1000),
        lambda: tree.names((".workspace", "lineage", "audit")),
        lambda: tree.stream((".workspace", "lineage", "audit", "000001.jsonl")),
    ):
        with pytest.raises(Refused) as caught:
            attempt()
        assert caught.value.filename == str(marker / "lineage")
        assert caught.value.strerror == "a link, not a folder of the workspace's own"


def test_a_file_that_is_a_link_is_refused_even_inside_the_tree(tree: WorkspaceTree) -> None:
    audit = tree.root / ".workspace" / "lineage" / "audit"
    (audit / "000002.jsonl").symlink_to(
        tree.root.parent / "private" / "lineage" / "audit" / "000001.jsonl"
    )
    (audit / "000003.jsonl").write_text("ours\n")
    (audit / "000004.jsonl").symlink_to("000003.jsonl")
    for name in ("000002.jsonl", "000004.jsonl"):
        with pytest.raises(Refused, match="a link, not a file"):
            tree.stream((".workspace", "lineage", "audit", name))
    stream, info = tree.stream((".workspace", "lineage", "audit", "000003.jsonl"))
    with stream:
        assert stream.read() == b"ours\n" and info.st_size == 5


def test_reads_are_bounded(tree: WorkspaceTree) -> None:
    (tree.root / ".workspace" / "settings.json").write_bytes(b" " * 2000 + b"{}")
    with pytest.raises(OSError) as caught:
        tree.read(SETTINGS, limit=1024)
    assert caught.value.errno == errno.EFBIG


def test_settings_are_replaced_never_through_a_link(tree: WorkspaceTree) -> None:
    victim = tree.root.parent / "private" / "settings.json"
    victim.write_text("theirs\n")
    target = tree.root / ".workspace" / "settings.json"
    target.unlink()
    target.symlink_to(victim)
    with pytest.raises(Refused, match="a link, not a file of the workspace's own"):
        tree.check_replaceable(SETTINGS)
    with pytest.raises(Refused):
        tree.replace(SETTINGS, b"{}\n")
    assert victim.read_text() == "theirs\n"
    target.unlink()
    target.write_text("{}\n")
    os.chmod(target, 0o640)
    tree.replace(SETTINGS, b'{"a": 1}\n')
    assert target.read_bytes() == b'{"a": 1}\n' and target.stat().st_mode & 0o777 == 0o640


def test_parts_never_climb_out(tree: WorkspaceTree) -> None:
    for parts in ((".workspace", "..", "..", "private"), ("/etc", "passwd"), ("", "x")):
        with pytest.raises(Refused):
            tree.look(parts)


def test_look_says_what_is_there_without_following(tree: WorkspaceTree) -> None:
    audit = (".workspace", "lineage", "audit")
    assert tree.look((*audit, "none")) is None
    assert tree.look(("nothing", "here")) is None
    (tree.root / ".workspace" / "lineage" / "audit" / "l").symlink_to("/etc/passwd")
    found = tree.look((*audit, "l"))
    assert found is not None and stat.S_ISLNK(found.st_mode)


# -- end to end: nothing of the user's other files is read through a committed link ------------


@pytest.fixture
def pushed(tmp_path: Path, fake_server: FakeServer) -> tuple[WorkspaceMaker, Path]:
    """The user's private workspace, and a clone beside it whose settings.json names the
    pusher's server."""
    private = WorkspaceMaker(tmp_path / "home" / "work" / "private-ws")
    private.segment("000001.jsonl", [run_record("PRIVATE-payroll")])
    private.settings({"openlineage.url": fake_server.url})  # the user's own server
    clone = WorkspaceMaker(tmp_path / "home" / "work" / "proj")
    (clone.root / ".git").mkdir()
    clone.settings({"openlineage.url": fake_server.url})
    return clone, private.root


def _export(ws: WorkspaceMaker, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cli_command("export", "-w", str(ws.root)),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_a_committed_segment_or_graph_that_leaves_is_never_read(
    pushed: tuple[WorkspaceMaker, Path], fake_server: FakeServer, tmp_path: Path
) -> None:
    """Issue 43, 3: ``audit/000002.jsonl`` or ``graph.json`` a link out of the repository:
    read with the user's authority and posted, exit 0, no warning."""
    clone, private = pushed
    clone.segment("000001.jsonl", [run_record("theirs")])
    segment = clone.audit / "000002.jsonl"
    segment.symlink_to(private / ".workspace" / "lineage" / "audit" / "000001.jsonl")
    done = _export(clone, tmp_path)
    assert done.returncode == 1, done.stderr
    assert (
        "bad entry: .workspace/lineage/audit/000002.jsonl: skipped: it is a link, not a file "
        "of the audit trail"
    ) in done.stderr
    assert not any("PRIVATE" in str(event) for event in fake_server.events())
    graph = clone.root / ".workspace" / "lineage" / "graph.json"
    graph.unlink()
    graph.symlink_to(private / ".workspace" / "lineage" / "graph.json")
    done = _export(clone, tmp_path)
    assert done.returncode == 3, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "error: cannot read .workspace/lineage/graph.json (it is a link, not a file)"
    )


@pytest.mark.parametrize("linked", ["lineage", "lineage/audit", "settings.json"])
def test_a_committed_link_on_the_way_is_never_followed(
    pushed: tuple[WorkspaceMaker, Path], fake_server: FakeServer, tmp_path: Path, linked: str
) -> None:
    """Attack A, 7: a link to a folder on the way (``.workspace/lineage``, ``audit``), or
    ``settings.json`` itself (the user's production server and key name): read and sent."""
    clone, private = pushed
    clone.segment("000001.jsonl", [run_record("FABRICATED")])
    here = clone.root / ".workspace" / linked
    shutil.rmtree(here) if here.is_dir() else here.unlink()
    here.symlink_to(private / ".workspace" / linked)
    done = _export(clone, tmp_path)
    assert done.returncode == (2 if linked == "settings.json" else 3), done.stderr
    assert f"{here} is a link" in done.stderr or "it is a link" in done.stderr, done.stderr
    assert fake_server.requests == []
