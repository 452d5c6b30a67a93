"""A url that already ends with the endpoint (``http://localhost:5000/api/v1/lineage``) posts
to ``.../api/v1/lineage/api/v1/lineage``, where every event is refused with 404: the export
says so first, in one warning naming the url to set (deliver/http/address.py)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from fakeserver import Answer, FakeServer
from helpers import WorkspaceMaker, cli_command, cli_env, run_record

from openlineage_export.deliver.http.address import url_doubts
from openlineage_export.deliver.registry import CATALOGUE


@pytest.mark.parametrize(
    ("url", "endpoint", "base"),
    [
        ("http://localhost:5000/api/v1/lineage", None, "http://localhost:5000"),
        ("http://localhost:5000/api/v1/lineage/", None, "http://localhost:5000"),
        ("https://lineage.example/marquez/api/v1/lineage", None, "https://lineage.example/marquez"),
        (
            "https://atlan.example/events/openlineage/spark/api/v1/lineage",
            "events/openlineage/spark/api/v1/lineage",
            "https://atlan.example",
        ),
    ],
)
def test_a_url_ending_with_the_endpoint_is_said_with_the_url_to_set(
    url: str, endpoint: str | None, base: str
) -> None:
    values = {"openlineage.url": url, **({"openlineage.endpoint": endpoint} if endpoint else {})}
    [doubt] = url_doubts(CATALOGUE.settings(values))
    assert doubt.startswith("openlineage.url already ends with the endpoint")
    assert doubt.endswith(f": set openlineage.url to {base}")


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:5000",
        "http://localhost:5000/",
        "https://lineage.example/marquez",
        "http://localhost:5000/api/v1/lineagex",
        "http://localhost:5000/xapi/v1/lineage",
    ],
)
def test_a_url_that_does_not_end_with_the_endpoint_is_not_doubted(url: str) -> None:
    assert url_doubts(CATALOGUE.settings({"openlineage.url": url})) == []


def test_the_export_warns_before_its_refused_runs_in_the_report_and_on_the_terminal(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    ws.segment("000001.jsonl", [run_record(f"r{i}") for i in range(3)])
    with FakeServer(Answer(404)) as server:
        doubled = server.url + "/api/v1/lineage"
        env = cli_env(tmp_path, OPENLINEAGE_URL=doubled)
        done = subprocess.run(
            cli_command("export", "--json", "-w", str(ws.root)),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        paths = {request.path for request in server.requests if request.method == "POST"}
        human = subprocess.run(
            cli_command("export", "-w", str(ws.root)),
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert paths == {"/api/v1/lineage/api/v1/lineage"}  # the setting is taken as it is
    report = json.loads(done.stdout)
    assert done.returncode != 0 and report["runs"]["failed"] == 3
    said = (
        f"openlineage.url already ends with the endpoint (api/v1/lineage), so events go to "
        f"{doubled}/api/v1/lineage: set openlineage.url to {server.url}"
    )
    assert said in report["warnings"]
    assert said in human.stdout + human.stderr and "Traceback" not in human.stderr


def test_a_dry_run_needs_no_url_and_doubts_none(ws: WorkspaceMaker, tmp_path: Path) -> None:
    ws.segment("000001.jsonl", [run_record("r0")])
    env = cli_env(tmp_path, OPENLINEAGE_URL="http://127.0.0.1:9/api/v1/lineage")
    done = subprocess.run(
        cli_command(
            "export",
            "--dry-run",
            "--json",
            "-w",
            str(ws.root),
            "-o",
            str(tmp_path / "events.jsonl"),
        ),
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["warnings"] == []
