"""The extension's views as a person reads them (issue 44, items 6 to 8), in a real VS Code
(code-server): the RUNS view by start time with each run's outcome beside its export state; the
status bar and the report after a reload; the report opened where there is room.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from fakeserver import (
    FakeServer,
    fake_server_fixture,  # noqa: F401 - registers fake_server
)
from support.vscode import (
    CodeServer,
    Workbench,
    run_duration,
    runs_standing,
    start_time,
    wait_until,
)

pytestmark = pytest.mark.e2e

GROUPS = ".part.editor .editor-group-container"
"""The editor groups (columns) of the window."""
REPORT_TAB = ".tabs-container .tab[aria-label^='OpenLineage Export Report']"


def test_the_runs_view_lists_each_run_by_start_time_with_its_outcome_and_export_state(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    code_server: CodeServer,
    fake_server: FakeServer,
) -> None:
    """Issue 44, item 6. After an export every run is exported: the failed run of daily-sales
    is listed by its start time, with its duration, "failed" and "exported", its icon an error
    (never a green check), its trace id in its tooltip; a run that succeeded has the check."""
    root = workspace(**{"openlineage.url": fake_server.url})
    window = open_window(root)
    window.command("OpenLineage: Export Lineage Runs")
    window.toast(r"OpenLineage Export: exported to .*: 31 of 31 runs sent")
    runs = runs_standing(code_server, root)
    failed = next(
        r for r in runs.values() if r["pipeline"] == "daily-sales" and r["status"] == "failed"
    )
    succeeded = next(
        r for r in runs.values() if r["pipeline"] == "daily-sales" and r["status"] == "succeeded"
    )

    view = window.open_view("Runs")
    header = view.locator(".monaco-list-row", has_text="daily-sales").first
    header.wait_for()
    wait_until("the pipeline's counts", lambda: "exported" in header.inner_text())
    assert "1 failed in the editor" in header.inner_text()
    if header.get_attribute("aria-expanded") != "true":
        header.click()
    row = view.locator(".monaco-list-row", has_text=start_time(failed["startedAt"]))
    row.wait_for()
    text = row.inner_text().replace("\n", " ")
    took = run_duration(failed["startedAt"], failed["endedAt"])
    assert f"{took} · failed · exported" in text, text
    assert failed["traceId"] not in text  # in its tooltip
    assert row.locator(".codicon-error").count() == 1
    assert row.locator(".codicon-pass").count() == 0
    assert failed["traceId"] in window.hover_text(row, failed["traceId"])

    ok = view.locator(".monaco-list-row", has_text=start_time(succeeded["startedAt"]))
    assert "succeeded · exported" in ok.inner_text().replace("\n", " ")
    assert ok.locator(".codicon-pass").count() == 1


def test_after_a_reload_the_status_bar_and_the_report_are_back_and_reports_open_where_there_is_room(
    open_window: Callable[[Path], Workbench],
    workspace: Callable[..., Path],
    fake_server: FakeServer,
) -> None:
    """Issue 44, items 7 and 8. An export, its report opened; the window reloaded: the status
    bar's tooltip says the last export and where the runs stand (read at start), the report tab
    is back with the report. Then one group holding an editor and an empty one beside it (View:
    New Editor Group to the Right): the report opens in the empty group, never in a new third
    column."""
    root = workspace(**{"openlineage.url": fake_server.url})
    window = open_window(root)
    window.command("OpenLineage: Export Lineage Runs")
    window.toast(r"OpenLineage Export: exported to .*: 31 of 31 runs sent")
    window.command("OpenLineage: Open Export Report")
    window.page.wait_for_selector(REPORT_TAB)

    window.reload()
    item = window.page.locator(".part.statusbar .statusbar-item", has_text="OpenLineage")
    said = window.hover_text(item, "31 runs: 31 exported")
    assert "Last export: exported to " in said and "31 of 31 runs sent" in said, said
    window.page.wait_for_selector(REPORT_TAB)
    report = window.page.frame_locator("iframe.webview").frame_locator("iframe#active-frame")
    assert "31 runs on the trail" in report.locator("header").inner_text()

    # The report closed; an editor in the first group (the Settings editor), an empty group
    # beside it.
    window.page.locator(REPORT_TAB).click(button="middle")
    wait_until("the report closed", lambda: window.page.locator(REPORT_TAB).count() == 0)
    window.command("Preferences: Open User Settings")
    window.command("View: New Editor Group to the Right")
    wait_until("two groups, one empty", lambda: window.page.locator(GROUPS).count() == 2)
    window.command("OpenLineage: Open Export Report")
    window.page.wait_for_selector(REPORT_TAB)
    groups = window.page.locator(GROUPS)
    assert groups.count() == 2
    assert groups.nth(1).locator(REPORT_TAB).count() == 1
