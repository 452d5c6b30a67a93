"""Part 8: a backfill of a million runs (about eight million events) into files and into
Kafka: wall time, the whole process's CPU per event, peak RSS."""

from __future__ import annotations

from pathlib import Path

from bench import harness
from bench.harness import ChildResult
from bench.report import Report, Sizes, child, say, stamp, verdict

BACKFILL_RSS_MB = 150
"""Issue 34's bound on the peak memory of a million-run backfill."""


def part_backfill(report: Report, sizes: Sizes, bootstrap: str, scratch: Path) -> None:
    """A whole trail of ``sizes.backfill`` runs exported once, into a file and into a fresh
    Kafka topic: each a child process, its wall time, its whole CPU (wait4) and peak RSS."""
    runs = sizes.backfill
    ws, _ = harness.workspace(runs, log=say)
    part = f"8 ({runs:,} runs)"
    peaks: dict[str, float] = {}
    say(f"8. backfill of {runs:,} runs into a file")
    output = scratch / "backfill.jsonl"
    try:
        done = child("backfill_file", ws=str(ws), output=str(output))
    finally:
        output.unlink(missing_ok=True)  # gigabytes: gone before Kafka's copy is written
    peaks["file"] = backfill_row(report, part, "ours into a file (transport file)", done)
    say(f"8. backfill of {runs:,} runs into Kafka at {bootstrap}")
    topic = f"bench-backfill-{stamp()}"
    try:
        done = child("kafka_ours", ws=str(ws), bootstrap=bootstrap, topic=topic)
    finally:
        drop_topics(bootstrap, topic)
    peaks["kafka"] = backfill_row(
        report, part, "ours into Kafka (a fresh topic of 3 partitions)", done
    )
    worst = max(peaks.values())
    met, short = verdict(worst, BACKFILL_RSS_MB, above=False)
    report.target(
        "8",
        f"peak RSS of a backfill of {runs:,} runs (files; Kafka)",
        f"{peaks['file']:,.0f} MB; {peaks['kafka']:,.0f} MB",
        "",
        worst,
        f"{worst:,.0f} MB",
        f"< {BACKFILL_RSS_MB} MB",
        met,
        short,
    )


def backfill_row(report: Report, part: str, what: str, done: ChildResult) -> float:
    """The row of one backfill, with the whole process's CPU per event; its peak RSS."""
    r = done.result
    if r.get("runs_failed") or r.get("outage"):
        raise RuntimeError(f"{what}: {r.get('runs_failed')} runs failed, outage {r.get('outage')}")
    report.measured(
        part,
        f"{what}: whole process (startup, reading, translating, encoding, writing, ledger)",
        r["events"],
        done.wall_s,
        done.cpu_s,
        done.max_rss_mb,
        f"{done.load_before} -> {done.load_after}",
        f"{r['bytes'] / r['events']:,.0f} bytes an event" if r.get("bytes") else "",
    )
    return done.max_rss_mb


def drop_topics(bootstrap: str, prefix: str) -> None:
    """Delete the topics a measurement made (named ``prefix``-PID): the broker's disk back."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": 0})
    names = [t for t in admin.list_topics(timeout=30).topics if t.startswith(prefix + "-")]
    for future in admin.delete_topics(names).values() if names else ():
        future.result(60)
