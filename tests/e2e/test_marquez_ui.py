"""Seen where everyone looks: the demo's export in Marquez's own web UI, in a real browser.

Marquez's web UI, built from its source and served next to the API by
``scripts/marquez.sh start --ui`` (``scripts/test.sh`` starts it and sets MARQUEZ_WEB_URL and
OLX_REQUIRE_MARQUEZ_UI), is opened in Debian's Chromium (headless, driven by Playwright) and read
the way a person reads it: the lineage page of a stage job, the jobs list of the namespace, a
job's side panel, the search box. Every name and state the page shows is checked against the
events the export sends (its dry run).

The demo is exported into a namespace of its own, NAMESPACE, which no other test uses. Marquez
keys runs by run id across namespaces and the demo's UUID trace ids are run ids, and the datasets
(their namespaces are the sources', not the job namespace) are shared with any other export of
the demo: so the module empties Marquez before its export, for a graph that holds this export
only, and again after its tests, for the tests that come next (test_marquez.py exports the same
demo into ``acme-analytics``). Either order, in one session, works.

No request leaves the machine: the page's web fonts (Google Fonts, unreachable here) are refused
as an offline machine refuses them, and every other request to the outside fails the test. The
page then draws with the fonts it carries (Karla, Source Code Pro): every font it loads must
decode (a font Chromium cannot decode is a warning on its console: warnings fail a tab as
errors do), and its job names are drawn in Karla.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
import pytest
from helpers import DEMO, ROOT, SHARED, run_cli
from support.chromium import chromium, require
from support.screenshot import renew

pytestmark = pytest.mark.e2e

WEB_URL = os.environ.get("MARQUEZ_WEB_URL", "http://127.0.0.1:3000").rstrip("/")
NAMESPACE = "acme-analytics-ui"
SCREENSHOT = ROOT / "docs" / "marquez-lineage-screenshot.png"
FONT_HOSTS = {"fonts.googleapis.com", "fonts.gstatic.com"}
STATE = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED", "START": "RUNNING"}
LAYOUT_TIMEOUT_MS = 240_000
"""The graph is laid out in a web worker (elkjs) once the lineage has loaded: seconds on a quiet
machine, much longer on a busy one; this is only how long to wait before failing."""
PAGE_TIMEOUT_MS = 180_000
"""How long any wait for the page (an element, a click) lasts before the test fails: Playwright's
30 s default is exceeded on 2 busy cores while the UI loads its bundle."""

STAGE = "daily-sales.clean"
CHAIN = [
    ("DATASET", "postgres://db.acme.internal:5432", "sales.public.orders"),
    ("JOB", NAMESPACE, "daily-sales.extract"),
    ("DATASET", "workspace://acme-analytics", "data/raw/orders.parquet"),
    ("JOB", NAMESPACE, "daily-sales.clean"),
    ("DATASET", "workspace://acme-analytics", "data/staged/orders_clean.parquet"),
    ("JOB", NAMESPACE, "daily-sales.build_mart"),
    ("DATASET", "bigquery", "acme-analytics.sales_mart.daily_sales"),
    ("JOB", NAMESPACE, "daily-sales.publish"),
    ("DATASET", "s3://acme-reports", "sales/daily_sales.csv"),
]
"""The daily-sales pipeline as data flows through it, named as the events name it."""

Node = tuple[str, str, str]
"""(JOB or DATASET, namespace, name)"""


# ------------------------------------------------------------------ what the events say


@dataclass
class Exported:
    events: list[dict[str, Any]]
    never_run: list[str]

    def graph(self) -> tuple[set[Node], set[tuple[Node, Node]]]:
        """Every job and dataset of the events, and the data-flow edges between them."""
        nodes: set[Node] = set()
        edges: set[tuple[Node, Node]] = set()
        for event in self.events:
            job: Node = ("JOB", event["job"]["namespace"], event["job"]["name"])
            inputs = [("DATASET", d["namespace"], d["name"]) for d in event["inputs"]]
            outputs = [("DATASET", d["namespace"], d["name"]) for d in event["outputs"]]
            if inputs or outputs:
                nodes |= {job, *inputs, *outputs}
            edges |= {(d, job) for d in inputs} | {(job, d) for d in outputs}
        return nodes, edges

    def runs(self, job: str) -> dict[str, tuple[str, str]]:
        """run id -> (when it started, the state its last event leaves it in), for ``job``."""
        runs: dict[str, tuple[str, str]] = {}
        for event in self.events:
            if event["job"]["name"] == job:
                run_id = event["run"]["runId"]
                started = runs.get(run_id, (event["eventTime"], ""))[0]
                if event["eventType"] == "START":
                    started = event["eventTime"]
                runs[run_id] = (started, STATE[event["eventType"]])
        return runs

    def jobs(self) -> dict[str, str]:
        """Every job (pipelines and stages) -> the state of its latest run."""
        names = {event["job"]["name"] for event in self.events}
        latest = {}
        for name in names:
            runs = self.runs(name).values()
            latest[name] = max(runs, key=lambda run: _utc(run[0]))[1]
        return latest

    def facet(self, job: str, name: str) -> dict[str, Any]:
        """The run facet ``name`` of the latest run of ``job``."""
        runs = self.runs(job)
        latest = max(runs, key=lambda run_id: _utc(runs[run_id][0]))
        (facet,) = {
            json.dumps(e["run"]["facets"][name], sort_keys=True)
            for e in self.events
            if e["run"]["runId"] == latest and name in e["run"].get("facets", {})
        }
        return dict(json.loads(facet))


def _utc(when: str) -> str:
    return datetime.fromisoformat(when.replace("Z", "+00:00")).astimezone(UTC).isoformat()


@pytest.fixture(scope="module")
def web(marquez: Any) -> str:
    """Marquez's web UI, answering and passing /api/v1 on to the Marquez the tests use."""
    why = None
    try:
        with httpx.Client(base_url=WEB_URL, timeout=120) as http:
            page = http.get("/lineage/job/x/y")
            api = http.get("/api/v1/namespaces")
        if page.status_code != 200 or '<div id="root">' not in page.text:
            why = f"{WEB_URL}/lineage/job/x/y answers {page.status_code}, not Marquez's page"
        elif api.status_code != 200:
            why = f"{WEB_URL}/api/v1/namespaces answers {api.status_code}: no API behind the UI"
    except httpx.HTTPError as exc:
        why = f"{exc}"
    if why is not None:
        message = (
            f"no Marquez web UI at {WEB_URL} ({why}); start it with scripts/marquez.sh "
            "start --ui (and set MARQUEZ_WEB_URL), or run the whole suite with "
            "scripts/test.sh"
        )
        if not any(SHARED.glob("third_party/marquez-*/web/package.json")):
            message += (
                " (the UI's source, ../shared/third_party/marquez-*/web, is not here "
                "for scripts/marquez.sh to build)"
            )
        require("OLX_REQUIRE_MARQUEZ_UI", message)
    return WEB_URL


@pytest.fixture(scope="module")
def demo(
    marquez: Any,
    web: str,
    empty_marquez: Callable[[], None],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Exported]:
    """The demo, exported into NAMESPACE of an emptied Marquez; Marquez emptied again after."""
    home = tmp_path_factory.mktemp("ui-export")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    env.update(
        {
            "HOME": str(home),
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(home / "config"),
            "OPENLINEAGE_EXPORT_STATE_DIR": str(home / "state"),
            "OPENLINEAGE_URL": marquez.url,
            "OPENLINEAGE_NAMESPACE": NAMESPACE,
        }
    )
    out = home / "events.jsonl"
    dry = run_cli("export", "--dry-run", "-w", str(DEMO), "-o", str(out), "-q", env=env)
    assert dry.returncode == 0, dry.stderr
    events = [json.loads(line) for line in out.read_text().splitlines()]
    empty_marquez()
    result = run_cli("export", "-w", str(DEMO), "--json", env=env)
    assert result.returncode == 0, result.stderr + result.stdout
    report = json.loads(result.stdout)
    assert report["runs"]["sent"] == report["runs"]["total"] == 31
    assert report["events"]["sent"] == len(events)
    yield Exported(events, report["neverRun"])
    empty_marquez()


# ------------------------------------------------------------------ in a real browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Debian's Chromium, headless, with a fresh profile; skips (says why) where it is missing."""
    with chromium(
        tmp_path_factory.mktemp("chromium-profile"),
        {"width": 1280, "height": 800},
        locale="en-US",
        timezone_id="UTC",
    ) as context:
        yield context


ALERTS = """
window.__alerts = [];
new MutationObserver(() => {
  for (const el of document.querySelectorAll('[role=alert], .MuiSnackbarContent-message')) {
    const text = el.textContent.trim();
    if (text && !window.__alerts.includes(text)) window.__alerts.push(text);
  }
}).observe(document, {childList: true, subtree: true, characterData: true});
"""
"""Records every message the UI shows in its snackbar (it hides them after 5 s)."""


class Tab:
    """A tab on Marquez's UI, with everything the page said, asked for and showed as an error."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page()
        self.page.set_default_timeout(PAGE_TIMEOUT_MS)
        self.errors: list[str] = []
        self.outside: set[str] = set()
        self.page.add_init_script(ALERTS)
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on(
            "response",
            lambda r: self.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
        )
        here = re.escape(urlsplit(WEB_URL).netloc)
        self.page.route(re.compile(rf"^https?://(?!{here}/)"), self._offline)

    def _offline(self, route: Any) -> None:
        """Nothing leaves the machine: the web fonts fail as they do offline."""
        self.outside.add(urlsplit(route.request.url).hostname or route.request.url)
        route.abort("internetdisconnected")

    def _console(self, message: Any) -> None:
        # Warnings too: a font the page cannot decode is one ("Failed to decode downloaded
        # font", then OTS's reason), and the page is drawn in another font.
        if message.type not in ("error", "warning"):
            return
        source = urlsplit(message.location.get("url") or "").hostname
        if source in self.outside:
            # A request this tab aborted (the web fonts, unreachable here: the page falls back
            # to the fonts it carries), said in Chromium's words, which are its own.
            return
        self.errors.append(f"console {message.type}: {message.text} ({message.location})")

    def open(self, path: str) -> None:
        self.page.goto(WEB_URL + path)

    def fonts(self) -> list[dict[str, str]]:
        """Every font face of the page (once those it asked for are loaded or failed): family,
        weight, style and status (unloaded: never used; loaded; error: could not be decoded)."""
        return list(
            self.page.evaluate("""async () => {
              await document.fonts.ready;
              return [...document.fonts].map(f =>
                ({family: f.family, weight: f.weight, style: f.style, status: f.status}));
            }""")
        )

    def check_no_errors(self) -> None:
        """No error or warning on the console, no failed request, no error message shown, no
        font that could not be decoded, nothing asked of the internet but the web fonts."""
        alerts = self.page.evaluate("window.__alerts")
        assert (self.errors, alerts) == ([], [])
        assert [face for face in self.fonts() if face["status"] == "error"] == []
        assert self.outside <= FONT_HOSTS

    def close(self) -> None:
        self.check_no_errors()
        self.page.close()

    # -------------------------------------------------------------- the lineage graph

    def wait_for_graph(self, nodes: int) -> None:
        """Until the graph shows at least ``nodes`` nodes, laid out and still for a second (the
        layout comes from a web worker, then the view zooms to fit): a bounded wait."""
        self.page.wait_for_function(
            f"""nodes => {{
          const svg = document.querySelector('[data-testid=zoom-pan-svg]');
          if (!svg || document.querySelector('.MuiLinearProgress-root')) return false;
          const placed = {NODES_JS};
          const zoom = svg.querySelector('[data-testid=zoom-pan-group]');
          const now = (zoom && zoom.getAttribute('transform')) + ' ' +
            placed.map(g => g.getAttribute('transform')).join();
          if (placed.length < nodes || now !== window.__graph) {{
            window.__graph = now;
            window.__since = Date.now();
            return false;
          }}
          return Date.now() - window.__since > 1000;
        }}""",
            arg=nodes,
            polling=250,
            timeout=LAYOUT_TIMEOUT_MS,
        )

    def graph(self) -> tuple[dict[Node, dict[str, float]], list[dict[str, Any]]]:
        """The nodes drawn, named by their tooltips (as a person hovering them reads them; the
        nodes' own labels are cut at 16 characters), with their boxes on screen; and the edges
        drawn, with their ends on screen."""
        svg = self.page.locator("[data-testid=zoom-pan-svg]")
        boxes = svg.evaluate(f"""svg => {NODES_JS}.map(g => {{
            const r = g.querySelector(':scope > g > rect').getBoundingClientRect();
            const kind = [...g.querySelectorAll('text')].map(t => t.textContent)
              .find(t => t === 'JOB' || t === 'DATASET');
            return {{kind, left: r.left, right: r.right, top: r.top, bottom: r.bottom}};
          }})""")
        labels = svg.locator(LABELS)
        assert labels.count() == len(boxes)
        nodes: dict[Node, dict[str, float]] = {}
        for index in range(labels.count()):
            label = labels.nth(index)
            label.hover()
            tip = self.page.get_by_role("tooltip")
            tip.wait_for()
            lines = [line.strip() for line in tip.inner_text().splitlines() if line.strip()]
            namespace, name = lines[lines.index("Namespace:") + 1], lines[lines.index("Name:") + 1]
            self.page.mouse.move(0, 0)
            tip.wait_for(state="detached")
            spot = label.bounding_box()
            x, y = spot["x"] + spot["width"] / 2, spot["y"] + spot["height"] / 2
            (box,) = [
                b for b in boxes if b["left"] <= x <= b["right"] and b["top"] <= y <= b["bottom"]
            ]
            nodes[(box["kind"], namespace, name)] = box
        assert len(nodes) == len(boxes)
        edges = svg.evaluate("""svg => [...svg.querySelectorAll('polyline')]
          .filter(p => !p.id.endsWith('-animated'))
          .map(p => {
            const m = p.getScreenCTM(), pts = p.points;
            const at = i => new DOMPoint(pts[i].x, pts[i].y).matrixTransform(m);
            const a = at(0), b = at(pts.length - 1);
            return {from: [a.x, a.y], to: [b.x, b.y]};
          })""")
        return nodes, edges


NODES_JS = """[...svg.querySelectorAll('g[transform^="translate("]:not([data-testid])')]
  .filter(g => g.querySelector(':scope > g > rect'))"""
"""The node groups of the graph (each placed by a translate, its drawing's first rect its box)."""
LABELS = (
    "xpath=.//*[local-name()='text'][preceding-sibling::*[local-name()='text'][1]"
    "[normalize-space(.)='JOB' or normalize-space(.)='DATASET']]"
)
"""The nodes' name labels: the text after JOB or DATASET."""


def drawn_edges(
    nodes: dict[Node, dict[str, float]], edges: list[dict[str, Any]]
) -> set[tuple[Node, Node]]:
    """Each edge as the node its line leaves from the right and the node it enters from the
    left: data flows left to right, as in Marquez's own lineage view."""

    def touching(point: list[float], side: str) -> Node:
        x, y = point
        (node,) = [
            n
            for n, b in nodes.items()
            if abs(b[side] - x) <= 4 and b["top"] - 1 <= y <= b["bottom"] + 1
        ]
        return node

    return {(touching(e["from"], "right"), touching(e["to"], "left")) for e in edges}


def test_a_stage_jobs_lineage_page_shows_the_pipelines_chain(browser: Any, demo: Exported) -> None:
    expected_nodes, expected_edges = demo.graph()
    assert set(CHAIN) <= expected_nodes
    tab = Tab(browser)
    tab.page.set_viewport_size({"width": 1280, "height": 640})  # the screenshot's
    tab.open(f"/lineage/job/{quote(NAMESPACE, safe='')}/{quote(STAGE, safe='')}")
    tab.wait_for_graph(len(CHAIN))
    nodes, edges = tab.graph()

    # Every node named as the events name it, every line an edge of the events' data flow...
    assert set(nodes) <= expected_nodes, set(nodes) - expected_nodes
    drawn = drawn_edges(nodes, edges)
    assert len(drawn) == len(edges)
    assert drawn <= expected_edges, drawn - expected_edges
    # ... and the pipeline's whole chain there, in data-flow order, left to right.
    assert set(CHAIN) <= set(nodes)
    for before, after in pairwise(CHAIN):
        assert (before, after) in drawn, (before, after)
        assert nodes[before]["right"] < nodes[after]["left"], (before, after)
    # What else the page shows is what the events connect to the chain: another stage of the
    # pipeline's inputs (sales.public.stores), another pipeline reading its mart.
    chain_stages = {n for n in expected_nodes if n[0] == "JOB" and n[2].startswith("daily-sales.")}
    assert chain_stages <= set(nodes)
    for node in set(nodes) - set(CHAIN):
        assert any(node in edge and set(edge) & set(nodes) - {node} for edge in drawn), node

    # The search box's placeholder types three words, then rests on the last one.
    tab.page.get_by_text("Dataset columns…", exact=True).wait_for()
    png = tab.page.screenshot(animations="disabled")  # the edges' marching ants stand still
    assert len(png) < 400_000
    renew(tab.page, SCREENSHOT, png)
    tab.close()


def test_the_page_draws_job_names_in_the_font_it_carries(browser: Any, demo: Exported) -> None:
    """Google's fonts unreachable, the page falls back to its own Karla: loaded from the build
    (a font file, decoded), and the one the graph's job names are drawn in."""
    tab = Tab(browser)
    tab.open(f"/lineage/job/{quote(NAMESPACE, safe='')}/{quote(STAGE, safe='')}")
    tab.wait_for_graph(len(CHAIN))
    label = tab.page.locator("[data-testid=zoom-pan-svg]").locator(LABELS).first
    family = label.evaluate("text => getComputedStyle(text).fontFamily")
    assert family.split(",")[0].strip("\"' ") == "Karla", family
    karla = [face for face in tab.fonts() if face["family"].strip("\"'") == "Karla"]
    statuses = {face["status"] for face in karla}
    assert "loaded" in statuses and "error" not in statuses, karla
    assert tab.page.evaluate("document.fonts.check('12px Karla')")
    tab.close()


def test_the_jobs_list_shows_every_job_with_its_latest_runs_state(
    browser: Any, demo: Exported
) -> None:
    expected = demo.jobs()
    assert set(expected.values()) == {"COMPLETED", "RUNNING"}  # no job's latest run failed
    assert expected["customer-360"] == expected["customer-360.ingest_events"] == "RUNNING"
    tab = Tab(browser)
    tab.open("/jobs")
    page = tab.page
    page.locator("#namespace-select").click()  # a person picks the namespace
    page.get_by_role("option", name=NAMESPACE, exact=True).click()
    page.get_by_text(f"{len(expected)} total", exact=True).wait_for()
    shown: dict[str, str] = {}
    while True:
        rows = page.locator("tbody tr")
        rows.first.wait_for()
        for cells in rows.evaluate_all(
            "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.innerText))"
        ):
            name, namespace, _updated, _duration, state = cells
            assert namespace == NAMESPACE
            shown[name] = state.strip()
        following = page.get_by_label("Next page").locator("button")
        if following.is_disabled():
            break
        following.click()
        page.wait_for_function(
            "first => document.querySelector('tbody tr td').innerText !== first",
            arg=rows.first.locator("td").first.inner_text(),
        )
    assert shown == expected
    tab.close()


def test_a_jobs_side_panel_shows_its_parent_job_its_engine_and_its_runs(
    browser: Any, demo: Exported
) -> None:
    job = "daily-sales.extract"
    tab = Tab(browser)
    tab.open(f"/lineage/job/{quote(NAMESPACE, safe='')}/{quote(STAGE, safe='')}")
    tab.wait_for_graph(len(CHAIN))
    page = tab.page
    # A person clicks the job's node.
    page.locator("[data-testid=zoom-pan-svg] text", has_text=job[:16]).click()
    panel = page.locator(".MuiDrawer-paperAnchorRight")
    panel.get_by_text("RUN FACETS").wait_for()
    lines = [line.strip() for line in panel.inner_text().splitlines() if line.strip()]
    assert lines[0] == job
    assert lines[lines.index("PARENT JOB") + 1] == "daily-sales"
    engine = demo.facet(job, "processing_engine")
    assert engine["name"] and engine["version"]
    facets = lines[lines.index("RUN FACETS") :]
    shown = facets[facets.index('"processing_engine"') :]
    shown = shown[: shown.index("}")]
    for key in ("name", "version"):
        assert f'"{key}":string"{engine[key]}"' in shown, (key, shown)

    # Its run history: every run in the state its last event left it, a failed one as failed.
    panel.get_by_role("tab", name="Run history").click()
    runs = demo.runs(job)
    rows = panel.locator("tbody tr")
    rows.nth(len(runs) - 1).wait_for()
    assert len({run_id[:8] for run_id in runs}) == len(runs)
    history = {}
    for cells in rows.evaluate_all(
        "rows => rows.map(r => [...r.querySelectorAll('td')].map(td => td.innerText))"
    ):
        history[cells[0].strip().removesuffix("...")] = cells[1].strip()
    assert history == {run_id[:8]: state for run_id, (_, state) in runs.items()}
    assert "FAILED" in history.values()
    tab.close()


def test_a_never_run_pipeline_appears_nowhere(browser: Any, demo: Exported) -> None:
    assert demo.never_run == ["churn-model"]
    tab = Tab(browser)
    tab.open("/")
    page = tab.page
    # Each word is put in the search box whole (pasted): the UI asks the API once per change
    # and drops the changes made while a search is in flight, so a word typed key by key may
    # show the results of its first letters.
    search = page.locator("#searchBar")
    search.fill("daily-sales")  # what ran is found...
    page.get_by_text("build_mart", exact=True).wait_for()
    search.fill("churn")  # ... what never ran is not
    page.get_by_text("No Results", exact=True).wait_for()
    assert page.get_by_text(re.compile("churn", re.IGNORECASE)).count() == 0
    tab.open("/jobs")
    page.locator("#namespace-select").click()
    page.get_by_role("option", name=NAMESPACE, exact=True).click()
    page.get_by_text(f"{len(demo.jobs())} total", exact=True).wait_for()
    assert "churn" not in page.locator("tbody").inner_text()
    tab.close()


def test_the_readme_shows_a_newcomer_where_to_look() -> None:
    """The README's "Where to look" points at this very page, and shows it."""
    readme = (ROOT / "README.md").read_text()
    assert f"http://127.0.0.1:3000/lineage/job/acme-analytics/{STAGE}" in readme
    assert f"]({SCREENSHOT.relative_to(ROOT)})" in readme
