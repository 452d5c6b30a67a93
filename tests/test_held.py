"""A first export asks what the server already holds (deliver/http/held.py): with an empty ledger for
the destination, a Marquez is read (its namespace, each job's runs, paged) and the runs it holds
as our events would leave them are recorded as accepted, not sent. Anything else sends every run.

A scripted server plays Marquez here (tests/fakeserver.py's MarquezLike: its answers shaped as
Marquez 0.51 shapes them); the real Marquez is in tests/e2e/test_marquez_held.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import resource
import subprocess
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from fakeserver import Answer, FakeServer, MarquezLike, Recorded
from helpers import WorkspaceMaker, cli_command, cli_env, run_record, stage_record

from openlineage_export.deliver.http.client import poster_for
from openlineage_export.deliver.http.held import (
    FIRST_PAGE,
    Holdings,
    Wanted,
    deadline_for,
    holdings,
)
from openlineage_export.translate.asking import MARQUEZ
from openlineage_export.translate.encoded import EventFacts

NAMESPACE = "test-ws"


def _limited() -> None:
    # What a server says once made us allocate gigabytes: never let a test do that.
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def export(
    ws: WorkspaceMaker, state: Path, server: FakeServer, *args: str, **env: str
) -> dict[str, Any]:
    proc = subprocess.run(
        cli_command("export", "--json", "-w", str(ws.root), *args),
        env=cli_env(state.parent, OPENLINEAGE_URL=server.url, **env)
        | {"OPENLINEAGE_EXPORT_STATE_DIR": str(state)},
        capture_output=True,
        text=True,
        timeout=300,
        preexec_fn=_limited,
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def posts(server: FakeServer, since: int = 0) -> list[Recorded]:
    return [r for r in server.requests[since:] if r.method == "POST"]


def gets(server: FakeServer, since: int = 0) -> list[Recorded]:
    return [r for r in server.requests[since:] if r.method == "GET"]


def stages(day: int = 1, hour: int = 0, minute: int = 0) -> list[dict[str, Any]]:
    """The graph's two stages, run within the minute that starts at that time."""
    at = f"2026-11-{day:02d}T{hour:02d}:{minute:02d}"
    return [
        stage_record("extract", startedAt=f"{at}:10.000Z", endedAt=f"{at}:20.500Z"),
        stage_record("load", startedAt=f"{at}:21.000Z", endedAt=f"{at}:40.250Z"),
    ]


def trail_of(ws: WorkspaceMaker, count: int) -> list[dict[str, Any]]:
    """``count`` runs of daily-sales, each a minute apart, with two stage runs."""
    records = []
    for n in range(count):
        day, hour, minute = 1 + n // 1440, n // 60 % 24, n % 60
        at = f"2026-11-{day:02d}T{hour:02d}:{minute:02d}"
        records.append(
            run_record(
                f"run-{n:04d}",
                startedAt=f"{at}:00.000Z",
                endedAt=f"{at}:50.000+00:00",
                stages=stages(day, hour, minute),
            )
        )
    ws.segment("000001.jsonl", list(records))
    return records


def runs_asked(server: FakeServer, since: int = 0) -> list[tuple[str, int, int]]:
    """(job, limit, offset) of each page of runs asked for."""
    asked = []
    for request in gets(server, since):
        parts = urlsplit(request.path)
        if parts.path.endswith("/runs"):
            query = parse_qs(parts.query)
            job = parts.path.split("/")[-2]
            asked.append((job, int(query["limit"][0]), int(query["offset"][0])))
    return asked


# -- what is held is recorded, not sent ---------------------------------------------------------


def test_a_first_export_sends_only_what_the_server_does_not_hold(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail_of(ws, 12)
    marquez = MarquezLike()
    with FakeServer(reads=True) as server:
        server.script(marquez)
        first = export(ws, tmp_path / "a" / "state", server)
        assert first["runs"] == {"total": 12, "sent": 12, "unchanged": 0, "held": 0, "failed": 0}
        assert first["warnings"] == []
        sent = len(posts(server))
        # A fresh machine: an empty ledger. The server is asked, nothing is sent.
        mark = len(server.requests)
        again = export(ws, tmp_path / "b" / "state", server)
        assert posts(server, mark) == []
        assert again["runs"] == {"total": 12, "sent": 0, "unchanged": 12, "held": 12, "failed": 0}
        assert again["events"] == {"sent": 0} and again["warnings"] == []
        asked = [r.path.split("?")[0] for r in gets(server, mark)]
        assert asked[0] == f"/api/v1/namespaces/{NAMESPACE}"
        assert sorted(asked[1:]) == sorted(
            f"/api/v1/namespaces/{NAMESPACE}/jobs/{job}/runs"
            for job in ("daily-sales", "daily-sales.extract", "daily-sales.load")
        )
        # The ledger tells the truth: status has them exported, the next export asks nothing.
        status = subprocess.run(
            cli_command("status", "--json", "-w", str(ws.root)),
            env=cli_env(tmp_path / "b", OPENLINEAGE_URL=server.url)
            | {"OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "b" / "state")},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert status.returncode == 0, status.stderr
        [where] = json.loads(status.stdout)["destinations"]
        assert (where["exported"], where["pending"], where["failed"]) == (12, 0, 0)
        mark = len(server.requests)
        third = export(ws, tmp_path / "b" / "state", server)
        assert third["runs"]["unchanged"] == 12 and third["runs"]["held"] == 0
        assert posts(server, mark) == [] and runs_asked(server, mark) == []
    assert sent == 12 * 6


def test_the_terminal_summary_says_how_many_the_server_held(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    records = trail_of(ws, 3)
    with FakeServer(reads=True) as server:
        server.script(MarquezLike())
        export(ws, tmp_path / "a" / "state", server)
        ws.segment(
            "000002.jsonl",
            [
                run_record(
                    "run-new",
                    startedAt="2026-11-02T02:00:00.000Z",
                    endedAt="2026-11-02T02:00:50Z",
                    stages=stages(2, 2),
                )
            ],
        )
        proc = subprocess.run(
            cli_command("export", "-w", str(ws.root)),
            env=cli_env(tmp_path / "b", OPENLINEAGE_URL=server.url),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert proc.returncode == 0, proc.stderr
    assert (
        f"1 of {len(records) + 1} runs sent (6 events), 3 already held by the server"
        in proc.stdout + proc.stderr
    )


# -- paging ---------------------------------------------------------------------------------------


def test_every_page_of_every_job_is_read_and_a_page_cut_at_the_body_limit_is_split(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """95 runs a job, each about 4 KB as Marquez shows it: the first page (20 runs, 80 KB)
    comes back cut at 64 KiB and is asked for in halves; the later pages are sized to fit."""
    trail_of(ws, 95)
    with FakeServer(reads=True) as server:
        server.script(MarquezLike(run_bytes=4000))
        export(ws, tmp_path / "a" / "state", server)
        mark = len(server.requests)
        again = export(ws, tmp_path / "b" / "state", server)
        asked = runs_asked(server, mark)
    assert again["runs"]["held"] == 95 and again["runs"]["sent"] == 0, again
    for job in ("daily-sales", "daily-sales.extract", "daily-sales.load"):
        pages = sorted((offset, limit) for j, limit, offset in asked if j == job)
        assert (0, FIRST_PAGE) in pages and (0, FIRST_PAGE // 2) in pages  # cut, then halved
        pages.remove((0, FIRST_PAGE))
        assert max(limit for offset, limit in pages if offset) <= FIRST_PAGE // 2  # sized to fit
        covered: set[int] = set()
        for offset, limit in pages:
            covered.update(range(offset, offset + limit))
        assert covered >= set(range(95))
        assert len(pages) >= 95 // (FIRST_PAGE // 2)


def test_small_runs_come_in_large_pages(ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail_of(ws, 150)
    with FakeServer(reads=True) as server:
        server.script(MarquezLike())
        export(ws, tmp_path / "a" / "state", server)
        mark = len(server.requests)
        again = export(ws, tmp_path / "b" / "state", server)
        asked = runs_asked(server, mark)
    assert again["runs"]["held"] == 150
    assert len(asked) == 2 * 3, asked  # the first page, then all the rest in one


# -- what is not held as it is, is sent -----------------------------------------------------------


def test_a_run_changed_on_the_trail_since_is_sent_and_only_it(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    records = trail_of(ws, 5)
    running = run_record(
        "run-late",
        status="running",
        startedAt="2026-11-03T00:00:00.000Z",
        stages=[stage_record(startedAt="2026-11-03T00:00:01.000Z", status="running")],
    )
    ws.segment("000002.jsonl", [running])
    with FakeServer(reads=True) as server:
        server.script(MarquezLike())
        export(ws, tmp_path / "a" / "state", server)
        done = {
            **running,
            "status": "succeeded",
            "endedAt": "2026-11-03T00:05:00.000Z",
            "recordedAt": "2026-11-03T00:05:00.100Z",
            "stages": [
                stage_record(startedAt="2026-11-03T00:00:01.000Z", endedAt="2026-11-03T00:04:00Z")
            ],
        }
        ws.segment("000003.jsonl", [done])
        mark = len(server.requests)
        again = export(ws, tmp_path / "b" / "state", server)
        sent = posts(server, mark)
    assert again["runs"] == {
        "total": len(records) + 1,
        "sent": 1,
        "unchanged": len(records),
        "held": len(records),
        "failed": 0,
    }
    assert [(r.json()["eventType"], r.json()["job"]["name"]) for r in sent] == [
        ("START", "daily-sales"),
        ("START", "daily-sales.extract"),
        ("COMPLETE", "daily-sales.extract"),
        ("COMPLETE", "daily-sales"),
    ]


@pytest.mark.parametrize("change", ["state", "end time", "a stage run missing", "a job missing"])
def test_a_run_the_server_holds_otherwise_is_sent_again(
    ws: WorkspaceMaker, tmp_path: Path, change: str
) -> None:
    trail_of(ws, 4)
    marquez = MarquezLike()
    with FakeServer(reads=True) as server:
        server.script(marquez)
        export(ws, tmp_path / "a" / "state", server)
        pipeline_runs = sorted(
            (r for r in marquez.runs.values() if r["_job"] == "daily-sales"),
            key=lambda r: r["startedAt"],
        )
        target = pipeline_runs[2]["id"]
        stage_run = next(
            r
            for r in marquez.runs.values()
            if r["_job"] == "daily-sales.load" and r["startedAt"][:13] == "2026-11-01T00"
        )
        if change == "state":
            marquez.runs[target]["state"] = "FAILED"
        elif change == "end time":  # one millisecond later, written in another offset
            marquez.runs[target]["endedAt"] = "2026-11-01T02:02:50.001+02:00"
        elif change == "a stage run missing":
            del marquez.runs[stage_run["id"]]
        else:
            for run_id in [i for i, r in marquez.runs.items() if r["_job"] == "daily-sales.load"]:
                del marquez.runs[run_id]
        mark = len(server.requests)
        again = export(ws, tmp_path / "b" / "state", server)
        resent = {r.json()["run"]["runId"] for r in posts(server, mark)}
    expected = {"state": 1, "end time": 1, "a stage run missing": 1, "a job missing": 4}[change]
    assert again["runs"]["sent"] == expected and again["runs"]["held"] == 4 - expected, again
    if change in ("state", "end time"):
        assert target in resent


def test_the_same_instant_in_another_offset_is_held() -> None:
    held = Holdings()
    run = "01a194ba-767e-7a18-86be-c3e68ba95bee"
    held.add(run, "COMPLETED", "2026-11-01T03:30:10.43+02:00")
    event = EventFacts("COMPLETE", "2026-11-01T01:30:10.430Z", run, ("ns", "job"), (), ())
    start = event._replace(event_type="START", event_time="2026-11-01T01:00:00Z")
    assert held.holds([start, event])
    assert not held.holds([start])  # ours still running: Marquez has it ended
    assert not held.holds([start, event._replace(event_time="2026-11-01T01:30:10.432Z")])
    assert not held.holds([start, event._replace(event_type="FAIL")])
    assert held.holds([start, event._replace(event_time="2026-11-01T01:30:10.4300004Z")])
    running = Holdings()
    running.add(run, "RUNNING", None)
    assert running.holds([start]) and not running.holds([start, event])
    assert not Holdings().holds([start])


# -- a server that cannot be asked: every run sent ------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        Answer(404, body="<html>Not Found</html>"),  # not Marquez (a proxy, another server)
        Answer(200, body="not JSON"),
        Answer(201),
        Answer(reset=True),  # no answer: the export says so itself, as it posts
    ],
)
def test_a_server_that_is_not_marquez_is_sent_everything_without_a_word(
    ws: WorkspaceMaker, tmp_path: Path, answer: Answer
) -> None:
    trail_of(ws, 6)
    with FakeServer(reads=True) as server:
        server.script(lambda r: Answer(201) if r.method == "POST" else answer)
        report = export(ws, tmp_path / "state", server)
        # One question per read API the generic mode names (Marquez's, then Feast's); an
        # answer with none of theirs ends it, and no answer at all ends it at the first.
        asked = [urlsplit(r.path).path for r in gets(server)]
        assert (
            asked
            == ["/api/v1/namespaces/test-ws", "/api/v1/lineage/openlineage/events"][
                : 1 if answer.reset else 2
            ]
        )
    assert report["runs"]["sent"] == 6 and report["runs"]["held"] == 0
    assert report["warnings"] == []


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (Answer(401, body={"code": 401, "message": "login"}), "it answered HTTP 401"),
        (Answer(403, body="no"), "it answered HTTP 403"),
        (Answer(503, body="down"), "it answered HTTP 503"),
    ],
)
def test_a_server_that_refuses_to_be_read_is_one_line_and_every_run_is_sent(
    ws: WorkspaceMaker, tmp_path: Path, answer: Answer, why: str
) -> None:
    trail_of(ws, 6)
    ws.settings({"openlineage.apiKey.secretRef": "k"})
    with FakeServer(reads=True) as server:
        server.script(lambda r: Answer(201) if r.method == "POST" else answer)
        report = export(ws, tmp_path / "state", server, OPENLINEAGE_API_KEY="s3cret-key-1234")
        assert all("authorization" not in r.headers for r in gets(server))  # reads go keyless
        assert all(r.headers.get("authorization") for r in posts(server))
    assert report["runs"]["sent"] == 6
    assert report["warnings"] == [
        f"could not ask the server at {server.url}/api/v1/lineage which runs it already "
        f"holds ({why}); every run is sent"
    ]


@pytest.mark.parametrize("answer", [Answer(500, body={"code": 500}), Answer(200, body={"x": 1})])
def test_a_page_that_fails_once_marquez_answered_is_one_line_and_every_run_is_sent(
    ws: WorkspaceMaker, tmp_path: Path, answer: Answer
) -> None:
    trail_of(ws, 30)
    marquez = MarquezLike()

    def script(request: Recorded) -> Answer:
        if request.method == "GET" and "offset=20" in request.path and ".load/" in request.path:
            return answer
        return marquez(request)

    with FakeServer(reads=True) as server:
        server.script(marquez)
        export(ws, tmp_path / "a" / "state", server)
        server.script(script)
        mark = len(server.requests)
        report = export(ws, tmp_path / "b" / "state", server)
        assert len(posts(server, mark)) == 30 * 6
    assert report["runs"]["sent"] == 30 and report["runs"]["held"] == 0
    [warning] = report["warnings"]
    assert warning.startswith(
        f"could not ask the server at {server.url}/api/v1/lineage which runs it already holds ("
    )
    assert "/jobs/daily-sales.load/runs?limit=" in warning and warning.endswith(
        "; every run is sent"
    )


def test_the_questions_have_one_deadline_together(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """Each answer trickles in over about 1.5 s, under the 2 s a request may take; all of them
    together have max(openlineage.timeout, openlineage.retry.maxTime), 2 s here: the asking
    stops there, said in one line, and every run is sent."""
    trail_of(ws, 4)
    ws.settings({"openlineage.timeout": 2, "openlineage.retry.maxTime": 0})
    marquez = MarquezLike()

    def trickling(request: Recorded) -> Answer:
        answer = marquez(request)
        if request.method == "GET" and isinstance(answer.body, dict):
            body = json.dumps(answer.body).encode()
            return Answer(200, body=body, trickle=1.5 / len(body))
        return answer

    with FakeServer(reads=True) as server:
        server.script(marquez)
        export(ws, tmp_path / "a" / "state", server)
        server.script(trickling)
        mark = len(server.requests)
        report = export(ws, tmp_path / "b" / "state", server)
        assert len(posts(server, mark)) == 4 * 6
    assert report["runs"]["sent"] == 4
    [warning] = report["warnings"]
    assert warning.startswith(
        f"could not ask the server at {server.url}/api/v1/lineage which runs it already "
        "holds (it had not answered within 2 s ("
    ), warning


def test_the_deadline_grows_with_the_trail() -> None:
    assert deadline_for(10, 30, 4) == 30  # the defaults: openlineage.retry.maxTime
    assert deadline_for(10, 0, 499) == 10  # at least openlineage.timeout
    assert deadline_for(10, 30, 10_000) == 230  # and a timeout more per 500 runs
    assert deadline_for(10, 86_400, 4) == 600  # never what a workspace stretches it to (F03)


def test_full_asks_nothing_and_sends_everything(ws: WorkspaceMaker, tmp_path: Path) -> None:
    trail_of(ws, 3)
    with FakeServer(reads=True) as server:
        server.script(MarquezLike())
        export(ws, tmp_path / "a" / "state", server)
        mark = len(server.requests)
        report = export(ws, tmp_path / "b" / "state", server, "--full")
        assert gets(server, mark) == [] and len(posts(server, mark)) == 3 * 6
    assert report["runs"]["sent"] == 3 and report["runs"]["held"] == 0


def test_a_namespace_marquez_does_not_have_is_one_question(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    trail_of(ws, 3)
    with FakeServer(reads=True) as server:
        server.script(MarquezLike())
        report = export(ws, tmp_path / "state", server)
        assert [r.path for r in gets(server)] == [f"/api/v1/namespaces/{NAMESPACE}"]
    assert report["runs"]["sent"] == 3 and report["warnings"] == []


def test_ctrl_c_ends_the_question_at_once(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """A server that holds its answer: the first Ctrl-C ends the asking, nothing is sent."""
    import signal
    import threading

    trail_of(ws, 3)
    ws.settings({"openlineage.timeout": 600})
    held = threading.Event()
    with FakeServer(reads=True) as server:
        server.script(lambda r: Answer(201) if r.method == "POST" else Answer(200, hold=held))
        proc = subprocess.Popen(
            cli_command("export", "--json", "-w", str(ws.root)),
            env=cli_env(tmp_path, OPENLINEAGE_URL=server.url),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.wait_for_get(), "the export never asked"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)  # not the 600 s the request could take
        finally:
            held.set()
            if proc.poll() is None:
                proc.kill()
        assert posts(server) == []
    assert proc.returncode == 130, err
    assert json.loads(out)["runs"]["sent"] == 0 and "Traceback" not in err


# -- nothing the server says sizes what we do (issue 43) ------------------------------------------


def loaded(ws: WorkspaceMaker, tmp_path: Path, count: int) -> MarquezLike:
    """A Marquez that holds a trail of ``count`` runs, exported to it once."""
    trail_of(ws, count)
    marquez = MarquezLike()
    with FakeServer(reads=True) as server:
        server.script(marquez)
        export(ws, tmp_path / "load" / "state", server)
    return marquez


def pages_of(server: FakeServer, since: int = 0) -> dict[str, list[tuple[int, int]]]:
    """Per job, the (offset, limit) of each page of runs asked for, in the order asked."""
    asked: dict[str, list[tuple[int, int]]] = {}
    for job, limit, offset in runs_asked(server, since):
        asked.setdefault(job, []).append((offset, limit))
    return asked


JOBS = ("daily-sales", "daily-sales.extract", "daily-sales.load")


@pytest.mark.parametrize("count", [10**6, 10**15])
def test_a_count_from_the_server_sizes_nothing(
    ws: WorkspaceMaker, tmp_path: Path, count: int
) -> None:
    """A page that says the job has 10**15 runs: the next page is asked for once this one came
    back, and the short page after it ends the asking. (One task per page of the count was
    made at once: 2 GiB in 30 s, then a crash or a hang.)"""
    marquez = loaded(ws, tmp_path, 30)

    def boasting(request: Recorded) -> Answer:
        answer = marquez(request)
        if isinstance(answer.body, dict) and "totalCount" in answer.body:
            return Answer(200, body={**answer.body, "totalCount": count})
        return answer

    with FakeServer(reads=True) as server:
        server.script(boasting)
        report = export(ws, tmp_path / "b" / "state", server)
        asked = pages_of(server)
    assert report["runs"]["held"] == 30 and report["runs"]["sent"] == 0, report
    assert report["warnings"] == []
    for job in JOBS:
        first, second = asked[job]  # the second page was short: the last
        assert first == (0, FIRST_PAGE) and second[0] == FIRST_PAGE, asked


def test_pages_full_of_runs_never_ours_end_where_the_trail_does(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Attacker B's F03 (/work/notes/attack-b/f03-held-pages-unbounded.sh): every page full, of
    runs that are none of ours, with a count one past it, and the workspace giving the question
    a day. Each job's pages are asked for one at a time, each at the offset the pages before it
    reached, and end once they listed more runs than the trail could account for
    (``ITEMS_PER_RUN`` a run, at least a page): not at the deadline. Every run is sent."""
    loaded(ws, tmp_path, 4)
    ws.settings({"openlineage.timeout": 60, "openlineage.retry.maxTime": 86_400})
    made = itertools.count()

    def endless(request: Recorded) -> Answer:
        if request.method == "POST":
            return Answer(201)
        parts = urlsplit(request.path)
        if not parts.path.endswith("/runs"):
            return Answer(200, body={"name": NAMESPACE, "isHidden": False})
        query = parse_qs(parts.query)
        limit, offset = int(query["limit"][0]), int(query["offset"][0])
        runs = [
            {"id": str(uuid.UUID(int=next(made))), "state": "COMPLETED", "endedAt": None}
            for _ in range(limit)
        ]
        return Answer(200, body={"runs": runs, "totalCount": offset + limit + 1})

    with FakeServer(reads=True) as server:
        server.script(endless)
        report = export(ws, tmp_path / "b" / "state", server)
        asked = pages_of(server)
        assert len(posts(server)) == 4 * 6
    assert report["runs"]["sent"] == 4 and report["runs"]["held"] == 0
    assert report["warnings"] == []
    assert set(asked) == set(JOBS)
    for pages in asked.values():
        offset = 0
        for at, limit in pages:
            assert at == offset, pages  # each page where the ones before it ended
            offset += limit
        assert offset - pages[-1][1] < MARQUEZ.most_per_page, pages  # then no page more


def test_the_same_page_again_ends_the_asking(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """A server that answers the first page whatever is asked (and a count without end):
    the page that brings nothing new is the last; what it held is held, the rest sent."""
    marquez = loaded(ws, tmp_path, 30)

    def repeating(request: Recorded) -> Answer:
        if request.method == "GET" and "offset=" in request.path:
            first = request.path.split("?")[0] + f"?limit={FIRST_PAGE}&offset=0"
            answer = marquez(Recorded("GET", first, {}, b"", b"", 0.0))
            assert isinstance(answer.body, dict)
            return Answer(200, body={**answer.body, "totalCount": 10**15})
        return marquez(request)

    with FakeServer(reads=True) as server:
        server.script(repeating)
        report = export(ws, tmp_path / "b" / "state", server)
        asked = pages_of(server)
    assert report["runs"]["held"] == FIRST_PAGE and report["runs"]["sent"] == 30 - FIRST_PAGE
    assert report["warnings"] == []
    assert {job: len(pages) for job, pages in asked.items()} == dict.fromkeys(JOBS, 2)


def test_the_asking_stops_once_every_run_of_the_trail_is_found(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Marquez holds the trail's 12 runs of each job, the latest, and 500 older ones of other
    exports: the first page has all of ours, and no other page is asked for."""
    marquez = loaded(ws, tmp_path, 12)
    for job in JOBS:
        for n in range(500):
            run_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{job}-{n}"))
            marquez.runs[run_id] = {
                "id": run_id,
                "_namespace": NAMESPACE,
                "_job": job,
                "state": "COMPLETED",
                "startedAt": f"2020-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
                "endedAt": f"2020-01-01T01:{n // 60:02d}:{n % 60:02d}Z",
            }
    with FakeServer(reads=True) as server:
        server.script(marquez)
        report = export(ws, tmp_path / "b" / "state", server)
        asked = pages_of(server)
    assert report["runs"]["held"] == 12 and report["runs"]["sent"] == 0, report
    assert asked == {job: [(0, FIRST_PAGE)] for job in JOBS}


def test_only_the_runs_of_the_trail_are_kept(tmp_path: Path) -> None:
    """5,000 runs of a job on the server, 3 of them the trail's, on its first pages (asking
    ends once the pages listed more than the trail accounts for): those 3 are what is kept."""
    ours = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"ours-{n}")) for n in range(3)]
    others = [str(uuid.uuid5(uuid.NAMESPACE_URL, f"other-{n}")) for n in range(5000)]
    runs = [{"id": i, "state": "COMPLETED", "endedAt": "2026-11-01T00:00:00Z"} for i in others]
    runs[900:900] = [{"id": i, "state": "RUNNING"} for i in ours]  # within a page's worth

    def page(request: Recorded) -> Answer:
        parts = urlsplit(request.path)
        if not parts.path.endswith("/runs"):
            return Answer(200, body={"name": NAMESPACE})
        query = parse_qs(parts.query)
        limit, offset = int(query["limit"][0]), int(query["offset"][0])
        return Answer(200, body={"runs": runs[offset : offset + limit], "totalCount": len(runs)})

    wanted = Wanted()
    for run_id in ours:
        wanted.add("job", run_id)

    async def ask(url: str) -> Holdings | None:
        poster = poster_for(None, verify=True, concurrency=4, timeout=30, user_agent="test")
        await poster.start()
        try:
            return await holdings(poster, f"{url}/api/v1/lineage", NAMESPACE, wanted, deadline=60)
        finally:
            await poster.close()

    with FakeServer(reads=True) as server:
        server.script(page)
        held = asyncio.run(ask(server.url))
    assert held is not None and len(held) == len(ours)
    start = EventFacts("START", "2026-11-01T00:00:00Z", ours[0], ("ns", "job"), (), ())
    assert held.holds([start])
