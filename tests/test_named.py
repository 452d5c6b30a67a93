"""files/named.py: a path the user named is written at that very name. A link a checkout holds,
on the way or at the name, is never written through; the user's own links are theirs."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

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


# -- end to end: the paths a person names on the command line and in the environment ----------


def _clone(tmp_path: Path) -> WorkspaceMaker:
    """A clone (its .git) whose root is the workspace, and the user's own virtualenv in it."""
    ws = WorkspaceMaker(tmp_path / "clone")
    (ws.root / ".git").mkdir()
    ws.segment("000001.jsonl", [run_record("r1", pipeline="x$(touch /tmp/owned)")])
    activate = ws.root / ".venv" / "bin" / "activate"
    activate.parent.mkdir(parents=True)
    activate.write_text("# the user's own activate\n")
    return ws


def _export(cwd: Path, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        cli_command("export", *args),
        cwd=cwd,
        env=cli_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


def test_a_dry_run_at_a_clones_root_never_writes_through_its_committed_link(
    tmp_path: Path,
) -> None:
    """Issue 43, 1: ``events.jsonl -> .venv/bin/activate`` committed; ``export --dry-run -o
    events.jsonl`` (the first example of ``export --help``) replaced the user's activate
    script with the events, and a relative OPENLINEAGE_FILE_PATH appended through it."""
    ws = _clone(tmp_path)
    activate = ws.root / ".venv" / "bin" / "activate"
    (ws.root / "events.jsonl").symlink_to(".venv/bin/activate")
    done = _export(ws.root, tmp_path, "--dry-run", "-o", "events.jsonl")
    assert done.returncode == 0, done.stderr
    assert activate.read_text() == "# the user's own activate\n"
    assert not (ws.root / "events.jsonl").is_symlink()
    assert len((ws.root / "events.jsonl").read_text().splitlines()) == 4
    (ws.root / "lineage.jsonl").symlink_to(".venv/bin/activate")
    done = _export(
        ws.root,
        tmp_path,
        OPENLINEAGE_TRANSPORT="file",
        OPENLINEAGE_FILE_PATH="lineage.jsonl",
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(
        f"error: openlineage.file.path: cannot write to {ws.root / 'lineage.jsonl'}: it is a "
        f"link in the checkout {ws.root} (it has .git): not followed; the events are not "
        "appended through it"
    ), done.stderr
    assert activate.read_text() == "# the user's own activate\n"


def test_a_folder_link_the_checkout_holds_on_the_way_is_refused(tmp_path: Path) -> None:
    """Attack A, 8: ``build -> ../other-project/build`` committed; -o, --report and
    OPENLINEAGE_FILE_PATH each wrote over the user's own files of those names."""
    other = tmp_path / "home" / "work" / "other-project" / "build"
    other.mkdir(parents=True)
    for name in ("events.jsonl", "report.html", "lineage.jsonl"):
        (other / name).write_text(f"the user's own {name}\n")
    ws = WorkspaceMaker(tmp_path / "home" / "work" / "clone")
    (ws.root / ".git").mkdir()
    ws.segment("000001.jsonl", [run_record("r1")])
    (ws.root / "build").symlink_to("../other-project/build")
    refused = f"{ws.root / 'build'} is a link in the checkout {ws.root} (it has .git): not followed"
    done = _export(
        ws.root, tmp_path, "--dry-run", "-o", "build/events.jsonl", "--report", "build/r.html"
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert refused in done.stderr
    done = _export(ws.root, tmp_path, "--dry-run", "-o", "e.jsonl", "--report", "build/report.html")
    assert done.returncode == 2 and refused in done.stderr, done.stderr
    done = _export(
        ws.root,
        tmp_path,
        OPENLINEAGE_TRANSPORT="file",
        OPENLINEAGE_FILE_PATH=str(ws.root / "build" / "lineage.jsonl"),
    )
    assert done.returncode == 2 and refused in done.stderr, done.stderr
    for name in ("events.jsonl", "report.html", "lineage.jsonl"):
        assert (other / name).read_text() == f"the user's own {name}\n"
    assert sorted(os.listdir(other)) == ["events.jsonl", "lineage.jsonl", "report.html"]


def test_a_chain_through_the_users_link_is_judged_link_by_link(tmp_path: Path, clone: Path) -> None:
    # The user's own link leads to a name the checkout holds as a link into /proc/self/root:
    # the checkout's link is replaced, never written through (the kernel would follow it).
    victim = clone.parent / "mine" / "activate"
    (clone / "events.jsonl").symlink_to(f"/proc/self/root{victim}")
    (tmp_path / "latest.jsonl").symlink_to(clone / "events.jsonl")
    write(tmp_path / "latest.jsonl", b"events\n")
    with named.in_place(tmp_path / "latest.jsonl", Checkouts()) as stream:
        stream.write(b"watched\n")
    assert victim.read_text() == "# the user's own\n"
    assert (tmp_path / "latest.jsonl").is_symlink()
    assert not (clone / "events.jsonl").is_symlink()
    assert (clone / "events.jsonl").read_bytes() == b"watched\n"


def test_a_users_link_into_a_processes_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("kept\n")
    (tmp_path / "via-proc").symlink_to(f"/proc/self/root{tmp_path}/mine.txt")
    with pytest.raises(Refused, match=r"/proc"):
        write(tmp_path / "via-proc", b"x")
    assert (tmp_path / "mine.txt").read_text() == "kept\n"


def test_a_users_link_to_a_fifo_the_checkout_holds_is_refused_never_waited_on(
    tmp_path: Path, clone: Path
) -> None:
    os.mkfifo(clone / "events.jsonl")  # a restored cache can hold one
    (tmp_path / "latest.jsonl").symlink_to(clone / "events.jsonl")
    # A reader is there, so that a write through would not wait but be seen.
    reader = os.open(clone / "events.jsonl", os.O_RDONLY | os.O_NONBLOCK)
    try:
        for attempt in (
            lambda: write(tmp_path / "latest.jsonl", b"x"),
            lambda: named.in_place(tmp_path / "latest.jsonl", Checkouts()),
        ):
            with pytest.raises(Refused, match="named pipe"):
                attempt()
        assert os.read(reader, 64) == b""  # nothing came through (no writer: the end)
    finally:
        os.close(reader)


def test_what_a_descriptor_has_open_is_written_as_it_is(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        write(f"/dev/fd/{write_end}", b"through the descriptor")
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as got:
        assert got.read() == b"through the descriptor"
    with (tmp_path / "redirected").open("wb") as stdout:  # a shell's > file
        stdout.write(b"old and longer\n")
        stdout.flush()
        write(f"/proc/self/fd/{stdout.fileno()}", b"new\n")
    assert (tmp_path / "redirected").read_bytes() == b"new\n"


def test_a_chain_of_40_links_is_followed_and_41_refused_naming_the_name(
    tmp_path: Path,
) -> None:
    # Attack C, C8: the kernel follows 40 links; the refusal named the last name walked.
    (tmp_path / "end.jsonl").write_text("old\n")
    previous = "end.jsonl"
    for n in range(1, 42):
        (tmp_path / f"c{n}").symlink_to(previous)
        previous = f"c{n}"
    write(tmp_path / "c40", b"through 40\n")
    assert (tmp_path / "end.jsonl").read_text() == "through 40\n"
    for attempt in (
        lambda: write(tmp_path / "c41", b"x"),
        lambda: named.check_writable(tmp_path / "c41", Checkouts()),
    ):
        with pytest.raises(Refused) as caught:
            attempt()
        assert caught.value.filename == str(tmp_path / "c41")
        assert "more than 40 links" in caught.value.what(tmp_path / "c41")
    (tmp_path / "loop").symlink_to("loop")
    with pytest.raises(Refused) as caught:
        named.check_writable(tmp_path / "loop", Checkouts())  # before anything is sent
    assert caught.value.filename == str(tmp_path / "loop")


def test_a_name_holding_a_nul_is_refused_in_words(tmp_path: Path) -> None:
    # Attack C, C4b (in depth: settings refuse it first): not a ValueError traceback.
    for attempt in (
        lambda: write(tmp_path / "a\0b", b"x"),
        lambda: named.append(tmp_path / "a\0b", Checkouts()),
        lambda: named.check_writable(tmp_path / "a\0b", Checkouts()),
    ):
        with pytest.raises(Refused, match="NUL"):
            attempt()
