"""What the benchmark's measurements share: cached trails, the Go tools, child processes.

Everything here is plumbing for ``python -m bench.run``; the measurements themselves are in
``bench/measure/`` and run in child processes (one per measurement), so each starts from a
fresh interpreter and its peak RSS and CPU time are its own (``os.wait4``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hubwriter.synth import write_workspace

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CACHE_ENV = "OPENLINEAGE_EXPORT_BENCH_CACHE"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

WRITER = REPO / "hubwriter"  # the synthetic trails' generator, shared with the tests


def cache_dir() -> Path:
    """``$OPENLINEAGE_EXPORT_BENCH_CACHE``, else ``~/.cache/openlineage-export/bench``."""
    root = os.environ.get(CACHE_ENV) or str(Path.home() / ".cache" / "openlineage-export" / "bench")
    path = Path(root).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, as ``uptime`` shows them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


# --------------------------------------------------------------------------- trails


def _generator_version() -> str:
    """A trail depends on the generator's code: a changed generator means a new cache entry."""
    digest = hashlib.sha256()
    for path in sorted(WRITER.rglob("*.py")):
        digest.update(path.relative_to(WRITER).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:8]


def workspace(
    runs: int, *, seed: int = 1, gzip_closed: bool = True, log: Any = print
) -> tuple[Path, dict[str, Any]]:
    """A synthetic workspace of ``runs`` runs from the cache, generated on first use.

    Generation goes to a temporary folder renamed into place when complete, so an interrupted
    one is never reused. Returns the folder and the generator's summary.
    """
    name = f"synth-{runs}-s{seed}-{'gz' if gzip_closed else 'plain'}-{_generator_version()}"
    final = cache_dir() / "workspaces" / name
    summary_file = final / "summary.json"
    if summary_file.exists():
        return final, json.loads(summary_file.read_text())
    final.parent.mkdir(parents=True, exist_ok=True)
    partial = final.with_name(f"{name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    log(f"  generating a trail of {runs:,} runs into {final} (once; reused later)")
    began = time.perf_counter()
    summary = write_workspace(partial, runs, seed=seed, gzip_closed=gzip_closed)
    (partial / "summary.json").write_text(json.dumps(summary))
    partial.rename(final)
    log(f"  generated in {time.perf_counter() - began:.0f} s")
    return final, summary


_UUID = re.compile(
    rb'"traceId":"([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-'
    rb'[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})"'
)


def rekeyed_copy(source: Path, target: Path, salt: str) -> Path:
    """A copy of a plain-segment workspace whose UUID trace ids are replaced by fresh ones.

    A UUID trace id *is* the OpenLineage run id, so exporting one trail twice into one Marquez
    (two measurements, or two benchmark runs) would update the same runs instead of creating
    new ones. The replacement is a function of (salt, id), so a trace id's records stay one run,
    and keeps length and case: the events differ from the original's in their ids only.
    """

    def fresh(match: re.Match[bytes]) -> bytes:
        old = match.group(1)
        digest = bytearray(hashlib.blake2b(salt.encode() + old.lower(), digest_size=16).digest())
        digest[6] = (digest[6] & 0x0F) | 0x40  # version 4
        digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
        h = digest.hex()
        new = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}".encode()
        return b'"traceId":"' + (new.upper() if old.isupper() else new) + b'"'

    shutil.copytree(source, target)
    audit = target / ".workspace" / "lineage" / "audit"
    for segment in sorted(audit.iterdir()):
        if segment.name.endswith(".gz"):
            raise ValueError(f"{segment}: rekeying needs plain segments")
        segment.write_bytes(_UUID.sub(fresh, segment.read_bytes()))
    return target


# --------------------------------------------------------------------------- Go tools


def go_tools(log: Any = print) -> dict[str, Path]:
    """Build bench/sink and bench/loadgen with the machine's ``go build`` into the cache."""
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        raise SystemExit("bench: needs Go (go build) for the sink and the load generator")
    out = cache_dir() / "bin"
    out.mkdir(parents=True, exist_ok=True)
    tools = {}
    for tool in ("sink", "loadgen"):
        source = BENCH / tool / "main.go"
        binary = out / f"{tool}-{hashlib.sha256(source.read_bytes()).hexdigest()[:12]}"
        if not binary.exists():
            log(f"  go build {source.relative_to(REPO)} -> {binary}")
            subprocess.run(
                [go, "build", "-o", str(binary), str(source)],
                check=True,
                cwd=BENCH,
                env={**os.environ, "CGO_ENABLED": "0"},
            )
        tools[tool] = binary
    return tools


def go_version() -> str:
    """What ``go version`` says, or that Go is missing."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    try:
        return subprocess.run(
            [go, "version"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "go: not found"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a running process has used so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Sink:
    """The Go sink as a child process: started on a free loopback port, stopped on exit; with
    ``batches``, it takes the spec's batches at ``<endpoint>/batch`` (else 404 there)."""

    def __init__(self, binary: Path, latency_ms: float, *, batches: bool = False) -> None:
        self.latency_ms = latency_ms
        self.process = subprocess.Popen(
            [str(binary), "-addr", "127.0.0.1:0", "-latency", f"{latency_ms}ms"]
            + (["-batches"] if batches else []),
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        match = re.search(r"listening on (\S+)", line)
        if match is None:
            self.process.kill()
            raise RuntimeError(f"the sink did not start: {line!r}")
        self.base = f"http://{match.group(1)}"
        self.url = self.base + "/api/v1/lineage"

    def count(self) -> int:
        """Requests accepted since the last reset."""
        with urllib.request.urlopen(self.base + "/_count", timeout=10) as answer:
            return int(json.load(answer)["requests"])

    def events(self) -> int:
        """Events accepted since the last reset (a batch's each; a single request's one)."""
        with urllib.request.urlopen(self.base + "/_count", timeout=10) as answer:
            return int(json.load(answer)["events"])

    def reset(self) -> None:
        """Zero the counters."""
        request = urllib.request.Request(self.base + "/_reset", method="POST")
        urllib.request.urlopen(request, timeout=10).close()

    def cpu(self) -> float:
        """CPU seconds the sink has used so far."""
        return cpu_seconds(self.process.pid)

    def stop(self) -> None:
        """End the sink (it is ours: we started it)."""
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def __enter__(self) -> Sink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --------------------------------------------------------------------------- children


@dataclass
class ChildResult:
    """What one measurement child reported, plus what the kernel says it used."""

    result: dict[str, Any]
    max_rss_mb: float
    cpu_s: float
    wall_s: float
    load_before: str
    load_after: str
    extra: dict[str, Any] = field(default_factory=dict)


def run_child(kind: str, args: dict[str, Any], *, timeout: float | None = None) -> ChildResult:
    """Run ``python -m bench.measure kind args`` in a fresh interpreter; its last stdout line is JSON.

    Peak RSS and CPU time come from ``os.wait4`` for this child alone (``RUSAGE_CHILDREN``
    would be the maximum over every child so far).
    """
    load_before = load_average()
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "bench.measure", kind, json.dumps(args)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert process.stdout is not None
    try:
        output = process.stdout.read() if timeout is None else _read_with_timeout(process, timeout)
    finally:
        process.stdout.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - began
    if process.returncode != 0:
        raise RuntimeError(f"measurement {kind} failed (exit {process.returncode})")
    lines = [line for line in output.splitlines() if line.strip()]
    return ChildResult(
        json.loads(lines[-1]),
        usage.ru_maxrss / 1024,
        usage.ru_utime + usage.ru_stime,
        wall,
        load_before,
        load_average(),
    )


def _read_with_timeout(process: subprocess.Popen[str], timeout: float) -> str:
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    return output


def run_loadgen(
    binary: Path, url: str, events: Path, concurrency: int, requests: int = 0
) -> dict[str, Any]:
    """POST the events (each line once, or ``requests`` in turn) with bench/loadgen."""
    command = [str(binary), "-url", url, "-events", str(events), "-concurrency", str(concurrency)]
    if requests:
        command += ["-n", str(requests)]
    load_before = load_average()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["load_before"], result["load_after"] = load_before, load_average()
    # The load generator's own CPU (the only child waited for in between; startup included).
    result["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def marquez_up(base: str) -> bool:
    """True when Marquez answers its namespaces list."""
    try:
        with urllib.request.urlopen(base.rstrip("/") + "/api/v1/namespaces", timeout=5) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False
