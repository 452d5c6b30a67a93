"""The real Feast, as scripts/feast.sh starts it: its OpenLineage consumer read back through its
own API (every event it holds, all pages), emptied, stopped and started again.

Feast keeps every event it is given, each under an id of its own (docs/feast.md): what it
holds is a list, and an event given twice is there twice. Its read API gives the events of a
namespace (and job), newest first by their ``eventTime``, at most 1,000 a page, with no total:
a page shorter than the limit is the last.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest
from bench.feast_checkout import feast_home, feast_pid
from bench.feast_checkout import feast_key as checkout_key
from helpers import ROOT, USERS_HOME

PAGE = 1000
"""Feast's largest page of events (``limit`` above it is a 422)."""
MAX_PAGES = 10_000
"""More pages than any test holds: a server that never ends its pages fails the test."""


def feast_url() -> str:
    """Where Feast listens: scripts/test.sh exports FEAST_URL (scripts/feast.sh's port)."""
    return os.environ.get("FEAST_URL") or "http://127.0.0.1:56580"


def feast_key() -> str:
    """The key its consumer requires: FEAST_API_KEY, else the one scripts/feast.sh made."""
    key = checkout_key()
    if key is None:
        pytest.fail(
            f"no key for Feast's consumer: FEAST_API_KEY is not set, and {feast_home()} holds "
            "no api.key"
        )
    return key


class Feast:
    """A thin client of Feast's lineage API (``/api/v1/lineage/openlineage/...``)."""

    def __init__(self, url: str, key: str) -> None:
        self.url = url
        self.key = key
        self.http = httpx.Client(base_url=url, timeout=120)

    def get(self, path: str, **params: Any) -> Any:
        response = self.http.get(f"/api/v1/lineage/openlineage{path}", params=params)
        response.raise_for_status()
        return response.json()

    def reset(self) -> None:
        """Forget every event, job, run and dataset (Feast's own purge; it takes the key)."""
        response = self.http.delete(
            "/api/v1/lineage/openlineage/reset", headers={"X-API-Key": self.key}
        )
        response.raise_for_status()
        assert self.count() == 0, "Feast still holds events after its reset"

    def count(self) -> int:
        """How many events Feast holds, in every namespace (its retention statistics)."""
        return int(self.get("/retention")["storage"]["events"]["count"])

    def rows(self, namespace: str) -> list[dict[str, Any]]:
        """Every event row Feast holds in ``namespace`` (its ``event_json`` a string), all pages."""
        rows: list[dict[str, Any]] = []
        for _ in range(MAX_PAGES):
            page = self.get("/events", namespace=namespace, limit=PAGE, offset=len(rows))
            rows += page["events"]
            if len(page["events"]) < PAGE:
                return rows
        pytest.fail(f"Feast's events of {namespace} did not end after {MAX_PAGES} pages")

    def events(self, namespaces: Iterable[str]) -> list[dict[str, Any]]:
        """Every event Feast holds in these job namespaces, as it was given (parsed), all pages;
        an event it holds twice is in the list twice."""
        return [json.loads(row["event_json"]) for ns in namespaces for row in self.rows(ns)]

    def held(self, expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Every event Feast holds in the job namespaces of ``expected`` (a dry run's events),
        after checking that it holds none anywhere else."""
        namespaces = sorted({e["job"]["namespace"] for e in expected})
        events = self.events(namespaces)
        assert self.count() == len(events), (
            f"Feast holds {self.count()} events, {len(events)} of them in {namespaces}"
        )
        return events


class FeastProcess:
    """This checkout's Feast, as scripts/feast.sh runs it: stopped as a deploy stops it (SIGTERM:
    uvicorn ends the requests it has), started again by the script (its database stays)."""

    def __init__(self) -> None:
        self.env = {**os.environ, "HOME": str(USERS_HOME)}  # HOME may be a test's own
        self.script = ROOT / "scripts" / "feast.sh"
        self.stopped = False

    def stop(self) -> None:
        pid = feast_pid()
        if pid is None:
            pytest.fail(f"no Feast started by scripts/feast.sh to stop (no pid in {feast_home()})")
        os.killpg(pid, signal.SIGTERM)  # its session: setsid
        self.stopped = True
        deadline = time.monotonic() + 120
        while Path(f"/proc/{pid}").exists():
            if time.monotonic() > deadline:
                pytest.fail(f"Feast (pid {pid}) did not end within 120 s of SIGTERM")
            time.sleep(0.05)  # polling a condition, not a premise

    def start(self) -> None:
        done = subprocess.run(
            [str(self.script), "start"], env=self.env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"scripts/feast.sh start failed:\n{done.stderr}"
        self.stopped = False
