"""Nothing lost under faults: exports through a misbehaving proxy into the real Marquez.

Every scenario exports a synthetic workspace of its own (its own seed: its own namespace and
run ids, since Marquez keys runs by run id across namespaces) through ``faultproxy`` while the
proxy fails requests, throttles, stalls, resets connections or is gone, then exports once more
with the faults off. After each export:

- the exit code told the truth: 0 only when Marquez holds everything; 1 when runs were left
  behind, each listed; 4 when the server could not be reached and the export stopped;
- the ledger never claims a run Marquez does not hold: every 'delivered' run, and each of its
  stage runs, is in Marquez in its final state (the state of its last event in the dry run);

and after the follow-up export Marquez holds every run of the trail exactly once per run id,
in its final state, while the follow-up sent exactly the runs the ledger did not hold.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from faultproxy import NO_FAULTS, FaultProxy, Faults
from helpers import cli_command
from hubwriter.synth import write_workspace

from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.report import ExportReport

pytestmark = pytest.mark.e2e

STATE = {"COMPLETE": "COMPLETED", "FAIL": "FAILED", "ABORT": "ABORTED", "START": "RUNNING"}
TIMEOUT = 10.0
"""openlineage.timeout in these tests: well above what Marquez takes for one event, even on a
busy machine, so that only the proxy's stalls time out. (Seen on 2 cores under a load average of
10 to 13: up to 2.4 s, and 4 to 7 s while a freshly started Marquez was still being compiled.)"""


@dataclass
class PipelineRun:
    """One editor run as the dry run built it: its events and the runs they make in Marquez."""

    trace_id: str
    run_id: str
    events: int = 0
    runs: dict[tuple[str, str], str] = field(default_factory=dict)
    """(job, run id) -> final state, for the pipeline run and each of its stage runs."""


@dataclass
class Trail:
    """A synthetic workspace and what its export must put in Marquez."""

    root: Path
    namespace: str
    state_dir: Path
    runs: dict[str, PipelineRun]
    """By pipeline run id."""

    @property
    def expected(self) -> dict[str, dict[str, str]]:
        """job -> {run id: final state}."""
        jobs: dict[str, dict[str, str]] = defaultdict(dict)
        for run in self.runs.values():
            for (job, run_id), state in run.runs.items():
                jobs[job][run_id] = state
        return dict(jobs)

    def environ(self, url: str) -> dict[str, str]:
        return {"OPENLINEAGE_URL": url, "OPENLINEAGE_EXPORT_STATE_DIR": str(self.state_dir)}

    def export(self, url: str) -> ExportReport:
        return run_export(ExportRequest(self.root, environ=self.environ(url)))

    def ledger(self) -> dict[str, tuple[str, str, int]]:
        """run id -> (trace id, state, events accepted), as the ledger has it."""
        path = self.state_dir / "ledger.sqlite"
        if not path.exists():
            return {}
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            rows = db.execute("SELECT run_id, trace_id, state, events FROM runs").fetchall()
        return {run_id: (trace_id, state, events) for run_id, trace_id, state, events in rows}

    def delivered(self) -> set[str]:
        return {run_id for run_id, (_, state, _) in self.ledger().items() if state == "delivered"}


def pipeline_run_of(event: dict[str, Any]) -> str:
    parent = event["run"]["facets"].get("parent")
    return str(parent["run"]["runId"] if parent else event["run"]["runId"])


def synthetic(tmp_path: Path, seed: int, runs: int, **settings: Any) -> Trail:
    """A synthetic workspace with these settings, and its dry run."""
    root = tmp_path / f"synthetic-{seed}"
    write_workspace(root, runs, seed=seed, running_tail=1)
    (root / ".workspace" / "settings.json").write_text(
        json.dumps(
            {
                "openlineage.timeout": TIMEOUT,
                "openlineage.concurrency": 4,
                **{f"openlineage.{key}": value for key, value in settings.items()},
            }
        )
    )
    out = io.BytesIO()
    report = run_export(ExportRequest(root, dry_run=True, output=out))
    assert report.exit_code == 0, report.to_dict()
    pipeline_runs: dict[str, PipelineRun] = {}
    for line in out.getvalue().splitlines():
        event = json.loads(line)
        owner = pipeline_run_of(event)
        if owner == event["run"]["runId"]:
            tags = {
                t["key"]: t["value"] for t in event["run"]["facets"].get("tags", {}).get("tags", [])
            }
            pipeline_runs.setdefault(owner, PipelineRun(tags.get("traceId", owner), owner))
        run = pipeline_runs[owner]
        run.events += 1
        run.runs[(event["job"]["name"], event["run"]["runId"])] = STATE[event["eventType"]]
    assert len(pipeline_runs) == runs
    return Trail(root, report.namespace, tmp_path / f"state-{seed}", pipeline_runs)


def held_by_marquez(marquez: Any, namespace: str) -> dict[str, dict[str, str]]:
    """job -> {run id: state} as Marquez holds them; asserts one run per run id."""
    try:
        jobs = marquez.jobs(namespace)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == 404:  # the namespace was never created
            return {}
        raise
    held = {}
    for name in jobs:
        runs = marquez.runs(namespace, name)
        ids = [run["id"] for run in runs]
        assert len(ids) == len(set(ids)), f"{name}: a run id appears twice"
        held[name] = {run["id"]: run["state"] for run in runs}
    return held


def check_ledger_is_true(trail: Trail, marquez: Any) -> set[str]:
    """Every run the ledger calls delivered is in Marquez, stages and all, in its final state."""
    held = held_by_marquez(marquez, trail.namespace)
    delivered = set()
    for run_id, (trace_id, state, events) in trail.ledger().items():
        run = trail.runs[run_id]
        assert trace_id.lower() == run.trace_id.lower()
        if state != "delivered":
            continue
        delivered.add(run_id)
        assert events == run.events, f"run {trace_id}: ledger says {events} events"
        for (job, id_), final in run.runs.items():
            assert held.get(job, {}).get(id_) == final, (
                f"the ledger says run {trace_id} was delivered, but Marquez has its run {id_} "
                f"of {job} as {held.get(job, {}).get(id_)}, not {final}"
            )
    return delivered


def check_complete(trail: Trail, marquez: Any) -> None:
    """Marquez holds every run of the trail, exactly once per run id, in its final state."""
    held = held_by_marquez(marquez, trail.namespace)
    expected = trail.expected
    assert set(held) == set(expected)
    for job, runs in expected.items():
        assert held[job] == runs, job
    assert trail.delivered() == set(trail.runs)


def check_exit_code(report: ExportReport, trail: Trail, marquez: Any) -> set[str]:
    """The exit code of a first export tells the truth; returns the runs the ledger holds as
    delivered."""
    delivered = check_ledger_is_true(trail, marquez)
    code = report.exit_code
    assert code in (0, 1, 4), report.to_dict()
    assert report.bad_entries == 0 and not report.cancelled
    if code == 0:
        assert report.outage is None and report.runs_failed == 0
        check_complete(trail, marquez)
    elif code == 1:
        assert report.outage is None and report.runs_failed > 0
        failed = {f.run_id for f in report.failed}
        assert len(failed) == report.runs_failed and all(f.reason for f in report.failed)
        assert not failed & delivered, "a run reported failed is in the ledger as delivered"
        assert failed | delivered == set(trail.runs), "a run neither delivered nor listed"
    else:
        assert report.outage is not None and "could not be reached" in report.outage
        assert "\n" not in report.outage
        assert len(delivered) < len(trail.runs), "an outage, yet every run was delivered"
    return delivered


def sent_through(proxy: FaultProxy) -> set[str]:
    """The pipeline runs whose events the proxy passed to Marquez (accepted there)."""
    return {pipeline_run_of(json.loads(p.body)) for p in proxy.passed if 200 <= p.status < 300}


def follow_up(trail: Trail, proxy: FaultProxy, marquez: Any, delivered: set[str]) -> None:
    """Faults off, export again: exit 0, exactly the runs not yet delivered sent, all there."""
    proxy.set_faults(NO_FAULTS)
    proxy.come_back()
    proxy.reset_counts()
    report = trail.export(proxy.url)
    assert report.exit_code == 0, report.to_dict()
    assert report.runs_unchanged == len(delivered)
    assert report.runs_sent == len(trail.runs) - len(delivered)
    assert sent_through(proxy) == set(trail.runs) - delivered
    check_complete(trail, marquez)


@pytest.fixture
def upstream(marquez: Any) -> str:
    return str(marquez.url)


def test_flaky_server_loses_nothing_and_duplicates_nothing(
    upstream: str, marquez: Any, tmp_path: Path
) -> None:
    trail = synthetic(tmp_path, 5101, 10, **{"retry.maxTime": 20})
    faults = Faults(
        error=0.08,
        throttle=0.04,
        slow=0.03,
        reset_before=0.05,
        reset_after=0.05,
        retry_after=1,
        hold=TIMEOUT + 1,
    )
    every = ("error", "throttle", "slow", "slow", "reset_before", "reset_after")
    with FaultProxy(upstream, seed=5101, faults=faults, first=every) as proxy:
        report = trail.export(proxy.url)
        assert all(proxy.actions[kind] for kind in set(every)), proxy.actions
        # reset_after and slow answers made the client send accepted events again.
        assert len(proxy.passed) > report.events_sent
        delivered = check_exit_code(report, trail, marquez)
        follow_up(trail, proxy, marquez, delivered)


def test_failing_server_leaves_runs_behind_and_says_which(
    upstream: str, marquez: Any, tmp_path: Path
) -> None:
    trail = synthetic(tmp_path, 5102, 8, **{"retry.maxTime": 0.6})
    with FaultProxy(upstream, seed=5102, faults=Faults(error=0.7)) as proxy:
        report = trail.export(proxy.url)
        assert report.exit_code == 1, report.to_dict()
        delivered = check_exit_code(report, trail, marquez)
        assert all("gave up" in f.reason and "fault injected" in f.reason for f in report.failed)
        states = {state for _, state, _ in trail.ledger().values()}
        assert "failed" in states
        follow_up(trail, proxy, marquez, delivered)


def test_server_gone_mid_export_stops_then_the_next_export_sends_the_rest(
    upstream: str, marquez: Any, tmp_path: Path
) -> None:
    trail = synthetic(tmp_path, 5103, 12, **{"retry.maxTime": 1.5})
    with FaultProxy(upstream, seed=5103, gone_after=45) as proxy:
        report = trail.export(proxy.url)
        assert report.exit_code == 4, report.to_dict()
        assert len(proxy.passed) >= 45
        assert report.events_sent < sum(r.events for r in trail.runs.values())
        delivered = check_exit_code(report, trail, marquez)
        # Only runs cut short by the outage were left: none was refused by the server.
        assert report.runs_failed == 0, report.to_dict()["failedRuns"]
        follow_up(trail, proxy, marquez, delivered)


@pytest.mark.parametrize("how", ["hangup", "close"])
def test_server_dropping_every_connection_is_an_outage(
    upstream: str, marquez: Any, tmp_path: Path, how: str
) -> None:
    seed = 5104 if how == "hangup" else 5106
    trail = synthetic(tmp_path, seed, 6, **{"retry.maxTime": 1})
    with FaultProxy(upstream, seed=seed) as proxy:
        proxy.go_away(how)  # type: ignore[arg-type]
        report = trail.export(proxy.url)
        assert proxy.actions[how] > 0 and not proxy.passed
        assert report.exit_code == 4, report.to_dict()
        assert report.events_sent == 0 and report.runs_sent == 0 and report.runs_failed == 0
        assert check_exit_code(report, trail, marquez) == set()
        assert held_by_marquez(marquez, trail.namespace) == {}
        follow_up(trail, proxy, marquez, set())


def test_cli_exit_codes_when_the_server_is_gone_then_back(
    upstream: str, marquez: Any, tmp_path: Path
) -> None:
    trail = synthetic(tmp_path, 5105, 4, **{"retry.maxTime": 1})
    with FaultProxy(upstream, seed=5105) as proxy:
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
        env.update(trail.environ(proxy.url))
        command = cli_command("export", "-w", str(trail.root))
        proxy.go_away("refuse")
        gone = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
        assert gone.returncode == 4, gone.stderr
        assert "Traceback" not in gone.stderr
        stopped = [line for line in gone.stderr.splitlines() if line.startswith("stopped: ")]
        assert len(stopped) == 1 and "could not be reached" in stopped[0], gone.stderr
        assert f"127.0.0.1:{proxy.port}" in stopped[0]
        assert trail.delivered() == set()
        proxy.come_back()
        back = subprocess.run(
            [*command, "--json"], capture_output=True, text=True, env=env, timeout=300
        )
        assert back.returncode == 0, back.stderr
        summary = json.loads(back.stdout)
        assert summary["runs"]["sent"] == len(trail.runs) and summary["exitCode"] == 0
        check_complete(trail, marquez)
