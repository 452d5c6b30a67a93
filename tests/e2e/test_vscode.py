"""The VS Code extension in a real VS Code, used through its command palette as a person uses it.

VS Code is code-server with the extension's .vsix installed, in Debian's Chromium
(tests/support/vscode.py drives it; tests/e2e/conftest.py starts it, one for the session). The
extension installs its own copy of the tool from the wheel inside the .vsix on first use, as it
does for a user, so the export is the packaged one.

Every wait observes something: a notification, a tab, a row of the Problems panel, a request the
fake server received, a file's content; each with a generous deadline and a message saying
what it waited for. Nothing here sleeps.
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fakeserver import (
    Answer,
    FakeServer,
    Recorded,
    fake_server_fixture,  # noqa: F401 - registers fake_server
    make_fake_server_fixture,  # noqa: F401 - registers make_fake_server
    refused_port_fixture,  # noqa: F401 - registers refused_port
)
from faultproxy import FaultProxy
from helpers import GRAPH, ROOT, WorkspaceMaker
from support.screenshot import renew
from support.vscode import (
    API_KEY,
    DEADLINE_MS,
    PACKAGE,
    SETTINGS_SEARCH,
    USER_SETTINGS,
    CodeServer,
    ValuesSeen,
    Workbench,
    by_run,
    dry_run_events,
    git,
    held,
    pipeline_run,
    put,
    runs_standing,
    settings_box,
    start_time,
    type_like_a_person,
    wait_until,
)
from support.watch import write_runs_through_a_rotation_and_an_outage

pytestmark = pytest.mark.e2e

SCREENSHOT = ROOT / "docs" / "vscode-screenshot.png"
SECRETS_SCREENSHOT = ROOT / "docs" / "vscode-secrets-view.png"
RUNS_SCREENSHOT = ROOT / "docs" / "vscode-runs-view.png"
TITLES = [
    "OpenLineage: Export Lineage Runs",
    "OpenLineage: Dry Run: Build the Events, Send Nothing",
    "OpenLineage: Store API Key",
    "OpenLineage: Show Export Status",
    "OpenLineage: Open Export Report",
]


# ------------------------------------------------------------------ the tests


def test_the_palette_has_the_five_commands_under_openlineage(
    open_window: Callable[[Path], Workbench], workspace: Callable[..., Path]
) -> None:
    window = open_window(workspace())
    shown = window.search("OpenLineage", TITLES)["rows"]
    # A row's label ends with the group VS Code files it under once a command was run in this
    # code-server (", recently used"), whichever test ran one before this one.
    ours = {
        re.sub(r", (recently used|other commands|similar commands)$", "", t)
        for t in shown
        if t.startswith("OpenLineage:")
    }
    assert ours >= set(TITLES), shown
    # Beside the five, only what VS Code lists for each of the extension's views (focus it):
    # one row naming each view, none of the views' own actions (add, remove, refresh...).
    views = [view["name"] for view in PACKAGE["contributes"]["views"]["openlineage"]]
    named = sorted(v for t in ours - set(TITLES) for v in views if re.search(rf"\b{v}\b", t))
    assert named == sorted(views) and len(ours) == len(TITLES) + len(views), shown
    window.page.keyboard.press("Escape")


def test_export_to_marquez_from_the_palette(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    marquez: Any,
    empty_marquez: Callable[[], None],
    namespace: str,
    tmp_path: Path,
) -> None:
    """Step by step as the product page says: url in the settings, Export Lineage Runs; then
    the demo's jobs, runs and lineage are in Marquez."""
    root = workspace(**{"openlineage.url": marquez.url})
    expected = [
        json.loads(line) for line in dry_run_events(code_server, root, tmp_path / "events.jsonl")
    ]
    empty_marquez()
    try:
        window = open_window(root)
        window.command("OpenLineage: Export Lineage Runs")
        done = window.toast(r"OpenLineage Export: exported to ")
        assert (
            f"exported to {marquez.url}/api/v1/lineage: 31 of 31 runs sent "
            f"({len(expected)} events)" in done
        )
        runs: dict[str, set[str]] = defaultdict(set)
        for event in expected:
            runs[event["job"]["name"]].add(event["run"]["runId"])
        jobs = marquez.jobs(namespace)
        assert set(jobs) == set(runs)
        for job, run_ids in runs.items():
            assert {run["id"] for run in marquez.runs(namespace, job)} == run_ids, job
        stage = jobs["daily-sales.clean"]
        # Lineage: the stage reads what extract wrote and writes what build_mart reads.
        assert "data/raw/orders.parquet" in {d["name"] for d in stage["inputs"]}
        assert "data/staged/orders_clean.parquet" in {d["name"] for d in stage["outputs"]}
        # The screenshot of docs/vscode.md: the export, its notification and its summary.
        window.page.wait_for_selector(".notifications-toasts .notification-list-item")
        renew(window.page, SCREENSHOT, window.page.screenshot(), tolerance=2000)
    finally:
        empty_marquez()


def test_a_dry_run_shows_the_events_and_the_report_and_sends_nothing(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
    tmp_path: Path,
) -> None:
    root = workspace(**{"openlineage.url": fake_server.url})
    expected = dry_run_events(code_server, root, tmp_path / "events.jsonl")
    window = open_window(root)
    window.command("OpenLineage: Dry Run: Build the Events, Send Nothing")
    done = window.toast(r"OpenLineage Export: dry run: ")
    assert f"dry run: 31 runs, {len(expected)} events built; nothing was sent" in done
    # The events in an editor tab, the report in a webview beside it.
    window.page.wait_for_selector(".tabs-container .tab[aria-label^='dry-run-events.jsonl']")
    window.page.wait_for_selector(".tabs-container .tab[aria-label^='OpenLineage Export Report']")
    report = window.page.frame_locator("iframe.webview").frame_locator("iframe#active-frame")
    assert "Dry run: 31 runs on the trail" in report.locator("header").inner_text()
    # The tab shows the same bytes the CLI's dry run writes (same trail, same bytes).
    shown = next(code_server.user_data.glob("User/workspaceStorage/*/*/dry-run-events.jsonl"))
    assert shown.read_bytes().splitlines() == expected
    assert fake_server.requests == []


def test_store_api_key_then_export_sends_it_as_bearer_and_keeps_it_nowhere_else(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
) -> None:
    root = workspace(**{"openlineage.url": fake_server.url})
    window = open_window(root)
    window.command("OpenLineage: Store API Key")
    window.answer("marquez-e2e")  # no secretRef yet: the key's name first
    window.answer(API_KEY, password=True)
    window.toast(r"API key stored as 'marquez-e2e'")
    settings = json.loads((root / ".workspace" / "settings.json").read_text())
    assert settings["openlineage.apiKey.secretRef"] == "marquez-e2e"

    window.command("OpenLineage: Export Lineage Runs")
    window.toast(r"OpenLineage Export: exported to .*: 31 of 31 runs sent")
    requests = fake_server.requests
    assert requests and {r.headers.get("authorization") for r in requests} == {f"Bearer {API_KEY}"}
    # Nowhere else: no settings file, no output channel, no log, not the CLI's own secrets
    # file (the key went to the export through its environment only), nothing in the folder.
    places = [
        *root.rglob("*"),
        *code_server.user_data.glob("logs/**/*"),
        *code_server.user_data.glob("User/*.json"),
        *code_server.user_data.glob("User/workspaceStorage/**/*"),
        *code_server.home.rglob("*"),
    ]
    for place in places:
        if place.is_file() and "/venv/" not in str(place):
            assert API_KEY.encode() not in place.read_bytes(), place
    assert not (code_server.home / "config" / "secrets.json").exists()
    assert API_KEY not in " ".join(window.toasts())


def test_a_workspace_that_moves_the_url_does_not_take_the_key_along(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    make_fake_server: Callable[[], FakeServer],
) -> None:
    """The key is stored for the server the settings named then; a pull that points the
    workspace at another server asks its owner first (a modal), and a "no" sends nothing."""
    approved, elsewhere = make_fake_server(), make_fake_server()
    root = workspace(**{"openlineage.url": approved.url})
    window = open_window(root)
    window.command("OpenLineage: Store API Key")
    window.answer("moved-e2e")
    window.answer(API_KEY, password=True)
    window.toast(r"API key stored as 'moved-e2e'")
    file = root / ".workspace" / "settings.json"
    pulled = {**json.loads(file.read_text()), "openlineage.url": elsewhere.url}
    file.write_text(json.dumps(pulled))  # as a git pull brings it

    window.command("OpenLineage: Export Lineage Runs")
    dialog = window.page.locator(".monaco-dialog-box")
    dialog.get_by_text(re.compile("which you have not approved for it")).wait_for()
    assert urlsplit(elsewhere.url).netloc in dialog.inner_text()
    window.page.keyboard.press("Escape")  # no
    wait_until(
        "the extension to say the export did not start",
        lambda: any(
            "export not started: the key 'moved-e2e' is not approved" in log.read_text()
            for log in code_server.output_logs()
        ),
    )
    assert elsewhere.requests == [] and approved.requests == []


def test_cancel_stops_as_ctrl_c_does_and_the_next_export_sends_exactly_the_rest(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
    tmp_path: Path,
) -> None:
    root = workspace(**{"openlineage.url": fake_server.url, "openlineage.concurrency": "1"})
    expected = by_run(dry_run_events(code_server, root, tmp_path / "events.jsonl"))
    held, release = 6, threading.Event()

    def hold_one(request: Recorded) -> Answer:
        if len(fake_server.requests) == held:  # this request is the held one
            release.wait(DEADLINE_MS / 1000)
        return Answer(201)

    fake_server.script(hold_one)
    window = open_window(root)
    window.command("OpenLineage: Export Lineage Runs")
    wait_until(f"the server to hold request {held}", lambda: len(fake_server.requests) >= held)
    try:
        progress = window.page.locator(
            ".notifications-toasts .notification-list-item", has_text="OpenLineage: exporting"
        )
        progress.get_by_role("button", name="Cancel").click()
        # Cancel is Ctrl-C: the export says it finishes the request in flight.
        wait_until(
            "the export to say it finishes the requests in flight",
            lambda: any(
                "finishing the requests in flight" in log.read_text()
                for log in code_server.output_logs()
            ),
        )
    finally:
        release.set()
    done = window.toast(r"OpenLineage Export: cancelled after")
    first_count = len(fake_server.requests)
    first = [r.raw for r in fake_server.requests if r.method == "POST"]
    assert len(first) < sum(len(events) for events in expected.values()), "not cut short"
    kept = delivered(code_server.home / "state", root, f"{fake_server.url}/api/v1/lineage")
    assert kept and len(kept) < len(expected)
    assert f"cancelled after {len(kept)} of 31 runs" in done
    received = by_run(first)
    for run_id in kept:  # the ledger agrees with the server: every event of each kept run
        assert received[run_id] == expected[run_id]

    fake_server.script([])  # every request answered at once again
    window.command("OpenLineage: Export Lineage Runs")
    again = window.toast(r"OpenLineage Export: exported to ")
    assert f"{31 - len(kept)} of 31 runs sent" in again and f"{len(kept)} unchanged" in again
    # The events posted (a later export first asks a Marquez-shaped server what it still holds,
    # with GETs: deliver/http/recall.py).
    rest = by_run([r.raw for r in fake_server.requests[first_count:] if r.method == "POST"])
    assert set(rest) == set(expected) - set(kept)
    assert all(rest[run_id] == expected[run_id] for run_id in rest)


def delivered(state: Path, root: Path, destination: str) -> set[str]:
    """The runs the ledger holds as delivered to ``destination`` for the workspace ``root``."""
    with sqlite3.connect(f"file:{state / 'ledger.sqlite'}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT r.run_id FROM runs r JOIN destinations d ON d.id = r.destination_id "
            "WHERE d.workspace = ? AND d.destination = ? AND r.state = 'delivered'",
            (str(root.resolve()), destination),
        ).fetchall()
    return {row[0] for row in rows}


def test_a_bad_trail_line_is_a_problem_at_its_file_and_line(
    open_window: Callable[[Path], Workbench], workspace: Callable[..., Path]
) -> None:
    root = workspace()
    segment = root / ".workspace" / "lineage" / "audit" / "000002.jsonl"
    lines = segment.read_text().splitlines(keepends=True)
    bad = (
        '{"kind": "run", "traceId": "run-bad-1", "pipeline": "daily-sales", '
        '"status": "exploded", "startedAt": "2026-11-02T02:00:00Z"}\n'
    )
    segment.write_text("".join([*lines[:6], bad, *lines[6:]]))  # line 7
    window = open_window(root)
    window.command("OpenLineage: Dry Run: Build the Events, Send Nothing")
    window.toast(r"1 bad trail entry in Problems")
    window.command("View: Focus Problems (Errors, Warnings, Infos)")
    panel = ".markers-panel .monaco-list-row"
    window.page.wait_for_selector(
        f"{panel}[aria-label*='000002.jsonl of folder .workspace/lineage/audit']"
    )
    # Read where it is found, in one step: the list may draw its rows again meanwhile (a later
    # update of the diagnostics), which would leave a handle to a row pointing at nothing.
    label = str(
        window.page.wait_for_function(
            """panel => { const row = [...document.querySelectorAll(panel)].find(
             r => (r.getAttribute('aria-label') || '').includes('exploded'));
           return row && row.getAttribute('aria-label'); }""",
            arg=panel,
        ).json_value()
    )
    assert label.startswith(
        "Warning: bad entry, not exported: run 'run-bad-1': status 'exploded'"
    ), label
    assert "at line 7 and character 1" in label, label


def test_the_settings_ui_shows_every_setting_and_its_changes_are_what_the_cli_uses(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
) -> None:
    properties = PACKAGE["contributes"]["configuration"]["properties"]
    # The Workspace tab lists what a folder may set: the editor's own settings of the user's
    # machine (openlineage.marquez.webUrl: what the browser opens; openlineage.autoExport: it
    # starts sending on its own) are the User tab's alone.
    users_only = {k for k, v in properties.items() if v.get("scope") in ("application", "machine")}
    assert users_only == {"openlineage.autoExport", "openlineage.marquez.webUrl"}
    properties = {k: v for k, v in properties.items() if k not in users_only}
    root = workspace()
    window = open_window(root)
    window.page.set_viewport_size({"width": 1400, "height": 130 * len(properties) + 600})
    window.command("Preferences: Open Workspace Settings")
    window.page.wait_for_selector(SETTINGS_SEARCH)
    window.page.keyboard.type("@ext:openlineage-export.openlineage-export")
    window.page.wait_for_selector(
        ".settings-editor .monaco-list-row[aria-label='OpenLineage Export, group']"
    )
    shown = window.page.wait_for_function(
        """keys => { const shown = [...document.querySelectorAll(
             '.settings-editor .setting-item-contents[data-key]')].map(
             e => e.getAttribute('data-key'));
           return keys.every(k => shown.includes(k)) && shown; }""",
        arg=list(properties),
    )
    assert sorted(shown.json_value()) == sorted(properties)
    assert "openlineage.marquez.webUrl" not in shown.json_value()
    # In the product page's order: where events go, the key's name, the path, the namespace,
    # a dry run; then the rest.
    assert shown.json_value()[:5] == [
        "openlineage.url",
        "openlineage.apiKey.secretRef",
        "openlineage.endpoint",
        "openlineage.namespace",
        "openlineage.dryRun",
    ]

    settings = root / ".workspace" / "settings.json"
    vscode_settings = root / ".vscode" / "settings.json"

    # A key pasted where a secret's name belongs is refused (the CLI's rule, in the setting's
    # schema), so VS Code stores it nowhere. Each value goes into its box in one input, as a
    # paste does, and again whenever the box no longer holds it: the editor may draw its list
    # again after the search (seen twice in eight runs), which swaps the box for an empty one
    # (typed a key at a time, the rest of the typing then stood alone: it stored "Tb6Nc").
    key = "sk-live-4f9Kx2Lp8Qw3Zr7Tb6Nc"
    refusal = window.page.locator(
        ".settings-editor .setting-item-contents"
        "[data-key='openlineage.apiKey.secretRef'] "
        ".setting-item-validation-message:has-text('never the key')"
    )
    put(
        window.page.locator(".settings-editor input[aria-label='openlineage.apiKey.secretRef']"),
        key,
        "the refusal under openlineage.apiKey.secretRef",
        refusal.is_visible,
    )

    # A value typed there is the one the CLI (a CI job on this workspace) uses next.
    url = "http://127.0.0.1:5999"
    box = window.page.locator(".settings-editor input[aria-label='openlineage.url']")
    put(
        box,
        url,
        "openlineage.url in .workspace/settings.json",
        lambda: json.loads(settings.read_text()).get("openlineage.url") == url,
    )
    got = code_server.cli("settings", "get", "openlineage.url", "-w", str(root))
    assert (got.returncode, got.stdout.strip()) == (0, url), got.stderr
    for file in (settings, vscode_settings):
        assert key not in file.read_text()

    # A value the CLI refuses is refused with its own words, and VS Code's goes back to the
    # one in force.
    box.fill("http://olx:hunter2@127.0.0.1:5999")
    refused = window.toast(r"openlineage.url was not changed")
    assert "carries credentials (user or password before '@')" in refused
    assert "hunter2" not in refused
    wait_until(
        "VS Code's openlineage.url back to the one in force",
        lambda: json.loads(vscode_settings.read_text()).get("openlineage.url") == url,
    )
    assert json.loads(settings.read_text())["openlineage.url"] == url

    # A url that already ends with the endpoint is taken, and said at once to be likely wrong.
    box.fill(f"{url}/api/v1/lineage")
    doubt = window.toast(r"openlineage.url already ends with the endpoint")
    assert f"set openlineage.url to {url}" in doubt


def test_opening_changes_no_file_and_a_url_typed_in_either_tab_is_the_one_the_export_uses(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    make_fake_server: Callable[[], FakeServer],
) -> None:
    """The folder opened: no file changes (the git tree stays clean). A url set in the
    Workspace tab, then another typed in the User tab (which VS Code ranks below the
    folder's): the User tab's reaches .workspace/settings.json, and the Workspace tab follows
    it. Typed again at a person's pace, after clearing the box: .workspace/settings.json only
    ever holds the old url or the whole new one, never a part, never none; the next export
    goes to the one typed."""
    first, typed = make_fake_server(), make_fake_server()
    root = workspace(**{"openlineage.url": first.url})
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "demo")
    window = open_window(root)
    window.command("OpenLineage: Show Export Status")  # runs once the settings are settled
    window.toast(r"31 runs on the trail")
    assert git(root, "status", "--porcelain", "--ignored") == ""
    assert not (root / ".vscode").exists()

    settings = root / ".workspace" / "settings.json"
    folder_settings = root / ".vscode" / "settings.json"

    def file_url() -> object:
        return json.loads(settings.read_text()).get("openlineage.url")

    put(
        settings_box(window, "Workspace", "openlineage.url"),
        first.url,
        "VS Code to hold the url for the folder",
        lambda: held(folder_settings, "openlineage.url") == first.url,
    )
    between = "http://127.0.0.1:9/between"
    user_box = settings_box(window, "User", "openlineage.url")
    put(
        user_box,
        between,
        "the User tab's url in .workspace/settings.json",
        lambda: file_url() == between,
    )
    wait_until(
        "the Workspace tab to follow the url typed in the User tab",
        lambda: held(folder_settings, "openlineage.url") == between,
    )

    seen = ValuesSeen(settings, "openlineage.url")
    try:
        user_box.click()
        window.page.keyboard.press("Control+A")
        window.page.keyboard.press("Backspace")
        type_like_a_person(window.page, typed.url, pause_after=len("http://127"))
        wait_until("the typed url in .workspace/settings.json", lambda: file_url() == typed.url)
    finally:
        values = seen.stop()
    assert values[0] == between and values[-1] == typed.url
    assert set(values) == {between, typed.url}, values  # never a part, never missing

    window.command("OpenLineage: Export Lineage Runs")
    window.toast(r"OpenLineage Export: exported to .*: 31 of 31 runs sent")
    assert typed.requests and first.requests == []


def test_a_dry_run_by_setting_or_argument_sends_nothing_and_the_report_follows_each_export(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
) -> None:
    """After a dry run, the export's full title then Enter runs the export (the dry run's
    title cannot match it); the open report is then the export's. A keybinding passing
    {"dryRun": true} and openlineage.dryRun (Settings) each make the export a dry run."""
    root = workspace(**{"openlineage.url": fake_server.url})
    bindings = code_server.user_data / "User" / "keybindings.json"
    bindings.write_text(  # a person's keybinding, there before the window opens
        json.dumps(
            [{"key": "ctrl+alt+shift+d", "command": "openlineage.export", "args": {"dryRun": True}}]
        )
    )
    try:
        dry_run_by_argument_then_setting(open_window(root), root, code_server, fake_server)
    finally:
        bindings.write_text("[]")


def dry_run_by_argument_then_setting(
    window: Workbench, root: Path, code_server: CodeServer, fake_server: FakeServer
) -> None:
    window.command("OpenLineage: Dry Run: Build the Events, Send Nothing")
    window.toast(r"OpenLineage Export: dry run: 31 runs")
    report = window.page.frame_locator("iframe.webview").frame_locator("iframe#active-frame")
    assert "Dry run" in report.locator("header").inner_text()

    title = "OpenLineage: Export Lineage Runs"
    state = window.search(title, [title])
    focused = str(state["focused"] or "").split(",")[0]
    assert focused == title, state  # the one that sends, not the recent dry run
    assert not any(row.startswith("OpenLineage: Dry Run") for row in state["rows"]), state
    window.page.keyboard.press("Enter")
    window.toast(r"OpenLineage Export: exported to .*: 31 of 31 runs sent")
    sent = len(fake_server.requests)
    assert sent
    wait_until(
        "the open report to be the export's",
        lambda: "Dry run" not in report.locator("header").inner_text(),
    )

    def dry_runs() -> int:
        return sum(log.read_text().count(f"dry run of {root}") for log in code_server.output_logs())

    before = dry_runs()
    # The keys go to the workbench, not to the report's webview beside it: the events' editor
    # is clicked first. A press the workbench let go by (still busy with the export's end)
    # starts nothing: pressed again once the status bar shows no dry run began.
    window.page.locator(".monaco-editor .view-lines").first.click()

    def pressed_and_started() -> bool:
        if dry_runs() == before and "dry run" not in window.status_bar():
            window.page.keyboard.press("Control+Alt+Shift+D")
            window.page.wait_for_timeout(2000)  # its time to show in the status bar
        return dry_runs() > before

    wait_until("the keybinding's dry run to start", pressed_and_started)
    window.wait_status_bar(r"^OpenLineage$")  # it ended
    assert len(fake_server.requests) == sent  # nothing sent (a dry run each press)

    window.command("Preferences: Open Workspace Settings")
    search = window.page.locator(SETTINGS_SEARCH)
    search.wait_for()
    search.fill("openlineage.dryRun")
    checkbox = window.page.locator(
        ".settings-editor .setting-item-contents[data-key='openlineage.dryRun'] "
        ".setting-value-checkbox"
    )
    checkbox.click()
    wait_until(
        "VS Code to hold openlineage.dryRun for the folder",
        lambda: held(root / ".vscode" / "settings.json", "openlineage.dryRun") is True,
    )
    assert "dryRun" not in (root / ".workspace" / "settings.json").read_text()
    window.command(title)
    said = window.toast(r"dry run: 31 runs.*openlineage.dryRun is on in Settings")
    assert "nothing was sent" in said
    assert len(fake_server.requests) == sent


def test_the_secrets_view_adds_lists_and_removes_a_key_with_its_server(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    fake_server: FakeServer,
) -> None:
    """The SECRETS view (the product page's step 3): its + (Add Secret) asks a name and a key; one added
    there is listed by name, used by openlineage.apiKey.secretRef, with the server it was
    stored for; the export sends it; Remove takes it out of VS Code's secret storage."""
    root = workspace(**{"openlineage.url": fake_server.url})
    window = open_window(root)
    window.page.locator(".activitybar .action-item a[aria-label^='OpenLineage']").click()
    view = window.page.locator(".pane:has(.pane-header[aria-label^='Secrets'])")
    # Its title's + (the empty view's button does the same; other tests of this module may have
    # stored keys already, so the view may list some).
    view.locator(".pane-header").hover()
    view.locator(".pane-header .action-label[aria-label='Add Secret']").click()
    window.answer("marquez-view")
    window.answer(API_KEY, password=True)
    window.toast(r"API key stored as 'marquez-view'")
    row = view.locator(".monaco-list-row[aria-level='1'][aria-label*='marquez-view']")
    row.wait_for()
    wait_until(
        "the key listed as stored and used by the workspace",
        lambda: "stored · used by openlineage.apiKey.secretRef" in row.inner_text(),
    )
    origin = urlsplit(fake_server.url).netloc
    view.locator(f".monaco-list-row[aria-label*='{origin}']").wait_for()
    renew(window.page, SECRETS_SCREENSHOT, window.page.screenshot(), tolerance=2000)

    window.command("OpenLineage: Export Lineage Runs")
    window.toast(r"OpenLineage Export: exported to .*: 31 of 31 runs sent")
    assert {r.headers.get("authorization") for r in fake_server.requests} == {f"Bearer {API_KEY}"}

    row.hover()
    row.locator(".action-label[aria-label='Remove Secret']").click()
    window.page.locator(".monaco-dialog-box").get_by_role("button", name="Remove").click()
    window.toast(r"the key 'marquez-view' was removed")
    wait_until(
        "the key listed as not stored (the workspace still names it)",
        lambda: "not stored · used by openlineage.apiKey.secretRef" in row.inner_text(),
    )
    assert view.locator(f".monaco-list-row[aria-label*='{origin}']").count() == 0


def test_the_editors_http_proxy_carries_the_export(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    make_fake_server: Callable[[], FakeServer],
    refused_port: int,
) -> None:
    """http.proxy of the editor's settings is the export's proxy: the server's address refuses
    connections, so only the proxy (a loopback server taking absolute-form requests) can take
    the events."""
    proxy = make_fake_server()
    target = f"http://127.0.0.1:{refused_port}"
    root = workspace(**{"openlineage.url": target})
    user_settings = code_server.user_data / "User" / "settings.json"
    user_settings.write_text(json.dumps({**USER_SETTINGS, "http.proxy": proxy.url}))
    try:
        window = open_window(root)  # a new window reads the user settings as they are now
        window.command("OpenLineage: Export Lineage Runs")
        done = window.toast(r"OpenLineage Export: exported to ")
    finally:
        user_settings.write_text(json.dumps(USER_SETTINGS))
    assert f"exported to {target}/api/v1/lineage: 31 of 31 runs sent" in done
    assert proxy.requests
    assert {r.path for r in proxy.requests} == {f"{target}/api/v1/lineage"}


def refuse_one_run(
    server: CodeServer, root: Path, fake_server: FakeServer, out: Path
) -> list[bytes]:
    """The fake server refuses one run of the workspace's (400, saying why) and takes the
    rest: that run's events."""
    expected = by_run(dry_run_events(server, root, out))
    refused = next(iter(expected))

    def refuse_one(request: Recorded) -> Answer:
        if pipeline_run(json.loads(request.body)) == refused:
            return Answer(400, body="namespace acme-analytics is closed by policy")
        return Answer(201)

    fake_server.script(refuse_one)
    return expected[refused]


def test_a_refused_run_is_named_with_the_servers_reason_then_status_and_report(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
    tmp_path: Path,
) -> None:
    root = workspace(**{"openlineage.url": fake_server.url})
    refuse_one_run(code_server, root, fake_server, tmp_path / "events.jsonl")
    window = open_window(root)
    window.command("OpenLineage: Export Lineage Runs")
    done = window.toast(r"OpenLineage Export: 1 run refused by ")
    assert f"refused by {fake_server.url}/api/v1/lineage" in done
    assert "namespace acme-analytics is closed by policy" in done
    wait_until(
        "the refused run in the output channel",
        lambda: any(
            "namespace acme-analytics is closed by policy" in log.read_text()
            and "refused: " in log.read_text()
            for log in code_server.output_logs()
        ),
    )

    window.command("OpenLineage: Show Export Status")
    status = window.toast(r"OpenLineage Export: 31 runs on the trail")
    assert "30 of 31 runs exported; 1 pending (1 refused last time)" in status

    window.command("OpenLineage: Open Export Report")
    window.page.wait_for_selector(".tabs-container .tab[aria-label^='OpenLineage Export Report']")
    report = window.page.frame_locator("iframe.webview").frame_locator("iframe#active-frame")
    header = report.locator("header").inner_text()
    assert "Dry run" not in header and "31 runs on the trail" in header, header


def test_the_runs_view_shows_each_runs_standing_and_opens_its_job_in_marquez(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
    tmp_path: Path,
) -> None:
    """The RUNS view after an export with one run refused: each pipeline with its counts, the
    refused run with the server's reason; with openlineage.marquez.webUrl set (User settings),
    a run opens its job's page in Marquez's web UI, as the export's notification offers."""
    root = workspace(**{"openlineage.url": fake_server.url})
    refused = refuse_one_run(code_server, root, fake_server, tmp_path / "events.jsonl")
    pipeline = next(
        json.loads(body)["job"]["name"]
        for body in refused
        if "parent" not in json.loads(body)["run"]["facets"]
    )
    trace_id = next(
        tag["value"]
        for tag in json.loads(refused[0])["run"]["facets"]["tags"]["tags"]
        if tag["key"] == "traceId"
    )
    user_settings = code_server.user_data / "User" / "settings.json"
    # Marquez's web UI on another host of the team's (a loopback address all the same): code-server
    # sends an address on its own host (localhost, 127.0.0.1) through its port proxy instead.
    web = "http://127.0.0.2:3000"
    user_settings.write_text(json.dumps({**USER_SETTINGS, "openlineage.marquez.webUrl": web}))
    try:
        window = open_window(root)
        window.command("OpenLineage: Export Lineage Runs")
        done = window.toast(r"OpenLineage Export: 1 run refused by ")
        assert "Open Report" in done and "Open in Marquez" in done
        # The status bar item says the export and where the runs stand, on hover.
        window.page.locator(".part.statusbar .statusbar-item", has_text="OpenLineage").hover()
        hover = window.page.locator(".workbench-hover, .monaco-hover").filter(
            has_text="Last export: "
        )
        hover.first.wait_for()
        assert "1 refused" in hover.first.inner_text()

        window.page.locator(".activitybar .action-item a[aria-label^='OpenLineage']").click()
        view = window.page.locator(".pane:has(.pane-header[aria-label^='Runs'])")
        header = view.locator(".monaco-list-row", has_text=pipeline).first
        header.wait_for()
        wait_until(
            "the pipeline's counts",
            lambda: "1 refused" in header.inner_text() and "exported" in header.inner_text(),
        )
        header.click()  # expands it
        # Its row: by its start time (its trace id is in its tooltip).
        started = runs_standing(code_server, root)[trace_id]["startedAt"]
        row = view.locator(".monaco-list-row", has_text=start_time(started))

        def scrolled_to() -> bool:
            # The list draws only the rows in view (the refused run is the pipeline's oldest,
            # below them): moved down a row at a time, as a person does, until it is drawn.
            if row.count():
                return True
            window.page.keyboard.press("ArrowDown")
            return False

        wait_until("the refused run's row in the RUNS view", scrolled_to)
        row.wait_for()
        assert "refused: " in row.inner_text()
        assert "namespace acme-analytics is closed by policy" in row.inner_text()
        renew(window.page, RUNS_SCREENSHOT, window.page.screenshot(), tolerance=2000)

        namespace = json.loads(refused[0])["job"]["namespace"]
        wanted = f"{web}/lineage/job/{namespace}/{pipeline}"
        asked: list[str] = []  # what a new tab asked for (loaded or not: nothing listens there)
        tabs: list[Any] = []
        window.page.context.on("request", lambda request: asked.append(request.url))
        window.page.context.on("page", lambda tab: tabs.append(tab))
        row.click()
        # VS Code asks before it opens an address it does not trust yet: the person says Open.
        ask = window.page.locator(".monaco-dialog-box").get_by_role(
            "button", name="Open", exact=True
        )

        def opened() -> bool:
            if ask.count() and ask.first.is_visible():
                ask.first.click()
            return wanted in asked

        wait_until(f"a tab asking for {wanted}", opened)
        for tab in tabs:
            tab.close()
    finally:
        user_settings.write_text(json.dumps(USER_SETTINGS))


AUTO_RUNS = 50
AUTO_PACE = 60.0 / AUTO_RUNS
"""Seconds between two runs written: 50 over a minute."""
AUTO_ROTATE_AT = 20
AUTO_OUTAGE = range(28, 36)
"""The runs written while the server cannot be reached."""


def test_auto_export_sends_each_run_once_as_it_ends_and_stops_when_turned_off(
    open_window: Callable[[Path], Workbench],
    code_server: CodeServer,
    marquez: Any,
    tmp_path: Path,
) -> None:
    """openlineage.autoExport, turned on in the User Settings editor (its only place): the status
    bar says it follows the trail; 50 runs appended over a minute, a rotation (a new segment,
    the old one gzipped) and the server gone and back in the middle, and Marquez holds every run
    exactly once, each event passed to it once; turned off (its checkbox clicked again), the
    watch ends with the ledger true (a CLI export then takes the lock and finds nothing to
    send). The delay from a run's line to
    Marquez holding all its events is reported (``-s``), never asserted."""
    namespace = "vscode-auto-export"
    ws = WorkspaceMaker(tmp_path / "auto-export")
    ws.graph({**GRAPH, "workspace": {"name": namespace}})
    trace_ids = [str(uuid.uuid4()) for _ in range(AUTO_RUNS)]  # a UUID trace id is the run id
    with FaultProxy(str(marquez.url), seed=3301) as proxy:
        ws.settings({"openlineage.url": proxy.url, "openlineage.retry.maxTime": 2})
        ws.segment("000001.jsonl", [])
        window = open_window(ws.root)
        window.wait_status_bar(r"^OpenLineage$")  # off by default: nothing follows the trail
        user_settings = turn_auto_export(window, on=True)
        window.wait_status_bar(r"following · 0 sent")
        assert "autoExport" not in (ws.root / ".workspace" / "settings.json").read_text()

        accepted = AcceptedAt(proxy)
        try:
            written = write_runs_through_a_rotation_and_an_outage(
                ws,
                trace_ids,
                pace=AUTO_PACE,
                rotate_at=AUTO_ROTATE_AT,
                outage=AUTO_OUTAGE,
                go_away=lambda: proxy.go_away("refuse"),
                outage_said=lambda: window.wait_status_bar("waiting for the server"),
                come_back=proxy.come_back,
            )
            window.wait_status_bar(rf"following · {AUTO_RUNS} sent$")
        finally:
            accepted.stop()
        passed = Counter(pipeline_run(json.loads(p.body)) for p in proxy.passed if p.status < 300)

        # Off, as a person does: its checkbox in the User Settings editor, clicked again.
        turn_auto_export(window, on=False)
        window.wait_status_bar(r"^OpenLineage$")
        assert held(user_settings, "openlineage.autoExport") in (None, False)
        again = code_server.cli("export", "-w", str(ws.root), "--json")
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["runs"]["sent"] == 0  # the ledger knew every run

    # Each run's events passed to Marquez once each (its final record: the running ones
    # were never sent), and Marquez holds every run exactly once, in its final state.
    expected = by_run(dry_run_events(code_server, ws.root, tmp_path / "events.jsonl"))
    assert set(expected) == set(trace_ids)
    assert passed == Counter({run: len(events) for run, events in expected.items()})
    runs = marquez.runs(namespace, "daily-sales")
    ids = Counter(run["id"] for run in runs)
    assert set(ids) == set(trace_ids) and set(ids.values()) == {1}
    assert {run["state"] for run in runs} == {"COMPLETED", "FAILED"}

    delays = [accepted.at[t] - written[t] for n, t in enumerate(trace_ids) if n not in AUTO_OUTAGE]
    print(
        f"\nVS Code auto-export -> Marquez, from the line written to every event accepted: "
        f"median {statistics.median(delays):.2f} s, max {max(delays):.2f} s over "
        f"{len(delays)} runs outside the outage"
    )


def turn_auto_export(window: Workbench, *, on: bool) -> Path:
    """openlineage.autoExport's checkbox in the User settings (a folder's cannot turn it on),
    as a person finds it (the Settings editor, its name typed in the search box), clicked when
    it is not ``on`` already; once VS Code holds it. Returns the file it is held in (the User
    settings.json)."""
    stored = window.server.user_data / "User" / "settings.json"
    window.command("Preferences: Open User Settings")
    search = window.page.locator(SETTINGS_SEARCH)
    search.wait_for()
    search.fill("")
    window.page.keyboard.type("openlineage.autoExport")
    box = window.page.locator(
        ".settings-editor .setting-item-contents[data-key='openlineage.autoExport'] "
        ".setting-value-checkbox"
    )
    box.wait_for(state="visible")
    assert box.get_attribute("aria-checked") == ("false" if on else "true")
    box.click()
    wait_until(
        f"VS Code to hold openlineage.autoExport {'on' if on else 'off'} in the User settings",
        lambda: (held(stored, "openlineage.autoExport") is True) == on,
    )
    return stored


class AcceptedAt:
    """When the proxy had passed on, and Marquez accepted, as many events of each run as it
    ever will (looked at every 50 ms, until stopped): for the delay reported."""

    def __init__(self, proxy: FaultProxy) -> None:
        self.at: dict[str, float] = {}
        self._proxy = proxy
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        seen = 0
        while True:
            stopping = self._stop.wait(0.05)
            passed = list(self._proxy.passed)
            for p in passed[seen:]:
                if p.status < 300:
                    self.at[pipeline_run(json.loads(p.body))] = time.monotonic()  # latest so far
            seen = len(passed)
            if stopping:  # one last look after the stop
                return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
