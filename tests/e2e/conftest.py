"""The real Marquez, as started by scripts/marquez.sh (scripts/test.sh and .ci/run start it); the
real VS Code (code-server) with the extension, one for the session, and windows on it
(tests/support/vscode.py says how they are driven)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from feast_api import Feast, feast_key, feast_url
from helpers import DEMO, ROOT, USERS_HOME
from rentgen import DataRentgen, bootstrap, rest_url
from support.chromium import chromium
from support.vscode import (
    FIRST_USE_MS,
    USER_SETTINGS,
    CodeServer,
    Workbench,
    start_code_server,
    stop_code_server,
)


def _checkout_env() -> None:
    """This checkout's ports and state dirs (scripts/ports.sh) and the services' addresses, where
    scripts/test.sh has not exported them: a test run by pytest alone finds the services this
    checkout's scripts start (read here, before the test modules read them at import)."""
    if "OLX_CHECKOUT_STATE" not in os.environ:
        done = subprocess.run(
            [str(ROOT / "scripts" / "ports.sh")],
            env={**os.environ, "HOME": str(USERS_HOME)},
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            pytest.exit(f"scripts/ports.sh failed:\n{done.stderr}", returncode=1)
        for line in done.stdout.splitlines():
            name, _, value = line.partition("=")
            os.environ.setdefault(name, value)
    env = os.environ
    env.setdefault("MARQUEZ_URL", f"http://127.0.0.1:{env['MARQUEZ_PORT']}")
    env.setdefault("MARQUEZ_WEB_URL", f"http://127.0.0.1:{env['MARQUEZ_WEB_PORT']}")
    env.setdefault("KAFKA_BOOTSTRAP_SERVERS", f"127.0.0.1:{env['KAFKA_PORT']}")
    env.setdefault("DATA_RENTGEN_URL", f"http://127.0.0.1:{env['DATA_RENTGEN_PORT']}")
    env.setdefault("DATA_RENTGEN_UI_URL", f"http://127.0.0.1:{env['DATA_RENTGEN_UI_PORT']}")
    env.setdefault("FEAST_URL", f"http://127.0.0.1:{env['FEAST_PORT']}")


_checkout_env()
MARQUEZ_URL = os.environ["MARQUEZ_URL"]
SHARED = Path(__file__).resolve().parents[3] / "shared"
"""../shared beside the repository, where scripts/marquez.sh finds Marquez's source to build."""


class Marquez:
    """A thin reader of Marquez's own API, to check what the export put there."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, timeout=120)

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(path, params=params)
        response.raise_for_status()
        return response.json()

    def jobs(self, namespace: str) -> dict[str, dict[str, Any]]:
        jobs = self.get(f"/api/v1/namespaces/{quote(namespace, safe='')}/jobs", limit=1000)
        return {job["name"]: job for job in jobs["jobs"]}

    def runs(self, namespace: str, job: str) -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/jobs/{quote(job, safe='')}/runs"
        return self.get(path, limit=1000)["runs"]

    def dataset_version(self, namespace: str, name: str, run_id: str) -> dict[str, Any]:
        """The version of a dataset that the run `run_id` created.

        Read from the dataset's list of versions, which names the run that created each one:
        since Marquez 0.51 (MarquezProject/marquez#2954) `GET .../versions/{version}` takes a
        version's row id (the list's `version`), while a run's `datasetVersionId.version` is
        another, computed id. The list works alike on 0.50 and 0.51.
        """
        path = (
            f"/api/v1/namespaces/{quote(namespace, safe='')}/datasets/"
            f"{quote(name, safe='')}/versions"
        )
        created: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = self.get(path, limit=100, offset=offset)
            created += [
                v for v in page["versions"] if (v.get("createdByRun") or {}).get("id") == run_id
            ]
            offset += len(page["versions"])
            if not page["versions"] or offset >= page["totalCount"]:
                break
        assert len(created) == 1, (namespace, name, run_id, created)
        return created[0]


class MarquezProcess:
    """The Marquez API server scripts/marquez.sh started (its pid file in MARQUEZ_HOME, this
    checkout's): stopped as a deploy stops it (SIGTERM, the JVM's shutdown), started again by
    the script. Its PostgreSQL and web UI stay up (Data.Rentgen keeps its database in the same
    cluster)."""

    def __init__(self) -> None:
        real_home = USERS_HOME  # HOME may be a test's own
        home = Path(os.environ["MARQUEZ_HOME"])
        self.env = {**os.environ, "HOME": str(real_home)}
        self.pid_file = home / "marquez.pid"
        self.stopped = False

    def stop(self) -> None:
        try:
            pid = int(self.pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError) as exc:
            pytest.fail(f"no Marquez started by scripts/marquez.sh to restart ({exc})")
        os.kill(pid, signal.SIGTERM)
        self.stopped = True
        deadline = time.monotonic() + 120
        while Path(f"/proc/{pid}").exists():
            if time.monotonic() > deadline:
                pytest.fail(f"Marquez (pid {pid}) did not end within 120 s of SIGTERM")
            time.sleep(0.05)  # polling a condition, not a premise

    def start(self) -> None:
        script = Path(__file__).resolve().parents[2] / "scripts" / "marquez.sh"
        done = subprocess.run(
            [str(script), "start"], env=self.env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"scripts/marquez.sh start failed:\n{done.stderr}"
        self.stopped = False


@pytest.fixture(scope="session", autouse=True)
def _prepared(services: None) -> None:
    """Every end-to-end test uses what scripts/test.sh prepares beside the tests: it waits."""


@pytest.fixture(scope="session")
def marquez() -> Iterator[Marquez]:
    """The running Marquez; skipped (or failed, under scripts/test.sh) when it is not up."""
    server = Marquez(MARQUEZ_URL)
    try:
        server.get("/api/v1/namespaces")
    except httpx.HTTPError as exc:
        message = (
            f"no Marquez at {MARQUEZ_URL} ({exc}); start it with scripts/marquez.sh "
            "start, or run the whole suite with scripts/test.sh"
        )
        if not any(SHARED.glob("third_party/marquez-*")):
            message += (
                " (Marquez's source, ../shared/third_party/marquez-*, is not here for "
                "scripts/marquez.sh to build: give it MARQUEZ_LIB_DIR, or set MARQUEZ_URL "
                "to a Marquez of your own)"
            )
        if os.environ.get("OLX_REQUIRE_MARQUEZ") == "1":
            pytest.fail(message)
        pytest.skip(message)
    wipe()
    yield server
    server.http.close()


def wipe() -> None:
    """Empty Marquez's tables once per session, so what we read back is what this session sent.

    Marquez keys runs by run id across namespaces, and a UUID trace id *is* the run id, so runs
    left by an earlier session (or another namespace) would be taken for a conflict.
    """
    port = os.environ.get("MARQUEZ_PG_PORT", "55432")
    env = {**os.environ, "PGPASSWORD": "marquez"}
    psql = [
        "psql",
        "-h",
        "127.0.0.1",
        "-p",
        port,
        "-U",
        "marquez",
        "-d",
        "marquez",
        "-Atq",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
    ]
    tables = subprocess.run(
        [
            *psql,
            "select string_agg(quote_ident(tablename), ', ') from pg_tables where "
            "schemaname = 'public' and tablename not like 'flyway%' and "
            "tablename <> 'facet_migration_lock'",
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    subprocess.run([*psql, f"truncate {tables} cascade"], env=env, check=True, capture_output=True)


@pytest.fixture(scope="session")
def empty_marquez(marquez: Marquez) -> Callable[[], None]:
    """Empties Marquez's tables when called: for a module that must read back its export alone
    (and leave an empty Marquez to the tests after it)."""
    return wipe


@pytest.fixture
def namespace() -> str:
    """The demo's job namespace (the workspace name): every e2e test exports the same demo."""
    return "acme-analytics"


# ------------------------------------------------------------------ Data.Rentgen (rentgen.py)


@pytest.fixture(scope="session")
def rentgen() -> DataRentgen:
    """The running Data.Rentgen, logged in; skipped (or failed, under scripts/test.sh) when it
    is not up."""
    try:
        return DataRentgen()
    except httpx.HTTPError as exc:
        message = (
            f"no Data.Rentgen at {rest_url()} ({exc}); start it with "
            "scripts/data-rentgen.sh start, or run the whole suite with scripts/test.sh"
        )
        if os.environ.get("OLX_REQUIRE_DATA_RENTGEN") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def rentgen_kafka() -> AdminClient:
    """The broker Data.Rentgen's consumer reads from."""
    client = AdminClient({"bootstrap.servers": bootstrap(), "log_level": 0})
    try:
        client.list_topics(timeout=5)
    except KafkaException as exc:
        message = f"no Kafka broker at {bootstrap()} ({exc.args[0].str()})"
        if os.environ.get("OLX_REQUIRE_KAFKA") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return client


# ------------------------------------------------------------------ Feast (feast_api.py)


@pytest.fixture(scope="session")
def feast() -> Iterator[Feast]:
    """The running Feast (its OpenLineage consumer), with the key it requires; skipped (or
    failed, under scripts/test.sh) when it is not up. Tests that read it back empty it first."""
    url = feast_url()
    try:
        httpx.get(f"{url}/api/v1/lineage/openlineage/namespaces", timeout=30).raise_for_status()
    except httpx.HTTPError as exc:
        message = (
            f"no Feast at {url} ({exc}); start it with scripts/feast.sh start, or run the "
            "whole suite with scripts/test.sh"
        )
        if os.environ.get("OLX_REQUIRE_FEAST") == "1":
            pytest.fail(message)
        pytest.skip(message)
    server = Feast(url, feast_key())
    yield server
    server.http.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Each phase's report kept on its test (``item.reports["call"]``), so that a fixture's
    teardown can tell a failed test (and leave its evidence: a browser's last picture)."""
    report = yield
    item.__dict__.setdefault("reports", {})[report.when] = report
    return report


# ------------------------------------------------------------------ VS Code (code-server)


@pytest.fixture(scope="session")
def code_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodeServer]:
    """code-server on 127.0.0.1 (a free port) with the extension installed, private state:
    one for the session's editor tests (a test that needs a fresh profile starts its own:
    ``fresh_code_server``)."""
    server = start_code_server(tmp_path_factory.mktemp("vscode"))
    try:
        yield server
    finally:
        stop_code_server(server)


@pytest.fixture
def fresh_code_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Callable[..., CodeServer]]:
    """Starts code-servers of the test's own, each on a fresh profile (nothing installed by
    the extension yet, no setting ever written by VS Code), with more of the environment if
    asked (``extra``); stops them after the test."""
    started: list[CodeServer] = []

    def start(extra: dict[str, str] | None = None) -> CodeServer:
        started.append(start_code_server(tmp_path_factory.mktemp("vscode-fresh"), extra))
        return started[-1]

    try:
        yield start
    finally:
        for server in started:
            stop_code_server(server)


@pytest.fixture(scope="session")
def vscode_browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, with a fresh profile."""
    with chromium(
        tmp_path_factory.mktemp("chromium-profile"),
        {"width": 1400, "height": 900},
        locale="en-US",
        timezone_id="UTC",
    ) as context:
        yield context


@pytest.fixture(scope="session")
def exporter(
    vscode_browser: Any, code_server: CodeServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The extension's first use, once per session (whichever test comes first): it installs
    the tool from the wheel in the .vsix into its private environment, as for a newcomer;
    observed as the answer of OpenLineage: Show Export Status."""
    root = tmp_path_factory.mktemp("first-use") / "acme-analytics"
    shutil.copytree(DEMO, root)
    window = Workbench(vscode_browser, code_server, root)
    try:
        window.command("OpenLineage: Show Export Status")
        window.page.wait_for_function(
            """() => window.__toasts.find(t => t.includes('31 runs on the trail'))""",
            timeout=FIRST_USE_MS,
        )
    finally:
        window.close()


@pytest.fixture(autouse=True)
def users_own_settings(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test of the session's one code-server ends with the user's settings and
    keybindings as they began (a url typed in the User tab would otherwise stay for the next
    tests, in whatever order they run)."""
    yield
    if "code_server" in request.fixturenames:
        user = request.getfixturevalue("code_server").user_data / "User"
        (user / "settings.json").write_text(json.dumps(USER_SETTINGS))
        (user / "keybindings.json").write_text("[]")


@pytest.fixture
def windows(
    vscode_browser: Any, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[[CodeServer, Path], Workbench]]:
    """Opens VS Code windows of any code-server on folders; closes them after the test. A
    failed test leaves each window's last picture, its path said in the test's report."""
    opened: list[Workbench] = []

    def open_(server: CodeServer, folder: Path) -> Workbench:
        opened.append(Workbench(vscode_browser, server, folder))
        return opened[-1]

    yield open_
    call = getattr(request.node, "reports", {}).get("call")
    if call is not None and call.failed:
        pictures = tmp_path_factory.mktemp("vscode-failed")
        for number, window in enumerate(opened):
            picture = pictures / f"window-{number}.png"
            try:
                picture.write_bytes(window.page.screenshot())
            except Exception as error:  # the page may be gone: the failure says more
                print(f"no picture of window {number}: {error}")
            else:
                print(f"the window as the test failed: {picture}")
    for window in opened:
        window.close()


@pytest.fixture
def open_window(
    windows: Callable[[CodeServer, Path], Workbench], code_server: CodeServer, exporter: None
) -> Callable[[Path], Workbench]:
    """Opens windows of the session's code-server (the tool installed) on folders."""
    return lambda folder: windows(code_server, folder)


@pytest.fixture
def workspace(tmp_path: Path, code_server: CodeServer) -> Callable[..., Path]:
    """A copy of the demo workspace with these settings, set with the CLI."""

    def make(**settings: str) -> Path:
        root = tmp_path / "acme-analytics"
        shutil.copytree(DEMO, root)
        (root / ".workspace" / "settings.json").write_text("{}\n")
        for key, value in settings.items():
            done = code_server.cli("settings", "set", key, value, "-w", str(root))
            assert done.returncode == 0, done.stderr
        return root

    return make
