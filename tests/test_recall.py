"""A server that forgot (deliver/http/recall.py): before sending, Marquez is asked for the
namespace and a few of the runs the ledger says it accepted; what it no longer has is said in
one line, and every run is sent again. Anything that is not Marquez's answer changes nothing.

A scripted server stands in for Marquez's read API here (its 404 bodies as Marquez writes
them); the real Marquez is in tests/e2e/test_marquez.py.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest
from fakeserver import Answer, FakeServer, Recorded
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.deliver.http.recall import SAMPLE, marquez_api

NAMESPACE = "test-ws"


class Memory:
    """Marquez as the fake server plays it: accepts events, remembers namespaces and runs,
    and answers the read API from what it remembers (which a test can make it forget)."""

    def __init__(self) -> None:
        self.namespaces: dict[str, bool] = {}  # name -> hidden
        self.runs: set[str] = set()

    def __call__(self, request: Recorded) -> Answer:
        path = unquote(request.path)
        if request.method == "POST":
            event = request.json()
            self.namespaces[event["job"]["namespace"]] = False
            self.runs.add(event["run"]["runId"])
            return Answer(201)
        if path.startswith("/api/v1/namespaces/"):
            name = path.removeprefix("/api/v1/namespaces/")
            if name not in self.namespaces:
                return Answer(404, body={"code": 404, "message": f"Namespace '{name}' not found."})
            return Answer(200, body={"name": name, "isHidden": self.namespaces[name]})
        if path.startswith("/api/v1/jobs/runs/"):
            run_id = path.removeprefix("/api/v1/jobs/runs/")
            if run_id not in self.runs:
                return Answer(404, body={"code": 404, "message": f"Run '{run_id}' not found."})
            return Answer(200, body={"id": run_id})
        return Answer(404, body="not here")


def export(ws: WorkspaceMaker, tmp_path: Path, server: FakeServer) -> dict[str, object]:
    proc = subprocess.run(
        cli_command("export", "--json", "-w", str(ws.root)),
        env=cli_env(tmp_path, OPENLINEAGE_URL=server.url),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return report


def posted(server: FakeServer) -> int:
    return sum(request.method == "POST" for request in server.requests)


@pytest.fixture
def trail(ws: WorkspaceMaker) -> WorkspaceMaker:
    ws.segment("000001.jsonl", [run_record(f"run-{n}") for n in range(8)])
    return ws


@pytest.mark.parametrize("forgot", ["everything", "the namespace (deleted)", "the last runs"])
def test_what_the_server_forgot_is_said_and_sent_again(
    trail: WorkspaceMaker, tmp_path: Path, forgot: str
) -> None:
    memory = Memory()
    with FakeServer(reads=True) as server:
        server.script(memory)
        first = export(trail, tmp_path, server)
        assert first["runs"] == {"total": 8, "sent": 8, "unchanged": 0, "held": 0, "failed": 0}
        events = posted(server)
        mark = len(server.requests)  # (the first export asked what the server held: nothing)
        again = export(trail, tmp_path, server)  # it remembers: nothing sent, a few questions
        assert again["runs"]["unchanged"] == 8 and again["warnings"] == []
        asked = [r.path for r in server.requests[mark:] if r.method == "GET"]
        assert len(asked) == 1 + SAMPLE and asked[0] == f"/api/v1/namespaces/{NAMESPACE}"
        if forgot == "everything":
            memory.namespaces.clear()
            memory.runs.clear()
        elif forgot == "the namespace (deleted)":
            memory.namespaces[NAMESPACE] = True
        else:
            memory.runs = set(sorted(memory.runs)[:2])  # an older backup
        before = posted(server)
        third = export(trail, tmp_path, server)
        assert third["runs"] == {"total": 8, "sent": 8, "unchanged": 0, "held": 0, "failed": 0}, (
            third
        )
        assert posted(server) - before == events
        [warning] = third["warnings"]
        if forgot == "the last runs":
            assert re.fullmatch(
                rf"the server no longer has [1-{SAMPLE}] of the last {SAMPLE} "
                r"runs the ledger says it accepted \(run id [0-9a-f-]{36}\) .*",
                warning,
            ), warning
        else:
            assert warning == (
                f"the server no longer has the namespace '{NAMESPACE}' that the "
                "ledger says its runs were sent to (a database reset, or a "
                "restore of an older backup?): sending every run again"
            )
        assert warning.endswith(
            "(a database reset, or a restore of an older backup?): sending every run again"
        )


@pytest.mark.parametrize(
    "answer",
    [
        Answer(404, body="<html>Not Found</html>"),  # not Marquez (a proxy, DataHub)
        Answer(401, body={"code": 401, "message": "login"}),  # wants a key to read
        Answer(500, body={"code": 500, "message": "oops"}),
        Answer(200, body="not JSON"),
        Answer(reset=True),
    ],
)
def test_a_server_that_cannot_be_asked_changes_nothing(
    trail: WorkspaceMaker, tmp_path: Path, answer: Answer
) -> None:
    with FakeServer(reads=True) as server:
        export(trail, tmp_path, server)
        events = posted(server)
        server.script(lambda request: Answer(201) if request.method == "POST" else answer)
        again = export(trail, tmp_path, server)
        assert again["runs"]["unchanged"] == 8 and again["warnings"] == []
        assert posted(server) == events
        gets = [r for r in server.requests if r.method == "GET"]
        assert gets and all("authorization" not in r.headers for r in gets)  # no key to read


def test_only_a_marquez_events_url_is_asked() -> None:
    assert marquez_api("http://h:5000/api/v1/lineage") == "http://h:5000/api/v1"
    assert marquez_api("https://h/marquez/api/v1/lineage/") == "https://h/marquez/api/v1"
    assert (
        marquez_api("https://h/openapi/openlineage/api/v1/lineage")
        == "https://h/openapi/openlineage/api/v1"
    )  # DataHub: asked, but answers no Marquez 404
    assert marquez_api("https://h/events") is None
    assert marquez_api("https://h/api/v1/lineage?x=1") is None


# -- one client, one deadline, a cancel, a body limit (issue 30, finding 7) ---------------------


def _remembers_then(answer: Callable[[Recorded], Answer]) -> Callable[[Recorded], Answer]:
    """Events accepted; the questions answered by ``answer``."""
    return lambda request: Answer(201) if request.method == "POST" else answer(request)


def start_export(
    ws: WorkspaceMaker,
    tmp_path: Path,
    url: str,
    *args: str,
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cli_command("export", "--json", "-w", str(ws.root), *args),
        env=cli_env(tmp_path, OPENLINEAGE_URL=url),
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_the_questions_have_one_deadline_together_and_a_trickling_server_cannot_outlast_it(
    trail: WorkspaceMaker, tmp_path: Path
) -> None:
    """Each answer trickles in over about 1.5 s, under the 2 s a request may take: six
    questions took six of those (before: 22 s at the default 10 s). Now all of them together
    have openlineage.timeout: the asking stops there, said in one line; nothing changes."""
    trail.settings({"openlineage.timeout": 2})
    with FakeServer(reads=True) as server:
        export(trail, tmp_path, server)
        server.script(
            _remembers_then(
                lambda request: (
                    Answer(200, body={"name": NAMESPACE})
                    if "/namespaces/" in request.path
                    else Answer(200, body='{"id": "x"}' + " " * 20, trickle=0.05)
                )
            )
        )
        again = export(trail, tmp_path, server)
        gets = [r for r in server.requests if r.method == "GET"]
    assert again["runs"]["unchanged"] == 8
    assert len(gets) < 1 + SAMPLE, "the questions went on past the deadline"
    assert again["warnings"] == [
        f"could not ask the server at {server.url.rstrip('/')}/api/v1/lineage whether it still "
        "has the runs the ledger says it accepted (it did not answer within 2 s, "
        "openlineage.timeout); they are not sent again (--full sends every run)"
    ]


def test_ctrl_c_ends_the_questions_at_once(trail: WorkspaceMaker, tmp_path: Path) -> None:
    """A server that holds its answer to a question: the first Ctrl-C ends the asking (before:
    the export waited for the request's deadline, question after question)."""
    import signal
    import threading

    trail.settings({"openlineage.timeout": 600})
    held = threading.Event()
    with FakeServer(reads=True) as server:
        export(trail, tmp_path, server)
        server.script(_remembers_then(lambda request: Answer(200, hold=held)))
        mark = len(server.requests)  # (the first export asked what the server held: nothing)
        proc = start_export(trail, tmp_path, server.url)
        try:
            assert server.wait_for_get(mark), "the export never asked"
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)  # not the 600 s the request could take
        finally:
            held.set()
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 130, err
    assert json.loads(out)["runs"]["unchanged"] == 8 and "Traceback" not in err


def test_a_300_mb_answer_to_a_question_is_never_read_whole(
    trail: WorkspaceMaker, tmp_path: Path
) -> None:
    """The questions' answers are capped as the POSTs' are (64 KiB): a 300 MB answer stops
    being read there (before the one client: read whole, 750 MB at the peak)."""
    import sys

    peak = tmp_path / "peak-kB"
    with FakeServer(reads=True) as server:
        export(trail, tmp_path, server)
        server.script(_remembers_then(lambda request: Answer(200, huge=300 * 1024 * 1024)))
        done = subprocess.run(
            [
                sys.executable,
                str(Path(__file__).parent / "support" / "peak_memory.py"),
                str(peak),
                *cli_command("export", "--json", "-w", str(trail.root)),
            ],
            env=cli_env(tmp_path, OPENLINEAGE_URL=server.url),
            capture_output=True,
            text=True,
            timeout=300,
        )
        sent = server.huge_bytes_sent
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["runs"]["unchanged"] == 8
    assert sent < 64 * 1024 * 1024, f"{sent} bytes of the answer were read"
    kilobytes = int(peak.read_text())
    assert kilobytes < 256 * 1024, f"peak memory {kilobytes} kB (the answer is 300 MB)"


def test_a_url_only_some_clients_take_is_asked_or_cannot_be_asked_never_a_traceback(
    trail: WorkspaceMaker, tmp_path: Path
) -> None:
    """http://xn--a.localhost:PORT (not a valid IDNA label): libcurl takes it, as it took the
    events; before, the questions had a client of their own, whose idna decoding made every
    later export die with a traceback. A host's httpx client cannot decode it: one line."""
    import httpx

    from openlineage_export.export import ExportRequest, run_export

    with FakeServer(reads=True) as server:
        url = server.url.replace("127.0.0.1", "xn--a.localhost")
        first = subprocess.run(
            cli_command("export", "--json", "-w", str(trail.root)),
            env=cli_env(tmp_path, OPENLINEAGE_URL=url),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert first.returncode == 0, first.stderr
        again = subprocess.run(
            cli_command("export", "--json", "-w", str(trail.root)),
            env=cli_env(tmp_path, OPENLINEAGE_URL=url),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
        assert json.loads(again.stdout)["runs"]["unchanged"] == 8
        assert any(r.method == "GET" for r in server.requests), "libcurl asked"
        with httpx.Client(trust_env=False) as http:
            hosted = run_export(
                ExportRequest(
                    workspace=trail.root, http=http, environ=cli_env(tmp_path, OPENLINEAGE_URL=url)
                )
            )
    assert hosted.runs_unchanged == 8 and hosted.exit_code == 0
    [warning] = hosted.warnings
    assert warning.startswith(
        f"could not ask the server at {url.rstrip('/')}/api/v1/lineage "
        "whether it still has the runs the ledger says it accepted ("
    )
