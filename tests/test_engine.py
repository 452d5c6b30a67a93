"""The delivery engine, against scripted destinations: order, bounds, cancel, stops.

What a real server does with the events is in tests/e2e; here the destination is a stand-in
whose timing the test controls, so every promise of the engine can be checked exactly: the
engine runs on an event loop with a virtual clock (``virtual_clock.py``), so a send scripted
to take 0.5 s takes exactly that, on a fast idle machine and a slow busy one alike.
"""

from __future__ import annotations

import asyncio
import gc
import random
import threading
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest
from support.virtual_clock import run_on_virtual_clock

from openlineage_export.deliver.destination import RunOutcome, Tally
from openlineage_export.deliver.engine import deliver_async
from openlineage_export.errors import ConfigError, DestinationUnreachable
from openlineage_export.guards.secrecy import Redactor
from openlineage_export.translate.encoded import TranslatedRun


def run(
    name: str, reads: tuple[str, ...] = (), writes: tuple[str, ...] = (), events: int = 3
) -> TranslatedRun:
    def named(names: tuple[str, ...]) -> list[dict[str, Any]]:
        return [{"namespace": "ns", "name": n} for n in names]

    return TranslatedRun.of(
        name,
        "p",
        name,
        "succeeded",
        [
            {"eventType": "START", "n": i, "inputs": named(reads), "outputs": named(writes)}
            for i in range(events)
        ],
    )


class Scripted:
    """A destination whose sends take the time the test says, recording what overlapped."""

    name = "scripted"
    redact = Redactor()

    def __init__(
        self,
        concurrency: int = 4,
        seconds: dict[str, float] | None = None,
        default: float = 0.01,
        event_legs: bool = False,
    ) -> None:
        self.concurrency = concurrency
        self.event_legs = event_legs
        self.spans: list[tuple[str, int, float, float]] = []
        """Each event sent: run id, its number, when its send began and ended."""
        self.seconds = seconds or {}
        self.default = default
        self.started: dict[str, float] = {}
        self.finished: dict[str, float] = {}
        self.in_flight = 0
        self.most_in_flight = 0
        self.events: list[tuple[str, int]] = []
        self.opened = self.closed = 0
        self.raise_for: dict[str, Exception] = {}
        self.cancel_at: tuple[str, threading.Event] | None = None
        """Set this cancel as that run starts."""
        self.refuse: dict[str, int] = {}
        """Run id -> the number of the event the destination refuses."""
        self.hang: set[str] = set()

    async def start(self) -> None:
        self.opened += 1

    async def send(self, run: TranslatedRun, stop: asyncio.Event, tally: Tally) -> RunOutcome:
        clock = asyncio.get_running_loop().time
        self.started[run.run_id] = clock()
        if self.cancel_at is not None and self.cancel_at[0] == run.run_id:
            self.cancel_at[1].set()
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if run.run_id in self.raise_for:
                raise self.raise_for[run.run_id]
            for event in run.events:
                if stop.is_set():
                    return RunOutcome(tally.accepted, "cancelled")
                if self.refuse.get(run.run_id) == event["n"]:
                    return RunOutcome(tally.accepted, f"event {event['n']} refused")
                if run.run_id in self.hang:
                    await asyncio.Event().wait()  # a request that never gets an answer
                began = clock()
                await asyncio.sleep(self.seconds.get(run.run_id, self.default) / len(run.events))
                self.events.append((run.run_id, event["n"]))
                self.spans.append((run.run_id, event["n"], began, clock()))
                tally.accepted += 1
            return RunOutcome(tally.accepted)
        finally:
            self.in_flight -= 1
            self.finished[run.run_id] = clock()

    async def close(self) -> None:
        self.closed += 1


def deliver(
    runs: Iterator[tuple[TranslatedRun, str]],
    destination: Scripted,
    on_outcome: Any,
    cancel: threading.Event,
) -> None:
    """What an export does (start, send every run, close), on the virtual clock."""

    async def whole() -> None:
        try:
            await deliver_async(runs, destination, on_outcome, cancel)
        finally:
            await destination.close()

    run_on_virtual_clock(whole())


def send_all(
    destination: Scripted, runs: list[TranslatedRun], cancel: threading.Event | None = None
) -> dict[str, RunOutcome]:
    outcomes: dict[str, RunOutcome] = {}
    deliver(
        ((r, r.run_id) for r in runs),
        destination,
        lambda r, tag, o: outcomes.__setitem__(tag, o),
        cancel or threading.Event(),
    )
    return outcomes


def conflicts(a: TranslatedRun, b: TranslatedRun) -> bool:
    def sets(r: TranslatedRun) -> tuple[set[str], set[str]]:
        e = r.events[0]
        return {d["name"] for d in e["inputs"]}, {d["name"] for d in e["outputs"]}

    (ra, wa), (rb, wb) = sets(a), sets(b)
    return bool(wa & (rb | wb) or wb & ra)


def test_every_run_arrives_whole_and_in_order_and_the_destination_is_opened_and_closed() -> None:
    destination = Scripted(concurrency=4)
    runs = [run(f"r{i}", events=2 + i % 3) for i in range(30)]
    outcomes = send_all(destination, runs)
    assert all(o.delivered for o in outcomes.values()) and len(outcomes) == 30
    for r in runs:
        assert [n for rid, n in destination.events if rid == r.run_id] == list(range(len(r.events)))
    assert (destination.opened, destination.closed) == (1, 1)


def test_independent_runs_go_in_parallel_up_to_the_concurrency() -> None:
    destination = Scripted(concurrency=5, default=0.05)
    send_all(
        destination,
        [run(f"r{i}", reads=("shared-source",), writes=(f"out{i}",)) for i in range(20)],
    )
    assert destination.most_in_flight == 5


@pytest.mark.parametrize("seed", range(8))
def test_conflicting_runs_never_overlap_and_keep_the_trails_order(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"d{i}" for i in range(5)]
    runs = [
        run(
            f"r{i:02d}",
            reads=tuple(rng.sample(names, rng.randint(0, 2))),
            writes=tuple(rng.sample(names, rng.randint(0, 1))),
        )
        for i in range(40)
    ]
    destination = Scripted(concurrency=6, seconds={r.run_id: rng.uniform(0.0, 0.03) for r in runs})
    outcomes = send_all(destination, runs)
    assert all(o.delivered for o in outcomes.values())
    overlapping_pairs = 0
    for i, earlier in enumerate(runs):
        for later in runs[i + 1 :]:
            if conflicts(earlier, later):
                assert destination.started[later.run_id] >= destination.finished[earlier.run_id], (
                    earlier.run_id,
                    later.run_id,
                )
            elif destination.started[later.run_id] < destination.finished[earlier.run_id]:
                overlapping_pairs += 1
    assert overlapping_pairs > 0, "runs that share nothing went in parallel"


def test_a_slow_run_holds_back_only_the_runs_that_depend_on_it() -> None:
    destination = Scripted(concurrency=4, seconds={"writer": 0.5})
    runs = [
        run("writer", writes=("x",)),
        run("reader", reads=("x",)),
        *(run(f"free{i}", reads=("y",)) for i in range(6)),
    ]
    send_all(destination, runs)
    assert destination.started["reader"] >= destination.finished["writer"]
    assert all(destination.finished[f"free{i}"] < destination.finished["writer"] for i in range(6))


def test_runs_are_pulled_only_as_room_frees_up() -> None:
    destination = Scripted(concurrency=3, default=0.01)
    pulled = 0

    def runs() -> Iterator[tuple[TranslatedRun, str]]:
        nonlocal pulled
        for i in range(50):
            # Never more than twice the concurrency pulled ahead of the finished runs.
            assert pulled - len(destination.finished) <= 2 * 3
            pulled += 1
            yield run(f"r{i}"), f"r{i}"

    deliver(runs(), destination, lambda *a: None, threading.Event())
    assert pulled == 50


def test_an_outage_stops_everything_and_the_runs_it_cut_short_are_not_reported() -> None:
    destination = Scripted(concurrency=4, default=0.2)
    destination.raise_for["r3"] = DestinationUnreachable("the server went away")
    with pytest.raises(DestinationUnreachable, match="went away"):
        send_all(destination, [run(f"r{i}") for i in range(20)])
    assert "r19" not in destination.started, "no new run started after the outage"
    assert destination.closed == 1


def test_a_configuration_error_mid_delivery_ends_it() -> None:
    destination = Scripted(concurrency=2)
    destination.raise_for["r1"] = ConfigError("the server refused the key")
    with pytest.raises(ConfigError, match="refused the key"):
        send_all(destination, [run(f"r{i}") for i in range(10)])


@pytest.mark.parametrize("legs", [False, True])
def test_any_error_in_a_send_is_that_runs_failure_and_none_is_left_unretrieved(
    legs: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 30 (4): an OverflowError inside an HTTP client (a timeout of 1e16 s) was lost:
    "Task exception was never retrieved", "0 of 3 runs sent", exit 0."""
    destination = Scripted(concurrency=3, event_legs=legs)
    destination.raise_for = {
        f"r{i}": OverflowError("Python int too large to convert to C long") for i in (1, 4)
    }
    destination.raise_for["r6"] = RuntimeError("")
    with caplog.at_level("ERROR", logger="asyncio"):
        result = send_all(destination, [run(f"r{i}") for i in range(8)])
        gc.collect()  # where asyncio says an exception of a task was never retrieved
    assert sorted(result) == [f"r{i}" for i in range(8)], "every run has an outcome"
    assert (
        result["r1"]
        == result["r4"]
        == RunOutcome(
            0,
            (
                "failed inside the exporter (OverflowError: Python int too large to convert to C long)"
            ),
        )
    )
    assert result["r6"] == RunOutcome(0, "failed inside the exporter (RuntimeError)")
    assert all(result[f"r{i}"].delivered for i in (0, 2, 3, 5, 7))
    assert destination.closed == 1
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]


def test_any_error_in_a_send_that_never_waits_is_that_runs_failure() -> None:
    class Writes(Scripted):
        never_waits = True

    destination = Writes(concurrency=1)
    destination.raise_for = {"r1": ValueError("I/O operation on closed file")}
    result = send_all(destination, [run(f"r{i}") for i in range(3)])
    assert result["r1"] == RunOutcome(
        0, "failed inside the exporter (ValueError: I/O operation on closed file)"
    )
    assert result["r0"].delivered and result["r2"].delivered


def test_an_error_in_a_send_is_shown_with_the_secrets_masked() -> None:
    destination = Scripted(concurrency=2)
    destination.redact = Redactor("sk-live-4f9a1c2e7b")
    destination.raise_for = {"r0": ValueError("bad header 'Bearer sk-live-4f9a1c2e7b'\nnext")}
    result = send_all(destination, [run("r0")])
    assert (
        result["r0"].error == "failed inside the exporter (ValueError: bad header "
        "'Bearer ***' next)"
    )


def test_an_error_handing_an_outcome_over_ends_the_delivery_loudly() -> None:
    destination = Scripted(concurrency=2)

    def on_outcome(run: TranslatedRun, tag: str, outcome: RunOutcome) -> None:
        if tag == "r2":
            raise KeyError("the recorder's own bug")

    with pytest.raises(KeyError, match="the recorder's own bug"):
        deliver(
            ((r, r.run_id) for r in [run(f"r{i}") for i in range(10)]),
            destination,
            on_outcome,
            threading.Event(),
        )
    assert destination.closed == 1


def test_a_cancel_abandons_requests_that_never_get_an_answer() -> None:
    destination = Scripted(concurrency=3, default=0.01)
    destination.hang = {"r5", "r6"}
    cancel = threading.Event()
    destination.cancel_at = ("r6", cancel)  # the host cancels once r6 is waiting too
    result = send_all(destination, [run(f"r{i}") for i in range(40)], cancel)
    assert not result["r5"].delivered and not result["r6"].delivered
    assert "interrupted" in (result["r5"].error or "")
    assert len(result) < 40 and all(o.delivered for k, o in result.items() if int(k[1:]) < 5)
    assert destination.closed == 1


# ------------------------------------------------------------------ runs sent in legs


def pipeline_run(name: str, stages: int = 3, refused_at: int | None = None) -> TranslatedRun:
    """A run of a chain pipeline: its START, then stage k reads d{k-1} and writes d{k} (its
    START and its end both say so), then its end, which names no dataset."""

    def named(*names: str) -> list[dict[str, Any]]:
        return [{"namespace": "ns", "name": n} for n in names]

    events = [{"eventType": "START", "n": 0, "inputs": [], "outputs": []}]
    for k in range(1, stages + 1):
        for end in (False, True):
            events.append(
                {
                    "eventType": "COMPLETE" if end else "START",
                    "n": len(events),
                    "inputs": named(f"d{k - 1}"),
                    "outputs": named(f"d{k}"),
                }
            )
    events.append({"eventType": "COMPLETE", "n": len(events), "inputs": [], "outputs": []})
    return TranslatedRun.of(name, "p", name, "succeeded", events)


def serial_conflicts(runs: list[TranslatedRun]) -> list[tuple[tuple[str, int], tuple[str, int]]]:
    """Every pair of events of two runs, earlier on the trail first, that touch one dataset
    where one of them writes it (the first event to touch a dataset makes its first version,
    so it counts as writing it): what a one-at-a-time export gives, the server must see."""
    touched: dict[str, list[tuple[tuple[str, int], bool]]] = {}
    for r in runs:
        for event in r.events:
            writes = {d["name"] for d in event["outputs"]}
            for name in {d["name"] for d in event["inputs"]} | writes:
                first = name not in touched
                touched.setdefault(name, []).append(
                    ((r.run_id, event["n"]), first or name in writes)
                )
    pairs = []
    for sequence in touched.values():
        for i, (earlier, wrote) in enumerate(sequence):
            for later, writes in sequence[i + 1 :]:
                if earlier[0] != later[0] and (wrote or writes):
                    pairs.append((earlier, later))
    return pairs


def check_causal_order(destination: Scripted, runs: list[TranslatedRun]) -> int:
    """Each conflicting pair of events was sent in the trail's order (the later one began
    after the earlier one was answered); returns how many were checked."""
    spans = {(rid, n): (began, ended) for rid, n, began, ended in destination.spans}
    pairs = serial_conflicts(runs)
    for earlier, later in pairs:
        if earlier in spans and later in spans:
            assert spans[later][0] >= spans[earlier][1], (earlier, later)
    return len(pairs)


def test_in_legs_the_next_run_of_a_pipeline_starts_before_the_earlier_one_ends() -> None:
    runs = [pipeline_run(f"r{i}") for i in range(8)]
    destination = Scripted(concurrency=4, default=0.02, event_legs=True)
    outcomes = send_all(destination, runs)
    assert all(o.delivered and o.accepted == 8 for o in outcomes.values())
    for r in runs:  # each run whole, in order
        assert [n for rid, n in destination.events if rid == r.run_id] == list(range(8))
    assert check_causal_order(destination, runs) > 100
    spans = {(rid, n): (began, ended) for rid, n, began, ended in destination.spans}
    overlapping = sum(
        spans[(later.run_id, 1)][0] < spans[(earlier.run_id, 7)][1]
        for earlier, later in pairwise(runs)
    )
    assert overlapping == len(runs) - 1  # every run's first stage went before the last one ended

    whole = Scripted(concurrency=4, default=0.02 * 8)  # the same, a run at a time
    send_all(whole, runs)
    assert all(whole.started[b.run_id] >= whole.finished[a.run_id] for a, b in pairwise(runs))


@pytest.mark.parametrize("seed", range(8))
def test_in_legs_conflicting_events_keep_the_trails_order(seed: int) -> None:
    rng = random.Random(seed)
    names = [f"d{i}" for i in range(6)]

    def event(n: int) -> dict[str, Any]:
        return {
            "eventType": "START",
            "n": n,
            "inputs": [
                {"namespace": "ns", "name": d} for d in rng.sample(names, rng.randint(0, 2))
            ],
            "outputs": [
                {"namespace": "ns", "name": d} for d in rng.sample(names, rng.randint(0, 1))
            ],
        }

    runs = [
        TranslatedRun.of(
            f"r{i:02d}", "p", f"r{i:02d}", "succeeded", [event(n) for n in range(rng.randint(1, 6))]
        )
        for i in range(40)
    ]
    destination = Scripted(
        concurrency=6, event_legs=True, seconds={r.run_id: rng.uniform(0.0, 0.03) for r in runs}
    )
    outcomes = send_all(destination, runs)
    assert all(
        o.delivered and o.accepted == len(r.events)
        for r, o in zip(runs, (outcomes[r.run_id] for r in runs), strict=True)
    )
    assert check_causal_order(destination, runs) > 0


def test_in_legs_a_refused_event_ends_its_run_and_frees_those_waiting_for_it() -> None:
    runs = [pipeline_run(f"r{i}") for i in range(4)]
    destination = Scripted(concurrency=4, event_legs=True)
    destination.refuse["r1"] = 3  # its second stage's START
    outcomes = send_all(destination, runs)
    assert outcomes["r1"] == RunOutcome(3, "event 3 refused")
    assert [n for rid, n in destination.events if rid == "r1"] == [0, 1, 2]
    assert all(outcomes[r].delivered for r in ("r0", "r2", "r3"))
    check_causal_order(destination, [r for r in runs if r.run_id != "r1"])


def test_an_order_handed_in_is_the_one_the_engine_keeps() -> None:
    """The benchmark measures what the causal order costs by handing the export an order that
    keeps none (bench/measure/unordered.py, through ``ExportRequest.order``): with it, runs
    that write the same dataset overlap, which the causal order never lets them."""
    from bench.measure.unordered import EveryRunAtOnce

    runs = [run(f"r{i}", writes=("shared",)) for i in range(6)]
    kept = Scripted(concurrency=3, default=0.05)
    send_all(kept, runs)
    assert kept.most_in_flight == 1  # the causal order: one writer of "shared" at a time

    destination = Scripted(concurrency=3, default=0.05)
    outcomes: dict[str, RunOutcome] = {}

    async def whole() -> None:
        await deliver_async(
            ((r, r.run_id) for r in runs),
            destination,
            lambda r, tag, o: outcomes.__setitem__(tag, o),
            threading.Event(),
            EveryRunAtOnce(),
        )

    run_on_virtual_clock(whole())
    assert all(o.delivered for o in outcomes.values()) and len(outcomes) == 6
    assert destination.most_in_flight == 3  # every run at once, up to the concurrency


def test_runs_are_pulled_only_while_the_events_in_flight_fit_the_byte_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Attacker B (F02): a run's events may take up to 64 MiB, and twice the concurrency of runs
    waiting would be gigabytes; the bytes waiting bound them too."""
    from openlineage_export.deliver import engine

    size = len(run("r0", events=40).bodies[0]) * 40
    monkeypatch.setattr(engine, "MAX_BYTES_WAITING", 3 * size)
    destination = Scripted(concurrency=32, default=0.01)
    pulled = 0
    most = 0

    def runs() -> Iterator[tuple[TranslatedRun, str]]:
        nonlocal pulled, most
        for i in range(30):
            pulled += 1
            most = max(most, pulled - len(destination.finished))
            yield run(f"r{i}", events=40), f"r{i}"

    deliver(runs(), destination, lambda *a: None, threading.Event())
    assert pulled == 30 and len(destination.finished) == 30
    # Pulled and not finished: the runs whose events reach the bound (the third does), never
    # the window of 64 runs.
    assert most == 3
