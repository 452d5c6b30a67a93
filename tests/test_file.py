"""The ``file`` destination: JSON Lines into a file or a folder of rotating files.

The bytes are the dry run's; the ledger makes each export append only new or changed runs.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from helpers import WorkspaceMaker, run_record

from openlineage_export.errors import ConfigError
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import ExportReport


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    return {
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
        "OPENLINEAGE_TRANSPORT": "file",
    }


def dry_run(root: Path) -> bytes:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=root, dry_run=True, output=out))
    assert report.exit_code in (0, 1)
    return out.getvalue()


def export(root: Path, environ: dict[str, str], **extra: str) -> ExportReport:
    return run_export(ExportRequest(workspace=root, environ={**environ, **extra}))


def test_a_file_gets_the_dry_runs_bytes_and_the_next_export_appends_nothing(
    demo: Path, environ: dict[str, str]
) -> None:
    report = export(demo, environ, OPENLINEAGE_FILE_PATH="out/events.jsonl")
    target = demo / "out" / "events.jsonl"
    assert report.exit_code == 0 and report.never_run == ["churn-model"]
    assert report.destination == target.as_uri()
    assert (report.runs_sent, report.runs_total, report.events_sent) == (31, 31, 236)
    assert target.read_bytes() == dry_run(demo)

    again = export(demo, environ, OPENLINEAGE_FILE_PATH="out/events.jsonl")
    assert (again.runs_sent, again.runs_unchanged, again.events_sent) == (0, 31, 0)
    assert target.read_bytes() == dry_run(demo)


def test_a_changed_run_is_appended_whole(
    ws: WorkspaceMaker, environ: dict[str, str], tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record("a"), run_record("b", status="running")])
    target = tmp_path / "events.jsonl"
    assert export(ws.root, environ, OPENLINEAGE_FILE_PATH=str(target)).exit_code == 0
    first = target.read_bytes()
    ws.segment("000002.jsonl", [run_record("b")])  # b has ended
    report = export(ws.root, environ, OPENLINEAGE_FILE_PATH=str(target))
    assert (report.runs_sent, report.runs_unchanged) == (1, 1)
    appended = target.read_bytes()[len(first) :]
    events = [json.loads(line) for line in appended.splitlines()]
    assert {e["eventType"] for e in events} == {"START", "COMPLETE"}
    assert events[-1]["eventType"] == "COMPLETE" and events[-1]["job"]["name"] == "daily-sales"


def test_a_folder_gets_rotating_files_that_never_split_a_run(
    demo: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    folder = demo / ".workspace" / "exports"  # the only place a workspace writes to
    (demo / ".workspace" / "settings.json").write_text(
        json.dumps(
            {
                "openlineage.transport": "file",
                "openlineage.file.path": f"{folder}/",
                "openlineage.file.maxBytes": 16 * 1024,
            }
        )
    )
    report = export(demo, {"OPENLINEAGE_EXPORT_STATE_DIR": environ["OPENLINEAGE_EXPORT_STATE_DIR"]})
    assert report.runs_sent == 31 and report.destination == folder.as_uri() + "/"
    files = sorted(folder.iterdir())
    assert [f.name for f in files] == [f"events-{n:06d}.jsonl" for n in range(1, len(files) + 1)]
    assert len(files) > 3
    assert b"".join(f.read_bytes() for f in files) == dry_run(demo)
    for f in files[:-1]:
        assert f.stat().st_size >= 16 * 1024
    for f in files:  # every file starts with a pipeline START: runs are never split
        first = json.loads(f.read_bytes().splitlines()[0])
        assert first["eventType"] == "START" and "parent" not in first["run"]["facets"]


def test_without_a_path_the_file_kind_is_a_configuration_error(
    demo: Path, environ: dict[str, str]
) -> None:
    with pytest.raises(ConfigError, match="set openlineage.file.path"):
        export(demo, environ)


def test_a_path_that_cannot_be_written_is_named(
    demo: Path, environ: dict[str, str], tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match=r"openlineage\.file\.path: cannot write to .*a-file"):
        export(demo, environ, OPENLINEAGE_FILE_PATH=str(blocker / "events.jsonl"))
