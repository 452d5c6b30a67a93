"""The VS Code extension's layout (editor/vscode/src/): read from its sources.

A module per concern, wired by ``activate`` (extension.ts); .workspace/settings.json watched
once (settingsFile.ts), its event taken by the others."""

from __future__ import annotations

import re

from helpers import ROOT

SOURCES = ROOT / "editor" / "vscode" / "src"


def test_the_settings_file_is_watched_once_and_the_others_take_its_event() -> None:
    watching = {
        source.name
        for source in SOURCES.glob("*.ts")
        if "createFileSystemWatcher" in source.read_text()
    }
    assert watching == {"settingsFile.ts"}


def test_activate_wires_the_concerns_and_holds_none() -> None:
    """``activate`` makes the modules and hands each what it needs: no closure of it runs
    the tool, asks a person or reads a file itself."""
    text = (SOURCES / "extension.ts").read_text()
    body = text[text.index("export function activate(") :]
    body = body[: body.index("\n}\n")]
    assert len(body.splitlines()) < 100
    for doing in ("runTool(", "showInputBox(", "showWarningMessage(", "readFileSync(", "spawn("):
        assert doing not in body, doing
    for concern in (
        "SettingsFile(",
        "SettingsMirror(",
        "Keys(",
        "RunsView(",
        "AutoExport(",
        "Commands(",
    ):
        assert re.search(rf"new {re.escape(concern)}", body), concern


def test_notifications_and_dialogs_go_through_say_only() -> None:
    """say.ts makes every message plain (no "[label](command:...)" link made of a server's or a
    workspace's text): it is the one way to a notification or a dialog."""
    calls = re.compile(r"\bshow(Information|Warning|Error)Message\(")
    saying = {source.name for source in SOURCES.glob("*.ts") if calls.search(source.read_text())}
    assert saying == {"say.ts"}


def test_the_tool_runs_isolated_and_outside_the_workspace() -> None:
    """`python -m` puts the folder it runs in first on sys.path: the tool runs with -I, in a
    folder of the extension's (a workspace that holds an openlineage_export/ of its own runs
    nothing: tests/e2e/test_vscode_hostile.py)."""
    child = (SOURCES / "child.ts").read_text()
    assert '["-I", "-m", "openlineage_export", ...args]' in child
    callers = {
        source.name
        for source in SOURCES.glob("*.ts")
        if re.search(r"(?<!function )runTool\(", source.read_text())
    }
    assert callers == {"cli.ts"}
    assert "runTool(found, args, { cwd: this.cwd()," in (SOURCES / "cli.ts").read_text()
