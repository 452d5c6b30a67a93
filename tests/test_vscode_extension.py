"""The VS Code extension's layout (editor/vscode/src/): read from its sources.

A module per concern, wired by ``activate`` (extension.ts); .workspace/settings.json watched
once (settingsFile.ts), its event taken by the others."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from helpers import ROOT
from support.chromium import require

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


# What VS Code shows a person: a call or an assignment of one of these takes text to the screen
# (VS Code makes links of "[label](command:...)" in notifications, progress ones included).
SHOWING = re.compile(
    r"\bshow(Information|Warning|Error)Message\("
    r"|\.report\(|\bwithProgress\("
    r"|\bTreeItem\(|\bDiagnostic\(|\bMarkdownString\("
    r"|\b(show|create)(InputBox|QuickPick)\(|\bcreateWebviewPanel\(|\bsetStatusBarMessage\("
    r"|\.(text|tooltip|description|message|label|title|placeholder|placeHolder|prompt|detail"
    r"|badge|accessibilityInformation|items)\s*=(?!=)"
)

# say.ts's own functions (say.withProgress, say.treeItem...): the way there.
SAYING = re.compile(r"\bsay\.\w+")


def test_what_a_person_is_shown_goes_through_say_only() -> None:
    """say.ts makes every string plain (no "[label](command:...)" link made of a server's or a
    workspace's text, no control or bidi character): it is the one way to a notification, a
    dialog, a progress notification, a tree item or view, the status bar, an input box, a quick
    pick, a webview's title and a diagnostic. Attack F, F2: a server's retry reason reached
    ``progress.report`` raw."""
    showing = {
        f"{source.name}:{number}: {line.strip()}"
        for source in SOURCES.glob("*.ts")
        if source.name != "say.ts"
        for number, line in enumerate(source.read_text().splitlines(), 1)
        if SHOWING.search(SAYING.sub("", line))
    }
    assert showing == set()
    say = (SOURCES / "say.ts").read_text()
    for surface in (
        "showInformationMessage(",
        ".report(",
        "withProgress(",
        "TreeItem(",
        "showInputBox(",
        "createWebviewPanel(",
        "Diagnostic(",
        "item.text =",
    ):
        assert surface in say, surface


def test_the_seam_test_finds_a_raw_progress_line() -> None:
    """The pattern above catches the call attack F, F2 found (so the test above can fail)."""
    for raw in (
        "progress.report({ message: `retrying: ${line.reason}` });",
        "this.tree.message = `Cannot list the runs: ${standing.error}`;",
        "item.tooltip = run.reason;",
        "const item = new vscode.TreeItem(node.pipeline, state);",
        "void vscode.window.showQuickPick(names);",
        "this.item.text = text;",
    ):
        assert SHOWING.search(SAYING.sub("", raw)), raw
    for said in ("if (item.label === name) {", 'say.withProgress("OpenLineage: dry run", true,'):
        assert not SHOWING.search(SAYING.sub("", said)), said


def test_the_extensions_own_unit_tests_pass(services: None, tmp_path: Path) -> None:
    """editor/vscode/test (plain Node, a stand-in for VS Code): say.ts defuses a hostile
    server's "[Retry now](command:...)" on every surface, openlineage.dryRun in force. Compiled
    here into a folder of the test's (the packaging's out/ is left alone); after the services
    (the .vsix's packaging installs the compiler: npm ci)."""
    extension = ROOT / "editor" / "vscode"
    tsc = extension / "node_modules" / ".bin" / "tsc"
    if not tsc.exists() or shutil.which("node") is None:
        require("OLX_REQUIRE_VSCODE", f"no TypeScript compiler ({tsc}): scripts/vscode.sh package")
    out = tmp_path / "out"
    compiled = subprocess.run(
        [str(tsc), "-p", str(extension), "--outDir", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    tests = sorted(str(test) for test in (extension / "test").glob("*.test.js"))
    assert tests
    ran = subprocess.run(
        ["node", "--test", *tests],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "EXTENSION_OUT": str(out)},
    )
    assert ran.returncode == 0, ran.stdout[-4000:] + ran.stderr[-2000:]
    assert re.search(r"^# fail 0$", ran.stdout, re.MULTILINE), ran.stdout[-2000:]


def test_the_tool_runs_isolated_and_outside_the_workspace() -> None:
    """`python -m` puts the folder it runs in first on sys.path: the tool runs with -I, in a
    folder of the extension's (a workspace that holds an openlineage_export/ of its own runs
    nothing: tests/e2e/test_vscode_trust.py)."""
    child = (SOURCES / "child.ts").read_text()
    assert '["-I", "-m", "openlineage_export", ...args]' in child
    callers = {
        source.name
        for source in SOURCES.glob("*.ts")
        if re.search(r"(?<!function )runTool\(", source.read_text())
    }
    assert callers == {"cli.ts"}
    assert "runTool(found, args, { cwd: this.cwd()," in (SOURCES / "cli.ts").read_text()
