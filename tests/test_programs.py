"""files/programs.py: a program run by name (Graphviz's ``dot``) is found only in absolute
``PATH`` folders no checkout holds: never a ``./dot`` the pusher committed."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_env, run_cli, run_record

from openlineage_export.files.programs import ProgramFailed, find_program, run_program
from openlineage_export.files.whose import Checkouts


def _program(folder: Path, name: str, marker: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\necho ran > {marker}\nexit 1\n")
    program.chmod(0o755)
    return program


def test_only_absolute_path_folders_outside_checkouts_are_searched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / ".git").mkdir(parents=True)
    _program(checkout, "tool", tmp_path / "marker")
    _program(checkout / "bin", "tool", tmp_path / "marker")
    mine = _program(tmp_path / "mine", "tool", tmp_path / "marker")
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "tool").symlink_to(checkout / "bin" / "tool")  # leads into it
    monkeypatch.chdir(checkout)
    nowhere = Checkouts()
    for path in ("", ":", "bin", ".", f"{checkout}", f"{checkout / 'bin'}", f"{tmp_path}/linked"):
        assert find_program("tool", {"PATH": path}, nowhere) is None, path
    assert find_program("tool", {"PATH": f":bin:{checkout}:{tmp_path}/mine"}, nowhere) == mine


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_a_program_found_is_run_with_its_input(tmp_path: Path) -> None:
    dot = find_program("dot", os.environ, Checkouts())
    assert dot is not None
    assert b"<svg" in run_program(dot, ["-Kdot", "-Tsvg"], b"digraph { a -> b }")


def test_a_program_that_fails_says_its_first_line(tmp_path: Path) -> None:
    program = tmp_path / "fails"
    program.write_text(
        "#!/bin/sh\necho 'Error: syntax error in line 1' >&2\necho more >&2\nexit 1\n"
    )
    program.chmod(0o755)
    with pytest.raises(ProgramFailed) as failed:
        run_program(program, [], b"")
    assert failed.value.strerror == "Error: syntax error in line 1"


@pytest.mark.parametrize("entry", ["", "bin"], ids=["empty-entry", "relative-entry"])
def test_a_report_never_runs_a_dot_the_checkout_committed(tmp_path: Path, entry: str) -> None:
    checkout = tmp_path / "project"
    (checkout / ".git").mkdir(parents=True)
    ws = WorkspaceMaker(checkout / "analytics")
    ws.segment("000001.jsonl", [run_record("r1")])
    marker = tmp_path / "dot-ran"
    _program(checkout / ("bin" if entry else ""), "dot", marker)
    env = cli_env(tmp_path)
    env["PATH"] = f"{entry}:{env['PATH']}"
    done = run_cli(
        "export",
        "--dry-run",
        "-w",
        str(ws.root),
        "-o",
        str(tmp_path / "events.jsonl"),
        "--report",
        str(tmp_path / "report.html"),
        env=env,
        cwd=checkout,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert not marker.exists(), "the checkout's dot ran"
    assert (tmp_path / "report.html").exists()
