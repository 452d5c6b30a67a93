"""What a benchmark run found, and how it is said: sizes, rows, targets, the Markdown table;
the measurement children run and echoed."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import platform
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from typing import Any

from bench import harness
from bench.harness import ChildResult, run_child


@dataclass(frozen=True)
class Sizes:
    """Trail sizes (runs) and repeats of one benchmark mode."""

    translation: int
    translation_repeats: int
    delivery: int
    marquez: int
    incremental: int
    memory: tuple[int, int]
    capacity_requests: int
    repeats: int
    dry_run: int
    client_requests: int
    known: int = 1_000
    backfill: int = 1_000_000

    @classmethod
    def of(cls, quick: bool, known: int | None = None, backfill: int | None = None) -> Sizes:
        if quick:
            sizes = cls(
                1_000, 2, 300, 60, 2_000, (2_000, 20_000), 30_000, 1, 2_000, 1_500, 100, 20_000
            )
        else:
            sizes = cls(
                5_000, 3, 2_000, 300, 100_000, (10_000, 1_000_000), 100_000, 3, 20_000, 6_000
            )
        if known is not None:
            sizes = dataclasses.replace(sizes, known=known)
        if backfill is not None:
            sizes = dataclasses.replace(sizes, backfill=backfill)
        return sizes


@dataclass
class Target:
    """One target (issues 4 and 23): a ratio and the bound it must meet."""

    key: str
    what: str
    ours: str
    reference: str
    ratio: float | None
    shown: str
    bound: str
    met: bool | None
    short_by: str = ""


@dataclass
class Report:
    """Everything the run found, rendered as Markdown at the end."""

    quick: bool
    concurrency: int
    marquez_concurrency: int
    targets: list[Target] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)

    def measured(
        self,
        part: str,
        what: str,
        events: int | None,
        wall_s: float | None,
        cpu_s: float | None = None,
        rss_mb: float | None = None,
        load: str = "",
        note: str = "",
    ) -> float | None:
        """Add one measurement row; returns events per wall second."""
        rate = events / wall_s if events and wall_s else None
        self.rows.append(
            [
                part,
                what,
                f"{events:,}" if events is not None else "",
                f"{wall_s:.2f}" if wall_s is not None else "",
                f"{rate:,.0f}" if rate is not None else "",
                f"{cpu_s:.2f}" if cpu_s is not None else "",
                f"{1e6 * cpu_s / events:,.1f}" if cpu_s is not None and events else "",
                f"{rss_mb:,.0f}" if rss_mb is not None else "",
                load,
                note,
            ]
        )
        return rate

    def measured_loadgen(
        self, part: str, what: str, result: dict[str, Any], note: str = ""
    ) -> float | None:
        """Add the row of one Go load generator run (``harness.run_loadgen``): the requests
        answered, its seconds and its own CPU, the load around it; returns requests per
        wall second."""
        return self.measured(
            part,
            what,
            result["ok"],
            result["seconds"],
            result["cpu_s"],
            load=f"{result['load_before']} -> {result['load_after']}",
            note=note,
        )

    def measured_child(
        self, part: str, what: str, done: ChildResult, note: str = ""
    ) -> float | None:
        """Add the row of one measurement child: what it timed (events, wall and CPU seconds),
        its peak RSS and the load around it; returns events per wall second."""
        r = done.result
        return self.measured(
            part,
            what,
            r["events"],
            r["wall_s"],
            r["cpu_s"],
            done.max_rss_mb,
            f"{done.load_before} -> {done.load_after}",
            note,
        )

    def target(
        self,
        key: str,
        what: str,
        ours: str,
        reference: str,
        ratio: float | None,
        shown: str,
        bound: str,
        met: bool | None,
        short_by: str = "",
    ) -> None:
        self.targets.append(Target(key, what, ours, reference, ratio, shown, bound, met, short_by))


def default_concurrency() -> int:
    """``openlineage.concurrency``'s default, the one an export uses unless told."""
    from openlineage_export.deliver.destination import DeliverySettings

    return int(DeliverySettings.rows()[2].default)  # type: ignore[call-overload]


def stamp() -> str:
    """This run's mark on what it makes on a server (namespaces, topics): the time and the pid,
    so that nothing collides with another run's."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}"


def skipped(report: Report, key: str, what: str, bound: str, message: str) -> None:
    """A part that cannot run here: said, and its target shown unmeasured, with why."""
    say(f"    {message}")
    report.target(key, what, "", "", None, message, bound, None)


def marquez_missing(report: Report, base: str, key: str, what: str, bound: str) -> bool:
    """True, the part skipped and why said, when Marquez does not answer at ``base``."""
    if harness.marquez_up(base):
        return False
    message = (
        f"skipped: Marquez does not answer at {base}; start it with "
        "`scripts/marquez.sh start` and run again"
    )
    skipped(report, key, what, bound, message)
    return True


def say(text: str) -> None:
    print(text, flush=True)


def child(kind: str, **args: Any) -> ChildResult:
    """Run one measurement child and echo its figure."""
    done = run_child(kind, args)
    events = done.result.get("events")
    wall = done.result.get("wall_s")
    rate = f"{events / wall:,.0f} events/s" if events and wall else ""
    say(
        f"    {kind}: {rate} {'(' + format(wall, '.2f') + ' s)' if wall else ''} "
        f"peak RSS {done.max_rss_mb:,.0f} MB, load {done.load_before} -> {done.load_after}"
    )
    return done


def counted_note(report: Report, part: str, reported: int, counted: int) -> str:
    """What the sink counted, flagged (and noted) when it differs from what the client says."""
    note = f"sink counted {counted:,}"
    if counted != reported:
        note += f" (MISMATCH: {counted - reported:+,})"
        report.notes.append(
            f"part {part}: the client reported {reported:,} events accepted, "
            f"the sink counted {counted:,} POSTs"
        )
    return note


def verdict(ratio: float | None, bound: float, *, above: bool = True) -> tuple[bool | None, str]:
    """Whether ``ratio`` meets ``bound``, and by how much it falls short when not."""
    if ratio is None:
        return None, ""
    if above:
        return (True, "") if ratio >= bound else (False, f"{bound / ratio:.1f}x short")
    return (True, "") if ratio < bound else (False, f"{ratio / bound:.2f}x over")


def wall_of(done: ChildResult) -> float:
    result = done.result
    if "wall_s" in result:
        return float(result["wall_s"])
    return sum(float(p["wall_s"]) for p in result.values())


def median_child(repeats: int, kind: str, **args: Any) -> ChildResult:
    """The run with the median wall time of ``repeats`` runs of one measurement."""
    done = sorted((child(kind, **args) for _ in range(repeats)), key=wall_of)
    return done[len(done) // 2]


def git_state() -> str:
    """HEAD and the files changed in the work tree (read-only git calls)."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "--no-optional-locks", *args], cwd=harness.REPO, capture_output=True, text=True
        )
        return done.stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = [
        line[3:]
        for line in git("status", "--porcelain").splitlines()
        if line[3:].startswith("src/")
    ]
    digest = hashlib.sha256()
    for path in sorted((harness.REPO / "src").rglob("*.py")):
        digest.update(path.read_bytes())
    return (
        head
        + (f" + uncommitted changes in {', '.join(dirty)}" if dirty else "")
        + f" (src/**/*.py digest {digest.hexdigest()[:10]})"
    )


def render(report: Report, argv: list[str], started: str, elapsed: float) -> str:
    mode = "quick" if report.quick else "full"
    lines = [
        f"# Benchmark results ({mode})",
        "",
        f"`python -m bench.run{' ' + ' '.join(argv) if argv else ''}` on {started}, "
        f"{elapsed / 60:.1f} min. Each measurement ran in its own child process; "
        "events/s = events / wall seconds of the measured work (interpreter start excluded).",
        "",
        "## Targets",
        "",
        "| # | what | ours | reference | ratio | target | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for t in report.targets:
        mark = {
            True: "met",
            False: f"**missed**{' (' + t.short_by + ')' if t.short_by else ''}",
            None: "measured" if t.ratio is not None else "not measured",
        }[t.met]
        lines.append(
            f"| {t.key} | {t.what} | {t.ours} | {t.reference} | {t.shown} | {t.bound} | {mark} |"
        )
    lines += [
        "",
        "## Measurements",
        "",
        "| part | measurement | events | wall s | events/s | CPU s | CPU µs/event "
        "| peak RSS MB | load avg before -> after | notes |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in report.rows]
    lines += [
        "",
        "## Setup",
        "",
        f"- machine: {platform.machine()}, {os.cpu_count()} CPUs, "
        f"{platform.system()} {platform.release()}; shared with other engineers' test runs",
        f"- load average (1/5/15 min): {'; '.join(report.load)}",
        f"- Python {platform.python_version()}, openlineage-python "
        f"{version('openlineage-python')}, httpx {version('httpx')}, orjson "
        f"{version('orjson')}, {harness.go_version()}",
        f"- code: {report.code[0]} at the start"
        + (
            f"; {report.code[-1]} at the end (other engineers were changing it)"
            if report.code[-1] != report.code[0]
            else ", unchanged to the end"
        ),
        f"- concurrency: openlineage.concurrency {report.concurrency} for ours and the Go "
        f"load generator (parts 2, 4), {report.marquez_concurrency} for both into Marquez "
        "(part 3); AsyncHttpTransport at its default (100)",
        f"- trails: hubwriter/synth (seed 1), cached under {harness.cache_dir()}",
        "- CPU s: user + system time of the measured work in the child (all its threads); "
        "peak RSS: the child's ru_maxrss from os.wait4",
    ]
    if report.notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in report.notes]
    return "\n".join(lines) + "\n"
