"""Shared fixtures: real workspaces on disk, written the way the Lineage hub writes them."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import DEMO, WorkspaceMaker, run_record


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME: the secrets store and the ledger never touch the real one."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "OPENLINEAGE_EXPORT_CONFIG_DIR",
        "OPENLINEAGE_EXPORT_STATE_DIR",
    ):
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def make_workspace(tmp_path: Path) -> Callable[..., WorkspaceMaker]:
    """Factory: a fresh workspace folder under tmp_path."""
    counter = iter(range(1000))

    def make(name: str | None = None) -> WorkspaceMaker:
        return WorkspaceMaker(tmp_path / (name or f"ws{next(counter)}"))

    return make


@pytest.fixture
def ws(make_workspace: Callable[..., WorkspaceMaker]) -> WorkspaceMaker:
    """One fresh workspace with the test graph and no trail yet."""
    return make_workspace()


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    """A copy of the demo workspace (31 runs, 236 events), free to reconfigure."""
    root = tmp_path / "acme-analytics"
    shutil.copytree(DEMO, root)
    return root


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """An export's environment with secrets (a file store) and the ledger in private folders
    under tmp: never the real ones. (Modules that need another define their own.)"""
    return {
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(tmp_path / "config"),
        "OPENLINEAGE_EXPORT_SECRETS": "file",
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
    }


@pytest.fixture
def one_run(ws: WorkspaceMaker) -> Path:
    """A workspace with one editor run of four events."""
    ws.segment("000001.jsonl", [run_record("only-run")])
    return ws.root


@pytest.fixture(params=["curl", "aiohttp", "httpx"])
def client_kind(request: pytest.FixtureRequest) -> str:
    """Each HTTP client a delivery promise must hold for: ours (libcurl, the default), or a
    host's own aiohttp session or httpx client (``test_deliver_http.export(client=...)``)."""
    return str(request.param)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under ``OLX_NO_SKIPS=1`` (scripts/test.sh sets it in CI) a skipped test fails the run:
    in CI every proof runs, and a skipped one is a missing one."""
    if os.environ.get("OLX_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if reporter is not None:
            reporter.write_line(
                f"{skipped} skipped: in CI every test must run (OLX_NO_SKIPS=1)", red=True
            )


# ------------------------------------------------------------------ services (scripts/test.sh)
# What the tests get from scripts/services.sh, and who waits for what, is written once, in its
# header (scripts/services.sh --help): DIR/log, DIR/env, DIR/status; DIR is OLX_SERVICES.


def _services_folder() -> Path | None:
    """DIR, where scripts/services.sh, started by scripts/test.sh beside the tests, says how it
    went; None without scripts/test.sh."""
    folder = os.environ.get("OLX_SERVICES")
    return Path(folder) if folder else None


def _running(pid: int) -> bool:
    """Whether process ``pid`` is still at work (a zombie, ended but not yet reaped, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _services_status(folder: Path) -> str | None:
    """DIR/status, waited for as long as scripts/services.sh (OLX_SERVICES_PID) is at work (the
    first time on a machine, minutes of builds); None when it ended without writing it."""
    status = folder / "status"
    pid = int(os.environ.get("OLX_SERVICES_PID", "0"))
    while not status.exists() and _running(pid):
        time.sleep(0.5)
    return status.read_text().strip() if status.exists() else None


@pytest.fixture(scope="session")
def services() -> None:
    """What the end-to-end and browser tests use (Marquez and its web UI, Kafka, DataHub's
    converters, Chromium, code-server and the extension's .vsix), which scripts/test.sh has
    scripts/services.sh prepare while the other tests run: waited for here; when it is all
    there, DIR/env is taken into this session's environment, else the test fails with the end
    of DIR/log. Without scripts/test.sh, the services already running are used as they are."""
    folder = _services_folder()
    if folder is None:
        return
    log = folder / "log"
    if _services_status(folder) != "0":
        tail = (
            "".join(log.read_text(errors="replace").splitlines(keepends=True)[-40:])
            if log.exists()
            else "(no log)"
        )
        pytest.fail(
            f"scripts/services.sh could not prepare what this test needs; its log "
            f"({log}) ends:\n{tail}",
            pytrace=False,
        )
    for line in (folder / "env").read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            os.environ[key] = value


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that wait for the services run last, so that the others run while the services
    are prepared. After any shuffle (pytest-random-order, which scripts/test.sh turns on): the
    sort is stable, so each of the two parts keeps the shuffled order."""
    items.sort(key=lambda item: "services" in getattr(item, "fixturenames", ()))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int) -> None:
    """What scripts/services.sh said (build and start times), whole, before pytest's closing
    line: waited for (scripts/test.sh waits for it after pytest anyway), unless the run was
    interrupted."""
    folder = _services_folder()
    if folder is None:
        return
    if exitstatus != pytest.ExitCode.INTERRUPTED:
        _services_status(folder)
    log = folder / "log"
    if log.exists():
        terminalreporter.section("services (scripts/services.sh)")
        for line in log.read_text(errors="replace").splitlines():
            terminalreporter.write_line(line)
