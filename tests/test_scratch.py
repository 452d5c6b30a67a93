"""files/scratch.py: a scratch folder of our own, removed after; one a killed process left is
removed by the next, never following a link out of it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from openlineage_export.files.scratch import Scratch, remove_abandoned


def test_a_scratch_folder_is_private_and_removed(tmp_path: Path) -> None:
    scratch = Scratch("olx-x-", tmp_path)
    assert scratch.path.name.startswith(f"olx-x-{os.getpid()}-")
    assert stat.S_IMODE(scratch.path.stat().st_mode) == 0o700
    scratch.database("index.sqlite").close()
    scratch.remove()
    assert list(tmp_path.iterdir()) == []


def test_only_what_dead_processes_left_is_removed_and_no_link_followed(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "file").write_text("keep")
    (tmp_path / "olx-x-999999999-a").mkdir()
    (tmp_path / "olx-x-999999999-a" / "link").symlink_to(precious)
    (tmp_path / "olx-x-999999998-b").symlink_to(precious)
    (tmp_path / f"olx-x-{os.getpid()}-c").mkdir()
    remove_abandoned(tmp_path, "olx-x-", lambda pid: pid == os.getpid())
    left = {p.name for p in tmp_path.iterdir()}
    assert "olx-x-999999999-a" not in left  # a dead process's folder: removed
    assert f"olx-x-{os.getpid()}-c" in left  # a live one's: kept
    assert (precious / "file").exists()  # the links removed (or left), never followed
    assert (precious / "file").read_text() == "keep"
