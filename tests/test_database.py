"""files/database.py: SQLite is handed only a file the seam opened and checked: never a link,
nor one beside it (-wal, -shm, -journal), nor a hard link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openlineage_export.files.database import attach, connect, detach
from openlineage_export.files.scratch import Scratch
from openlineage_export.files.walk import Refused, never, walk


@pytest.mark.parametrize("name", ["ledger.sqlite", "ledger.sqlite-wal", "ledger.sqlite-shm"])
def test_a_dangling_link_creates_nothing_where_it_points(tmp_path: Path, name: str) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / name).symlink_to(tmp_path / "elsewhere")
    with walk(tmp_path, ["state"], never) as folder, pytest.raises(Refused, match="a link"):
        connect(folder, "ledger.sqlite", create=True)
    assert not (tmp_path / "elsewhere").exists()


def test_a_hard_link_is_refused(tmp_path: Path) -> None:
    (tmp_path / "theirs.sqlite").write_bytes(b"")
    os.link(tmp_path / "theirs.sqlite", tmp_path / "ledger.sqlite")
    with walk(tmp_path, [], never) as folder, pytest.raises(Refused, match="hard link"):
        connect(folder, "ledger.sqlite")


def test_the_database_is_the_file_checked_and_attaches_the_same_way(tmp_path: Path) -> None:
    with walk(tmp_path, [], never) as folder:
        ledger = connect(folder, "ledger.sqlite", create=True)
    try:
        ledger.db.execute("PRAGMA journal_mode = WAL")
        ledger.db.execute("CREATE TABLE runs (id INTEGER)")
        ledger.db.execute("INSERT INTO runs VALUES (7)")
        ((main_file,),) = [(row[2],) for row in ledger.db.execute("PRAGMA database_list")]
        assert main_file == str(tmp_path / "ledger.sqlite")
        assert sorted(os.listdir(tmp_path))[:2] == ["ledger.sqlite", "ledger.sqlite-shm"]
        scratch = Scratch("olx-test-", tmp_path)
        index = scratch.database("index.sqlite")
        try:
            attach(index, ledger, "ledger")
            assert index.execute("SELECT id FROM ledger.runs").fetchall() == [(7,)]
            detach(index, "ledger")
        finally:
            index.close()
            scratch.remove()
        with walk(tmp_path, [], never) as folder:
            reader = connect(folder, "ledger.sqlite", read_only=True)
        with pytest.raises(Exception, match="readonly"):
            reader.db.execute("INSERT INTO runs VALUES (8)")
        reader.close()
    finally:
        ledger.close()


def test_a_missing_database_is_not_made_unless_asked(tmp_path: Path) -> None:
    with walk(tmp_path, [], never) as folder, pytest.raises(FileNotFoundError):
        connect(folder, "ledger.sqlite", read_only=True)
    assert os.listdir(tmp_path) == []
