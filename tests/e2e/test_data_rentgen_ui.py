"""Seen where Data.Rentgen's users look: the demo's lineage in its own web UI, in a real browser.

Data.Rentgen's web UI, built from its source and served next to its REST API by
``scripts/data-rentgen.sh ui`` (``scripts/test.sh`` starts it and sets DATA_RENTGEN_UI_URL and
OLX_REQUIRE_DATA_RENTGEN_UI), is opened in Debian's Chromium (headless, driven by Playwright)
after the demo was exported to Data.Rentgen (Data.Rentgen mode, the kafka transport) into a job
namespace of its own, NAMESPACE. The page is read the way a person reads it, from the link
docs/data-rentgen.md gives (``scripts/data-rentgen.sh link JOB``: the job's page at its runs since
the first month Data.Rentgen holds; its own default, the last week, holds none of the demo's):
logged in (any name) in a fresh browser, the link opened, the runs of one pipeline, PIPELINE,
are there, each with its trace id and outcome; its Lineage tab then draws the pipeline's
lineage at the granularity of jobs at once (no Since to move, no Build Graph to press): every job
and dataset it shows, and every arrow (a read, a write, a stage under its pipeline), is checked
against the events the export sends (its dry run). The pictures are
docs/data-rentgen-runs-screenshot.png and docs/data-rentgen-lineage-screenshot.png.

No request leaves the machine: the login page's background picture (unsplash.com, unreachable
here) is refused as an offline machine refuses it, and any other request to the outside fails
the test.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import pytest
from confluent_kafka.admin import AdminClient
from helpers import DEMO, ROOT, USERS_HOME, run_cli
from rentgen import STATUS, DataRentgen, bootstrap, location, settle, shared_topic, when
from support.chromium import chromium, require
from support.screenshot import renew

pytestmark = pytest.mark.e2e

PIPELINE = "customer-360"
NAMESPACE = "acme-analytics-ui"
"""The job namespace of this module's export, which no other test uses: the same in every run,
so that the picture is too (exporting the demo again changes nothing in Data.Rentgen)."""
SCREENSHOT = ROOT / "docs" / "data-rentgen-lineage-screenshot.png"
RUNS_SCREENSHOT = ROOT / "docs" / "data-rentgen-runs-screenshot.png"
VIEWPORT = {"width": 2560, "height": 1000}
"""Wide: the graph is drawn to fit the page, and a pipeline's lineage is a long row."""
OUTSIDE_REFUSED = {"source.unsplash.com"}
PAGE_TIMEOUT_MS = 180_000
"""How long any wait for the page lasts before the test fails (a busy machine is slow)."""

Node = tuple[str, str, str]
"""(JOB or DATASET, its location scheme://name, its name)"""
Edge = tuple[Node, Node, str]
"""(from, to, reads|writes|parent)"""


@pytest.fixture(scope="module")
def ui(rentgen: DataRentgen) -> str:
    """Data.Rentgen's web UI, answering and passing /v1/ on to the REST API the tests use (where
    scripts/services.sh says, DATA_RENTGEN_UI_URL)."""
    url = os.environ.get("DATA_RENTGEN_UI_URL", "http://127.0.0.1:53000").rstrip("/")
    try:
        with httpx.Client(base_url=url, timeout=60) as http:
            page, api = http.get("/jobs"), http.get("/v1/users/me")
    except httpx.HTTPError as exc:
        require(
            "OLX_REQUIRE_DATA_RENTGEN_UI",
            f"no Data.Rentgen web UI at {url} ({exc}); start it with "
            "scripts/data-rentgen.sh ui, or run the whole suite with scripts/test.sh",
        )
    if page.status_code != 200 or '<div id="root">' not in page.text or api.status_code != 401:
        pytest.fail(
            f"{url} is not Data.Rentgen's web UI in front of its API (GET /jobs: "
            f"{page.status_code}, GET /v1/users/me: {api.status_code})"
        )
    return url


@pytest.fixture(scope="module")
def exported(
    rentgen: DataRentgen, rentgen_kafka: AdminClient, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, list[dict[str, Any]]]:
    """The demo exported to Data.Rentgen into a namespace of its own: (namespace, events)."""
    namespace = NAMESPACE
    topic = shared_topic(rentgen_kafka)
    folder = tmp_path_factory.mktemp("rentgen-ui")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")},
        "OPENLINEAGE_TRANSPORT": "kafka",
        "OPENLINEAGE_SERVER": "data-rentgen",
        "OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS": bootstrap(),
        "OPENLINEAGE_KAFKA_TOPIC": topic,
        "OPENLINEAGE_NAMESPACE": namespace,
        "OPENLINEAGE_EXPORT_CONFIG_DIR": str(folder / "config"),
        "OPENLINEAGE_EXPORT_STATE_DIR": str(folder / "state"),
    }
    out = folder / "events.jsonl"
    dry = run_cli("export", "--dry-run", "-w", str(DEMO), "-o", str(out), "-q", env=env)
    assert dry.returncode == 0, dry.stderr
    sent = run_cli("export", "-w", str(DEMO), "-q", env=env)
    assert sent.returncode == 0, sent.stderr + sent.stdout
    settle(rentgen, rentgen_kafka, topic)
    return namespace, [json.loads(line) for line in out.read_bytes().splitlines()]


def lineage_sent(events: list[dict[str, Any]], pipeline: str) -> tuple[set[Node], set[Edge]]:
    """The jobs and datasets of ``pipeline`` and the arrows between them, as the events say."""
    nodes: set[Node] = set()
    edges: set[Edge] = set()
    for event in events:
        parent = event["run"]["facets"].get("parent")
        job: Node = ("JOB", event["job"]["namespace"], event["job"]["name"])
        if event["job"]["name"] == pipeline:
            nodes.add(job)
        if parent is None or parent["job"]["name"] != pipeline:
            continue
        nodes.add(job)
        edges.add((("JOB", parent["job"]["namespace"], pipeline), job, "parent"))
        for direction, datasets in (("reads", event["inputs"]), ("writes", event["outputs"])):
            for d in datasets:
                dataset: Node = ("DATASET", location(d["namespace"]), d["name"])
                nodes.add(dataset)
                edges.add(
                    (dataset, job, direction) if direction == "reads" else (job, dataset, direction)
                )
    return nodes, edges


EDGE = re.compile(r"rf__edge-(JOB|DATASET)-(\d+)(?::\w+)?-(-?)>(JOB|DATASET)-(\d+)(?::\w+)?")
"""The test id the UI gives an arrow: ``-->`` from a job to a job under it, ``->`` a read or
a write (``:left``/``:right`` name the side of a node it meets)."""


def lineage_shown(page: Any, rentgen: DataRentgen) -> tuple[set[Node], set[Edge]]:
    """The jobs, datasets and arrows the page draws. A node shows its kind, its name (a
    dataset's path name only as its last parts, ``.../dir/name``) and its location; a dataset's full name
    is looked up by the id the page gives it."""
    nodes: dict[str, Node] = {}
    for node_id, text in page.eval_on_selector_all(
        ".react-flow__node", "els => els.map(e => [e.dataset.id, e.innerText])"
    ):
        kind, _, number = node_id.replace("-CONTAINER", "").rpartition("-")
        label, shown_location = text.splitlines()[-2:]
        name = label
        if kind == "DATASET":
            (dataset,) = rentgen.get("/v1/datasets", dataset_id=[number])["items"]
            name = dataset["data"]["name"]
            assert label == name or (label.startswith(".../") and f"/{name}".endswith(label[3:])), (
                label,
                name,
            )
        nodes[f"{kind}-{number}"] = (kind, shown_location, name)
    edges: set[Edge] = set()
    for test_id in page.eval_on_selector_all(
        ".react-flow__edge", "els => els.map(e => e.dataset.testid)"
    ):
        found = EDGE.fullmatch(test_id)
        assert found is not None, test_id
        source, parent, target = found[1] + "-" + found[2], found[3], found[4] + "-" + found[5]
        kind = "parent" if parent else "reads" if source.startswith("DATASET") else "writes"
        edges.add((nodes[source], nodes[target], kind))
    return set(nodes.values()), edges


@pytest.fixture
def browser(ui: str, tmp_path: Path) -> Iterator[tuple[Any, set[str]]]:
    """A page in a fresh profile, and the outside hosts it tried to reach (all refused)."""
    outside: set[str] = set()

    def refuse(route: Any) -> None:
        outside.add(urlsplit(route.request.url).hostname or route.request.url)
        route.abort("internetdisconnected")

    with chromium(tmp_path / "profile", VIEWPORT) as context:
        context.set_default_timeout(PAGE_TIMEOUT_MS)
        context.route(re.compile(r"^(?!" + re.escape(ui) + r"/).*"), refuse)
        yield context.new_page(), outside


def log_in(page: Any) -> None:
    """Logs in on the login page the UI shows (any name and password)."""
    page.fill("input[name=username]", "olx-e2e")
    page.fill("input[name=password]", "any")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: "/login" not in url)


def job_link(job: str, where: str) -> str:
    """What docs/data-rentgen.md has a person run for the link to a job's page."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "data-rentgen.sh"), "link", job, where],
        env={**os.environ, "HOME": str(USERS_HOME)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def runs_sent(events: list[dict[str, Any]], job: str) -> dict[str, str]:
    """The runs of ``job`` the events tell of: trace id (the run's external id) -> the status
    its last event leaves it in."""
    runs: dict[str, str] = {}
    for event in events:
        if event["job"]["name"] == job:
            external = event["run"]["facets"]["dataRentgen_run"]["external_id"]
            runs[external] = STATUS[event["eventType"]]
    return runs


def test_the_docs_link_shows_a_jobs_runs_and_its_lineage_draws_at_once(
    ui: str,
    rentgen: DataRentgen,
    exported: tuple[str, list[dict[str, Any]]],
    browser: tuple[Any, set[str]],
) -> None:
    namespace, events = exported
    expected_runs = runs_sent(events, PIPELINE)
    expected_nodes, expected_edges = lineage_sent(events, PIPELINE)
    assert len(expected_runs) > 1 and set(expected_runs.values()) >= {"SUCCEEDED", "FAILED"}
    where = f"lineage-hub://{namespace}"
    location_id = rentgen.location_id(where)
    (job,) = [
        j
        for j in rentgen.items("/v1/jobs", location_id=[location_id])
        if j["data"]["name"] == PIPELINE
    ]
    link = job_link(PIPELINE, where)
    page_url, _, query = link.partition("?filter=")
    assert page_url == f"{ui}/jobs/{job['id']}/show"
    since = when(json.loads(unquote(query))["since"])
    assert since is not None and since <= min(when(e["eventTime"]) or since for e in events)

    page, outside = browser
    # Logged in first, as the docs say: the login page's way back keeps the link's page, not
    # its filter (react-admin's; the page then shows its default week: "No Runs found").
    page.goto(f"{ui}/")
    log_in(page)
    page.goto(link)
    rows = page.locator(".RaDatagrid-tbody tr")
    page.wait_for_function(
        "n => document.querySelectorAll('.RaDatagrid-tbody tr').length === n",
        arg=len(expected_runs),
    )
    shown = [row.inner_text() for row in rows.all()]
    for external_id, status in expected_runs.items():
        (row,) = [text for text in shown if external_id in text]
        assert status in row.split(), (status, row)
    table = page.locator(".RaDatagrid-root")
    table.scroll_into_view_if_needed()
    renew(page, RUNS_SCREENSHOT, table.screenshot(animations="disabled"))

    page.get_by_role("tab", name="Lineage").click()
    page.wait_for_function(  # drawn once laid out: every node and arrow, or the test fails
        """([nodes, edges]) => document.querySelectorAll('.react-flow__node').length >= nodes &&
             document.querySelectorAll('.react-flow__edge').length >= edges""",
        arg=[len(expected_nodes), len(expected_edges)],
    )
    page.get_by_text(PIPELINE, exact=True).first.wait_for()
    nodes, edges = lineage_shown(page, rentgen)
    assert nodes == expected_nodes
    assert edges == expected_edges
    assert all(n[1] == where for n in nodes if n[0] == "JOB")
    assert outside <= OUTSIDE_REFUSED, outside

    page.locator(".react-flow").scroll_into_view_if_needed()
    boxes = [n.bounding_box() for n in page.locator(".react-flow__node").all()]
    left, top = min(b["x"] for b in boxes) - 24, min(b["y"] for b in boxes) - 24
    right = max(b["x"] + b["width"] for b in boxes) + 24
    bottom = max(b["y"] + b["height"] for b in boxes) + 24
    png = page.screenshot(
        animations="disabled",
        clip={"x": left, "y": top, "width": right - left, "height": bottom - top},
    )
    renew(page, SCREENSHOT, png)
