"""The hints worded for the host that runs the CLI (``OPENLINEAGE_EXPORT_HOST``,
``cli/host_words.py``): run as the VS Code extension runs it, in a subprocess."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fakeserver import refused_port_fixture  # noqa: F401 - registers refused_port
from helpers import WorkspaceMaker, cli_env, run_cli, run_record


def run(tmp_path: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=cli_env(tmp_path, **extra), cwd=tmp_path, timeout=120)


@pytest.mark.parametrize("host", [None, "vscode", "emacs"])
def test_a_folder_that_is_no_workspace_is_worded_for_the_host(
    tmp_path: Path, host: str | None
) -> None:
    folder = tmp_path / "not-a-workspace"
    folder.mkdir()
    extra = {"OPENLINEAGE_EXPORT_HOST": host} if host else {}
    done = run(tmp_path, "export", "-w", str(folder), "--json", "--progress", "json", **extra)
    assert done.returncode == 3, done.stderr
    error = json.loads(done.stderr.splitlines()[-1])
    assert error["event"] == "error"
    if host == "vscode":
        assert "open the folder that holds .workspace/" in error["message"]
        assert "-w DIR" not in error["message"]
    else:  # unknown hosts are ignored: the command line's words
        assert "name the workspace with -w DIR" in error["message"]


def test_workspaces_below_are_offered_as_folders_to_open(tmp_path: Path) -> None:
    (tmp_path / "top" / "acme" / ".workspace").mkdir(parents=True)
    done = run(tmp_path, "status", "-w", str(tmp_path / "top"), OPENLINEAGE_EXPORT_HOST="vscode")
    assert done.returncode == 3
    assert "open one of them as the folder" in done.stderr and "-w DIR" not in done.stderr


@pytest.mark.parametrize("host", [None, "vscode"])
def test_the_url_the_extension_passes_from_settings_is_said_to_be_from_settings(
    tmp_path: Path, ws: WorkspaceMaker, refused_port: int, host: str | None
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    url = f"http://127.0.0.1:{refused_port}"
    # As the extension does when it hands over a key: Settings' url, in OPENLINEAGE_URL too.
    ws.settings({"openlineage.url": url, "openlineage.retry.maxTime": 1})
    extra = {"OPENLINEAGE_URL": url, **({"OPENLINEAGE_EXPORT_HOST": host} if host else {})}
    done = run(tmp_path, "export", "-w", str(ws.root), "--progress", "none", **extra)
    assert done.returncode == 4, done.stderr
    hint = [line for line in done.stderr.splitlines() if line.startswith("hint: ")]
    if host == "vscode":
        assert hint == [
            "hint: is the server running, and is openlineage.url in Settings the address?"
        ], done.stderr
    else:
        assert hint == [
            "hint: is the server running, and is openlineage.url (from environment "
            "(OPENLINEAGE_URL)) the address?; --url tries another server for one export"
        ], done.stderr


def test_a_url_from_the_editor_s_own_environment_is_not_said_to_be_from_settings(
    tmp_path: Path, ws: WorkspaceMaker, refused_port: int
) -> None:
    ws.segment("000001.jsonl", [run_record("r1")])
    ws.settings({"openlineage.url": "http://elsewhere.invalid", "openlineage.retry.maxTime": 1})
    done = run(
        tmp_path,
        "export",
        "-w",
        str(ws.root),
        OPENLINEAGE_URL=f"http://127.0.0.1:{refused_port}",
        OPENLINEAGE_EXPORT_HOST="vscode",
    )
    assert done.returncode == 4, done.stderr
    assert (
        "is openlineage.url (from the environment VS Code was started in (OPENLINEAGE_URL)) "
        "the address?" in done.stderr
    )
    assert "--url" not in done.stderr.split("hint: ", 1)[1]


def test_export_help_names_the_host_variable(tmp_path: Path) -> None:
    done = run(tmp_path, "export", "--help")
    assert "OPENLINEAGE_EXPORT_HOST" in done.stdout and "vscode" in done.stdout
