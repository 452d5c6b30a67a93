"""The ``console`` destination (deliver/console.py), through the real command: each event one
JSON line on standard error (or standard output), the same events a dry run builds; the ledger
applies; the kind shows up in settings, status, openlineage-python's configuration, the
extension's settings and docs/settings.md from its row alone."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from helpers import ROOT, WorkspaceMaker, cli_command, cli_env, run_record


def run(
    ws: WorkspaceMaker, tmp_path: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cli_command(*args, "-w", str(ws.root)),
        env=cli_env(tmp_path, **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_each_event_is_one_json_line_on_stderr_as_the_dry_run_builds_it(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record("run-1"), run_record("run-2")])
    dry = run(ws, tmp_path, "export", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    sent = run(ws, tmp_path, "export", "--json", OPENLINEAGE_TRANSPORT="console")
    assert sent.returncode == 0, sent.stderr
    assert json_lines(sent.stderr) == json_lines(dry.stdout) != []
    report = json.loads(sent.stdout)
    assert report["destination"] == "console:stderr"
    assert report["runs"] == {"total": 2, "sent": 2, "unchanged": 0, "held": 0, "failed": 0}
    again = run(ws, tmp_path, "export", "--json", OPENLINEAGE_TRANSPORT="console")
    assert json_lines(again.stderr) == [] and json.loads(again.stdout)["runs"]["unchanged"] == 2


def test_stdout_is_the_other_stream_and_openlineage_pythons_type_picks_it(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record("run-1")])
    sent = run(
        ws,
        tmp_path,
        "export",
        "-q",
        OPENLINEAGE__TRANSPORT__TYPE="console",
        OPENLINEAGE_CONSOLE_STREAM="stdout",
    )
    assert sent.returncode == 0, sent.stderr
    events = json_lines(sent.stdout)
    assert events and all(
        event["eventType"] in ("START", "COMPLETE", "FAIL", "RUNNING", "ABORT", "OTHER")
        for event in events
    )
    assert json_lines(sent.stderr) == []


def test_the_kind_shows_up_everywhere_from_its_row(ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record("run-1")])
    listed = run(ws, tmp_path, "settings", "list", "--json")
    rows = {row["key"]: row for row in json.loads(listed.stdout)}
    assert "console" in rows["openlineage.transport"]["choices"]
    assert rows["openlineage.console.stream"]["value"] == "stderr"
    assert run(ws, tmp_path, "export", "-q", OPENLINEAGE_TRANSPORT="console").returncode == 0
    status = run(ws, tmp_path, "status", "--json")
    assert [d["destination"] for d in json.loads(status.stdout)["destinations"]] == [
        "console:stderr"
    ]
    package = json.loads((ROOT / "editor" / "vscode" / "package.json").read_text())
    assert "openlineage.console.stream" in package["contributes"]["configuration"]["properties"]
    assert "| `openlineage.console.stream` |" in (ROOT / "docs" / "settings.md").read_text()
