"""Standard output and standard error that nobody reads (terminal/streams.py): ``| head -1``, ``>&-``,
and a ``--progress json`` reader that went away. Real processes, real pipes and devices."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from fakeserver import FakeServer
from helpers import DEMO, cli_command, cli_env

COMMANDS = [
    ["export", "--dry-run"],
    ["export", "--dry-run", "-o", "{tmp}/events.jsonl", "--json"],
    ["status"],
    ["status", "--json"],
    ["settings", "list"],
    ["settings", "list", "--json"],
]


def _command(args: list[str], tmp_path: Path) -> list[str]:
    return cli_command(*[arg.format(tmp=tmp_path) for arg in args], "-w", str(DEMO))


def _read_end_closed() -> int:
    """The write end of a pipe whose reader is already gone (as ``| head -1`` once it has its
    line): the first write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    return write


def test_a_dry_run_whose_reader_went_away_ends_quietly_with_141(tmp_path: Path) -> None:
    write = _read_end_closed()
    proc = subprocess.run(
        _command(["export", "--dry-run"], tmp_path),
        stdout=write,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(tmp_path),
        timeout=120,
    )
    os.close(write)
    assert proc.returncode == 141, proc.stderr  # as a shell reports a process SIGPIPE ended
    assert proc.stderr == ""  # no "error: ... Broken pipe", no "Exception ignored"


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_standard_output_full_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            _command(args, tmp_path),
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(tmp_path),
            timeout=120,
        )
    assert proc.returncode == 2, proc.stderr
    # One line naming standard output, with the reason the OS gave (its words are its own).
    assert re.fullmatch(
        r"error: cannot write (to|the events to) standard output: \S[^\n]*\n", proc.stderr
    ), proc.stderr


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_standard_output_closed_is_one_line_and_exit_2(tmp_path: Path, args: list[str]) -> None:
    proc = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", *_command(args, tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(tmp_path),
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot write "), proc.stderr
    assert lines[0].endswith("standard output: it is closed"), proc.stderr


def test_a_progress_reader_that_went_away_does_not_stop_a_real_export(tmp_path: Path) -> None:
    """A host reading ``--progress json`` went away: the progress goes nowhere, the export
    sends every run, the ledger keeps them, and the exit code is the export's own (0)."""
    write = _read_end_closed()
    with FakeServer() as server:
        env = cli_env(tmp_path, OPENLINEAGE_URL=server.url)
        proc = subprocess.run(
            cli_command("export", "--progress", "json", "--json", "-w", str(DEMO)),
            stdout=subprocess.PIPE,
            stderr=write,
            text=True,
            env=env,
            timeout=300,
        )
        os.close(write)
        sent = {request.run_id for request in server.requests}
    assert proc.returncode == 0
    report = json.loads(proc.stdout)
    assert report["runs"]["failed"] == 0 and report["runs"]["sent"] == report["runs"]["total"]
    with sqlite3.connect(f"file:{tmp_path / 'state' / 'ledger.sqlite'}?mode=ro", uri=True) as db:
        kept = db.execute("SELECT count(*) FROM runs WHERE state = 'delivered'").fetchone()[0]
    assert kept == report["runs"]["total"] and len(sent) >= kept
