"""Part 4: re-export of an unchanged trail: time and events vs the first, full export."""

from __future__ import annotations

from pathlib import Path

from bench import harness
from bench.harness import Sink
from bench.report import Report, Sizes, child, counted_note, say


def part_incremental(
    report: Report, sizes: Sizes, concurrency: int, scratch: Path, sink: Sink
) -> None:
    runs = sizes.incremental
    ws, _ = harness.workspace(runs, log=say)
    say(f"4. unchanged re-export: {runs:,} runs to the Go sink at 0 ms")
    part = f"4 ({runs:,} runs)"
    state = scratch / "state-incremental"
    figures = []
    for label in ("full export (fresh ledger)", "second export, trail unchanged"):
        sink.reset()
        cpu = sink.cpu()
        done = child(
            "deliver_ours", ws=str(ws), url=sink.url, concurrency=concurrency, state_dir=str(state)
        )
        counted, sink_cpu = sink.count(), sink.cpu() - cpu
        r = done.result
        report.measured_child(
            part,
            f"ours: {label}, concurrency {concurrency}",
            done,
            f"{counted_note(report, f'4 {label}', r['events'], counted)}; "
            f"runs unchanged {r['runs_unchanged']:,}; "
            f"failed {r['runs_failed']}; sink CPU {sink_cpu:.1f} s",
        )
        figures.append((r["events"], r["wall_s"], counted))
    (full_events, full_s, _), (again_events, again_s, again_counted) = figures
    ratio = again_s / full_s
    met = again_events == 0 and again_counted == 0 and ratio < 0.1
    short = (
        ""
        if met
        else (f"sent {again_events} events" if again_events else f"{ratio / 0.1:.1f}x too slow")
    )
    report.target(
        "4",
        f"unchanged re-export of {runs:,} runs: time vs the full export",
        f"{again_events} events, {again_s:.1f} s",
        f"{full_events:,} events, {full_s:.1f} s",
        ratio,
        f"{ratio:.3f} of the time",
        "0 events, < 0.1",
        met,
        short,
    )
