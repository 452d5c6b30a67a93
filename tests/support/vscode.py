"""VS Code (code-server) driven in Debian's Chromium as a person drives it: what the editor's
end-to-end tests share (tests/e2e/test_vscode*.py; their fixtures are in tests/e2e/conftest.py).

VS Code is code-server (scripts/vscode.sh installs it from npm and starts it on loopback with
the extension's .vsix installed; scripts/test.sh packages the .vsix once and sets
OLX_VSCODE_VSIX and OLX_REQUIRE_VSCODE), opened in Debian's Chromium (headless, Playwright).
The extension installs its own copy of the tool from the wheel inside the .vsix on first use,
as it does for a user, so the export is the packaged one.

Every wait observes something: a notification, a tab, a row of the Problems panel, a request the
fake server received, a file's content; each with a generous deadline and a message saying
what it waited for. Nothing here sleeps but a person's pause.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from helpers import ROOT, USERS_HOME, run_cli

from support.chromium import require

DEADLINE_MS = 300_000
"""How long any one thing may take to appear (installing the tool on first use: a minute or
more; an export to a busy Marquez: as long)."""
FIRST_USE_MS = 900_000
"""The extension's first use: a virtual environment, and the wheel's dependencies from the
package index (a minute here; more on a loaded machine)."""
PACKAGE = json.loads((ROOT / "editor" / "vscode" / "package.json").read_text())
SETTINGS_SEARCH = ".settings-editor textarea[aria-label^='Search settings']"
"""The Settings editor's search box (its label grows with the count found once it searches)."""
USER_SETTINGS = {
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "telemetry.telemetryLevel": "off",
    "workbench.enableExperiments": False,
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "security.workspace.trust.enabled": False,
    "update.mode": "none",
    "workbench.settings.editor": "ui",
    # VS Code's search of settings by meaning asks an online service: no test sends traffic
    # to any other address than its own.
    "workbench.settings.enableNaturalLanguageSearch": False,
}
API_KEY = "olx-e2e-Kf83hQ2pLw9ZtR4v"
"""The key a person stores in the test (shaped like a key: letters and digits mixed)."""


# ------------------------------------------------------------------ code-server
@dataclass
class CodeServer:
    """A code-server the tests started: its address, its HOME and user data, its environment."""

    url: str
    home: Path
    run_dir: Path
    env: dict[str, str]
    """The environment code-server (and so the extension's exports) runs with."""

    @property
    def user_data(self) -> Path:
        return self.run_dir / "user-data"

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The CLI on the same machine, as a CI job runs it (same state and secrets folders)."""
        return run_cli(*args, env=self.env)

    def output_logs(self) -> list[Path]:
        """Every file VS Code wrote for the "OpenLineage Export" output channel, oldest first."""
        return sorted(
            self.user_data.glob("logs/**/*OpenLineage Export.log"), key=lambda p: p.stat().st_mtime
        )

    def said(self) -> str:
        """What the "OpenLineage Export" output channel holds, in every window so far."""
        return "".join(log.read_text(errors="replace") for log in self.output_logs())

    def extension_host_log(self) -> str:
        """What the extension hosts logged (which extension started when, and why), every
        window's, oldest first."""
        logs = sorted(
            self.user_data.glob("logs/**/remoteexthost.log"), key=lambda p: p.stat().st_mtime
        )
        return "".join(log.read_text(errors="replace") for log in logs)


def start_code_server(base: Path, extra: dict[str, str] | None = None) -> CodeServer:
    """code-server on 127.0.0.1 (a free port) with the extension installed, its state (user
    data: a fresh profile) and the tool's (HOME) in ``base``; ``extra``: more of its
    environment (the extension's exports inherit it)."""
    home, run_dir = base / "home", base / "run"
    (run_dir / "user-data" / "User").mkdir(parents=True)
    (run_dir / "user-data" / "User" / "settings.json").write_text(json.dumps(USER_SETTINGS))
    real_home = USERS_HOME  # HOME is a test's own
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENLINEAGE", "XDG_"))
        and k.lower() not in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
    }
    env.update(
        {
            "HOME": str(home),
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(home / "config"),
            "OPENLINEAGE_EXPORT_STATE_DIR": str(home / "state"),
            "OPENLINEAGE_EXPORT_SECRETS": "file",
            # Installed once per machine, not per test home; pip's downloads are reused too.
            "VSCODE_HOME": os.environ.get(
                "VSCODE_HOME", str(real_home / ".cache" / "openlineage-export" / "vscode")
            ),
            "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(real_home / ".cache" / "pip")),
            **(extra or {}),
        }
    )
    command = [str(ROOT / "scripts" / "vscode.sh"), "start", "--dir", str(run_dir)]
    vsix = os.environ.get("OLX_VSCODE_VSIX")
    if vsix:
        command += ["--vsix", vsix]
    started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1800)
    if started.returncode != 0:
        require(
            "OLX_REQUIRE_VSCODE",
            "code-server with the extension could not be started "
            f"(scripts/vscode.sh start):\n{started.stderr}",
        )
    return CodeServer(started.stdout.strip().splitlines()[-1], home, run_dir, env)


def stop_code_server(server: CodeServer) -> None:
    """The code-server ``start_code_server`` started, stopped (with every child of its)."""
    subprocess.run(
        [str(ROOT / "scripts" / "vscode.sh"), "stop", "--dir", str(server.run_dir)],
        env=server.env,
        capture_output=True,
        timeout=120,
    )


# ------------------------------------------------------------------ the workbench

TOASTS = """
window.__toasts = [];
new MutationObserver(() => {
  for (const el of document.querySelectorAll('.notifications-toasts .notification-list-item')) {
    const text = el.innerText.replace(/\\s+/g, ' ').trim();
    if (text && !window.__toasts.includes(text)) window.__toasts.push(text);
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""
"""Records the text of every notification shown (they hide themselves after a while)."""


PALETTE = """([query, wanted]) => {
  const widget = document.querySelector('.quick-input-widget');
  if (!widget || getComputedStyle(widget).display === 'none') return {closed: true};
  const input = widget.querySelector('.quick-input-box input');
  if (!input || input.value !== '>' + query) return false;
  const rows = [...widget.querySelectorAll('.quick-input-list .monaco-list-row')];
  const labels = rows.map(r => r.getAttribute('aria-label') || '');
  if (!wanted.every(w => labels.some(l => l === w || l.startsWith(w + ',')))) return false;
  const focused = rows.find(r => r.classList.contains('focused'));
  return {closed: false, rows: labels, focused: focused ? focused.getAttribute('aria-label') : null};
}"""
"""The command palette's state once it lists every wanted title for the query typed (false
until then): its rows' labels and the focused one; or closed (something took the focus)."""
SHOWN = """() => [
  (document.querySelector('.quick-input-widget .quick-input-box input') || {}).value,
  ...[...document.querySelectorAll('.quick-input-list .monaco-list-row')].map(
    r => r.getAttribute('aria-label'))]"""
"""What the palette shows: its input, then each row's label."""


FOCUSED = "() => document.activeElement && document.activeElement.closest('.quick-input-widget')"
"""Whether the palette holds the keyboard's focus."""


class Workbench:
    """A VS Code window on one folder, driven with the keyboard and mouse."""

    def __init__(self, browser: Any, server: CodeServer, folder: Path) -> None:
        self.server = server
        self.folder = folder
        self.page = browser.new_page()
        self.outside: set[str] = set()
        self.page.add_init_script(TOASTS)
        here = re.escape(urlsplit(server.url).netloc)
        self.page.route(re.compile(rf"^https?://(?!{here}/)"), self._offline)
        self.page.set_default_timeout(DEADLINE_MS)
        self.page.goto(f"{server.url}/?folder={folder}")
        self.page.wait_for_selector(".monaco-workbench .part.statusbar")
        # The folder is open once the explorer shows it.
        self.page.wait_for_selector(".explorer-folders-view .monaco-list-row")

    def _offline(self, route: Any) -> None:
        """Nothing leaves the machine."""
        self.outside.add(urlsplit(route.request.url).hostname or route.request.url)
        route.abort("internetdisconnected")

    def palette(self) -> None:
        """Open the command palette with F1 and see it hold the keyboard's focus. F1 is
        pressed again while the workbench, still loading, lets the key go by, and after
        Escape when the palette opened but something else took the focus (an editor the
        last command opened, a notification): typing then would go there."""
        deadline = time.monotonic() + DEADLINE_MS / 1000
        box = self.page.locator(".quick-input-widget .quick-input-box input[type=text]")
        while True:
            self.page.keyboard.press("F1")
            try:
                box.wait_for(state="visible", timeout=5_000)
                self.page.wait_for_function(FOCUSED, timeout=10_000)
                return
            except Exception:
                if time.monotonic() > deadline:
                    raise
                if box.is_visible():
                    self.page.keyboard.press("Escape")

    def search(self, query: str, wanted: list[str]) -> dict[str, Any]:
        """Type ``query`` into the palette until it lists every one of ``wanted``: the rows'
        labels and the focused one. The palette is opened again (Escape, F1) if it does not
        list them within a minute, or something took the focus (and so closed it)."""
        deadline = time.monotonic() + DEADLINE_MS / 1000
        seen: list[str] = []
        while time.monotonic() < deadline:
            self.palette()
            self.page.keyboard.type(query)
            try:
                state = self.page.wait_for_function(
                    PALETTE, arg=[query, wanted], timeout=60_000
                ).json_value()
            except Exception:
                seen = list(self.page.evaluate(SHOWN))
                self.page.keyboard.press("Escape")
                continue
            if not state["closed"]:
                return dict(state)
        pytest.fail(f"the palette never listed {wanted} for {query!r}; it showed {seen}")

    def command(self, title: str) -> None:
        """Run ``title`` from the command palette (F1), as typed by a person: its row (whose
        label ends with its key binding, if any) is chosen with the arrow keys, then Enter."""

        def mine(label: str | None) -> bool:
            return label is not None and (label == title or label.startswith(title + ","))

        deadline = time.monotonic() + DEADLINE_MS / 1000
        while time.monotonic() < deadline:
            state = self.search(title, [title])
            for _ in range(len(state["rows"])):
                if state["closed"]:
                    break
                if mine(state["focused"]):
                    self.page.keyboard.press("Enter")
                    return
                self.page.keyboard.press("ArrowDown")
                state = self.page.wait_for_function(PALETTE, arg=[title, [title]]).json_value()
        pytest.fail(f"could not run {title!r} from the palette")

    def answer(self, text: str, *, password: bool = False) -> None:
        """Type ``text`` into the input box the extension asks with, and press Enter."""
        kind = "password" if password else "text"
        self.page.wait_for_selector(f".quick-input-widget .quick-input-box input[type={kind}]")
        self.page.keyboard.type(text)
        self.page.keyboard.press("Enter")

    def toast(self, pattern: str) -> str:
        """The first notification whose text matches ``pattern`` (waiting for it)."""
        found = self.page.wait_for_function(
            """pattern => window.__toasts.find(t => new RegExp(pattern).test(t))""", arg=pattern
        )
        return str(found.json_value())

    def status_bar(self) -> str:
        """The text of the extension's status bar item ("" while there is none)."""
        return str(
            self.page.evaluate(
                """() => [...document.querySelectorAll('.part.statusbar .statusbar-item')]
                     .map(e => e.innerText.replace(/\\s+/g, ' ').trim())
                     .find(t => t.startsWith('OpenLineage')) || ''"""
            )
        )

    def wait_status_bar(self, pattern: str) -> str:
        """The status bar item's text once it matches ``pattern``."""
        deadline = time.monotonic() + DEADLINE_MS / 1000
        while True:
            text = self.status_bar()
            if text and re.search(pattern, text):
                return text
            if time.monotonic() > deadline:
                logs = "".join(log.read_text() for log in self.server.output_logs())
                pytest.fail(
                    f"waited for the status bar to say {pattern!r}; it said {text!r}; the "
                    f"output channel said:\n{logs[-3000:]}\nnotifications: {self.toasts()}"
                )
            time.sleep(0.05)  # polling a condition, not a premise

    def toasts(self) -> list[str]:
        return list(self.page.evaluate("window.__toasts"))

    def reload(self) -> None:
        """Developer: Reload Window, as a person runs it; once the workbench is back with the
        extension's status bar item."""
        with self.page.expect_navigation():
            self.command("Developer: Reload Window")
        self.page.wait_for_selector(".monaco-workbench .part.statusbar")
        self.wait_status_bar(r"OpenLineage")

    def hover_text(self, target: Any, wanted: str) -> str:
        """The text of the hover ``target`` shows once it holds ``wanted`` (hovered again while
        it does not: a hover shows what its target said when it opened)."""
        hover = self.page.locator(".workbench-hover, .monaco-hover").filter(has_text=wanted)

        def shown() -> bool:
            self.page.mouse.move(0, 0)
            target.hover()
            try:
                hover.first.wait_for(timeout=5_000)
            except Exception:
                return False
            return True

        wait_until(f"a hover saying {wanted!r}", shown)
        return str(hover.first.inner_text())

    def open_view(self, name: str) -> Any:
        """The OpenLineage activity's view ``name`` (In Force, Secrets, Runs), opened."""
        view = self.page.locator(f".pane:has(.pane-header[aria-label^='{name}'])")
        if not view.is_visible():  # a click on the shown container's icon would hide it
            self.page.locator(".activitybar .action-item a[aria-label^='OpenLineage']").click()
            view.wait_for()
        header = view.locator(".pane-header")
        if header.get_attribute("aria-expanded") == "false":
            header.click()
        return view

    def close(self) -> None:
        assert not self.outside, f"the page asked the internet for {self.outside}"
        self.page.close()


# ------------------------------------------------------------------ workspaces, events, settings


def dry_run_events(server: CodeServer, root: Path, out: Path) -> list[bytes]:
    """Every event the workspace's export sends, as the CLI builds them (one JSON line each)."""
    done = server.cli("export", "--dry-run", "-w", str(root), "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    return out.read_bytes().splitlines()


def pipeline_run(event: dict[str, Any]) -> str:
    parent = event["run"]["facets"].get("parent")
    return str(parent["run"]["runId"] if parent else event["run"]["runId"])


def by_run(bodies: list[bytes]) -> dict[str, list[bytes]]:
    """Events grouped by the editor run (pipeline run id) they belong to, in order."""
    runs: dict[str, list[bytes]] = defaultdict(list)
    for body in bodies:
        runs[pipeline_run(json.loads(body))].append(body)
    return dict(runs)


def put(box: Any, value: str, what: str, took: Callable[[], bool]) -> None:
    """Put ``value`` into a Settings editor ``box`` in one input (as a paste does) until
    ``took()`` sees its effect, putting it again whenever the box no longer holds it (the
    editor drew its list again, with an empty box)."""

    def placed_and_took() -> bool:
        if box.input_value() != value:
            box.fill(value)
        return took()

    wait_until(what, placed_and_took)


def wait_until(what: str, check: Callable[[], bool], seconds: float = DEADLINE_MS / 1000) -> None:
    """Until ``check()`` holds; fails saying ``what`` it waited for."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            pytest.fail(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.05)  # polling a condition, not a premise


class ValuesSeen:
    """Every value ``key`` of a JSON file held, in order, as read every 10 ms until stopped
    (None: the key was missing); the file is replaced whole by each write, so each read sees
    one whole version."""

    def __init__(self, file: Path, key: str) -> None:
        self.values: list[object] = []
        self._file, self._key = file, key
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while True:
            stopping = self._stop.wait(0.01)
            try:
                value = json.loads(self._file.read_text()).get(self._key)
            except (OSError, ValueError):
                continue
            if not self.values or self.values[-1] != value:
                self.values.append(value)
            if stopping:
                return

    def stop(self) -> list[object]:
        self._stop.set()
        self._thread.join()
        return self.values


class SettingsDrawings:
    """How many times the Settings editor has drawn its list of settings, counted in the page
    from before it opens (each drawing sets its rows' ``data-index``).

    On a fresh window, VS Code (code-server 4.100.3) draws that list when the editor opens, and
    once more about a second later, when its settings model first changes (its groups; the
    list's drawing waits 500 ms after that). The rows are then drawn anew, and a box that held
    the keyboard's focus may be given to another setting under the keys being typed (seen on a
    busy machine: the url's "h" lost, the rest of it typed into the endpoint's box). A person
    sees the list settle; a test waits for that drawing: :meth:`drawn_again`."""

    def __init__(self, page: Any) -> None:
        self.page = page
        page.evaluate(
            """() => { window.__olxDrawings = 0;
                new MutationObserver((changes) => {
                  if (changes.some((m) => m.target.closest
                      && m.target.closest('.settings-editor .settings-tree-container'))) {
                    window.__olxDrawings += 1; }
                }).observe(document.body,
                  {attributes: true, subtree: true, attributeFilter: ['data-index']}); }"""
        )

    def count(self) -> int:
        return int(self.page.evaluate("() => window.__olxDrawings"))

    def drawn_again(self, since: int) -> None:
        """Until the list was drawn again after ``since`` drawings (read once the editor was
        there: its search box shown)."""
        wait_until(
            "the Settings editor to draw its list again (its settings model changed, about a "
            "second after it opened)",
            lambda: self.count() > since,
        )


def type_like_a_person(page: Any, text: str, pause_after: int) -> None:
    """``text`` typed a key at a time, 150 ms apart, with a pause of 1.5 s after its first
    ``pause_after`` characters (a person looking up the rest): the pace is the stimulus."""
    page.keyboard.type(text[:pause_after], delay=150)
    time.sleep(1.5)  # a person's pause mid-word, not a wait for anything
    page.keyboard.type(text[pause_after:], delay=150)


def settings_box(window: Workbench, tab: str, key: str) -> Any:
    """The Settings editor's box of ``key`` in its ``tab`` ("User" or "Workspace"), once the
    search for it is drawn (the list drawn again after the search would swap the box for a new
    one under a person's keys) and the box holds the keyboard's focus."""
    window.command(f"Preferences: Open {tab} Settings")
    search = window.page.locator(SETTINGS_SEARCH)
    search.wait_for()
    # Another query first: the list drawn for this one is then new, never the last one's.
    search.fill("no such setting, none at all")
    window.page.wait_for_function(
        """() => !/^1 Setting Found/.test((document.querySelector(
             '.settings-editor .settings-count-widget') || {}).textContent || '')"""
    )
    search.fill(f"@id:{key}")  # that setting alone (its key is in others' descriptions)
    window.page.wait_for_function(
        """key => { const rows = [...document.querySelectorAll(
             '.settings-editor .setting-item-contents[data-key]')];
           const count = document.querySelector('.settings-editor .settings-count-widget');
           return rows.length === 1 && rows[0].getAttribute('data-key') === key
             && count && /^1 Setting Found/.test(count.textContent || ''); }""",
        arg=key,
    )
    box = window.page.locator(f".settings-editor input[aria-label='{key}']")
    box.wait_for(state="visible")
    box.click()
    window.page.wait_for_function(
        "key => document.activeElement && document.activeElement.getAttribute('aria-label') === key",
        arg=key,
    )
    return box


def held(file: Path, key: str) -> object:
    """The value of ``key`` in the JSON file (None while the file or the key is not there, or
    while VS Code is writing it: it empties the file, then writes it whole)."""
    try:
        return json.loads(file.read_text()).get(key)
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def runs_standing(server: CodeServer, root: Path) -> dict[str, dict[str, Any]]:
    """Each run of the workspace as ``status --runs --json`` says it (what the RUNS view
    reads), by trace id."""
    done = server.cli("status", "--runs", "--json", "-w", str(root))
    assert done.returncode == 0, done.stderr
    return {run["traceId"]: run for run in json.loads(done.stdout)["runs"]}


def start_time(iso: str) -> str:
    """A run's start as the RUNS view shows it: in the local time zone (the editor's is this
    machine's), to the second."""
    at = datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone()
    return at.strftime("%Y-%m-%d %H:%M:%S")


def run_duration(started: str, ended: str) -> str:
    """How long a run took, as the RUNS view says it (42s, 6m 40s, 1h 02m)."""
    seconds = (
        datetime.fromisoformat(ended.replace("Z", "+00:00"))
        - datetime.fromisoformat(started.replace("Z", "+00:00"))
    ).total_seconds()
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    whole = int(seconds + 0.5)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m {whole % 60}s"
    return f"{whole // 3600}h {whole % 3600 // 60:02d}m"
