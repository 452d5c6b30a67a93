"""Runs in causal order, proven on the real Marquez: a concurrent export files every read and
write under exactly the dataset versions a one-at-a-time export does.

Marquez files a read under the version of the dataset that is current when it processes the
read, so a run that reaches it before an earlier run that wrote what it reads would be filed
under the wrong version. The export is run twice into an empty Marquez, once one run at a time
and once 16 at a time, and every run's input and output dataset versions are read back through
Marquez's API and compared.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from conftest import wipe
from helpers import DEMO, cli_command
from hubwriter.synth import write_workspace

pytestmark = pytest.mark.e2e

Versions = dict[str, tuple[tuple[tuple[str, str, str], ...], tuple[tuple[str, str, str], ...]]]


def export(workspace: Path, marquez: Any, state: Path, concurrency: int) -> dict[str, Any]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("OPENLINEAGE_")}
    environ.update(
        {
            "OPENLINEAGE_URL": marquez.url,
            "OPENLINEAGE_EXPORT_STATE_DIR": str(state),
            "OPENLINEAGE_EXPORT_CONFIG_DIR": str(state / "config"),
        }
    )
    (workspace / ".workspace" / "settings.json").write_text(
        json.dumps(
            {
                "openlineage.concurrency": concurrency,
                "openlineage.timeout": 30,
                "openlineage.retry.maxTime": 120,
            }
        )
    )
    done = subprocess.run(
        cli_command(
            "export",
            "-w",
            str(workspace),
            "--json",
            "-q",
        ),
        env=environ,
        capture_output=True,
        text=True,
        timeout=900,
    )
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["runs"]["failed"] == 0 and report["outage"] is None, done.stderr
    return report


def versions(marquez: Any, namespace: str) -> Versions:
    """Every run of every job of ``namespace``: its input and output dataset versions."""
    found: Versions = {}
    for job in marquez.jobs(namespace):
        path = f"/api/v1/namespaces/{quote(namespace, safe='')}/jobs/{quote(job, safe='')}/runs"
        offset = 0
        while True:
            runs = marquez.get(path, limit=100, offset=offset)["runs"]
            for run in runs:
                found[run["id"]] = tuple(
                    tuple(
                        sorted(
                            (
                                v["datasetVersionId"]["namespace"],
                                v["datasetVersionId"]["name"],
                                v["datasetVersionId"]["version"],
                            )
                            for v in run[side]
                        )
                    )
                    for side in ("inputDatasetVersions", "outputDatasetVersions")
                )
            offset += len(runs)
            if len(runs) < 100:
                break
    return found


@pytest.mark.parametrize("trail", ["demo", "synthetic"])
def test_a_concurrent_export_files_every_read_and_write_as_a_one_at_a_time_one_does(
    marquez: Any, tmp_path: Path, trail: str
) -> None:
    workspace = tmp_path / trail
    if trail == "demo":
        shutil.copytree(DEMO, workspace)
    else:
        write_workspace(workspace, 80, seed=7, pipelines=4, gzip_closed=False)
    seen: list[Versions] = []
    for concurrency in (1, 16):
        wipe()  # the same run ids go in again: Marquez keys runs by id across namespaces
        report = export(workspace, marquez, tmp_path / f"state-{concurrency}", concurrency)
        assert report["runs"]["sent"] == report["runs"]["total"] > 0
        seen.append(versions(marquez, report["namespace"]))
    one_at_a_time, concurrent = seen
    assert len(one_at_a_time) > 20
    reads = sum(len(inputs) for inputs, _ in one_at_a_time.values())
    assert reads > 20, "the trail must read what it writes for the proof to mean anything"
    differing = {
        run: (one_at_a_time[run], concurrent.get(run))
        for run in one_at_a_time
        if concurrent.get(run) != one_at_a_time[run]
    }
    assert differing == {}
    assert set(concurrent) == set(one_at_a_time)
    wipe()
