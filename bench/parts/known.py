"""Part 7: a trail the real Marquez already holds, exported from an empty ledger (a CI job on a
fresh machine): asking Marquez what it holds vs sending everything (``--full``)."""

from __future__ import annotations

from pathlib import Path

from bench import harness
from bench.report import Report, Sizes, child, marquez_missing, say, stamp, verdict


def part_known(report: Report, sizes: Sizes, concurrency: int, scratch: Path, base: str) -> None:
    """A trail Marquez already holds, from an empty ledger: asking vs ``--full``.

    The trail (fresh run ids, a namespace of its own) is loaded into Marquez by a first export;
    then two exports, each from an empty ledger (a CI job's fresh machine), one asking Marquez
    what it holds (the default), one sending everything (``--full``). A proxy in front of
    Marquez (tests/e2e/faultproxy.py, no faults) counts the requests each made."""
    from tests.e2e.faultproxy import FaultProxy

    runs = sizes.known
    say(f"7. a trail Marquez already holds, from an empty ledger: {runs:,} runs at {base}")
    if marquez_missing(report, base, "7", "already held: asking vs --full", ">= 20x"):
        return
    source, _ = harness.workspace(runs, gzip_closed=False, log=say)
    mark = stamp()
    ws = harness.rekeyed_copy(source, scratch / "known", f"{mark}-known")
    namespace = f"bench-known-{mark}"
    part = f"7 ({runs:,} runs)"
    walls: dict[str, tuple[float, float]] = {}
    with FaultProxy(base, seed=0) as proxy:
        for key, label, full in (
            ("load", "loading it: the first export, into a namespace Marquez lacks", False),
            ("ask", "empty ledger: asks Marquez what it holds, sends the rest", False),
            ("full", "empty ledger, --full: sends every run", True),
        ):
            reads, posts = len(proxy.reads), len(proxy.passed)
            done = child(
                "deliver_ours",
                ws=str(ws),
                url=proxy.url,
                concurrency=concurrency,
                state_dir=str(scratch / f"state-known-{key}"),
                namespace=namespace,
                full=full,
            )
            r = done.result
            gets, sent = len(proxy.reads) - reads, len(proxy.passed) - posts
            report.measured_child(
                part,
                f"ours: {label}, concurrency {concurrency}",
                done,
                f"requests: {gets + sent:,} ({gets:,} GET, {sent:,} POST); runs sent "
                f"{r['runs_sent']:,}, held {r['runs_held']:,}, failed {r['runs_failed']}"
                + (f"; warnings: {r['warnings']}" if r["warnings"] else ""),
            )
            say(
                f"    {key}: {r['wall_s']:.1f} s wall, {r['cpu_s']:.1f} s CPU, "
                f"{gets:,} GET + {sent:,} POST, held {r['runs_held']:,}"
            )
            walls[key] = (r["wall_s"], r["cpu_s"])
    ratio = walls["full"][0] / walls["ask"][0] if walls["ask"][0] else None
    met, short = verdict(ratio, 20)
    report.target(
        "7",
        f"a trail of {runs:,} runs Marquez holds, from an empty ledger: --full vs asking",
        f"{walls['ask'][0]:.1f} s ({walls['ask'][1]:.1f} s CPU)",
        f"{walls['full'][0]:.1f} s ({walls['full'][1]:.1f} s CPU)",
        ratio,
        f"{ratio:.0f}x less time" if ratio else "n/a",
        ">= 20x",
        met,
        short,
    )
