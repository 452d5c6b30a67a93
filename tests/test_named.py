"""files/named.py: a path the user named is written at that very name. A link a checkout holds,
on the way or at the name, is never written through; the user's own links are theirs."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from openlineage_export.files import named
from openlineage_export.files.walk import Refused
from openlineage_export.files.whose import Checkouts


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A checkout the user cloned, next to a project of their own outside it."""
    (tmp_path / "clone" / ".git").mkdir(parents=True)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "activate").write_text("# the user's own\n")
    return tmp_path / "clone"


NOWHERE = Checkouts()


def write(path: Path | str, data: bytes, checkouts: Checkouts = NOWHERE) -> None:
    with named.replacing(path, checkouts) as new:
        new.stream.write(data)
        new.keep = True


def test_a_link_the_checkout_holds_at_the_name_is_replaced_never_written_through(
    clone: Path,
) -> None:
    victim = clone.parent / "mine" / "activate"
    (clone / "events.jsonl").symlink_to(victim)
    write(clone / "events.jsonl", b"events\n")
    assert victim.read_text() == "# the user's own\n"
    assert not (clone / "events.jsonl").is_symlink()
    assert (clone / "events.jsonl").read_bytes() == b"events\n"


def test_a_link_the_checkout_holds_on_the_way_is_refused_naming_it(clone: Path) -> None:
    (clone / "build").symlink_to("../mine")
    for attempt in (
        lambda: write(clone / "build" / "activate", b"x"),
        lambda: named.append(clone / "build" / "activate", Checkouts()),
        lambda: named.in_place(clone / "build" / "activate", Checkouts()),
        lambda: named.check_writable(clone / "build" / "activate", Checkouts()),
    ):
        with pytest.raises(Refused) as caught:
            attempt()
        assert caught.value.filename == str(clone / "build")
        assert (
            caught.value.strerror == f"a link in the checkout {clone} (it has .git): not followed"
        )
    assert (clone.parent / "mine" / "activate").read_text() == "# the user's own\n"


def test_appending_through_a_link_the_checkout_holds_is_refused(clone: Path) -> None:
    (clone / "lineage.jsonl").symlink_to(clone.parent / "mine" / "activate")
    with pytest.raises(Refused, match="not appended through it"):
        named.append(clone / "lineage.jsonl", Checkouts())
    os.link(clone.parent / "mine" / "activate", clone / "hard.jsonl")
    with pytest.raises(Refused, match="hard link"):
        named.append(clone / "hard.jsonl", Checkouts())
    assert (clone.parent / "mine" / "activate").read_text() == "# the user's own\n"


def test_the_users_own_links_are_followed_and_kept(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "archive").symlink_to("data")  # a folder link of the user's
    (tmp_path / "data" / "old.jsonl").write_text("old\n")
    (tmp_path / "latest.jsonl").symlink_to("data/old.jsonl")
    write(tmp_path / "archive" / "new.jsonl", b"new\n")
    write(tmp_path / "latest.jsonl", b"replaced\n")
    with named.append(tmp_path / "latest.jsonl", Checkouts()) as stream:
        stream.write(b"more\n")
    assert (tmp_path / "data" / "new.jsonl").read_bytes() == b"new\n"
    assert (tmp_path / "latest.jsonl").is_symlink()  # the link kept, what it leads to replaced
    assert (tmp_path / "data" / "old.jsonl").read_text() == "replaced\nmore\n"


def test_devices_and_pipes_of_the_users_are_written_as_they_are(tmp_path: Path) -> None:
    write("/dev/null", b"nothing")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    write(fifo, b"through the pipe")
    reader.join()
    assert got == [b"through the pipe"] and fifo.exists()


def test_a_fifo_in_a_checkout_is_refused_never_waited_on(clone: Path) -> None:
    os.mkfifo(clone / "events.jsonl")  # a restored cache can hold one
    with pytest.raises(Refused, match="named pipe"):
        write(clone / "events.jsonl", b"x")


def test_relative_paths_start_at_the_current_folder(
    clone: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(clone)
    (clone / "build").symlink_to("../mine")
    with pytest.raises(Refused):
        write("build/activate", b"x")
    write("out.jsonl", b"here")
    assert (clone / "out.jsonl").read_bytes() == b"here"


def test_the_checks_before_writing_say_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        named.check_writable(tmp_path / "no" / "such" / "f", Checkouts())
    with pytest.raises(Refused, match="a folder"):
        named.check_writable(tmp_path, Checkouts())
    named.check_writable(tmp_path / "f", Checkouts())
    assert not (tmp_path / "f").exists()


def test_in_place_puts_a_new_file_at_the_name_then_writes_as_it_goes(clone: Path) -> None:
    victim = clone.parent / "mine" / "activate"
    (clone / "events.jsonl").symlink_to(victim)
    with named.in_place(clone / "events.jsonl", Checkouts()) as stream:
        stream.write(b"run 1\n")
        stream.flush()
        assert (clone / "events.jsonl").read_bytes() == b"run 1\n"
    assert victim.read_text() == "# the user's own\n"


def test_a_folder_of_the_users_is_reached_and_its_subfolders_listed(tmp_path: Path) -> None:
    (tmp_path / "a" / "ws" / ".workspace").mkdir(parents=True)
    (tmp_path / "a" / "link").symlink_to("ws")
    assert sorted(named.subfolders(tmp_path / "a")) == ["ws"]
    assert named.real(tmp_path / "a" / "link", Checkouts()) == tmp_path / "a" / "ws"
    assert named.kind_at(tmp_path / "a" / "link") == "folder"
    assert named.kind_at(tmp_path / "none") is None
