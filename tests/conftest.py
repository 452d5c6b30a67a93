"""Shared fixtures: real workspaces on disk, written the way the Lineage hub writes them."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from helpers import WorkspaceMaker


@pytest.fixture(autouse=True)
def private_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own HOME: the secrets store and the ledger never touch the real one."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "OPENLINEAGE_EXPORT_CONFIG_DIR",
                 "OPENLINEAGE_EXPORT_STATE_DIR"):
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


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under ``OLX_NO_SKIPS=1`` (scripts/test.sh sets it in CI) a skipped test fails the run:
    in CI every proof runs, and a skipped one is a missing one."""
    import os

    if os.environ.get("OLX_NO_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter is not None else 0
    if skipped and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if reporter is not None:
            reporter.write_line(f"{skipped} skipped: in CI every test must run (OLX_NO_SKIPS=1)",
                                red=True)
