"""The HTML report: collected in bounded memory, written escaped, self-contained and
deterministic, and read in a real browser (Debian's Chromium, driven by Playwright) the way a
person reads it: the graph's nodes and arrows, the run history, what was left out and why.

The browser tests skip, saying why, where Chromium is missing; ``scripts/test.sh`` installs it
(``scripts/browser.sh``) and sets OLX_REQUIRE_BROWSER, and then they must run.
"""

from __future__ import annotations

import io
import os
import random
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fakeserver import Answer, FakeServer
from helpers import DEMO, GRAPH, ROOT, WorkspaceMaker, cli_env, run_cli, run_record, stage_record
from hubwriter.synth import write_workspace
from support import chromium

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import ExportReport, RunResult
from openlineage_export.html_report import ReportCollector, render_report, write_report
from openlineage_export.html_report import collector as collector_mod
from openlineage_export.html_report import page as page_mod
from openlineage_export.html_report.chart import count
from openlineage_export.html_report.drawing import LAYOUT_BUDGET, Box, layout_size
from openlineage_export.html_report.lineage import Sharing, views

SCREENSHOT = ROOT / "docs" / "report-screenshot.png"
FAILED_DEMO_RUN = "ced4662d-90fa-4e27-840f-13c79058ada7"  # daily-sales, extract retried, failed
PAYLOAD = "<script>window.__pwned=1</script>"
ERROR_PAYLOAD = '<img src=x onerror="window.__pwned=2"> & <b>bold</b>'


class Discard(io.RawIOBase):
    """A dry run's event sink that keeps nothing (a 100k-run trail makes ~1 GB of events)."""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return len(data)


def dry_run(
    workspace: Path,
    collector: ReportCollector | None = None,
    results: list[RunResult] | None = None,
) -> ExportReport:
    def on_run(result: RunResult) -> None:
        if collector is not None:
            collector.add(result)
        if results is not None:
            results.append(result)

    return run_export(
        ExportRequest(workspace=workspace, dry_run=True, output=Discard(), on_run=on_run)
    )


def cli(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The CLI as users run it, in a clean environment (ledger and HOME under ``cwd``)."""
    return run_cli(*map(str, args), env=cli_env(cwd, **(env or {})), cwd=cwd, timeout=timeout)


def demo_copy(tmp_path: Path) -> Path:
    """The demo workspace plus one bad line, in a segment of its own (a status nobody knows)."""
    root = tmp_path / "acme-analytics"
    shutil.copytree(DEMO, root)
    (root / ".workspace" / "lineage" / "audit" / "000009.jsonl").write_text(
        '{"kind":"run","traceId":"run-20261105-0099","pipeline":"daily-sales",'
        '"status":"exploded","startedAt":"2026-11-05T09:00:00Z","stages":[]}\n'
    )
    return root


def hostile_workspace(ws: WorkspaceMaker) -> WorkspaceMaker:
    """Names and messages from the trail that are markup: they must stay text."""
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                "run-ok",
                stages=[
                    stage_record(
                        writes=[{"dataset": f"s3://bucket/{PAYLOAD}", "digest": "sha256:cc"}]
                    )
                ],
            ),
            run_record(
                "run-bad",
                status="failed",
                startedAt="2026-11-03T02:00:00Z",
                endedAt="2026-11-03T02:05:00Z",
                stages=[stage_record(status="failed", error={"message": ERROR_PAYLOAD})],
            ),
        ],
    )
    return ws


def require(why: str | None) -> None:
    """Skip, saying why, when a program the test needs is missing; fail instead where
    ``scripts/test.sh`` installed everything (OLX_REQUIRE_BROWSER)."""
    if why is not None:
        chromium.require("OLX_REQUIRE_BROWSER", why)


@pytest.fixture
def dot(services: None) -> None:
    """Graphviz's ``dot``, which draws the report's graph."""
    require(
        None
        if shutil.which("dot")
        else "Graphviz's dot is not installed (apt-get install graphviz, or scripts/browser.sh)"
    )


# ------------------------------------------------------------------ collector and writer


def test_the_collector_keeps_the_most_recent_runs_whatever_the_order(tmp_path: Path) -> None:
    write_workspace(tmp_path / "ws", 600, seed=3, pipelines=4)
    results: list[RunResult] = []
    dry_run(tmp_path / "ws", results=results)
    random.Random(5).shuffle(results)
    collector = ReportCollector()
    for result in results:
        collector.add(result)

    assert sum(h.runs for h in collector.pipelines()) == len(results) == collector.runs
    for history in collector.pipelines():
        mine = [r for r in results if r.run.pipeline == history.job[1]]
        newest = sorted(mine, key=lambda r: (_start(r), r.run.trace_id), reverse=True)
        assert [d.trace_id for d in history.recent] == [
            r.run.trace_id for r in newest[: collector_mod.RECENT_RUNS]
        ]
        older_failures = [
            r
            for r in newest[collector_mod.RECENT_RUNS :]
            if r.run.status in ("failed", "cancelled")
        ]
        assert [d.trace_id for d in history.earlier_failures] == [
            r.run.trace_id for r in older_failures[: collector_mod.RECENT_FAILURES]
        ]
        assert history.kept <= collector_mod.RECENT_RUNS + collector_mod.RECENT_FAILURES
        assert sum(sum(c.values()) for c in history.days.values()) == history.runs
        states = {
            "succeeded": "completed",
            "failed": "failed",
            "cancelled": "aborted",
            "running": "running",
        }
        assert history.states == {
            states[s]: n for s, n in _count(r.run.status for r in mine).items()
        }


def test_the_runs_kept_in_full_are_bounded_across_pipelines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 25 whole translated runs kept per pipeline, with no bound on pipelines: 3,000
    runs of 3,000 pipelines (295 MiB) took 754 MB with --report. Now at most MAX_KEPT_RUNS
    runs and MAX_KEPT_BYTES of their events across pipelines; the page says how many more."""
    monkeypatch.setattr(collector_mod, "MAX_KEPT_RUNS", 30)
    write_workspace(tmp_path / "ws", 600, seed=3, pipelines=4)
    results: list[RunResult] = []
    dry_run(tmp_path / "ws", results=results)
    collector = ReportCollector()
    for result in results:
        collector.add(result)
    histories = collector.pipelines()
    assert len(histories) > 3  # 25 runs each would be kept, unbounded
    details = [d for h in histories for d in (*h.recent, *h.earlier_failures)]
    assert len(details) == sum(h.kept for h in histories) == collector.kept.runs == 30
    assert collector.kept.left_out > 0
    assert sum(h.runs for h in histories) == len(results)
    page = render_report(collector, dry_run(tmp_path / "ws"))
    assert f"{collector.kept.left_out:,} more were counted" in page

    monkeypatch.setattr(collector_mod, "MAX_KEPT_BYTES", 20_000)
    by_size = ReportCollector()
    for result in results:
        by_size.add(result)
    sizes = {r.run.trace_id: sum(map(len, r.run.bodies)) for r in results}
    kept = [d for h in by_size.pipelines() for d in (*h.recent, *h.earlier_failures)]
    assert 0 < sum(sizes[d.trace_id] for d in kept) == by_size.kept.bytes <= 20_000


def test_the_pipelines_kept_and_listed_are_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: one history per pipeline, each listed on the page with at least 3 runs in
    full: 3,000 pipelines made a 7.9 MB page. Now MAX_PIPELINES histories are kept and the
    MAX_PIPELINES_SHOWN busiest listed; the runs of the rest are counted, and said."""
    monkeypatch.setattr(collector_mod, "MAX_PIPELINES", 3)
    monkeypatch.setattr(page_mod, "MAX_PIPELINES_SHOWN", 2)
    write_workspace(tmp_path / "ws", 600, seed=3, pipelines=4)
    collector = ReportCollector()
    report = dry_run(tmp_path / "ws", collector=collector)
    histories = collector.pipelines()
    assert len(histories) == 3
    counted = sum(h.runs for h in histories)
    assert counted + collector.runs_left_out == collector.runs == report.runs_total
    assert collector.runs_left_out > 0 and sum(collector.states.values()) == collector.runs
    page = render_report(collector, report)
    assert page.count('<div class="pipeline" id="pipeline-') == 2
    listed = sum(sorted(h.runs for h in histories)[-2:])
    assert f"{collector.runs - listed:,} runs of more pipeline jobs" in page


def test_days_beyond_the_cap_are_summed_not_kept(
    ws: WorkspaceMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(collector_mod, "MAX_DAYS", 2)
    days = [1, 2, 3, 4, 5, 1]  # the last one comes late, older than every day kept
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                f"run-{i}",
                startedAt=f"2026-11-0{day}T02:00:00Z",
                endedAt=f"2026-11-0{day}T02:05:00Z",
            )
            for i, day in enumerate(days)
        ],
    )
    collector = ReportCollector()
    dry_run(ws.root, collector)
    (history,) = collector.pipelines()
    assert sorted(history.days) == ["2026-11-04", "2026-11-05"]
    assert history.earlier == {"completed": 4} and history.runs == 6


def test_the_graph_names_jobs_and_datasets_as_the_events_do() -> None:
    collector = ReportCollector()
    events: list[dict[str, Any]] = []
    report = run_export(
        ExportRequest(workspace=DEMO, dry_run=True, output=_Lines(events), on_run=collector.add)
    )
    graph = collector.graph
    jobs = {(e["job"]["namespace"], e["job"]["name"]) for e in events}
    datasets = {(d["namespace"], d["name"]) for e in events for d in e["inputs"] + e["outputs"]}
    assert set(graph.pipelines) | set(graph.stages) == jobs
    assert set(graph.datasets) == datasets
    assert (
        ("postgres://db.acme.internal:5432", "sales.public.orders"),
        ("acme-analytics", "daily-sales.extract"),
    ) in graph.reads
    assert graph.stages[("acme-analytics", "daily-sales.extract")] == (
        "acme-analytics",
        "daily-sales",
    )
    assert report.never_run == ["churn-model"]


def test_each_pipeline_is_cut_apart_and_what_pipelines_share_is_kept() -> None:
    collector = ReportCollector()
    dry_run(DEMO, collector)
    lineage = views(collector.graph)
    job = {
        name: ("acme-analytics", name)
        for name in (
            "customer-360",
            "daily-sales",
            "inventory-sync",
            "legacy-orders-export",
            "marketing-attribution",
        )
    }
    mart = ("bigquery", "acme-analytics.sales_mart.daily_sales")
    clicks = ("kafka://kafka-1.acme.internal:9092", "web.clickstream")
    view = {v.pipeline[1]: v for v in lineage.pipelines}
    assert [v.pipeline for v in lineage.pipelines] == sorted(job.values())
    assert {s for s, _ in view["daily-sales"].stages} == {
        ("acme-analytics", f"daily-sales.{stage}")
        for stage in ("extract", "clean", "build_mart", "publish")
    }
    # daily-sales writes the mart and reads it back; marketing-attribution reads it.
    assert view["daily-sales"].shared == {mart: Sharing((), (job["marketing-attribution"],))}
    assert view["marketing-attribution"].shared == {
        mart: Sharing((job["daily-sales"],), ()),
        clicks: Sharing((), (job["customer-360"],)),
    }
    assert lineage.overview.datasets == ((mart, True), (clicks, True))
    assert lineage.overview.writes == ((job["daily-sales"], mart, True),)
    assert {(d, p) for d, p, _ in lineage.overview.reads} == {
        (mart, job["marketing-attribution"]),
        (clicks, job["customer-360"]),
        (clicks, job["marketing-attribution"]),
    }  # not daily-sales reading back its own
    assert lineage.overview.alone == (job["inventory-sync"], job["legacy-orders-export"])
    assert not lineage.refused  # a dry run: nothing is drawn as refused


@pytest.mark.parametrize(
    ("runs", "shown"),
    [
        (7, "7"),
        (999, "999"),
        (1000, "1k"),
        (4249, "4.2k"),
        (9949, "9.9k"),
        (9950, "10k"),
        (35_400, "35k"),
        (1_250_000, "1.2M"),
    ],
)
def test_a_bar_count_fits_above_its_bar(runs: int, shown: str) -> None:
    assert count(runs) == shown and len(shown) <= 4


def test_the_page_is_self_contained_and_the_same_for_the_same_trail(dot: None) -> None:
    pages = []
    for _ in range(2):
        collector = ReportCollector()
        report = dry_run(DEMO, collector)
        pages.append(render_report(collector, report))
    assert pages[0] == pages[1]
    page = pages[0]
    assert "<svg" in page and 'class="node job"' in page  # the graph is drawn, inline
    # Nothing to fetch: no external script, style sheet, image or font, and a policy saying so.
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "url(" not in page
    assert "default-src 'none'" in page


def test_every_string_from_the_trail_is_text_not_markup(ws: WorkspaceMaker, dot: None) -> None:
    hostile_workspace(ws)
    collector = ReportCollector()
    page = render_report(collector, dry_run(ws.root, collector))
    assert PAYLOAD not in page and "<img" not in page and "<b>bold" not in page
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page  # as text
    drawing = page.split('class="panel"')[1].split("</svg>")[0]
    assert "&lt;script&gt;window.__pwned=1&lt;" in drawing  # in the drawing too (two lines)
    assert "&lt;img src=x onerror=" in page
    assert page.count("<script") == 1  # ours


UNSEEN = "\x1b[2J\x07\x00\x9b\u202e\u2066\u2028\u2029\ufeff"
"""ESC, BEL, NUL, CSI, bidi controls, line and paragraph separators, the BOM."""


def test_a_strangers_control_bidi_or_surrogate_reaches_the_page_escaped(
    ws: WorkspaceMaker, tmp_path: Path, dot: None
) -> None:
    """Before: a pipeline id, a stage, a dataset and an error message carried them into the
    page raw (a right-to-left override reorders the rest of a line in a browser too, and ESC
    acts on a terminal that shows the file), and a segment whose name is not UTF-8 (its byte
    read as U+DCFF) made the page impossible to write (UnicodeEncodeError)."""
    ws.graph({**GRAPH, "pipelines": [*GRAPH["pipelines"], {"id": f"never{UNSEEN}"}]})
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                f"run{UNSEEN}",
                pipeline=f"p{UNSEEN}",
                status="failed",
                error={"message": f"boom{UNSEEN}"},
                stages=[
                    stage_record(
                        f"s{UNSEEN}",
                        reads=[{"dataset": f"s3://bucket/k{UNSEEN}"}],
                        writes=[{"dataset": f"data/o{UNSEEN}"}],
                    )
                ],
            )
        ],
    )
    ws.segment("00000\udcff.jsonl", ["{not json"])  # the file's name: byte 0xff
    collector = ReportCollector()
    written = write_report(tmp_path / "report.html", collector, dry_run(ws.root, collector))
    page = written.path.read_bytes()
    for char in UNSEEN.replace("[2J", ""):
        assert char.encode() not in page, hex(ord(char))
    text = page.decode("utf-8")
    assert "never\\x1b[2J\\x07\\x00\\x9b\\u202e" in text  # shown as the terminal shows it
    assert "00000\\xff.jsonl" in text  # the byte, as files/walk.py shows a name
    assert "<svg" in text


def test_report_without_graphviz_says_so_and_the_cli_warns_once(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = cli(
        "export",
        "--dry-run",
        "-w",
        DEMO,
        "-o",
        tmp_path / "events.jsonl",
        "--report",
        out,
        cwd=tmp_path,
        env={"PATH": str(tmp_path / "no-dot-here")},
    )
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert (
        len(warnings) == 1
        and "Graphviz" in warnings[0]
        and "apt-get install graphviz" in warnings[0]
    )
    page = out.read_text()
    assert 'id="graph-note"' in page and "dot program was not found" in page
    assert "<svg" not in page.split('id="history"')[0]
    assert "daily-sales.extract" in page and "sales.public.orders" in page  # listed instead


def chain(stages: int, *, shared: bool) -> tuple[list[Box], list[tuple[Box, Box]]]:
    """A drawing of ``stages`` stages in a row, each reading what the one before wrote (and,
    when ``shared``, one dataset every stage reads)."""
    nodes: list[Box] = [("d", ("ns", "d0")), *([("d", ("ns", "shared"))] if shared else [])]
    edges: list[tuple[Box, Box]] = []
    for n in range(stages):
        job, read, written = (
            ("j", ("ns", f"s{n}")),
            ("d", ("ns", f"d{n}")),
            ("d", ("ns", f"d{n + 1}")),
        )
        nodes += [job, written]
        edges += [(read, job), (job, written)]
        if shared:
            edges.append((("d", ("ns", "shared")), job))
    return nodes, edges


def test_the_size_of_a_layout_counts_the_ranks_its_edges_pass() -> None:
    """A chain is as many boxes as it has nodes; a dataset every stage of it reads adds one
    box per rank each of those edges passes (what made dot take minutes, then hours)."""
    assert layout_size(*chain(100, shared=False)) == 201
    assert layout_size(*chain(100, shared=True)) == 202 + sum(2 * n for n in range(100))
    # A stage that reads back what it writes: a cycle, turned round as dot turns it.
    job, data = ("j", ("ns", "s")), ("d", ("ns", "d"))
    assert layout_size([job, data], [(data, job), (job, data), (job, job)]) == 2


def test_a_graph_too_large_to_lay_out_is_listed_not_drawn(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """120 stages in a row, each reading one shared dataset: dot would take minutes on it (and
    every export from the editor writes a report). It is not asked; the page and one warning
    say why, and the jobs and datasets are listed."""
    stages = [
        stage_record(
            f"s{n:03d}",
            reads=[{"dataset": f"data/d{n}.csv"}, {"dataset": "data/shared.csv"}],
            writes=[{"dataset": f"data/d{n + 1}.csv"}],
        )
        for n in range(120)
    ]
    ws.segment("000001.jsonl", [run_record("r1", stages=stages)])
    programs = tmp_path / "bin"
    programs.mkdir()
    (programs / "dot").write_text(f"#!/bin/sh\ncat > {tmp_path / 'dot-was-run'}\nexit 1\n")
    (programs / "dot").chmod(0o755)
    out = tmp_path / "report.html"
    proc = cli(
        "export",
        "--dry-run",
        "-w",
        ws.root,
        "-o",
        tmp_path / "events.jsonl",
        "--report",
        out,
        cwd=tmp_path,
        env={"PATH": f"{programs}:{os.environ['PATH']}"},
    )
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "dot-was-run").exists(), "dot was given the graph"
    [warning] = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert "not drawn" in warning and f"{LAYOUT_BUDGET:,}" in warning, warning
    page = out.read_text()
    assert 'id="graph-note"' in page and "boxes to lay out" in page
    assert "daily-sales.s119" in page and "data/shared.csv" in page  # listed instead


def test_a_report_that_cannot_be_written_stops_before_anything_is_sent(tmp_path: Path) -> None:
    proc = cli(
        "export",
        "--dry-run",
        "-w",
        DEMO,
        "-o",
        tmp_path / "events.jsonl",
        "--report",
        tmp_path / "missing" / "report.html",
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("error: cannot write the report") and "does not exist" in proc.stderr
    )
    assert not (tmp_path / "events.jsonl").exists()


def test_a_trail_of_100k_runs_gives_a_report_of_a_few_megabytes(tmp_path: Path, dot: None) -> None:
    summary = write_workspace(tmp_path / "ws", 100_000, seed=11)
    collector = ReportCollector()
    report = dry_run(tmp_path / "ws", collector)
    written = write_report(tmp_path / "report.html", collector, report)
    assert report.runs_total == collector.runs == summary["runs"] == 100_000
    assert written.warning is None
    assert written.size < 3_000_000, f"{written.size:,} bytes"
    for history in collector.pipelines():  # held in full: a bounded number, not the trail
        assert history.kept <= collector_mod.RECENT_RUNS + collector_mod.RECENT_FAILURES
    page = written.path.read_text()
    assert "100,000</b><span>runs on the trail" in page
    assert sorted(summary["never_run"]) == sorted(report.never_run)
    assert all(f"<code>{name}</code>" in page for name in summary["never_run"])


# ------------------------------------------------------------------ in a real browser


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, services: None) -> Iterator[Any]:
    """Debian's Chromium, headless, with a fresh profile; skips (says why) where it is missing."""
    require(
        None
        if shutil.which("dot")
        else "Graphviz's dot is not installed (apt-get install graphviz, or scripts/browser.sh)"
    )
    with chromium.chromium(
        tmp_path_factory.mktemp("chromium-profile"), {"width": 1280, "height": 1000}
    ) as context:
        yield context


class Opened:
    """A report open in a tab, with everything the page said or tried to do."""

    def __init__(self, browser: Any, path: Path, width: int = 1280) -> None:
        self.page = browser.new_page()
        self.page.set_default_timeout(180_000)  # a wait's limit, for 2 busy cores; not a speed
        self.page.set_viewport_size({"width": width, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on(
            "console",
            lambda m: (
                self.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            ),
        )
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")

    def drawing(self) -> str:
        """The selector of the pipeline drawing on show."""
        (shown,) = [
            f"#{id_} svg"
            for id_ in self.page.locator(".panel:visible").evaluate_all(
                "panels => panels.map(p => p.id)"
            )
        ]
        return shown

    def pick(self, pipeline: str) -> str:
        """Click the pipeline's tab; the selector of its drawing, now on show."""
        self.page.locator("#picker a", has_text=re.compile(f"^{re.escape(pipeline)}$")).click()
        return self.drawing()

    def node(self, svg: str, *texts: str) -> Any:
        """The box of the node of drawing ``svg`` showing ``texts`` (x, y, width, height)."""
        return self.page.evaluate(
            FIND + "([svg, texts]) => { const n = find(svg, texts);"
            " if (!n) return null; const b = n.getBBox();"
            " return {x: b.x, y: b.y, width: b.width, height: b.height}; }",
            [svg, list(texts)],
        )

    def arrows(self, svg: str, source: list[str], target: list[str]) -> int:
        """Arrows drawn from the node showing ``source`` texts to the one showing ``target``."""
        return int(self.page.evaluate(ARROWS, [svg, source, target]))

    def lines(self, selector: str) -> list[int]:
        """How many lines the text of each element matching ``selector`` takes on screen."""
        return list(
            self.page.locator(selector).evaluate_all("""els => els.map(e => {
            const r = document.createRange(); r.selectNodeContents(e);
            return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; })""")
        )

    def scrolls_sideways(self) -> bool:
        return bool(self.page.evaluate("document.documentElement.scrollWidth > window.innerWidth"))

    def colour(self, selector: str, prop: str) -> str:
        return str(self.page.locator(selector).first.evaluate(f"e => getComputedStyle(e).{prop}"))

    def close(self) -> None:
        assert self.errors == [], self.errors
        assert self.requests == [self.page.url], self.requests  # nothing fetched but the file
        self.page.close()


# A node is found by texts its lines contain (a long name is drawn over several lines).
FIND = """const find = (svg, texts) => [...document.querySelector(svg).querySelectorAll('g.node')]
  .find(n => { const all = [...n.querySelectorAll('text')].map(t => t.textContent).join('');
               return texts.every(t => all.includes(t)); });
"""

# Counts the edges whose line starts at the first node and whose arrowhead touches the second,
# in the coordinates of the drawing.
ARROWS = (
    FIND
    + """([svg, source, target]) => {
  const a = find(svg, source), b = find(svg, target);
  if (!a || !b) return -1;
  const near = (box, x, y) => x >= box.x - 4 && x <= box.x + box.width + 4 &&
                              y >= box.y - 4 && y <= box.y + box.height + 4;
  const ba = a.getBBox(), bb = b.getBBox();
  return [...document.querySelector(svg).querySelectorAll('g.edge')].filter(e => {
    const path = e.querySelector('path'), head = e.querySelector('polygon');
    const p0 = path.getPointAtLength(0), hb = head.getBBox();
    return near(ba, p0.x, p0.y) && near(bb, hb.x + hb.width / 2, hb.y + hb.height / 2);
  }).length;
}"""
)

# Every arrow of a drawing as [x where it starts, x of its head].
ARROW_XS = """svg => [...document.querySelector(svg).querySelectorAll('g.edge')].map(e => {
  const head = e.querySelector('polygon').getBBox();
  return [e.querySelector('path').getPointAtLength(0).x, head.x + head.width / 2]; })"""


def test_the_demo_report_in_a_browser(browser: Any, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    proc = cli(
        "export",
        "--dry-run",
        "-w",
        DEMO,
        "-o",
        tmp_path / "events.jsonl",
        "--report",
        out,
        cwd=tmp_path,
    )
    assert proc.returncode == 0 and "warning" not in proc.stderr, proc.stderr
    tab = Opened(browser, out)
    page = tab.page

    # One drawing per pipeline, picked by its tab; the others are out of the way.
    tabs = page.locator("#picker a").all_inner_texts()
    assert tabs == [
        "customer-360",
        "daily-sales",
        "inventory-sync",
        "legacy-orders-export",
        "marketing-attribution",
    ]
    assert page.locator(".panel:visible").count() == 1
    svg = tab.pick("daily-sales")
    assert page.locator(".panel:visible h3").inner_text() == "daily-sales"

    # Jobs and datasets named as the events name them, reads and writes as arrows.
    orders = ["postgres://db.acme.internal:5432", "sales.public.orders"]
    extract = ["daily-sales.extract"]
    raw = ["workspace://acme-analytics", "data/raw/orders.parquet"]
    assert tab.arrows(svg, orders, extract) == 1  # a read
    assert tab.arrows(svg, extract, raw) == 1  # a write
    assert tab.arrows(svg, extract, orders) == 0

    # Left to right in data-flow order: sources, the stage jobs as data flows, final outputs.
    flow = [
        orders,
        extract,
        raw,
        ["daily-sales.clean"],
        ["data/staged/orders_clean.parquet"],
        ["daily-sales.build_mart"],
        ["acme-analytics.sales_mart.", "daily_sales"],
        ["daily-sales.publish"],
        ["s3://acme-reports", "sales/daily_sales.csv"],
    ]
    xs = [tab.node(svg, *texts)["x"] for texts in flow]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), xs
    for pipeline in tabs:  # and every arrow of every drawing runs left to right
        arrows = page.evaluate(ARROW_XS, tab.pick(pipeline))
        assert arrows and all(start < head for start, head in arrows), (pipeline, arrows)
    svg = tab.pick("daily-sales")

    # The job namespace is said once, not above every job.
    drawn = page.locator(".panel svg text, #overview svg text").all_text_contents()
    assert "acme-analytics" not in drawn and "daily-sales.extract" in drawn
    assert page.locator("#graph-section > p code").inner_text() == "acme-analytics"

    # The dataset daily-sales shares with marketing-attribution says so, and the overview
    # joins the two pipelines through it; a click on a pipeline there opens its drawing.
    mart = ["bigquery", "acme-analytics.sales_mart.", "daily_sales"]
    assert tab.node(svg, *mart, "also read by marketing-attribution")
    assert tab.arrows("#overview svg", ["daily-sales"], mart) == 1
    assert tab.arrows("#overview svg", mart, ["marketing-attribution"]) == 1
    assert page.locator("#alone").inner_text() == (
        "The other 2 pipeline jobs share no dataset with another."
    )
    page.locator("#overview svg g.node", has_text="marketing-attribution").click()
    assert page.locator(".panel:visible h3").inner_text() == "marketing-attribution"
    tab.pick("daily-sales")

    # Nothing was refused on a dry run: no legend for it, and the events were built, not sent.
    assert page.locator("#legend-refused").count() == 0
    assert "refused" not in page.locator("#graph-section .legend").inner_text()
    assert page.locator("#delivery th").last.inner_text() == "events built"

    # The run history: the failed run is shown failed, its retried stage shows both attempts.
    failed = page.locator("details.run", has_text=FAILED_DEMO_RUN).first
    assert failed.locator("summary .badge").first.inner_text() == "failed"
    assert failed.is_visible()
    assert failed.get_by_text("daily-sales.extract: 2 attempts").is_visible()
    rows = failed.locator("tr", has_text="daily-sales.extract")
    assert rows.count() == 2 and "failed" in rows.nth(0).inner_text()
    assert page.locator("details.run", has_text="trace id run-20261101-0002").count() == 1
    # Every bar of the charts shows its count, the sum of what its tooltip lists.
    bars = page.locator(".chart svg g.bar").evaluate_all("""bars => bars.map(b => [
        b.querySelector('title').textContent, (b.querySelector('text') || {}).textContent,
        b.querySelector('text') ? b.querySelector('text').getBBox().y : null])""")
    assert len(bars) > 10
    for title, shown, top in bars:
        assert shown == str(sum(int(n) for n in re.findall(r"(\d+) \w+", title))), title
        assert top >= 0, title  # inside the chart, not cut off at its top
    # Never-run pipelines are listed, with why.
    assert page.locator("#never-run").inner_text().strip() == "churn-model"
    # The filter shows only problems when asked.
    total = page.locator("details.run:visible").count()
    page.locator("#problems").check()
    problems = page.locator("details.run:visible")
    assert 0 < problems.count() < total
    assert all(
        "problem" in (problems.nth(i).get_attribute("class") or "") for i in range(problems.count())
    )
    page.locator("#problems").uncheck()

    # A drawing wider than the page scrolls in its own box, and says so; "Whole drawings"
    # shrinks it to fit.
    box, drawing = page.locator(".panel:visible .drawing"), page.locator(".panel:visible svg")
    hint = page.locator(".panel:visible .more")
    assert drawing.bounding_box()["width"] > box.bounding_box()["width"] and hint.is_visible()
    page.locator("#fit").click()
    assert drawing.bounding_box()["width"] <= box.bounding_box()["width"]
    assert not hint.is_visible()
    page.locator("#fit").click()

    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 1000})  # header, numbers, the drawings
    tab.pick("marketing-attribution")  # shares a dataset each way: the overview has both
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(SCREENSHOT))
    assert SCREENSHOT.stat().st_size < 400_000

    # At 1024 px wide nothing but a drawing's own box scrolls sideways; ids stay on one line.
    page.set_viewport_size({"width": 1024, "height": 900})
    assert not tab.scrolls_sideways()
    assert set(tab.lines("details.run summary .id")) == {1}
    tab.close()


def test_many_pipelines_are_picked_one_at_a_time_and_shared_datasets_show(
    browser: Any, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    names = [f"p{i:02}-orders-to-mart" for i in range(1, 21)]
    ws.graph(
        {
            "format": "lineage-hub/graph@1",
            "workspace": {"name": "test-ws"},
            "pipelines": [
                {"id": n, "name": n, "stages": [{"id": "extract"}, {"id": "load"}]} for n in names
            ],
        }
    )
    runs = []
    for i, name in enumerate(names):
        source = [{"dataset": f"postgres://db:5432/sales.public.t{i}", "digest": "sha256:aa"}]
        if i == 1:  # the second pipeline reads the first one's output
            source.append({"dataset": f"s3://lake/{names[0]}/out.parquet", "digest": "sha256:dd"})
        runs.append(
            run_record(
                f"run-{i}",
                pipeline=name,
                stages=[
                    stage_record(
                        "extract",
                        reads=source,
                        writes=[{"dataset": f"data/raw/{name}.parquet", "digest": "sha256:bb"}],
                    ),
                    stage_record(
                        "load",
                        reads=[{"dataset": f"data/raw/{name}.parquet", "digest": "sha256:bb"}],
                        writes=[
                            {"dataset": f"s3://lake/{name}/out.parquet", "digest": "sha256:dd"}
                        ],
                    ),
                ],
            )
        )
    ws.segment("000001.jsonl", runs)
    collector = ReportCollector()
    written = write_report(tmp_path / "report.html", collector, dry_run(ws.root, collector))
    tab = Opened(browser, written.path, width=1024)
    page = tab.page

    assert page.locator("#picker a").all_inner_texts() == names
    assert page.locator(".panel:visible").count() == 1
    # Not one tall column: the whole lineage section fits about a screen.
    assert page.locator("#graph-section").bounding_box()["height"] < 1300
    assert not tab.scrolls_sideways()

    # The shared dataset: in the overview, between the two pipelines; in each one's drawing,
    # naming the other.
    shared = ["s3://lake", f"{names[0]}/out.parquet"]
    assert tab.arrows("#overview svg", [names[0]], shared) == 1
    assert tab.arrows("#overview svg", shared, [names[1]]) == 1
    assert page.locator("#alone").inner_text() == (
        "The other 18 pipeline jobs share no dataset with another."
    )
    page.locator("#overview svg g.node", has_text=names[1]).click()
    svg = tab.drawing()
    assert page.locator(".panel:visible h3").inner_text() == names[1]
    assert tab.node(svg, *shared, f"also written by {names[0]}")
    assert tab.node(tab.pick(names[0]), *shared, f"also read by {names[1]}")
    assert tab.node(tab.pick(names[5]), "s3://lake", f"{names[5]}/out.parquet")
    tab.close()


def test_times_are_shown_in_utc_and_say_so(
    browser: Any, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                "run-berlin",
                startedAt="2026-11-03T04:00:00+02:00",
                endedAt="2026-11-03T04:07:00+02:00",
                stages=[
                    stage_record(
                        startedAt="2026-11-03T04:00:05.250+02:00",
                        endedAt="2026-11-03T04:03:00+02:00",
                    )
                ],
            )
        ],
    )
    collector = ReportCollector()
    written = write_report(tmp_path / "report.html", collector, dry_run(ws.root, collector))
    tab = Opened(browser, written.path)
    run = tab.page.locator("details.run", has_text="run-berlin")
    assert "2026-11-03 02:00:00 UTC" in run.locator("summary").inner_text()
    run.locator("summary").click()
    headers = run.locator("th").all_inner_texts()
    cells = run.locator("td.t").all_inner_texts()
    assert "started (UTC)" in headers and cells[0] == "2026-11-03 02:00:05"
    assert "+02:00" not in tab.page.locator("body").inner_text()
    tab.close()


def test_what_was_not_exported_in_a_browser(browser: Any, tmp_path: Path) -> None:
    workspace = demo_copy(tmp_path)
    out = tmp_path / "report.html"
    proc = cli(
        "export",
        "--dry-run",
        "-w",
        workspace,
        "-o",
        tmp_path / "events.jsonl",
        "--report",
        out,
        cwd=tmp_path,
    )
    assert proc.returncode == 1, proc.stderr  # bad entries: something was left behind
    tab = Opened(browser, out)
    bad = tab.page.locator("#bad-entries tr", has_text="000009.jsonl")
    assert bad.is_visible()
    cells = bad.locator("td").all_inner_texts()
    assert cells[0] == ".workspace/lineage/audit/000009.jsonl" and cells[1] == "1"
    assert "exploded" in cells[2]
    assert "churn-model" in tab.page.locator("#never-run").inner_text()
    tab.close()


def test_markup_in_names_and_messages_is_shown_as_text(
    browser: Any, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    hostile_workspace(ws)
    collector = ReportCollector()
    written = write_report(tmp_path / "report.html", collector, dry_run(ws.root, collector))
    tab = Opened(browser, written.path)
    page = tab.page
    assert tab.node(tab.drawing(), PAYLOAD)
    assert page.locator("details.run .err", has_text=ERROR_PAYLOAD).first.is_visible()
    assert page.evaluate("window.__pwned") is None and tab.dialogs == []
    assert page.locator("img").count() == 0 and page.locator("b", has_text="bold").count() == 0
    tab.close()


def test_a_real_export_report_tells_failed_in_the_editor_from_refused_by_the_server(
    browser: Any, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    refused = "5b0f3c7e-9a41-4d2b-8c55-0d1e2f3a4b5c"
    reason = (
        "namespace not allowed here: the server accepts events of namespaces "
        "'analytics-prod' and 'analytics-staging' only; ask its administrator"
    )
    out = tmp_path / "report.html"
    with FakeServer() as server:
        ws.settings({"openlineage.url": server.url, "openlineage.retry.maxTime": 2})
        ws.segment(
            "000001.jsonl",
            [
                run_record("run-a", startedAt="2026-11-01T02:00:00Z"),
                run_record("run-b", startedAt="2026-11-02T02:00:00Z"),
            ],
        )
        first = cli("export", "-w", ws.root, "-q", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        only_refused = stage_record(
            "load",
            reads=[],
            writes=[{"dataset": "s3://bucket/refused-only.csv", "digest": "sha256:ee"}],
        )
        ws.segment(
            "000002.jsonl",
            [
                run_record("run-c", startedAt="2026-11-03T02:00:00Z"),
                run_record(
                    "run-f",
                    status="failed",
                    startedAt="2026-11-03T05:00:00Z",
                    stages=[stage_record(status="failed", error={"message": "disk full"})],
                ),
                run_record(
                    refused, startedAt="2026-11-04T02:00:00Z", stages=[stage_record(), only_refused]
                ),
            ],
        )
        server.script(
            lambda request: (
                Answer(400, body=reason) if refused in request.body.decode() else Answer(201)
            )
        )
        second = cli("export", "-w", ws.root, "-q", "--report", out, cwd=tmp_path)
        assert second.returncode == 1, second.stderr

    tab = Opened(browser, out, width=1024)
    page = tab.page
    tiles = dict(
        zip(
            page.locator(".tile span").all_inner_texts(),
            page.locator(".tile b").all_inner_texts(),
            strict=True,
        )
    )
    assert tiles["runs sent"] == "2" and tiles["unchanged (already on the server)"] == "2"
    assert tiles["refused by the server"] == "1" and tiles["runs failed in the editor"] == "1"
    # Two different things, in two different colours: failed in the editor, refused by the server.
    refused_colour = tab.colour(".tile.refused", "borderLeftColor")
    assert refused_colour != tab.colour(".tile.fail", "borderLeftColor")
    run = page.locator("details.run", has_text=refused).first
    badge = run.locator("summary .badge", has_text="refused by the server")
    assert badge.is_visible()
    assert badge.evaluate("e => getComputedStyle(e).backgroundColor") == refused_colour
    editor_failed = page.locator("details.run", has_text="trace id run-f").first
    assert "refused" not in editor_failed.locator("summary").inner_text()
    assert (
        editor_failed.locator("summary .badge").first.evaluate(
            "e => getComputedStyle(e).backgroundColor"
        )
        != refused_colour
    )
    row = page.locator("#refused tr", has_text=refused)
    assert row.is_visible() and reason in row.inner_text()
    assert page.locator("h3", has_text="Runs refused by the server (1)").is_visible()
    unchanged = page.locator("details.run", has_text="trace id run-a").first
    assert "unchanged" in unchanged.locator("summary").inner_text()
    assert "Export to" in page.locator("#headline").inner_text()

    # What only refused runs hold is drawn apart, and the legend says what that means.
    assert page.locator("#legend-refused").is_visible()
    node = tab.node(tab.drawing(), "refused-only.csv")
    assert node is not None
    assert (
        page.locator(".panel:visible g.node.dataset", has_text="refused-only.csv")
        .locator("path")
        .first.get_attribute("stroke")
        == "#7b3fa0"
    )

    # The delivery table counts the events sent, as the tile does.
    header = page.locator("#delivery th").all_inner_texts()
    total = page.locator("#delivery tr.total td").all_inner_texts()
    assert header[-1] == "events sent" and total[-1] == tiles["events sent"]

    # At 1024 px: no sideways scroll, and run and trace ids on one line each.
    assert not tab.scrolls_sideways()
    assert set(tab.lines("#refused .id")) == {1}
    tab.close()


# ------------------------------------------------------------------ helpers


class _Lines(io.RawIOBase):
    """A dry run's sink that parses the JSON Lines it gets back into events."""

    def __init__(self, into: list[dict[str, Any]]) -> None:
        self.into, self.buffer = into, b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        import json

        self.buffer += bytes(data)
        *lines, self.buffer = self.buffer.split(b"\n")
        self.into.extend(json.loads(line) for line in lines if line)
        return len(data)


def _start(result: RunResult) -> float:
    from datetime import datetime

    return datetime.fromisoformat(result.run.events[0]["eventTime"]).timestamp()


def _count(items: Iterator[str] | Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts
