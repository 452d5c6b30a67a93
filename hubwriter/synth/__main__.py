"""``python -m hubwriter.synth DIR --runs N [options]``: a synthetic workspace, its summary
printed."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import __doc__ as about
from .workspace import write_workspace


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m hubwriter.synth", description=(about or "").split("\n\n")[0]
    )
    parser.add_argument("root", type=Path, help="workspace directory to create")
    parser.add_argument("--runs", type=int, required=True, help="number of runs")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--pipelines", type=int, default=20, help="pipelines in the graph")
    parser.add_argument("--segment-lines", type=int, default=50_000, help="lines per segment")
    parser.add_argument(
        "--no-gzip",
        dest="gzip_closed",
        action="store_false",
        help="leave closed segments uncompressed",
    )
    parser.add_argument(
        "--bad-every", type=int, default=0, help="make every N-th line malformed (default 0: none)"
    )
    parser.add_argument(
        "--updates",
        type=float,
        default=0.3,
        help="share of runs also recorded when they start (default 0.3)",
    )
    parser.add_argument(
        "--running-tail", type=int, default=0, help="how many of the last runs are still running"
    )
    parser.add_argument(
        "--torn-tail", action="store_true", help="end the newest segment with a half-written line"
    )
    args = parser.parse_args(argv)
    began = time.perf_counter()
    summary = write_workspace(
        args.root,
        args.runs,
        seed=args.seed,
        pipelines=args.pipelines,
        segment_lines=args.segment_lines,
        gzip_closed=args.gzip_closed,
        bad_every=args.bad_every,
        updates=args.updates,
        running_tail=args.running_tail,
        torn_tail=args.torn_tail,
    )
    print(json.dumps(summary))
    print(f"wrote {args.root} in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
