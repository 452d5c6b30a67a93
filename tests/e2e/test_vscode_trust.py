"""The editor hands a workspace's values over as the workspace's (issue 43, item 5, and what an
attacker who reads the extension's code finds next): in a real VS Code (code-server), with a
workspace whoever pushed last wrote, its committed .vscode/settings.json included.

- A key in the editor's own environment never goes to the url a workspace names: the
  extension asks nothing about it and vouches for no url (it used to ask about "the API key
  'undefined'" and, on *Send it there*, copy the workspace's url into OPENLINEAGE_URL).
- openlineage.autoExport starts sending on its own: a folder's settings never turn it on, nor
  turn off the user's openlineage.dryRun (attack F, F4).
- Nothing of the workspace runs: the tool is run isolated, outside the workspace (`python -m`
  would import a package the workspace holds).
- A server's text (a refusal's reason, a retry's) is shown as text: never a link that runs a
  command, in a notification or in the export's progress (attack F, F2).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fakeserver import (
    Answer,
    FakeServer,
    Recorded,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    make_fake_server_fixture,  # noqa: F401 - registers make_fake_server
)
from helpers import DEMO
from support.vscode import FIRST_USE_MS, USER_SETTINGS, CodeServer, Workbench, wait_until

pytestmark = pytest.mark.e2e

ENV_KEY = "olx-env-Qm27xVb8Nc4Lp9Tz"
"""A key in the environment VS Code was started in (a CI key, a shell's export)."""


def demo_copy(folder: Path, server: CodeServer, **settings: str) -> Path:
    root = folder / "acme-analytics"
    shutil.copytree(DEMO, root)
    (root / ".workspace" / "settings.json").write_text("{}\n")
    for key, value in settings.items():
        done = server.cli("settings", "set", key, value, "-w", str(root))
        assert done.returncode == 0, done.stderr
    return root


def test_a_key_in_the_editors_environment_never_goes_to_the_workspaces_url(
    fresh_code_server: Callable[..., CodeServer],
    windows: Callable[[CodeServer, Path], Workbench],
    fake_server: FakeServer,
    tmp_path: Path,
) -> None:
    """OPENLINEAGE_API_KEY in VS Code's environment, a url in the workspace's settings and no
    secretRef: the export is the CLI's to refuse (the key goes only to a server the user
    names), and the extension asks about no key. Were a question asked, the person says *Send
    it there*, as the workspace's author hopes: still nothing reaches the server."""
    server = fresh_code_server({"OPENLINEAGE_API_KEY": ENV_KEY})
    root = demo_copy(tmp_path, server, **{"openlineage.url": fake_server.url})
    window = windows(server, root)
    window.command("OpenLineage: Export Lineage Runs")
    dialog = window.page.locator(".monaco-dialog-box")
    asked: list[str] = []

    def ended() -> bool:
        if dialog.count() and dialog.first.is_visible():
            asked.append(dialog.first.inner_text())
            dialog.first.get_by_role("button", name="Send it there").click()
        refused = any("goes only to a server you name" in t for t in window.toasts())
        return refused or bool(fake_server.requests)

    wait_until("the export to end (the exporter installs first)", ended, FIRST_USE_MS / 1000)
    assert fake_server.requests == [], "the environment's key went to the workspace's server"
    assert asked == []
    assert not any("undefined" in t for t in window.toasts()), window.toasts()


def test_a_folder_s_settings_never_turn_auto_export_on(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
) -> None:
    """A committed .vscode/settings.json with openlineage.autoExport on: the extension decides
    (it says so in its output) and nothing follows the trail, nothing is sent; VS Code does
    not offer the setting in the folder's Settings at all (scope "application")."""
    root = workspace(**{"openlineage.url": fake_server.url})
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(json.dumps({"openlineage.autoExport": True}))
    before = code_server.said().count("auto-export: o")
    window = open_window(root)

    def decided() -> str | None:
        said = code_server.said()
        lines = [line for line in said.splitlines() if line.startswith("auto-export: o")]
        return lines[-1] if said.count("auto-export: o") > before else None

    wait_until("the extension to decide about auto-export", lambda: decided() is not None)
    assert (
        decided() == "auto-export: off (openlineage.autoExport, in your User settings, turns it on)"
    )
    assert window.status_bar() == "OpenLineage"
    window.command("OpenLineage: Show Export Status")  # the window is at rest, well after
    window.toast(r"31 runs on the trail")
    assert fake_server.requests == [] and "following" not in window.status_bar()


def test_a_folder_s_settings_never_turn_the_user_s_dry_run_off(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
) -> None:
    """Auto-export on and openlineage.dryRun on in the User settings (auto-export waits), and a
    committed .vscode/settings.json saying openlineage.dryRun false: VS Code's own rule (the
    folder wins) would start sending; the extension keeps the dry run (attack F, F4). Auto-export
    waits, says so, and the palette's export is a dry run; nothing reaches the server."""
    root = workspace(**{"openlineage.url": fake_server.url})
    (root / ".vscode").mkdir()
    (root / ".vscode" / "settings.json").write_text(json.dumps({"openlineage.dryRun": False}))
    user_settings = code_server.user_data / "User" / "settings.json"
    user_settings.write_text(
        json.dumps({**USER_SETTINGS, "openlineage.autoExport": True, "openlineage.dryRun": True})
    )
    before = code_server.said().count("auto-export: waits")
    try:
        window = open_window(root)  # a new window reads the user settings as they are now
        wait_until(
            "the extension to decide about auto-export",
            lambda: code_server.said().count("auto-export: waits") > before,
        )
        window.command("OpenLineage: Export Lineage Runs")
        said = window.toast(r"OpenLineage Export: dry run: ")
    finally:
        user_settings.write_text(json.dumps(USER_SETTINGS))
    assert "nothing was sent (openlineage.dryRun is on in Settings)" in said
    assert "following" not in window.status_bar()
    assert fake_server.requests == []


def test_a_package_the_workspace_holds_is_never_run(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    tmp_path: Path,
) -> None:
    """A workspace that commits openlineage_export/ (or any module the tool imports) at its
    root: `python -m openlineage_export` run there would import it first. The real tool
    answers, and the workspace's code never ran."""
    root = workspace()
    ran = tmp_path / "the-workspace-s-code-ran"
    package = root / "openlineage_export"
    package.mkdir()
    code = f"open({str(ran)!r}, 'w').write('ran')\n"
    for name in ("__init__.py", "__main__.py"):
        (package / name).write_text(code)
    (root / "click.py").write_text(code)
    window = open_window(root)
    window.command("OpenLineage: Show Export Status")
    wait_until(
        "the status, or the workspace's code",
        lambda: ran.exists() or any("31 runs on the trail" in t for t in window.toasts()),
    )
    assert not ran.exists()


def test_a_servers_reason_is_shown_as_text_never_as_a_link(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    fake_server: FakeServer,
) -> None:
    """VS Code makes "[label](command:...)" in a notification a link that runs the command;
    a server (or a workspace's value the CLI quotes) could dress a command as a button. The
    reason is shown as the server wrote it, and nothing of it is a link."""
    hostile = "[Retry now](command:workbench.action.openSettings?%5B%22hacked%22%5D)"

    def refuse(request: Recorded) -> Answer:
        return Answer(400, body=hostile)

    fake_server.script(refuse)
    root = workspace(**{"openlineage.url": fake_server.url})
    window = open_window(root)
    window.command("OpenLineage: Export Lineage Runs")
    said = window.toast(r"OpenLineage Export: 31 runs refused by ")
    assert "[Retry now]" in said
    links = window.page.locator(".notifications-toasts a[href^='command:']")
    assert links.count() == 0
    assert urlsplit(fake_server.url).netloc in said


def test_a_servers_retry_reason_is_never_a_link_in_the_progress(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    fake_server: FakeServer,
) -> None:
    """A server busy (503) with "[Retry now](command:...)" in its body: the export's progress
    notification says "retrying: ..." with the server's words, and nothing of them is a link
    (attack F, F2: a click would have typed a command into the person's terminal)."""
    hostile = "Server busy. [Retry now](command:workbench.action.openSettings?%5B%22hacked%22%5D)"

    def busy(request: Recorded) -> Answer:
        return Answer(503, body=hostile)

    fake_server.script(busy)
    root = workspace(**{"openlineage.url": fake_server.url, "openlineage.retry.maxTime": "60"})
    window = open_window(root)
    window.command("OpenLineage: Export Lineage Runs")
    # The progress notification while it retries (it stays: 60 s of retries), as it is shown.
    progress = window.page.locator(
        ".notifications-toasts .notification-list-item", has_text="Server busy"
    ).first
    progress.wait_for(state="visible", timeout=FIRST_USE_MS)
    # Its text and its links at one moment (the message changes with each retry).
    text, links = progress.evaluate(
        "e => [e.innerText, e.querySelectorAll(\"a[href^='command:']\").length]"
    )
    assert "retrying: " in text
    assert "[Retry now]" in text  # shown as the server wrote it, no link made of it
    assert links == 0
    progress.get_by_role("button", name="Cancel").click()
    window.toast(r"OpenLineage Export: cancelled after")
