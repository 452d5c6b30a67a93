"""Test helpers: valid hub records and real workspaces on disk, written as the hub writes them."""

from __future__ import annotations

import gzip
import json
import os
import pwd
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "demo" / "acme-analytics"
USERS_HOME = Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)
"""The HOME the suite was started with, read when the tests are collected (each test then gets
a HOME of its own): where scripts/*.sh, run by test.sh, keep the services' state and caches
($HOME/.cache/openlineage-export/...), whatever the passwd file says."""
SHARED = ROOT.parent / "shared"

GRAPH = {
    "format": "lineage-hub/graph@1",
    "workspace": {"name": "test-ws"},
    "pipelines": [
        {
            "id": "daily-sales",
            "name": "Daily sales",
            "description": "Builds the sales mart.",
            "stages": [
                {
                    "id": "extract",
                    "description": "Pull orders",
                    "source": "pipelines/extract.py",
                    "reads": ["postgres://db:5432/sales.public.orders"],
                    "writes": ["data/raw/o.parquet"],
                },
                {"id": "load", "source": "pipelines/load.sql"},
            ],
        },
        {"id": "never", "name": "Never ran", "stages": [{"id": "only"}]},
    ],
}


def run_record(
    trace_id: str = "run-1",
    *,
    pipeline: str = "daily-sales",
    status: str = "succeeded",
    stages: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A valid ``kind: run`` record; keyword arguments override or add fields."""
    record: dict[str, Any] = {
        "kind": "run",
        "traceId": trace_id,
        "pipeline": pipeline,
        "status": status,
        "startedAt": "2026-11-02T02:00:00.120Z",
        "recordedAt": "2026-11-02T02:07:32.010Z",
        "engine": {"name": "hub-engine", "version": "4.2.0"},
        "stages": stages if stages is not None else [stage_record()],
    }
    if status != "running":
        record["endedAt"] = "2026-11-02T02:07:31.904Z"
    record.update(extra)
    return record


def stage_record(
    stage: str = "extract", *, status: str = "succeeded", attempt: int = 1, **extra: Any
) -> dict[str, Any]:
    """A valid stage execution."""
    record: dict[str, Any] = {
        "stage": stage,
        "attempt": attempt,
        "status": status,
        "startedAt": "2026-11-02T02:00:00.300Z",
        "reads": [{"dataset": "postgres://db:5432/sales.public.orders", "digest": "sha256:aa"}],
        "writes": [
            {
                "dataset": "data/raw/o.parquet",
                "digest": "sha256:bb",
                "rows": 3,
                "bytes": 10,
                "schema": [{"name": "id", "type": "BIGINT"}],
            }
        ],
    }
    if status not in ("running", "skipped"):
        record["endedAt"] = "2026-11-02T02:03:10.000Z"
    record.update(extra)
    return record


Line = dict[str, Any] | str | bytes


class WorkspaceMaker:
    """Writes a contract workspace: settings, graph, and audit segments from given lines."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / ".workspace" / "lineage" / "audit").mkdir(parents=True, exist_ok=True)
        self.graph(GRAPH)

    @property
    def audit(self) -> Path:
        return self.root / ".workspace" / "lineage" / "audit"

    def graph(self, graph: dict[str, Any]) -> None:
        (self.root / ".workspace" / "lineage" / "graph.json").write_text(json.dumps(graph))

    def settings(self, settings: dict[str, Any]) -> None:
        (self.root / ".workspace" / "settings.json").write_text(json.dumps(settings))

    def segment(self, name: str, lines: list[Line], *, end_newline: bool = True) -> Path:
        data = b"\n".join(_bytes(line) for line in lines) + (b"\n" if end_newline else b"")
        path = self.audit / name
        path.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
        return path


def _bytes(line: Line) -> bytes:
    if isinstance(line, bytes):
        return line
    if isinstance(line, str):
        return line.encode()
    return json.dumps(line).encode()


def cli_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment for a real ``openlineage-export`` process: nothing of the developer's
    OpenLineage setup, secrets in a private file, the ledger under ``tmp_path``."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    env.update(
        {
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
            "OPENLINEAGE_EXPORT_SECRETS": "file",
            "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
            "HOME": str(tmp_path / "home"),
        }
    )
    env.update(extra)
    return env


def cli_command(*args: str) -> list[str]:
    """The command line of a real ``openlineage-export`` process."""
    return [sys.executable, "-m", "openlineage_export", *args]


def read_position(pid: int, path: Path) -> int | None:
    """How far process ``pid`` has read the file ``path`` (Linux ``/proc``), None when it does
    not have it open."""
    import os

    fds = Path(f"/proc/{pid}/fd")
    try:
        for fd in fds.iterdir():
            try:
                if os.readlink(fd) != str(path):
                    continue
                info = (Path(f"/proc/{pid}/fdinfo") / fd.name).read_text()
            except OSError:
                continue
            for line in info.splitlines():
                if line.startswith("pos:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def on_small_disk(folder: Path, command: list[str], size: str = "64k") -> list[str]:
    """``command`` run in a private mount namespace where ``folder`` is a tmpfs of ``size``
    (a full disk, for this process only). Needs root; check with :func:`can_mount`."""
    script = f'mount -t tmpfs -o size={size} tmpfs "$0" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(folder), "--", *command]


def on_read_only_mount(folder: Path, command: list[str]) -> list[str]:
    """``command`` run in a private mount namespace where ``folder`` is mounted read-only (a
    read-only file system, for this process only). Needs root; check with :func:`can_mount`."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && shift && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(folder), "--", *command]


def without_root_privileges(command: list[str]) -> list[str]:
    """``command`` run without the capabilities that let root ignore file permissions."""
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]


def can_mount() -> str | None:
    """Why :func:`on_small_disk` cannot work here, or None when it can."""
    import shutil
    import subprocess

    if shutil.which("unshare") is None:
        return "no unshare(1) here"
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True, text=True
    )
    return None if probe.returncode == 0 else f"cannot mount a tmpfs: {probe.stderr.strip()}"


def can_drop_privileges() -> str | None:
    """Why :func:`without_root_privileges` cannot make permissions count, or None."""
    import shutil
    import subprocess
    import tempfile

    if shutil.which("setpriv") is None:
        return "no setpriv(1) here"
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o500)
        probe = subprocess.run(
            without_root_privileges(["touch", f"{folder}/x"]), capture_output=True
        )
        Path(folder).chmod(0o700)
    return None if probe.returncode != 0 else "file permissions do not hold for this user"


def delivered_runs(ledger: Path) -> int:
    """Runs the ledger file holds as delivered, read as ``status`` reads it (0 while it has
    none, or there is no file yet)."""
    import contextlib
    import sqlite3

    try:
        with contextlib.closing(sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)) as db:
            return int(
                db.execute("SELECT count(*) FROM runs WHERE state = 'delivered'").fetchone()[0]
            )
    except sqlite3.Error:
        return 0


def reason_between(line: str, before: str, after: str) -> str:
    """The reason another program gave (SQLite, the OS, libcurl, librdkafka...) that ``line``,
    our own message, passes along between ``before`` and ``after``: the line must start and
    end with them and hold a reason in between, whatever its words (they are that program's,
    and vary with its version, the damage or the machine)."""
    assert line.startswith(before), f"{line!r} does not start with {before!r}"
    assert line.endswith(after), f"{line!r} does not end with {after!r}"
    reason = line[len(before) : len(line) - len(after)]
    assert reason.strip() and "\n" not in reason, f"{line!r} gives no reason on its line"
    return reason
