"""Where the export's time goes: ``python -m bench.hotspots [dry-run|deliver] [--runs N]``.

``dry-run`` profiles the translation path (read + translate + encode, one thread) with
cProfile. ``deliver`` profiles ``run_export`` to the Go sink at 0 ms latency with py-spy
(``pip install py-spy``), which samples every thread: once counting only samples that hold the
GIL (where the CPU goes) and once counting every non-idle sample (where wall time goes, lock
waits included). Both print the top functions by self and inclusive share.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import pstats
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench import harness
from bench.measure import NullSink


def profile_dry_run(runs: int, top: int) -> None:
    from openlineage_export.export import ExportRequest, run_export

    ws, _ = harness.workspace(runs)
    profiler = cProfile.Profile()
    profiler.enable()
    report = run_export(ExportRequest(ws, dry_run=True, output=NullSink()))  # type: ignore[arg-type]
    profiler.disable()
    print(f"dry run of {runs:,} runs, {report.events_sent:,} events (cProfile, one thread)")
    stats = pstats.Stats(profiler).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def _frame(frame: str) -> str:
    """``function (path:line)`` -> ``function (file)``."""
    name, _, where = frame.partition(" (")
    return f"{name} ({where.split(':')[0].rsplit('/', 1)[-1]})" if where else name


def summarise(raw: Path, top: int) -> None:
    """Self and inclusive shares per function of py-spy's raw (collapsed) output."""
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        samples = int(count)
        total += samples
        frames = [_frame(f) for f in stack.split(";")[1:]]  # the first names the thread
        for name in set(frames):
            inclusive[name] += samples
        if frames:
            own[frames[-1]] += samples
    print(f"  {total} samples")
    for title, counter in (("self", own), ("inclusive", inclusive)):
        print(f"  -- {title}")
        for name, samples in counter.most_common(top):
            print(f"  {100 * samples / total:5.1f}%  {name}")


def profile_delivery(runs: int, top: int, concurrency: int) -> None:
    spy = shutil.which("py-spy")
    if spy is None:
        raise SystemExit("hotspots deliver needs py-spy: pip install py-spy")
    ws, _ = harness.workspace(runs)
    tools = harness.go_tools()
    with harness.Sink(tools["sink"], 0) as sink, tempfile.TemporaryDirectory() as scratch:
        for mode, flags in (
            ("CPU: samples holding the GIL", ["--gil"]),
            ("wall: every non-idle sample, lock waits included", []),
        ):
            raw = Path(scratch) / "samples.txt"
            args = {
                "ws": str(ws),
                "url": sink.url,
                "concurrency": concurrency,
                "state_dir": tempfile.mkdtemp(dir=scratch),
            }
            done = subprocess.run(
                [
                    spy,
                    "record",
                    "--rate",
                    "250",
                    "--format",
                    "raw",
                    "--output",
                    str(raw),
                    *flags,
                    "--",
                    sys.executable,
                    "-m",
                    "bench.measure",
                    "deliver_ours",
                    json.dumps(args),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            result = json.loads(
                [line for line in done.stdout.splitlines() if line.startswith("{")][-1]
            )
            print(
                f"run_export of {runs:,} runs to the Go sink at 0 ms, concurrency "
                f"{concurrency}: {result['events']:,} events in {result['wall_s']:.1f} s "
                f"(under py-spy); {mode}"
            )
            summarise(raw, top)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", nargs="?", choices=("dry-run", "deliver"), default="dry-run")
    parser.add_argument(
        "--runs",
        type=int,
        default=None,
        help="trail size (default: 5000 for dry-run, 1000 for deliver)",
    )
    parser.add_argument("--top", type=int, default=30, help="functions to list (default 30)")
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    if args.what == "dry-run":
        profile_dry_run(args.runs or 5_000, args.top)
    else:
        profile_delivery(args.runs or 1_000, args.top, args.concurrency)
    return 0


if __name__ == "__main__":
    sys.exit(main())
