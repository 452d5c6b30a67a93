"""Malformed lines, each kind in turn: what a reader of the trail must skip and name."""

from __future__ import annotations

import json
from typing import Any

from .graph import Pipeline


def bad_line(number: int, last_trace: str, pipeline: Pipeline) -> str:
    """The ``number``-th malformed line (from 0), of the kind whose turn it is (see the
    package's docstring): a run of ``pipeline`` named ``last_trace``, the trace id of a recent
    good run (or none), so that a reader that wrongly took it would change that run."""
    trace = last_trace or "run-00000000-0000"
    when = "2026-11-02T02:00:00.120Z"
    good: dict[str, Any] = {
        "kind": "run",
        "traceId": trace,
        "pipeline": pipeline.id,
        "status": "succeeded",
        "startedAt": when,
        "endedAt": "2026-11-02T02:07:31.904Z",
        "recordedAt": "2026-11-02T02:07:32.010Z",
        "stages": [
            {
                "stage": pipeline.stages[0].id,
                "attempt": 1,
                "status": "succeeded",
                "startedAt": "2026-11-02T02:00:00.300Z",
                "endedAt": "2026-11-02T02:03:10.000Z",
            }
        ],
    }
    stage = good["stages"][0]
    turn = number % 17
    if turn == 0:
        return json.dumps(good)[:57] + "\n"  # cut short
    if turn == 1:
        return "<<<<<<< HEAD\n"  # a merge left behind
    if turn == 2:  # not UTF-8 (a Latin-1 byte); decoded leniently, still no known status
        return json.dumps(good).replace('"succeeded"', '"caf\udce9"', 1) + "\n"
    if turn == 3:
        return json.dumps(["run", trace, "succeeded"]) + "\n"  # not an object
    if turn == 4:
        del good["traceId"]
    elif turn == 5:
        del good["pipeline"]
    elif turn == 6:
        del good["startedAt"]
    elif turn == 7:
        del good["endedAt"]  # required once ended
    elif turn == 8:
        del stage["startedAt"]  # required unless skipped
    elif turn == 9:
        good["traceId"] = 1234567
    elif turn == 10:
        good["traceId"] = ""
    elif turn == 11:
        good["stages"] = {"extract": "succeeded"}
    elif turn == 12:
        stage["attempt"] = "2"
    elif turn == 13:
        good["startedAt"] = 1793584800120  # epoch ms, not a time
    elif turn == 14:
        good["startedAt"] = "2026-11-02T02:00:00.120"  # no offset
    elif turn == 15:
        good["status"] = "done"
    else:
        stage["status"] = "paused"
    return json.dumps(good, separators=(",", ":")) + "\n"
