"""Part 3: delivery into the real Marquez (``scripts/marquez.sh start``): ours vs the Go load
generator, the same events at the same concurrency."""

from __future__ import annotations

from pathlib import Path

from bench import harness
from bench.harness import run_loadgen
from bench.report import Report, Sizes, child, marquez_missing, say, stamp, verdict


def part_marquez(
    report: Report, sizes: Sizes, tools: dict[str, Path], concurrency: int, scratch: Path, base: str
) -> None:
    runs = sizes.marquez
    say(f"3. delivery into Marquez at {base}: {runs:,} runs")
    if marquez_missing(report, base, "3", "into Marquez: ours vs Go load generator", ">= 90%"):
        return
    source, _ = harness.workspace(runs, gzip_closed=False, log=say)
    mark = stamp()
    part = f"3 ({runs:,} runs)"
    # Fresh run ids and a fresh namespace per measurement, so nothing collides in Marquez.
    lg_ws = harness.rekeyed_copy(source, scratch / "marquez-loadgen", f"{mark}-loadgen")
    events_file = scratch / "marquez-events.jsonl"
    lg_namespace = f"bench-loadgen-{mark}"
    child("dry_run_to_file", ws=str(lg_ws), output=str(events_file), namespace=lg_namespace)
    result = run_loadgen(
        tools["loadgen"], base.rstrip("/") + "/api/v1/lineage", events_file, concurrency
    )
    say(
        f"    loadgen: {result['perSecond']:,.0f} events/s ({result['seconds']:.1f} s), "
        f"failed {result['failed']}"
    )
    note = f"namespace {lg_namespace}; failed {result['failed']}"
    if result.get("firstError"):
        note += f" (first: {str(result['firstError'])[:120]})"
    limit = report.measured(
        part,
        f"limit: Go loadgen posting our dry run's events, concurrency {concurrency}, any order",
        result["ok"],
        result["seconds"],
        load=f"{result['load_before']} -> {result['load_after']}",
        note=note,
    )
    ours_ws = harness.rekeyed_copy(source, scratch / "marquez-ours", f"{mark}-ours")
    ours_namespace = f"bench-ours-{mark}"
    done = child(
        "deliver_ours",
        ws=str(ours_ws),
        url=base,
        concurrency=concurrency,
        state_dir=str(scratch / "state-marquez"),
        namespace=ours_namespace,
    )
    r = done.result
    note = f"namespace {ours_namespace}; runs failed {r['runs_failed']}"
    if r.get("first_failure"):
        note += f" (first: {r['first_failure'][:120]})"
    ours = report.measured_child(
        part,
        f"ours: run_export, openlineage.concurrency {concurrency}, runs in causal order",
        done,
        note,
    )
    ratio = ours / limit if ours and limit else None
    met, short = verdict(ratio, 0.9)
    report.target(
        "3",
        "into Marquez: ours vs Go load generator (same events, same concurrency)",
        f"{ours:,.0f}/s",
        f"{limit:,.0f}/s",
        ratio,
        f"{100 * ratio:.0f}%" if ratio else "n/a",
        ">= 90%",
        met,
        short,
    )
