"""``export --pipeline ID --since WHEN --until WHEN``, run as users run it: the CLI in a
subprocess, its events written or sent, the ledger and ``status`` after it."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fakeserver import FakeServer, fake_server_fixture  # noqa: F401 - registers fake_server
from helpers import WorkspaceMaker, cli_command, cli_env
from test_selection import editor_run, make_trail, timed_run, uuid

Done = subprocess.CompletedProcess[bytes]
Cli = Callable[..., Done]

# The runs of test_selection.make_trail, by pipeline and start (UTC):
#   1 alpha 11-02T23:59:59.999  2 alpha 11-03T00:00  3 beta 11-02T23:30  4 beta 11-03T01:00
#   5 alpha 11-05T12:00 (its first record: 11-03T12:00)  6 alpha 11-03T23:59:59.999999
#   7 alpha 11-04T00:00  8 beta 11-03T23:30  9 legacy 11-03T06:00 (not in the graph)
# The graph's pipelines: alpha, beta, gamma (never run).


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    def run(*args: str, env: dict[str, str] | None = None) -> Done:
        done = subprocess.run(
            cli_command(*args),
            capture_output=True,
            timeout=120,
            env={**cli_env(tmp_path), **(env or {})},
            cwd=tmp_path,
        )
        assert b"Traceback" not in done.stderr, done.stderr.decode()
        return done

    return run


def run_all(cli: Cli, calls: Sequence[Sequence[str]], *, at_once: int = 4) -> list[Done]:
    """Each call's result, in order; ``at_once`` of them run together (1 for exports that send:
    two exports to one destination take its lock in turn, the second exits 5)."""
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        return list(pool.map(lambda args: cli(*args), calls))


def err_lines(done: Done) -> list[str]:
    return [line for line in done.stderr.decode().splitlines() if line.strip()]


def runs_of(lines: list[bytes]) -> set[str]:
    return {editor_run(line) for line in lines}


def ids(*numbers: int) -> set[str]:
    return {uuid(n) for n in numbers}


SELECTIONS: list[tuple[tuple[str, ...], set[int]]] = [
    (("--pipeline", "beta"), {3, 4, 8}),
    (("--pipeline", "alpha", "--pipeline", "legacy"), {1, 2, 5, 6, 7, 9}),
    (("--since", "2026-11-03"), {2, 4, 5, 6, 7, 8, 9}),
    (("--until", "2026-11-04T01:00:00+01:00"), {1, 2, 3, 4, 6, 8, 9}),
    (("--since", "2026-11-03T01:00:00+01:00", "--until", "2026-11-04"), {2, 4, 6, 8, 9}),
    (
        ("--pipeline", "alpha", "--since", "2026-11-02T19:00:00-05:00", "--until", "2026-11-04"),
        {2, 6},
    ),
]


def test_a_dry_run_writes_the_selected_runs_as_the_whole_dry_run_writes_them(
    cli: Cli, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    make_trail(ws)
    calls = [("export", "--dry-run", "-o", str(tmp_path / "all.jsonl"), "-w", str(ws.root))]
    for n, (options, _) in enumerate(SELECTIONS):
        out = str(tmp_path / f"part-{n}.jsonl")
        calls.append(("export", "--dry-run", "-o", out, "-w", str(ws.root), *options))
    whole, *parts = run_all(cli, calls)
    assert whole.returncode == 0, whole.stderr
    every_line = (tmp_path / "all.jsonl").read_bytes().splitlines()
    assert runs_of(every_line) == ids(*range(1, 10))
    for n, ((options, runs), done) in enumerate(zip(SELECTIONS, parts, strict=True)):
        assert done.returncode == 0, (options, done.stderr)
        written = (tmp_path / f"part-{n}.jsonl").read_bytes().splitlines()
        # Byte for byte the lines of the whole dry run that belong to the selected runs.
        assert written == [line for line in every_line if editor_run(line) in ids(*runs)], options
        said = err_lines(done)
        assert said[0].startswith(f"dry run: {len(runs)} runs, "), said
        (selected,) = [line for line in said if line.startswith("selected ")]
        assert selected.startswith(f"selected {len(runs)} of 9 runs on the trail: "), said
        assert selected.endswith(f"({9 - len(runs)} left out, not built)"), said


def test_the_json_summary_and_progress_count_the_selected_runs(
    cli: Cli, ws: WorkspaceMaker, tmp_path: Path
) -> None:
    make_trail(ws)
    done = cli(
        "export",
        "--dry-run",
        "--json",
        "--progress",
        "json",
        "-o",
        str(tmp_path / "events.jsonl"),
        "-w",
        str(ws.root),
        "--pipeline",
        "beta",
        "--pipeline",
        "gamma",
        "--since",
        "2026-11-03T00:30:00+01:00",
        "--until",
        "2026-11-04",
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["runs"]["total"] == summary["runs"]["built"] == 3
    assert summary["selection"] == {
        "pipelines": ["beta", "gamma"],
        "since": "2026-11-03T00:30:00+01:00",
        "until": "2026-11-04T00:00:00Z",
        "runsSelected": 3,
        "runsOnTrail": 9,
    }
    assert summary["neverRun"] == ["gamma"]  # named, and never ran: said as ever
    progress = [json.loads(line) for line in done.stderr.splitlines()]
    totals = {p["runsTotal"] for p in progress if p.get("phase") == "building"}
    assert totals == {3}
    (said,) = [p["text"] for p in progress if p["event"] == "summary"]
    assert (
        "\nselected 3 of 9 runs on the trail: pipelines beta, gamma; started at or after " in said
    )


def test_durations_are_counted_back_from_now(cli: Cli, ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment(
        "000001.jsonl",
        [
            timed_run(1, "daily-sales", "2001-01-01T00:00:00Z"),  # long ago
            timed_run(2, "daily-sales", "2100-01-01T00:00:00+01:00"),  # far ahead
        ],
    )
    calls = [
        ("--since", "30d"),
        ("--until", "1w"),
        ("--since", "90s", "--until", "2100-01-02"),
        ("--since", "2w", "--until", "12h"),
        ("--since", "30m"),
    ]
    results = run_all(
        cli, [("export", "--dry-run", "--progress", "none", "-w", str(ws.root), *c) for c in calls]
    )
    found = [runs_of(done.stdout.splitlines()) for done in results]
    assert [done.returncode for done in results] == [0] * len(calls)
    assert found == [ids(2), ids(1), ids(2), set(), ids(2)]
    # Said as the instant it was resolved to (UTC, whole seconds).
    (said,) = [line for line in err_lines(results[0]) if line.startswith("selected ")]
    assert re.fullmatch(
        r"selected 1 of 2 runs on the trail: started at or after "
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(1 left out, not built\)",
        said,
    ), said


def posted_runs(server: FakeServer, skip: int = 0) -> set[str]:
    bodies = [r.body for r in server.requests[skip:] if r.method == "POST"]
    return runs_of(bodies)


def test_an_export_sends_the_selected_runs_and_leaves_the_rest_pending(
    cli: Cli, ws: WorkspaceMaker, fake_server: FakeServer, tmp_path: Path
) -> None:
    make_trail(ws)
    ws.settings({"openlineage.url": fake_server.url})
    window = ("--since", "2026-11-03", "--until", "2026-11-04")
    first = cli("export", "--json", "-w", str(ws.root), *window)
    assert first.returncode == 0, first.stderr
    assert posted_runs(fake_server) == ids(2, 4, 6, 8, 9)
    summary = json.loads(first.stdout)
    assert summary["runs"] == {"total": 5, "sent": 5, "unchanged": 0, "held": 0, "failed": 0}
    assert summary["selection"]["runsOnTrail"] == 9

    status = cli("status", "-w", str(ws.root)).stdout.decode().splitlines()
    destination = f"{fake_server.url}/api/v1/lineage"
    assert status[0] == "9 runs on the trail"
    assert status[1] == f"{destination}: 5 of 9 runs exported; 4 pending (4 new or changed)"

    # --full with the same selection sends those five again, and only those.
    seen = len(fake_server.requests)
    again = cli("export", "--full", "-w", str(ws.root), *window)
    assert again.returncode == 0, again.stderr
    assert posted_runs(fake_server, seen) == ids(2, 4, 6, 8, 9)
    said = err_lines(again)
    assert said[0].startswith(f"exported to {destination}: 5 of 5 runs sent"), said
    assert (
        "selected 5 of 9 runs on the trail: started at or after 2026-11-03T00:00:00Z and "
        "before 2026-11-04T00:00:00Z (4 left out, neither sent nor recorded: status counts "
        "them as it did before)"
    ) in said
    assert "4 pending" in cli("status", "-w", str(ws.root)).stdout.decode()

    # Without a selection: exactly the rest.
    seen = len(fake_server.requests)
    rest = cli("export", "--json", "-w", str(ws.root))
    assert rest.returncode == 0, rest.stderr
    assert posted_runs(fake_server, seen) == ids(1, 3, 5, 7)
    summary = json.loads(rest.stdout)
    assert summary["selection"] is None
    assert summary["runs"] == {"total": 9, "sent": 4, "unchanged": 5, "held": 0, "failed": 0}
    assert "9 of 9 runs exported" in cli("status", "-w", str(ws.root)).stdout.decode()


def test_the_report_covers_the_selected_runs(cli: Cli, ws: WorkspaceMaker, tmp_path: Path) -> None:
    make_trail(ws)
    page = tmp_path / "report.html"
    done = cli(
        "export", "--dry-run", "-o", str(tmp_path / "e.jsonl"), "--report", str(page),
        "--pipeline", "beta", "-w", str(ws.root),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "3 runs selected of 9 on the trail (pipeline beta)" in html
    assert "runs selected (of 9 on the trail)" in html
    assert uuid(8) in html and uuid(2) not in html


ERRORS: list[tuple[tuple[str, ...], list[str]]] = [
    (("--pipeline", "nope"), ["'nope'", "the graph's pipelines: alpha, beta, gamma"]),
    (("--pipeline", "alpha", "--pipeline", "gone"), ["'gone'", "alpha, beta, gamma"]),
    (("--since", "yesterday"), ["--since 'yesterday'", "is not a date (2026-11-01)"]),
    (("--until", "7days"), ["--until '7days'", "a duration back from now"]),
    (("--since", "2026-11-03T10:00:00"), ["--since '2026-11-03T10:00:00'", "no UTC offset"]),
    (("--until", "2026-02-30"), ["--until '2026-02-30'", "is not a date"]),
    (
        ("--since", "2026-11-04", "--until", "2026-11-03"),
        ["--since 2026-11-04 (2026-11-04T00:00:00Z) is not before --until 2026-11-03"],
    ),
    (
        ("--since", "2026-11-03T01:00:00+01:00", "--until", "2026-11-03"),
        ["--since 2026-11-03T01:00:00+01:00", "is not before --until 2026-11-03"],
    ),
]


@pytest.mark.parametrize("dry_run", [True, False])
def test_each_error_is_one_line_naming_the_option_and_value_exit_2(
    cli: Cli, ws: WorkspaceMaker, fake_server: FakeServer, dry_run: bool
) -> None:
    make_trail(ws)
    ws.settings({"openlineage.url": fake_server.url})
    mode = ("--dry-run",) if dry_run else ()
    calls = [("export", *mode, "-w", str(ws.root), *o) for o, _ in ERRORS]
    results = run_all(cli, calls, at_once=4 if dry_run else 1)
    for (options, needles), done in zip(ERRORS, results, strict=True):
        assert done.returncode == 2, (options, done.stderr)
        lines = err_lines(done)
        assert len(lines) == 1 and lines[0].startswith("error: "), (options, lines)
        for needle in needles:
            assert needle in lines[0], (options, lines)
        assert done.stdout == b""
    assert fake_server.requests == []
    if not dry_run:  # nothing was sent, and the ledger was not told of an export
        assert "never exported" in cli("status", "-w", str(ws.root)).stdout.decode()


def test_a_pipeline_only_the_trail_knows_may_be_selected(cli: Cli, ws: WorkspaceMaker) -> None:
    make_trail(ws)
    done = cli("export", "--dry-run", "-w", str(ws.root), "--pipeline", "legacy")
    assert done.returncode == 0, done.stderr
    assert runs_of(done.stdout.splitlines()) == ids(9)
