"""Causal order: a run waits for exactly the earlier runs it conflicts with on a dataset."""

from __future__ import annotations

import gc
from typing import Any

from openlineage_export.deliver.order import CausalOrder, Ticket, datasets
from openlineage_export.translate.encoded import TranslatedRun


def run(name: str, reads: tuple[str, ...] = (), writes: tuple[str, ...] = ()) -> TranslatedRun:
    """A run whose stage event reads and writes datasets of namespace ``ns``."""

    def named(names: tuple[str, ...]) -> list[dict[str, Any]]:
        return [{"namespace": "ns", "name": n, "facets": {}} for n in names]

    events = [
        {"eventType": "START", "inputs": [], "outputs": []},
        {"eventType": "START", "inputs": named(reads), "outputs": named(writes)},
        {"eventType": "COMPLETE", "inputs": named(reads), "outputs": named(writes)},
    ]
    return TranslatedRun.of(name, "p", name, "succeeded", events)


def waits(ticket: Ticket, tickets: dict[str, Ticket]) -> set[str]:
    names = {id(t): n for n, t in tickets.items()}
    return {names[id(t)] for t in ticket.after}


def test_the_datasets_of_a_run_are_its_events_inputs_and_outputs() -> None:
    reads, writes = datasets(run("r", reads=("a", "b"), writes=("c",)))
    assert reads == {("ns", "a"), ("ns", "b")} and writes == {("ns", "c")}


def test_read_after_write_write_after_read_and_write_after_write_wait() -> None:
    order = CausalOrder()
    t: dict[str, Ticket] = {}
    t["w1"] = order.admit(run("w1", writes=("x",)))
    t["r1"] = order.admit(run("r1", reads=("x",)))
    t["r2"] = order.admit(run("r2", reads=("x",)))
    t["w2"] = order.admit(run("w2", writes=("x",)))
    t["r3"] = order.admit(run("r3", reads=("x",)))
    assert waits(t["w1"], t) == set()
    assert waits(t["r1"], t) == {"w1"}  # read after write
    assert waits(t["r2"], t) == {"w1"}  # readers do not wait for each other
    assert waits(t["w2"], t) == {"w1", "r1", "r2"}  # write after read, after write
    assert waits(t["r3"], t) == {"w2"}


def test_runs_that_share_nothing_or_only_read_go_at_once() -> None:
    order = CausalOrder()
    order.finish(order.admit(run("seen-before", reads=("src", "other"))))
    t = {
        name: order.admit(r)
        for name, r in [
            ("a", run("a", reads=("src",), writes=("out-a",))),
            ("b", run("b", reads=("src",), writes=("out-b",))),
            ("c", run("c", reads=("other",))),
            ("d", run("d")),
        ]
    }
    assert all(not ticket.after for ticket in t.values())


def test_a_run_that_reads_and_writes_one_dataset_orders_both_ways() -> None:
    order = CausalOrder()
    t: dict[str, Ticket] = {}
    t["r"] = order.admit(run("r", reads=("x",)))
    t["rw"] = order.admit(run("rw", reads=("x",), writes=("x",)))
    t["r2"] = order.admit(run("r2", reads=("x",)))
    assert waits(t["rw"], t) == {"r"} and waits(t["r2"], t) == {"rw"}


def test_finished_runs_are_forgotten_and_never_waited_for() -> None:
    order = CausalOrder()
    first = order.admit(run("w", writes=("x",)))
    reader = order.admit(run("r", reads=("x",)))
    order.finish(first)
    assert first.done.is_set()
    writer = order.admit(run("w2", writes=("x",)))
    assert writer.after == [reader]
    order.finish(reader)
    order.finish(writer)
    assert len(order) == 0, "nothing is kept once every run is done"


def test_the_first_read_of_a_dataset_makes_its_first_version_so_later_readers_wait() -> None:
    # Marquez gives a dataset no run wrote a version when it first reads it, named after that
    # reader: the readers after it must not overtake it.
    order = CausalOrder()
    t: dict[str, Ticket] = {}
    t["first"] = order.admit(run("first", reads=("external",)))
    t["second"] = order.admit(run("second", reads=("external",)))
    t["third"] = order.admit(run("third", reads=("external",)))
    assert waits(t["first"], t) == set()
    assert waits(t["second"], t) == {"first"} and waits(t["third"], t) == {"first"}
    order.finish(t["first"])
    t["later"] = order.admit(run("later", reads=("external",)))
    assert waits(t["later"], t) == set(), "once it has a version, reads go together"


def test_a_finished_leg_holds_nothing_it_waited_for() -> None:
    """Each run of a long export waits for the one before it (the same dataset, the one before
    still in flight when the next is admitted); once a run is finished, nothing of the order
    keeps the runs before it alive: only those in flight are held, however long the export."""
    order = CausalOrder()
    before = order.admit(run("r0", writes=("x",)))
    for n in range(1, 50):
        ticket = order.admit(run(f"r{n}", writes=("x",)))
        assert ticket.after == [before], "the premise: each run waits for the one before it"
        order.finish(before)
        before = ticket
    del ticket
    gc.collect()
    held = [o for o in gc.get_objects() if isinstance(o, Ticket)]
    # The one in flight, and the one it waited for (finished: it holds nothing more).
    assert before in held and len(held) == 2, f"{len(held)} legs held, for 1 in flight"


class _CountedTicket(Ticket):
    """A ticket that counts each time two tickets are compared (a look-up in a list)."""

    __slots__ = ()
    compared = 0

    def __eq__(self, other: object) -> bool:
        _CountedTicket.compared += 1
        return self is other

    __hash__ = Ticket.__hash__


def chain(name: str, stages: int) -> TranslatedRun:
    """A run of ``stages`` stages, each reading what the one before it wrote, and ``shared``."""

    def named(*names: str) -> list[dict[str, Any]]:
        return [{"namespace": "ns", "name": n, "facets": {}} for n in names]

    events: list[dict[str, Any]] = [{"eventType": "START", "inputs": [], "outputs": []}]
    for n in range(stages):
        inputs, outputs = named(f"d{n - 1}", "shared"), named(f"d{n}")
        events.append({"eventType": "START", "inputs": inputs, "outputs": outputs})
        events.append({"eventType": "COMPLETE", "inputs": inputs, "outputs": outputs})
    events.append({"eventType": "COMPLETE", "inputs": [], "outputs": []})
    return TranslatedRun.of(name, "p", name, "succeeded", events)


def test_one_run_of_many_stages_is_admitted_in_work_linear_in_its_stages(
    monkeypatch: Any,
) -> None:
    """A run of S stages in a chain, all reading one dataset, then one writing it at every
    stage: a leg's earlier legs are found by look-ups, never by scanning the run's legs or
    the readers found so far (S * S comparisons made a run of 214,000 stages minutes of CPU)."""
    import openlineage_export.deliver.order as order_module

    monkeypatch.setattr(order_module, "Ticket", _CountedTicket)
    stages = 3000
    order = CausalOrder()
    _CountedTicket.compared = 0
    first = order.legs(chain("a", stages))
    second = order.legs(chain("b", stages))
    whole = order.admit(chain("c", stages))

    def named(*names: str) -> list[dict[str, Any]]:
        return [{"namespace": "ns", "name": n, "facets": {}} for n in names]

    writer = [{"eventType": "START", "inputs": [], "outputs": named("shared")}] * (2 * stages)
    last = order.legs(TranslatedRun.of("d", "p", "d", "succeeded", writer))
    assert len(first) == len(second) == stages + 1 and len(last) == 1
    assert whole in last[0].ticket.after and len(set(last[0].ticket.after)) == len(
        last[0].ticket.after
    )
    assert _CountedTicket.compared <= 4 * stages, _CountedTicket.compared


def test_the_datasets_seen_are_remembered_up_to_a_bound_then_a_read_counts_as_a_write(
    monkeypatch: Any,
) -> None:
    """A trail that writes a new partition each run (``sales/2026-11-02``...) names as many
    datasets as it has runs: what is remembered of them is bounded, and a dataset forgotten
    is ordered as one never seen (its read waits as a write does: more waiting, never less)."""
    import openlineage_export.deliver.order as order_module

    monkeypatch.setattr(order_module, "SEEN_AT_MOST", 100, raising=False)
    order = CausalOrder()
    for n in range(1000):
        order.finish(order.admit(run(f"r{n}", reads=(f"in/{n}",), writes=(f"out/{n}",))))
        assert len(order._seen) <= 100 + 2  # and one event's datasets beyond
    # Forgotten: a read of in/0 counts as its first version again, so a reader waits for it.
    first = order.admit(run("again", reads=("in/0",)))
    reader = order.admit(run("reader", reads=("in/0",)))
    assert reader.after == [first]
