"""librdkafka alone: CPU per message by requests in flight to a broker (``kafka_config.IN_FLIGHT``).

``python -m bench.kafka_producer [--kafka 127.0.0.1:59092] [--messages 80000] [--repeats 3]``

Produces the dry run's events of a synthetic trail (keyed eight to a key, as runs are), with our
producer's settings (idempotent, ``acks=all``) but for ``max.in.flight.requests.per.connection``
from 1 to 5, each in a child process of its own, the values interleaved, and flushes. Prints
messages per second, the child's CPU per message and its librdkafka broker thread's share (read
from ``/proc``). Measured on 2026-12-05 (bench/results/2026-12-05-kafka-producer.md): 2 in
flight 4.2 µs per message, 3 to 5 in flight 6.2 to 7.8 (10.7 to 12.6 at librdkafka's default
``linger.ms``, against 3.6 to 6.3 at 1 and 2), the difference nearly all in the broker thread:
hence ``IN_FLIGHT = 2``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


def _thread_cpu(seen: dict[str, tuple[str, float]]) -> None:
    """Keep each thread's CPU seconds up to date (threads end before the child does)."""
    ticks = os.sysconf("SC_CLK_TCK")
    while True:
        for tid in os.listdir("/proc/self/task"):
            try:
                stat = Path(f"/proc/self/task/{tid}/stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2 :].split()
            seen[tid] = (name, (int(fields[11]) + int(fields[12])) / ticks)
        time.sleep(0.02)


def child(bootstrap: str, events: str, count: int, in_flight: int) -> dict[str, float]:
    from confluent_kafka import Producer

    from bench.measure.kafka import fresh_topic
    from openlineage_export.deliver.kafka.config import KafkaConfig

    lines = [line for line in Path(events).read_bytes().splitlines() if line]
    values = [lines[i % len(lines)] for i in range(count)]
    keys = [str(i // 8).encode() for i in range(count)]
    topic = fresh_topic(bootstrap, f"bench-producer-{in_flight}-{time.time_ns()}")
    config = KafkaConfig(bootstrap, topic).producer_config()
    config["max.in.flight.requests.per.connection"] = in_flight
    producer = Producer(config)
    producer.list_topics(topic, timeout=10)
    seen: dict[str, tuple[str, float]] = {}
    threading.Thread(target=_thread_cpu, args=(seen,), daemon=True).start()
    time.sleep(0.1)
    before = dict(seen)
    wall, cpu = time.perf_counter(), time.process_time()
    for key, value in zip(keys, values, strict=True):
        while True:
            try:
                producer.produce(topic, value=value, key=key)
                break
            except BufferError:
                producer.poll(0.01)
    left = producer.flush(120)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    time.sleep(0.05)
    broker = sum(
        seconds - before.get(tid, (name, 0.0))[1]
        for tid, (name, seconds) in seen.items()
        if name.startswith("rdk:broker") and not name.startswith("rdk:broker-")
    )
    return {
        "messages": count - left,
        "per_s": (count - left) / wall,
        "cpu_us": 1e6 * cpu / count,
        "broker_us": 1e6 * broker / count,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kafka", default="127.0.0.1:59092")
    parser.add_argument("--messages", type=int, default=80_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        given = json.loads(args.child)
        print(json.dumps(child(**given)))
        return 0
    from bench import harness
    from openlineage_export.export import ExportRequest, run_export

    ws, _ = harness.workspace(10_000)
    events = harness.cache_dir() / "producer-events.jsonl"
    if not events.exists():
        with events.open("wb") as out:
            run_export(ExportRequest(ws, dry_run=True, output=out))
    results: dict[int, list[dict[str, float]]] = {n: [] for n in range(1, 6)}
    for _ in range(args.repeats):
        for in_flight in results:
            given = {
                "bootstrap": args.kafka,
                "events": str(events),
                "count": args.messages,
                "in_flight": in_flight,
            }
            done = subprocess.run(
                [sys.executable, "-m", "bench.kafka_producer", "--child", json.dumps(given)],
                capture_output=True,
                text=True,
                check=True,
            )
            results[in_flight].append(json.loads(done.stdout.splitlines()[-1]))
    from bench.parts.backfill import drop_topics

    drop_topics(args.kafka, "bench-producer")  # the broker's disk back
    print(
        f"| in flight | messages/s | CPU µs/message | of it, broker thread | "
        f"every round's CPU ({args.repeats}, median shown) |"
    )
    print("|---|---|---|---|---|")
    for in_flight, rounds in results.items():
        rate = statistics.median(r["per_s"] for r in rounds)
        cpu = statistics.median(r["cpu_us"] for r in rounds)
        broker = statistics.median(r["broker_us"] for r in rounds)
        every = ", ".join(f"{r['cpu_us']:.1f}" for r in rounds)
        print(f"| {in_flight} | {rate:,.0f} | {cpu:.1f} | {broker:.1f} | {every} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
