"""Part 5: peak RSS of a dry run, a small and a large trail, over the interpreter's own."""

from __future__ import annotations

from bench import harness
from bench.report import Report, Sizes, child, say, verdict


def part_memory(report: Report, sizes: Sizes) -> None:
    small, large = sizes.memory
    say(f"5. peak RSS of a dry run: {small:,} and {large:,} runs")
    base = child("imports_only")
    report.measured(
        "5",
        "baseline: python + `import openlineage_export.export`",
        None,
        None,
        rss_mb=base.max_rss_mb,
    )
    peaks = []
    for runs in (small, large):
        ws, _ = harness.workspace(runs, log=say)
        done = child("dry_run_memory", ws=str(ws))
        r = done.result
        report.measured_child(
            f"5 ({runs:,} runs)",
            "ours: dry run into a null sink (peak RSS, wait4)",
            done,
        )
        peaks.append(done.max_rss_mb)
        whole = 1e6 * done.cpu_s / max(1, r["events"])
        report.measured(
            f"5 ({runs:,} runs)",
            "the same, CPU of the whole process (startup, "
            "imports and reading included, from wait4)",
            r["events"],
            done.wall_s,
            done.cpu_s,
            note=f"{whole:.1f} µs per event",
        )
    ratio = peaks[1] / peaks[0]
    met, short = verdict(ratio, 1.5, above=False)
    report.target(
        "5",
        f"peak RSS of a dry run: {large:,} vs {small:,} runs",
        f"{peaks[1]:,.0f} MB",
        f"{peaks[0]:,.0f} MB",
        ratio,
        f"{ratio:.2f}x",
        "< 1.5x",
        met,
        short,
    )
