"""The run index of one export (state/index.py): positions on disk, never left behind."""

from __future__ import annotations

import signal
import subprocess
import threading
from pathlib import Path

import pytest
from fakeserver import Answer, FakeServer
from helpers import (
    WorkspaceMaker,
    can_mount,
    cli_command,
    cli_env,
    on_small_disk,
    reason_between,
    run_record,
    stage_record,
)

from openlineage_export.hub.trail import AuditTrail
from openlineage_export.state import index as index_module
from openlineage_export.state.index import STAGES_IN_MEMORY, RunIndex


def test_the_last_put_of_a_trace_id_wins_and_runs_come_back_in_trail_order(tmp_path: Path) -> None:
    with RunIndex(tmp_path) as index:
        index.put("b", "p", 0, 2, b"b1")
        index.put("a", "q", 0, 1, b"a1")
        index.put("b", "p", 1, 5, b"b2")
        index.put_stages("p", ("s", "t", "s"))
        index.put_stages("p", ("t",))
        index.put_stages("q", ("s",))
        assert [(w.trace_id, w.segment, w.line, w.fingerprint) for w in index.in_trail_order()] == [
            ("a", 0, 1, b"a1"),
            ("b", 1, 5, b"b2"),
        ]
        assert index.count() == 2 and index.pipelines() == {"p", "q"}
        assert sorted(index.stages_run()) == [("p", "s"), ("p", "t"), ("q", "s")]


def test_the_stages_a_trail_runs_are_not_held_in_memory_however_many(tmp_path: Path) -> None:
    """40 runs of 5,000 stages each, every run's stages named anew: what is held in memory to
    spare writes (the stage lists seen, the pairs not written yet) stays bounded by the index,
    not by the trail (each run's stage names were kept, written at the end: about 14 MB more
    for each run of 100,000 stages)."""
    runs, stages = 40, 5000
    with RunIndex(tmp_path) as index:
        most = 0
        for run in range(runs):
            index.put(f"r{run}", "p", 0, run + 1, b"")
            index.put_stages("p", tuple(f"r{run}-s{n}" for n in range(stages)))
            held = sum(len(names) for _, names in index._stages_seen) + len(index._new_stages)
            most = max(most, held)
        assert most <= 2 * STAGES_IN_MEMORY, most
        assert sum(1 for _ in index.stages_run()) == runs * stages


def test_what_the_index_buffers_is_bounded_by_characters_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: up to 5,000 trace ids and 65,536 stage names buffered, whatever their length:
    120 lines with a 2 MiB trace id each took 424 MB in ``status``. Now each buffer is
    written (or forgotten) once its ids and names reach CHARS_IN_MEMORY characters."""
    monkeypatch.setattr(index_module, "CHARS_IN_MEMORY", 1024 * 1024)
    long = 100_000
    most = 0
    with RunIndex(tmp_path) as index:
        for run in range(60):
            index.put(f"{run:04d}{'t' * long}", "p" * long, 0, run, b"f")
            stages = tuple(f"{run:04d}-{n}{'s' * long}" for n in range(3))
            index.put_stages("p" * long, stages)
            pending = sum(len(p[0]) + len(p[1]) for p in index._pending)
            seen = sum(len(p) + sum(map(len, names)) for p, names in index._stages_seen)
            new = sum(map(len, {id(p): p for p, _ in index._new_stages}.values()))
            new += sum(len(stage) for _, stage in index._new_stages)
            most = max(most, pending, seen, new)
        assert most <= 1024 * 1024, most
        assert index.count() == 60
        assert sum(1 for _ in index.stages_run()) == 60 * 3


def test_long_trace_ids_are_never_all_held_to_index_them_by_position(tmp_path: Path) -> None:
    """Before: the index by trail position was built when the first pass ended, SQLite
    sorting every row with its trace id (the table's key): 100 ids of 2 MiB took ~240 MB
    more at that moment. With an id past INDEXED_AS_WRITTEN it is kept up as rows are
    written. Measured in a child of its own (SQLite's memory is not Python's)."""
    import sys

    peak = tmp_path / "peak-kB"
    code = (
        "import pathlib, sys\n"
        "from openlineage_export.state.index import RunIndex\n"
        "with RunIndex(pathlib.Path(sys.argv[1])) as index:\n"
        "    for i in range(100):\n"
        "        index.put(f'{i:04d}' + 't' * 2 * 1024 * 1024, 'p', 0, i, b'f')\n"
        "    assert sum(1 for _ in index.in_trail_order()) == 100\n"
    )
    support = Path(__file__).parent / "support" / "peak_memory.py"
    done = subprocess.run(
        [sys.executable, str(support), str(peak), sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    kilobytes = int(peak.read_text())
    assert kilobytes < 120 * 1024, f"peak memory {kilobytes} kB (the ids are 200 MiB)"


def test_the_index_holds_positions_on_disk_not_runs(ws: WorkspaceMaker) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(50)])
    ws.segment("000002.jsonl", [run_record("r7", status="failed")])
    trail = AuditTrail(ws.audit, display_root=ws.root)
    scan = trail.scan(lambda entry: None)
    assert scan.index.path.exists() and scan.runs == 50
    positions = [(w.segment, w.line) for w in scan.index.in_trail_order()]
    assert positions == sorted(positions) and positions[-1] == (1, 1)
    assert len(positions) == 50
    scan.index.close()
    assert not scan.index.path.exists()


def test_an_index_a_killed_export_left_behind_is_removed_by_the_next_one(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}", stages=[stage_record()]) for i in range(20)])
    ws.settings({"openlineage.concurrency": 1})
    temp = tmp_path / "temp"
    temp.mkdir()
    (temp / "someone-elses").mkdir()
    unheld = threading.Event()
    with FakeServer() as server:
        server.script(
            lambda request: Answer(201, hold=unheld if len(server.requests) > 2 else None)
        )
        env = cli_env(tmp_path, OPENLINEAGE_URL=server.url, TMPDIR=str(temp))
        killed = subprocess.Popen(
            cli_command("export", "-w", str(ws.root)),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert server.wait_for(3)
        left = [p.name for p in temp.iterdir() if p.name.startswith(f"olx-index-{killed.pid}-")]
        assert len(left) == 1
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        unheld.set()
        assert (temp / left[0]).exists()
        dry = subprocess.run(
            cli_command(
                "export", "--dry-run", "-w", str(ws.root), "-o", str(tmp_path / "events.jsonl")
            ),
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert dry.returncode == 0, dry.stderr
    assert sorted(p.name for p in temp.iterdir()) == ["someone-elses"]


def test_an_index_of_an_export_still_running_is_left_alone(tmp_path: Path) -> None:
    sleeper = subprocess.Popen(["sleep", "3600"])  # alive until killed below
    try:
        theirs = tmp_path / f"olx-index-{sleeper.pid}-abc"
        theirs.mkdir()
        with RunIndex(tmp_path):
            assert theirs.exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_full_temporary_folder_is_one_line_naming_it(ws: WorkspaceMaker, tmp_path: Path) -> None:
    if (why := can_mount()) is not None:
        pytest.skip(why)
    ws.segment("000001.jsonl", [run_record(f"run-number-{i:06}") for i in range(3000)])
    temp = tmp_path / "temp"
    temp.mkdir()
    done = subprocess.run(
        on_small_disk(
            temp, cli_command("export", "--dry-run", "-w", str(ws.root), "-o", "/dev/null")
        ),
        env=cli_env(tmp_path, TMPDIR=str(temp)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"error: the temporary run index {temp}/olx-index-"), line
    # Said as a full disk (what to do about it), whatever SQLite or the OS called it.
    reason_between(
        line[line.index("/index.sqlite cannot be used (") :],
        "/index.sqlite cannot be used (",
        "); free some space there, or point TMPDIR at a folder with room",
    )
