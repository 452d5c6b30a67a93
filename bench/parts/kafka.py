"""Part 6: Kafka (``scripts/kafka.sh start``): ours vs openlineage-python's KafkaTransport."""

from __future__ import annotations

from bench import harness
from bench.report import Report, Sizes, child, median_child, say, skipped, stamp

KAFKA_RATE_TARGET = 5.0
"""Issue 34: at least five times KafkaTransport's rate..."""
KAFKA_CPU_TARGET = 1 / 6
"""...at no more than a sixth of its CPU per event."""


def part_kafka(report: Report, sizes: Sizes, bootstrap: str) -> None:
    from confluent_kafka.admin import AdminClient

    runs = sizes.delivery
    ws, _ = harness.workspace(runs, log=say)
    say(f"6. Kafka at {bootstrap}: {runs:,} runs, median of {sizes.repeats}")
    part = f"6 ({runs:,} runs)"
    try:
        AdminClient({"bootstrap.servers": bootstrap, "log_level": 0}).list_topics(timeout=5)
    except Exception as exc:  # the broker's client says why in its own words
        message = (
            f"skipped: no Kafka broker at {bootstrap} ({exc}); start one with "
            "`scripts/kafka.sh start`"
        )
        skipped(report, "6", "Kafka: ours vs KafkaTransport", ">= 5x", message)
        return
    mark = stamp()
    counter = iter(range(1_000))

    def topic() -> str:
        return f"bench-{mark}-{next(counter)}"

    ours = median_child(sizes.repeats, "kafka_ours", ws=str(ws), bootstrap=bootstrap, topic=topic())
    theirs = median_child(
        sizes.repeats, "kafka_ol", ws=str(ws), bootstrap=bootstrap, topic=topic(), flush=False
    )
    default = child("kafka_ol", ws=str(ws), bootstrap=bootstrap, topic=topic(), flush=True)
    rates = {}
    for key, done, what in (
        (
            "ours",
            ours,
            "ours: run_export to a fresh topic (3 partitions) - read + translate + "
            "encode + produce + ledger",
        ),
        (
            "theirs",
            theirs,
            "openlineage-python KafkaTransport, flush=False, emit each "
            "(events prebuilt, untimed), close() flushes",
        ),
        (
            "default",
            default,
            "openlineage-python KafkaTransport at its default flush=True "
            "(a flush after every event)",
        ),
    ):
        r = done.result
        rates[key] = (
            report.measured_child(
                part,
                what,
                done,
            )
            or 0.0,
            1e6 * r["cpu_s"] / max(1, r["events"]),
        )
    (ours_rate, ours_cpu), (their_rate, their_cpu) = rates["ours"], rates["theirs"]
    ratio = ours_rate / their_rate if their_rate else None
    cpu_share = ours_cpu / their_cpu if their_cpu else None
    misses = []
    if not ratio or ratio < KAFKA_RATE_TARGET:
        misses.append(f"{ratio:.2f}x the rate" if ratio else "no rate")
    if not cpu_share or cpu_share > KAFKA_CPU_TARGET:
        misses.append(f"{cpu_share:.2f} of the CPU" if cpu_share else "no CPU")
    report.target(
        "6",
        "Kafka: ours vs KafkaTransport (flush=False, its fastest), events/s and CPU per event",
        f"{ours_rate:,.0f}/s, {ours_cpu:.1f} µs/event",
        f"{their_rate:,.0f}/s, {their_cpu:.1f} µs/event",
        ratio,
        f"{ratio:.1f}x at {cpu_share:.2f} of the CPU" if ratio and cpu_share else "n/a",
        f">= {KAFKA_RATE_TARGET:g}x, CPU <= 1/{1 / KAFKA_CPU_TARGET:g}",
        not misses,
        ", ".join(misses),
    )
