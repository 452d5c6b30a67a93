"""``export --watch`` for days in bounded memory: ``python -m bench.watch [--runs N]``.

A dry-run watch (no server: what is measured is the following, not a server) follows a new
workspace while N runs (20,000 by default) are appended in segments of 5,000 runs; at 1,000,
5,000 and N runs written and built, it prints the watch's resident memory (VmRSS) and the CPU
it used so far, then its CPU over 20 s of an idle trail (no busy loop: a look is two ``stat``
calls every 0.25 s). Linux only (``/proc``). Its numbers are quoted in docs/using.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hubwriter import Workspace, append
from hubwriter.records import GRAPH, run_record

from bench.measure import export_environ

PER_SEGMENT = 5000
IDLE = 20.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="olx-bench-watch-") as folder:
        measure(Path(folder), runs)


def measure(folder: Path, runs: int) -> None:
    ws = Workspace(folder / "ws")
    ws.graph(GRAPH)
    ws.segment("000001.jsonl", [])
    events = folder / "events.jsonl"
    command = ["export", "-w", str(ws.root), "--watch", "--dry-run", "-o", str(events)]
    watch = subprocess.Popen(
        [sys.executable, "-m", "openlineage_export", *command],
        env=environment(folder),
        stderr=subprocess.DEVNULL,
    )
    try:
        written = 0
        for checkpoint in sorted({min(1000, runs), min(5000, runs), runs}):
            while written < checkpoint:
                segment = ws.audit / f"{written // PER_SEGMENT + 1:06d}.jsonl"
                append(segment, run_record(f"run-{written}"))
                written += 1
            wait_for_lines(events, 4 * checkpoint, watch)  # 4 events per run
            print(
                f"{checkpoint:>7,} runs: VmRSS {rss_mib(watch.pid):.1f} MiB, "
                f"CPU {cpu_seconds(watch.pid):.1f} s",
                flush=True,
            )
        before = cpu_seconds(watch.pid)
        time.sleep(IDLE)
        print(f"idle {IDLE:.0f} s: CPU {cpu_seconds(watch.pid) - before:.2f} s")
    finally:
        watch.send_signal(signal.SIGINT)
        watch.wait(60)


def environment(folder: Path) -> dict[str, str]:
    """The watch's environment: nothing of the developer's OpenLineage setup, the ledger and
    secrets under ``folder``."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENLINEAGE", "XDG_"))}
    return {**clean, **export_environ(folder), "HOME": str(folder / "home")}


def wait_for_lines(path: Path, count: int, watch: subprocess.Popen[bytes]) -> None:
    while True:
        try:
            with path.open("rb") as events:
                if sum(1 for _ in events) >= count:
                    return
        except FileNotFoundError:
            pass
        if watch.poll() is not None:
            raise SystemExit(f"the watch ended ({watch.returncode}) before {count} events")
        time.sleep(0.2)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


if __name__ == "__main__":
    main()
