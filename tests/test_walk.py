"""files/walk.py: a path walked one name at a time, each folder held open; at the last name only
regular files, never waited on, never through a link."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from fakeserver import FakeServer, fake_server_fixture  # noqa: F401 (the fixture)
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.files.walk import (
    Folder,
    Refused,
    never,
    shown_path,
    try_lock,
    walk,
)


def follow_all(folder: Path) -> None:
    return None


def test_a_walk_follows_links_only_as_its_judge_says(tmp_path: Path) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to("real")
    with walk(tmp_path, ["link", "sub"], follow_all) as folder:
        assert folder.path == tmp_path / "real" / "sub"  # the real path, as walked
    judged: list[Path] = []

    def refuse(at: Path) -> str:
        judged.append(at)
        return "a link nobody trusts"

    with pytest.raises(Refused) as caught:
        walk(tmp_path, ["link", "sub"], refuse)
    assert caught.value.filename == str(tmp_path / "link")
    assert caught.value.strerror == "a link nobody trusts"
    assert judged == [tmp_path]  # the folder the link sits in


def test_dotdot_after_a_link_is_the_parent_of_where_it_led(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "to-b").symlink_to(tmp_path / "a" / "b")  # absolute: walked from /
    with walk(tmp_path, ["x", "to-b", ".."], follow_all) as folder:
        assert folder.path == tmp_path / "a"
        assert folder.names() == ["b"]


def test_a_loop_of_links_ends(tmp_path: Path) -> None:
    (tmp_path / "one").symlink_to("two")
    (tmp_path / "two").symlink_to("one")
    with pytest.raises(Refused, match="loop"):
        walk(tmp_path, ["one"], follow_all)


def test_a_file_on_the_way_is_no_folder_and_a_missing_one_is_named(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(Refused) as caught:
        walk(tmp_path, ["file", "below"], follow_all)
    assert caught.value.errno == errno.ENOTDIR
    assert caught.value.strerror == "a file, not a folder"  # attack C, C7: not "not a regular"
    with walk(tmp_path, [], follow_all) as folder, pytest.raises(Refused) as child:
        folder.child("file")
    assert child.value.strerror == "a file, not a folder"
    with pytest.raises(FileNotFoundError) as missing:
        walk(tmp_path, ["nothing", "below"], follow_all)
    assert missing.value.filename == str(tmp_path / "nothing")


def test_private_folders_are_made_0700_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        with walk(tmp_path, ["a", "b"], never, create=True, private=True) as folder:
            assert stat.S_IMODE(folder.info().st_mode) == 0o700
        assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    finally:
        os.umask(old)


def test_a_link_swapped_in_after_the_walk_cannot_move_what_follows(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "other").mkdir()
    with walk(tmp_path, ["mine"], never) as folder:
        (tmp_path / "mine").rename(tmp_path / "moved")
        (tmp_path / "mine").symlink_to("other")
        folder.replace("f", b"data")
    assert (tmp_path / "moved" / "f").read_bytes() == b"data"
    assert not (tmp_path / "other" / "f").exists()


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda p: os.mkfifo(p), "a named pipe (FIFO), not a file"),
        (lambda p: p.symlink_to("/dev/zero"), "a link, not a file"),
        (lambda p: p.mkdir(), "a folder, not a file"),
    ],
)
def test_only_regular_files_are_read_never_waited_on(
    tmp_path: Path, make: Callable[[Path], object], words: str
) -> None:
    make(tmp_path / "x")
    with (
        Folder(os.open(tmp_path, os.O_RDONLY), tmp_path) as folder,
        pytest.raises(Refused) as caught,
    ):
        folder.read("x", limit=10)
    assert caught.value.strerror == words


def test_a_read_stops_past_its_limit(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b" " * 1000)
    with walk(tmp_path, [], never) as folder:
        assert folder.read("big", limit=1000) == b" " * 1000
        with pytest.raises(OSError) as caught:
            folder.read("big", limit=999)
    assert caught.value.errno == errno.EFBIG
    assert caught.value.strerror == "it is larger than 999 bytes"


def test_a_replacement_replaces_a_link_and_keeps_what_it_pointed_to(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (tmp_path / "f").symlink_to(victim)
    with walk(tmp_path, [], never) as folder:
        with folder.replacing("f") as new:
            new.stream.write(b"ours")
            new.keep = True
        with folder.replacing("g") as new:
            new.stream.write(b"left")  # not kept: nothing of it stays
    assert victim.read_text() == "precious\n"
    assert not (tmp_path / "f").is_symlink() and (tmp_path / "f").read_bytes() == b"ours"
    assert sorted(os.listdir(tmp_path)) == ["f", "victim"]


@pytest.mark.parametrize("length", [237, 255])
def test_any_name_the_file_system_takes_can_be_replaced(tmp_path: Path, length: int) -> None:
    # Attack C, C5: the temporary name was the name plus 19 bytes, too long past 236.
    name = "e" * (length - len(".jsonl")) + ".jsonl"
    (tmp_path / name).write_text("old\n")
    with walk(tmp_path, [], never) as folder:
        with folder.replacing(name) as new:
            new.stream.write(b"new\n")
            new.keep = True
        folder.replace("n" * length, b"durable\n")
    assert (tmp_path / name).read_bytes() == b"new\n"
    assert (tmp_path / ("n" * length)).read_bytes() == b"durable\n"
    assert sorted(os.listdir(tmp_path)) == sorted([name, "n" * length])


def test_appending_refuses_a_hard_link_unless_shared(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("x\n")
    os.link(tmp_path / "elsewhere", tmp_path / "f")
    with walk(tmp_path, [], never) as folder:
        with pytest.raises(Refused, match="hard link"):
            folder.append("f", shared=False)
        with folder.append("f", shared=True) as stream:
            stream.write(b"y\n")
    assert (tmp_path / "elsewhere").read_text() == "x\ny\n"


def test_a_lock_file_is_never_a_link_and_locks_once(tmp_path: Path) -> None:
    (tmp_path / "l.lock").symlink_to(tmp_path / "elsewhere")
    with walk(tmp_path, [], never) as folder:
        with pytest.raises(Refused):
            folder.lock_file("l.lock")
        assert not (tmp_path / "elsewhere").exists()  # a dangling link creates nothing
        first, second = folder.lock_file("m.lock"), folder.lock_file("m.lock")
    try:
        assert try_lock(first)
        held: list[bool] = []
        thread = threading.Thread(target=lambda: held.append(try_lock(second)))
        thread.start()
        thread.join()
        assert held == [False]
    finally:
        os.close(first)
        os.close(second)


def test_undecodable_names_are_listed_opened_and_shown_escaped(tmp_path: Path) -> None:
    raw = os.fsencode(tmp_path) + b"/seg\xff\x1b.jsonl"
    with open(raw, "wb") as stream:  # a name no str spells in UTF-8
        stream.write(b"line\n")
    with walk(tmp_path, [], never) as folder:
        (name,) = folder.names()
        assert folder.read(name, limit=100) == b"line\n"
    assert shown_path(name) == "seg\\xff\x1b.jsonl"  # control characters are the shower's
    assert shown_path("plain/ünïcode") == "plain/ünïcode"


# -- end to end: names that are not UTF-8, or hold control characters (issue 43, 7; attack A, 10)


def _undecodable(folder: Path, name: bytes, data: bytes = b"not json\n") -> None:
    with open(os.fsencode(folder) + b"/" + name, "wb") as stream:  # no str spells it in UTF-8
        stream.write(data)


def _cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        cli_command(*args), env=cli_env(tmp_path, **env), capture_output=True, timeout=120
    )
    assert b"Traceback" not in done.stderr, done.stderr
    return done


def test_a_segment_name_that_is_not_utf8_is_shown_escaped_in_every_output(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record("a")])
    _undecodable(ws.audit, b"000002\xff\x1b\x07\xc2\x9b.jsonl")
    shown = ".workspace/lineage/audit/000002\\xff\\x1b\\x07\\x9b.jsonl"  # as text shows it
    # JSON escapes the controls itself (read back, they are the characters); the byte that was
    # no UTF-8 is the text \xff in both.
    in_json = ".workspace/lineage/audit/000002\\xff\x1b\x07\x9b.jsonl"
    out = tmp_path / "events.jsonl"
    done = _cli(tmp_path, "export", "--dry-run", "-w", str(ws.root), "-o", str(out), "--json")
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout)
    assert [entry["file"] for entry in summary["badEntries"]["listed"]] == [in_json], summary
    assert not any(c in done.stdout for c in (b"\x1b", b"\x07", b"\xc2\x9b")), done.stdout
    done = _cli(
        tmp_path, "export", "--dry-run", "-w", str(ws.root), "-o", str(out), "--progress", "json"
    )
    assert done.returncode == 1, done.stderr
    lines = [json.loads(line) for line in done.stderr.splitlines()]  # each one JSON
    said = [v for line in lines for v in line.values() if isinstance(v, str)]
    assert any(in_json in value or shown in value for value in said), lines
    report = tmp_path / "report.html"
    done = _cli(
        tmp_path, "export", "--dry-run", "-w", str(ws.root), "-o", str(out), "--report", str(report)
    )
    assert done.returncode == 1, done.stderr
    page = report.read_bytes()
    assert shown.encode() in page
    assert not any(c in page for c in (b"\x1b", b"\x07", b"\xc2\x9b")), "raw controls on the page"


def test_a_folder_below_that_is_not_utf8_is_named_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "b"
    folder.mkdir()
    os.mkdir(os.fsencode(folder) + b"/team\xff")
    os.mkdir(os.fsencode(folder) + b"/team\xff/.workspace")
    done = _cli(tmp_path, "-w", str(folder), "export", "--dry-run", "--progress", "json")
    assert done.returncode == 3, done.stderr
    (line,) = [json.loads(line) for line in done.stderr.splitlines()]
    assert f"{folder}/team\\xff" in line["message"], line


def test_a_workspace_whose_own_path_is_not_utf8_exports(
    tmp_path: Path, fake_server: FakeServer
) -> None:
    root = os.fsdecode(os.fsencode(tmp_path) + b"/ws\xff")
    ws = WorkspaceMaker(Path(root))
    ws.segment("000001.jsonl", [run_record("a")])
    ws.settings({"openlineage.url": fake_server.url})
    done = _cli(tmp_path, "export", "-w", root, "--progress", "json")
    assert done.returncode == 0, done.stderr
    assert len(fake_server.requests) == 4
    done = _cli(tmp_path, "-w", root, "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["destinations"][0]["exported"] == 1


def test_an_error_naming_a_path_that_is_not_utf8_is_one_json_line(tmp_path: Path) -> None:
    root = os.fsdecode(os.fsencode(tmp_path) + b"/ws\xff")
    ws = WorkspaceMaker(Path(root))
    (ws.root / ".workspace" / "settings.json").write_text("{bad")
    done = _cli(tmp_path, "-w", root, "export", "--dry-run", "--progress", "json")
    assert done.returncode == 2, done.stderr
    (line,) = [json.loads(line) for line in done.stderr.splitlines()]
    assert line["message"].startswith(f"{tmp_path}/ws\\xff/.workspace/settings.json is not"), line
    done = _cli(tmp_path, "-w", root, "export", "--dry-run")
    assert done.stderr.startswith(f"error: {tmp_path}/ws\\xff/".encode()), done.stderr
