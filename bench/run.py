"""The export's benchmark, one command: ``python -m bench.run [--quick]`` (from the repository).

Runs, side by side on this machine, each measurement in its own child process:

0. the HTTP clients alone: CPU per POST of libcurl (ours, and a bare pycurl loop), pyreqwest,
   aiohttp and httpx against the Go sink at 5 ms, beside the Go load generator;
1. translation: our dry run vs openlineage-python's classes + Serde vs orjson over prebuilt dicts;
2. delivery to a Go sink answering after 5 ms: ours vs HttpTransport one by one vs
   AsyncHttpTransport (the sink's own capacity proven first with a Go load generator);
3. delivery into the real Marquez (``scripts/marquez.sh start``): ours vs the Go load generator;
4. re-export of an unchanged trail of 100k runs: time and events vs the first, full export;
5. peak RSS of a dry run of 10k and 1M runs;
6. Kafka (``scripts/kafka.sh start``): ours vs openlineage-python's KafkaTransport;
7. a trail the real Marquez already holds, exported from an empty ledger (a CI job on a fresh
   machine): asking Marquez what it holds vs sending everything (``--full``).
8. a backfill of a million runs (about eight million events) into files and into Kafka: wall
   time, the whole process's CPU per event, peak RSS (``--backfill-runs`` sets the size).
9. the spec's batches: into the Go sink taking them (ours in causal order vs the Go load
   generator one event a request, concurrency 64), and into the real Feast (``scripts/feast.sh
   start``): batches vs one event a request.

Part 1 also runs a dry run of 20,000 runs and takes its whole process's CPU per event.

Prints a table of ratios against the targets and writes it to ``bench/results/latest.md``.
``--quick`` skips the 1M run and shrinks every size. See docs/performance.md.

Each part is a module of ``bench/parts/``; this one reads the options and runs the parts asked
for, one after the other; ``report.py`` keeps what they found and renders it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench import harness
from bench.harness import Sink, load_average
from bench.parts import (
    backfill,
    batches,
    clients,
    delivery,
    incremental,
    kafka,
    known,
    marquez,
    memory,
    translation,
)
from bench.report import Report, Sizes, default_concurrency, git_state, render, say

RESULTS = harness.BENCH / "results" / "latest.md"


def arguments() -> argparse.ArgumentParser:
    """The command line's options."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, no 1M-run trail (a few minutes)"
    )
    parser.add_argument(
        "--concurrencies",
        default="8,16,32,64",
        help="part 2: the openlineage.concurrency values to compare, each with "
        "the load generator at the same concurrency (default 8,16,32,64)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="part 4: openlineage.concurrency (default: the setting's default)",
    )
    parser.add_argument(
        "--marquez-concurrency",
        type=int,
        default=16,
        help="concurrency of ours and the load generator into Marquez (default "
        "16: on 2 cores Marquez takes the most at about that)",
    )
    parser.add_argument(
        "--marquez-url",
        default="http://127.0.0.1:5000",
        help="Marquez base URL for part 3 (default http://127.0.0.1:5000)",
    )
    parser.add_argument(
        "--kafka",
        default="127.0.0.1:59092",
        help="Kafka bootstrap servers for part 6 (default 127.0.0.1:59092, "
        "scripts/kafka.sh's broker)",
    )
    parser.add_argument(
        "--parts", default="0123456789", help="which parts to run, e.g. 12 (default: all)"
    )
    parser.add_argument(
        "--backfill-runs",
        type=int,
        default=None,
        help="part 8: runs of the backfill into files and Kafka (default 1,000,000; "
        "--quick 20,000): about 8.2 events a run, 1.4 kB an event on disk, twice",
    )
    parser.add_argument(
        "--known-runs",
        type=int,
        default=None,
        help="part 7: runs of the trail Marquez already holds (default 1,000; --quick 100): "
        "loading it takes about 7 minutes per 1,000 runs on 2 busy cores, twice",
    )
    parser.add_argument(
        "--feast-url",
        default=os.environ.get("FEAST_URL", "http://127.0.0.1:56580"),
        help="Feast's base URL for part 9 (default FEAST_URL, else http://127.0.0.1:56580; "
        "its key from FEAST_API_KEY or scripts/feast.sh's api.key)",
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=RESULTS,
        help="where to write the table (default bench/results/latest.md)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the parts asked for; write and print the table."""
    argv = sys.argv[1:] if argv is None else argv
    args = arguments().parse_args(argv)
    sizes = Sizes.of(args.quick, args.known_runs, args.backfill_runs)
    if args.concurrency is None:
        args.concurrency = default_concurrency()
    report = Report(
        quick=args.quick, concurrency=args.concurrency, marquez_concurrency=args.marquez_concurrency
    )
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    began = time.perf_counter()
    report.load.append(f"{load_average()} at the start")
    report.code.append(git_state())
    say(
        f"benchmark ({'quick' if args.quick else 'full'}), load average {load_average()}, "
        f"{os.cpu_count()} CPUs"
    )
    tools = harness.go_tools(log=say)
    scratch = Path(tempfile.mkdtemp(prefix="olx-bench-"))
    try:
        with Sink(tools["sink"], 0) as fast_sink:
            parts = {
                "0": lambda: clients.part_clients(report, sizes, tools, scratch),
                "1": lambda: translation.part_translation(report, sizes),
                "2": lambda: delivery.part_delivery(
                    report,
                    sizes,
                    tools,
                    [int(c) for c in args.concurrencies.split(",")],
                    scratch,
                    fast_sink,
                ),
                "3": lambda: marquez.part_marquez(
                    report, sizes, tools, args.marquez_concurrency, scratch, args.marquez_url
                ),
                "4": lambda: incremental.part_incremental(
                    report, sizes, args.concurrency, scratch, fast_sink
                ),
                "5": lambda: memory.part_memory(report, sizes),
                "6": lambda: kafka.part_kafka(report, sizes, args.kafka),
                "7": lambda: known.part_known(
                    report, sizes, args.marquez_concurrency, scratch, args.marquez_url
                ),
                "8": lambda: backfill.part_backfill(report, sizes, args.kafka, scratch),
                "9": lambda: batches.part_batches(report, sizes, tools, scratch, args.feast_url),
            }
            for key, part in parts.items():
                if key not in args.parts:
                    continue
                try:
                    part()
                except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                    # One broken part must not lose the others' figures.
                    say(f"part {key} failed: {exc}")
                    report.notes.append(f"part {key} failed: {exc}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report.load.append(f"{load_average()} at the end")
    report.code.append(git_state())
    text = render(report, argv, started, time.perf_counter() - began)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    partial = args.output.with_name(args.output.name + ".tmp")
    partial.write_text(text, encoding="utf-8")
    partial.replace(args.output)
    say("")
    say(text)
    say(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
