"""The one JSON encoder (jsonout.py): a stranger's control characters, C1 included, never reach
a terminal raw through a JSON output, and what orjson cannot write is written all the same."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, run_record, stage_record

from openlineage_export.jsonout import dumps

C1 = "\x9b2J\x9d0;owned\x9c"
"""CSI (clear the screen), OSC (set the title) and ST: 8-bit escape sequences."""
RAW = [b"\xc2\x9b", b"\xc2\x9d", b"\xc2\x9c", b"\x1b", b"\x7f"]


def test_c0_c1_and_del_are_escaped_and_read_back_the_same() -> None:
    value = {"k\x9b": f"a{C1}\x1b\x7f é £ \u2028"}
    data = dumps(value)
    assert not any(raw in data for raw in RAW)
    assert b"\\u009b" in data and b"\\u007f" in data
    assert "é £".encode() in data  # other characters stay as they are
    assert json.loads(data) == value


@pytest.mark.parametrize(
    "value",
    [
        {"n": 2**64, "m": -(10**400)},
        json.loads("[" * 900 + "]" * 900),
    ],
)
def test_what_orjson_cannot_write_is_written_all_the_same(value: object) -> None:
    assert json.loads(dumps(value)) == value
    assert json.loads(dumps(value, indent=True)) == value


def _run(tmp_path: Path, *args: str, code: int = 0) -> subprocess.CompletedProcess[bytes]:
    done = subprocess.run(
        cli_command(*args), env=cli_env(tmp_path), capture_output=True, timeout=120
    )
    assert done.returncode == code, done.stderr
    assert b"Traceback" not in done.stderr
    return done


def test_c1_from_a_workspace_reaches_no_output_raw(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """A setting, a pipeline id, a stage and a segment name carrying CSI/OSC: every JSON output
    (--json, --progress json, settings get|list --json, status --json, the events) escapes
    them, as the text outputs do."""
    pipeline = f"p{C1}"
    ws.segment(
        "000001.jsonl", [run_record("r1", pipeline=pipeline, stages=[stage_record(f"s{C1}")])]
    )
    ws.segment(f"000002{C1}.jsonl", ["{not json"])  # a bad entry named by its file
    ws.settings(
        {
            "openlineage.sourceRepository.url": "https://git.example.com/acme",
            "openlineage.sourceRepository.version": f"main{C1}",
            "openlineage.transport": "file",
        }
    )
    root = str(ws.root)
    events = tmp_path / "events.jsonl"
    outputs = {
        "export --json --progress json": _run(
            tmp_path,
            "export",
            "-w",
            root,
            "--dry-run",
            "-o",
            str(events),
            "--json",
            "--progress",
            "json",
            code=1,
        ),
        "settings get --json": _run(
            tmp_path,
            "settings",
            "get",
            "-w",
            root,
            "openlineage.sourceRepository.version",
            "--json",
        ),
        "settings list --json": _run(tmp_path, "settings", "list", "-w", root, "--json"),
        "export (text)": _run(
            tmp_path, "export", "-w", root, "--dry-run", "-o", str(tmp_path / "again.jsonl"), code=1
        ),
    }
    file_env = cli_env(tmp_path, OPENLINEAGE_FILE_PATH=str(tmp_path / "out.jsonl"))
    sent = subprocess.run(
        cli_command("export", "-w", root), env=file_env, capture_output=True, timeout=120
    )
    assert sent.returncode == 1, sent.stderr
    outputs["status --json"] = _run(tmp_path, "status", "-w", root, "--json")
    for name, done in outputs.items():
        for stream in (done.stdout, done.stderr):
            assert not any(raw in stream for raw in RAW), (name, stream)
    assert not any(raw in events.read_bytes() for raw in RAW)
    assert "\\u009b" in outputs["settings get --json"].stdout.decode()
    assert json.loads(outputs["settings get --json"].stdout)["value"] == f"main{C1}"
    progress = [
        json.loads(line) for line in outputs["export --json --progress json"].stderr.splitlines()
    ]
    assert any(C1 in str(line.get("file")) for line in progress if line["event"] == "badEntry")
    assert any(
        e["job"]["name"] == pipeline for e in map(json.loads, events.read_text().splitlines())
    )
    assert "\\x9b" in outputs["export (text)"].stderr.decode()  # the text outputs: shown()
