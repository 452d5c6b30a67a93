"""One export at a time per (workspace, destination) (state/lock.py), with real processes."""

from __future__ import annotations

import collections
import fcntl
import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest
from fakeserver import Answer, FakeServer
from helpers import WorkspaceMaker, cli_command, cli_env, run_record
from hubwriter.synth import write_workspace

from openlineage_export.errors import ExportBusy, StateError
from openlineage_export.state import lock as lock_module
from openlineage_export.state.lock import ExportLock


def start(root: Path, env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_command("export", "-w", str(root), *args),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 120) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "Traceback" not in err, err
    return process.returncode, out, err


def test_two_exports_of_one_workspace_to_one_server_send_each_event_once(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    write_workspace(root, 60, seed=13)
    with FakeServer(Answer(201, delay=0.01)) as server:
        env = cli_env(tmp_path, OPENLINEAGE_URL=server.url)
        first, second = start(root, env), start(root, env)
        results = [finish(first), finish(second)]
        codes = sorted(code for code, _, _ in results)
        bodies = collections.Counter(r.body for r in server.requests)
    assert codes in ([0, 0], [0, 5]), results
    assert bodies and max(bodies.values()) == 1, "an event was sent twice"
    for code, _, err in results:
        if code == 5:
            assert err.startswith("error: another export of ") and "(process " in err, err
            assert err.count("\n") == 1, err  # one line


def test_a_second_export_is_refused_naming_the_first_and_a_dry_run_still_runs(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(20)])
    unheld = threading.Event()  # the holder's 4th event waits (it never times out) till the end
    with FakeServer() as server:
        server.script(
            lambda request: Answer(201, hold=unheld if len(server.requests) > 3 else None)
        )
        ws.settings({"openlineage.concurrency": 1, "openlineage.timeout": 900})  # the longest
        env = cli_env(tmp_path, OPENLINEAGE_URL=server.url)
        holder = start(ws.root, env)
        try:
            assert server.wait_for(4), finish(holder, timeout=5)
            code, _, err = finish(start(ws.root, env))
            assert code == 5, err
            assert err == (
                f"error: another export of {ws.root.resolve()} to {server.url}"
                f"/api/v1/lineage is running (process {holder.pid}); nothing was "
                "sent: wait for it to finish, or stop it, then export again\n"
            )
            assert len(server.requests) == 4  # the refused one sent nothing
            dry = subprocess.run(
                cli_command(
                    "export", "--dry-run", "-w", str(ws.root), "-o", str(tmp_path / "dry.jsonl")
                ),
                env=env,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert dry.returncode == 0, dry.stderr  # a dry run takes no lock
            other = subprocess.run(
                cli_command("export", "-w", str(ws.root), "--json"),
                env={
                    **env,
                    "OPENLINEAGE_TRANSPORT": "file",
                    "OPENLINEAGE_FILE_PATH": str(tmp_path / "out.jsonl"),
                },
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert other.returncode == 0, other.stderr  # another destination: its own lock
        finally:
            holder.send_signal(signal.SIGINT)
            code = finish(holder)[0]
            unheld.set()
        assert code == 130


def test_a_killed_export_leaves_no_lock_behind(ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(10)])
    unheld = threading.Event()
    with FakeServer() as server:
        server.script(
            lambda request: Answer(201, hold=unheld if len(server.requests) > 2 else None)
        )
        ws.settings({"openlineage.concurrency": 1})
        env = cli_env(tmp_path, OPENLINEAGE_URL=server.url)
        holder = start(ws.root, env)
        try:
            assert server.wait_for(3)
        finally:
            holder.send_signal(signal.SIGKILL)
            holder.wait()
        unheld.set()
        server.script(lambda request: Answer(201))
        code, out, err = finish(start(ws.root, env, "--json"))
    assert code == 0, err
    assert json.loads(out)["runs"]["total"] == 10


def test_the_lock_is_taken_again_once_released(tmp_path: Path) -> None:
    lock = ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage")
    with pytest.raises(
        ExportBusy,
        match=r"another export of /ws to http://x/api/v1/lineage is "
        r"running \(process \d+\)",
    ):
        ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage")
    ExportLock.acquire(tmp_path, "/ws", "http://y/api/v1/lineage").release()
    lock.release()
    ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage").release()


def held_without_an_id(tmp_path: Path, content: bytes) -> int:
    """The lock of (/ws, http://x) held by a descriptor of ours, its file holding ``content``
    (a holder that has taken the lock but not written its id yet)."""
    ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage").release()
    (path,) = (tmp_path / "locks").iterdir()
    fd = os.open(path, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.pwrite(fd, content, 0)
    return fd


def test_a_refused_export_waits_for_the_holder_to_write_its_id_and_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fd = held_without_an_id(tmp_path, b"")
    waits: list[float] = []

    def holder_writes_meanwhile(seconds: float) -> None:
        waits.append(seconds)
        os.pwrite(fd, f"{os.getpid()}\n/ws\nhttp://x/api/v1/lineage\n".encode(), 0)

    monkeypatch.setattr(lock_module.time, "sleep", holder_writes_meanwhile)
    try:
        with pytest.raises(ExportBusy, match=rf"is running \(process {os.getpid()}\)"):
            ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage")
    finally:
        os.close(fd)
    assert len(waits) == 1  # it looked before the id was there, waited once, then named it


def test_the_id_a_killed_holder_left_is_never_named(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()  # its id names no process now
    fd = held_without_an_id(tmp_path, f"{dead.pid}\n/ws\nhttp://x/api/v1/lineage\n".encode())
    try:
        with pytest.raises(ExportBusy, match=r"is running \(another process\)"):
            ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage")
    finally:
        os.close(fd)


def test_a_released_lock_keeps_no_id(tmp_path: Path) -> None:
    ExportLock.acquire(tmp_path, "/ws", "http://x/api/v1/lineage").release()
    (path,) = (tmp_path / "locks").iterdir()
    assert path.read_bytes() == b""


# -- the lock file is the user's own, never through a link (attack A, 2) -----------------------


def test_a_link_at_the_locks_name_empties_nothing(tmp_path: Path) -> None:
    victim = tmp_path / "outside" / "passwd"
    victim.parent.mkdir()
    victim.write_text("root:x:0:0:root:/root:/bin/bash\nprecious line 2\n")
    state = tmp_path / "state"
    lock = ExportLock.acquire(state, "/ws", "http://x/api/v1/lineage")
    path = lock.path
    lock.release()
    path.unlink()
    path.symlink_to(victim)  # a committed or planted link where the lock goes
    (state / "locks" / "dangling.lock").symlink_to(tmp_path / "made-elsewhere")
    with pytest.raises(StateError, match=r"cannot be used \(a link, not a file\)"):
        ExportLock.acquire(state, "/ws", "http://x/api/v1/lineage")
    assert victim.read_text() == "root:x:0:0:root:/root:/bin/bash\nprecious line 2\n"
    os.rename(state / "locks", state / "moved")
    (state / "locks").symlink_to(victim.parent)  # the folder of locks a link: refused too
    with pytest.raises(StateError, match="a link, not a folder"):
        ExportLock.acquire(state, "/ws", "http://x/api/v1/lineage")
    assert sorted(os.listdir(victim.parent)) == ["passwd"]


def test_a_state_folder_in_a_checkout_is_refused(tmp_path: Path) -> None:
    (tmp_path / "project" / ".git").mkdir(parents=True)
    state = tmp_path / "project" / ".openlineage-export-state"
    with pytest.raises(StateError) as caught:
        ExportLock.acquire(state, "/ws", "http://x/api/v1/lineage")
    assert str(caught.value).startswith(
        f"the state folder {state} (the ledger, the locks) is not used: it lies in the "
        f"checkout {tmp_path / 'project'} (it has .git)"
    )
    assert not state.exists()
