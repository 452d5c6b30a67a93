"""Feast's mode (translate/feast.py): the events every server gets, chosen by openlineage.server.

What the real Feast makes of an export is in tests/e2e/test_feast.py (this file is named apart
from it: pytest imports test modules by their base name).
"""

from __future__ import annotations

import asyncio
import io
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fakeserver import Answer, FakeServer, Recorded
from helpers import DEMO

from openlineage_export.deliver.http.client import poster_for
from openlineage_export.deliver.http.held import Holdings, Wanted, holdings
from openlineage_export.deliver.registry import CATALOGUE
from openlineage_export.export import ExportRequest, run_export
from openlineage_export.export.opening import open_workspace
from openlineage_export.translate import asking, feast, modes
from openlineage_export.translate.encoded import EventFacts
from openlineage_export.translate.events import Translator

MODE = {"OPENLINEAGE_SERVER": "feast"}


def dry_run(root: Path, **environ: str) -> bytes:
    out = io.BytesIO()
    report = run_export(ExportRequest(workspace=root, dry_run=True, output=out, environ=environ))
    assert report.exit_code == 0
    return out.getvalue()


def test_the_mode_is_a_choice_of_the_setting() -> None:
    row = CATALOGUE.get("openlineage.server")
    assert row is not None and row.choices is not None
    assert feast.SERVER in row.choices
    assert feast.DESCRIPTION in row.description


def test_its_events_are_every_servers_byte_for_byte() -> None:
    assert modes.MODES[feast.SERVER].translator is Translator
    shaped = dry_run(DEMO, **MODE)
    assert shaped == dry_run(DEMO)
    assert shaped.count(b"\n") == 236


@pytest.mark.parametrize("transport", ["http", "kafka", "file"])
def test_the_mode_holds_whatever_the_transport(transport: str) -> None:
    opened = open_workspace(
        DEMO, None, {**MODE, "OPENLINEAGE_TRANSPORT": transport}, lambda bad: None
    )
    assert opened.translation.server == feast.SERVER


def test_no_endpoint_picks_it() -> None:
    # Feast's endpoint is the one every server has (/api/v1/lineage): it is told apart by
    # asking, never by its address.
    assert not modes.MODES[feast.SERVER].recognises("http://127.0.0.1:56580/api/v1/lineage")
    opened = open_workspace(
        DEMO, None, {"OPENLINEAGE_URL": "http://127.0.0.1:56580"}, lambda bad: None
    )
    assert opened.translation.server == modes.GENERIC.name


# -- asked what it holds: each event apart (translate/asking.py, deliver/http/held.py) ----------


def _row(run_id: str, event_type: str, when_ms: int) -> dict[str, object]:
    return {
        "event_id": str(uuid.uuid4()),
        "event_type": event_type,
        "event_time": when_ms,
        "job_namespace": "ns",
        "job_name": "job",
        "run_id": run_id,
        "event_json": "{}",
        "created_at": 1,
    }


def test_behind_auto_feast_is_told_apart_by_its_answers_and_holds_events_apart() -> None:
    """A generic export asks Marquez's read API, then Feast's; Feast answers as itself, and
    what it holds is each event apart: a run held in part lacks only its other events."""
    run, other = str(uuid.uuid4()), str(uuid.uuid4())
    start_ms = 1_793_844_000_000
    rows = [_row(run, "START", start_ms), _row(other, "START", start_ms + 5)]
    asked: list[str] = []

    def feast_like(request: Recorded) -> Answer:
        parts = urlsplit(request.path)
        asked.append(parts.path)
        if not parts.path.startswith("/api/v1/lineage/openlineage/events"):
            return Answer(404, body={"detail": "Not Found"})
        query = parse_qs(parts.query)
        limit, offset = int(query["limit"][0]), int(query.get("offset", ["0"])[0])
        page = rows[offset : offset + limit]
        return Answer(200, body={"events": page, "total": len(page)})

    wanted = Wanted()
    wanted.add("job", run, "2026-11-05T02:00:00Z")

    async def ask(url: str) -> Holdings | None:
        poster = poster_for(None, verify=True, concurrency=2, timeout=30, user_agent="test")
        await poster.start()
        try:
            return await holdings(
                poster,
                f"{url}/api/v1/lineage",
                "ns",
                wanted,
                deadline=60,
                asking=modes.GENERIC.asking,
            )
        finally:
            await poster.close()

    with FakeServer(reads=True) as server:
        server.script(feast_like)
        held = asyncio.run(ask(server.url))
    assert asked[0] == "/api/v1/namespaces/ns"  # Marquez's first: not it
    assert held is not None and held.asking is feast.ASKING and held.keeps_duplicates
    when = datetime.fromtimestamp(start_ms / 1000, UTC).isoformat().replace("+00:00", "Z")
    start = EventFacts("START", when, run, ("ns", "job"), (), ())
    complete = start._replace(event_type="COMPLETE", event_time="2026-11-05T03:00:00Z")
    assert held.missing([start, complete]) == [1]  # only the event it lacks goes
    assert held.missing([start]) == [] and held.holds([start])
    # the other run's event is none of the trail's: not kept
    assert held.missing([start._replace(run_id=other, event_time=when)]) == [0]


def test_the_mode_says_it_keeps_duplicates() -> None:
    assert modes.MODES[feast.SERVER].asking == (feast.ASKING,)
    assert feast.ASKING.keeps_duplicates and feast.ASKING.holds == "events"
    assert not asking.MARQUEZ.keeps_duplicates and asking.MARQUEZ.holds == "runs"


class LosingFeast:
    """Answers as Feast does (an empty page of events; 404 to Marquez's questions), keeping the
    bodies posted; once ``lose`` is set, the first POST after the last clear of ``posted`` has
    its answer lost (the connection reset after the request was read)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.posted: list[bytes] = []
        self.lose = threading.Event()

    def __call__(self, request: Recorded) -> Answer:
        if request.method == "GET":
            if urlsplit(request.path).path.endswith("/openlineage/events"):
                return Answer(200, body={"events": [], "total": 0})
            return Answer(404, body={"detail": "Not Found"})
        with self.lock:
            self.posted.append(request.body)
            lost = self.lose.is_set() and len(self.posted) == 1
        return Answer(reset=True) if lost else Answer(201)


def test_an_event_whose_answer_was_lost_is_never_sent_again_blind(tmp_path: Path) -> None:
    """Feast keeps duplicates: an event whose answer was lost (the connection reset after it
    was sent) may be stored, so it is not sent again; its run fails, saying why."""
    feast_like = LosingFeast()
    feast_like.lose.set()
    posted = feast_like.posted
    with FakeServer(reads=True) as server:
        server.script(feast_like)
        report = run_export(
            ExportRequest(
                workspace=DEMO,
                environ={
                    **MODE,
                    "OPENLINEAGE_URL": server.url,
                    "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
                },
            )
        )
    assert posted.count(posted[0]) == 1  # never sent again
    assert report.runs_failed == 1
    [failed] = report.failed
    assert "not sent again blind" in failed.reason, failed.reason


def test_a_feast_found_under_auto_is_never_sent_again_blind_even_unasked(tmp_path: Path) -> None:
    """Behind ``auto`` Feast is known by its answers; the ledger remembers it. A later export
    that does not ask (``--full``) still knows the server keeps duplicates: an event whose
    answer was lost is not sent again (one place decides it: ``asking.keeps_duplicates``)."""
    feast_like = LosingFeast()
    posted, lock, lose = feast_like.posted, feast_like.lock, feast_like.lose

    environ = {
        "OPENLINEAGE_URL": "",
        "OPENLINEAGE_EXPORT_STATE_DIR": str(tmp_path / "state"),
    }
    with FakeServer(reads=True) as server:
        server.script(feast_like)
        environ["OPENLINEAGE_URL"] = server.url
        first = run_export(ExportRequest(workspace=DEMO, environ=environ))
        assert first.exit_code == 0 and posted  # asked first: Feast, remembered
        with lock:
            posted.clear()
        lose.set()
        again = run_export(ExportRequest(workspace=DEMO, environ=environ, full=True))
    assert posted and posted.count(posted[0]) == 1  # never sent again
    assert again.runs_failed == 1
    [failed] = again.failed
    assert "not sent again blind" in failed.reason, failed.reason
