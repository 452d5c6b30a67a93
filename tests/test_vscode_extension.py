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
