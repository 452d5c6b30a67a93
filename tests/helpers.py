"""Test helpers: real workspaces on disk (written by ``hubwriter``, the one writer of the hub's
format, with its valid records), the CLI as a process, and what tests observe of it."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from hubwriter import Workspace
from hubwriter.records import GRAPH
from hubwriter.records import run_record as run_record  # the tests' names for them
from hubwriter.records import stage_record as stage_record

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "demo" / "acme-analytics"
USERS_HOME = Path(os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir)
"""The HOME the suite was started with, read when the tests are collected (each test then gets
a HOME of its own): where scripts/*.sh, run by test.sh, keep the services' state and caches
($HOME/.cache/openlineage-export/...), whatever the passwd file says."""
SHARED = ROOT.parent / "shared"


class WorkspaceMaker(Workspace):
    """A test's workspace (hubwriter's :class:`~hubwriter.Workspace`), the test graph
    (:data:`GRAPH`) written at once; the test writes its settings and segments."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.graph(GRAPH)


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


def run_cli(
    *args: str,
    env: Mapping[str, str],
    cwd: Path | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """A real ``openlineage-export`` process run to its end in ``env`` (see :func:`cli_env`),
    its output as text; whatever it says, never a traceback."""
    done = subprocess.run(
        cli_command(*args), capture_output=True, text=True, env=dict(env), cwd=cwd, timeout=timeout
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


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
