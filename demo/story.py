"""The demo's story, day by day: what ran, failed, was edited, in the order it happened."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

from .graph import ERP_STOCK
from .shapes import CANCEL, ENGINE_OLD
from .simulate import CET, Trail, at, day_ctx, trace_uuid

ROTATIONS = [at(3, 0, 0), at(4, 12, 0)]
"""When the hub started a new segment: the trail is in three."""

TORN_AFTER = datetime(2026, 11, 5, 3, 9, tzinfo=UTC)
"""The trail is read while the hub writes its first line after this moment."""


def build(t: Trail) -> None:
    """The five days of the demo, in the order things happened."""
    u = iter(range(1, 100))  # UUID trace ids in order of appearance
    for day in (november_1, november_2, november_3, november_4, november_5):
        day(t, u)


def nov(d: int) -> date:
    """A day of November 2026."""
    return date(2026, 11, d)


def inventory(
    t: Trail, u: Iterator[int], day: int, hour: int, second: float, **options: Any
) -> None:
    """inventory-sync, scheduled at hh:30 on a host that logs Central European Time."""
    t.run(
        "inventory-sync",
        trace_uuid(next(u)),
        at(day, hour, 30, second, CET),
        trigger="schedule",
        tz=CET,
        **options,
    )


def november_1(t: Trail, u: Iterator[int]) -> None:
    """1 November (a Sunday): still engine 4.1.3 with old-style trace ids, then 4.2.0."""
    t.run(
        "inventory-sync",
        "run-20261101-0001",
        at(1, 1, 30, 0.412, CET),
        trigger="schedule",
        engine=ENGINE_OLD,
        tz=CET,
        announce=False,
    )
    t.run(
        "daily-sales",
        "run-20261101-0002",
        at(1, 2, 0, 0.118),
        trigger="schedule",
        engine=ENGINE_OLD,
        ctx=day_ctx(nov(1)),
        skip=["publish"],
        announce=False,
    )
    t.run(
        "customer-360",
        "run-20261101-0003",
        at(1, 3, 0, 0.231),
        trigger="schedule",
        engine=ENGINE_OLD,
        ctx=day_ctx(nov(1)),
        announce=False,
    )
    t.run(
        "legacy-orders-export",
        "run-20261101-0007",
        at(1, 5, 0, 2.0),
        trigger=None,
        engine=None,
        ctx=day_ctx(nov(1)),
        announce=False,
    )
    t.other(
        at(1, 9, 41, 7.25),
        "edit",
        user="tomasz.nowak@acme.example",
        change="engine-upgraded",
        detail={"engine": "hub-engine", "from": "4.1.3", "to": "4.2.0"},
    )
    t.other(
        at(1, 10, 5, 12.5),
        "settings",
        user="dana.kim@acme.example",
        key="openlineage.url",
        value="http://localhost:5000",
    )
    inventory(t, u, 1, 13, 0.388)
    t.run(
        "marketing-attribution",
        trace_uuid(next(u), upper=True),
        at(1, 15, 20, 41.6),
        trigger="manual",
        ctx=day_ctx(nov(1)),
    )


def november_2(t: Trail, u: Iterator[int]) -> None:
    """2 November: the legacy export's last run, an ERP export read without a digest, the
    legacy pipeline deleted, a late push that ends in the next segment."""
    inventory(t, u, 2, 1, 0.402)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(2, 2, 0, 0.121),
        trigger="schedule",
        ctx=day_ctx(nov(2)),
    )
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(2, 3, 0, 0.219),
        trigger="schedule",
        ctx=day_ctx(nov(2)),
        announce=False,
    )
    t.run(
        "legacy-orders-export",
        "run-20261102-0006",
        at(2, 5, 0, 1.0),
        trigger=None,
        engine=None,
        ctx=day_ctx(nov(2)),
        announce=False,
    )
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(2, 10, 14, 3.9),
        trigger="push",
        ctx=day_ctx(nov(2)),
    )
    # the ERP share was being rewritten: the engine could not digest the export it read
    inventory(t, u, 2, 13, 0.377, no_digest=[ERP_STOCK])
    t.other(
        at(2, 16, 2, 33.0),
        "edit",
        user="dana.kim@acme.example",
        change="pipeline-deleted",
        pipeline="legacy-orders-export",
    )
    # a late push: starts in segment 1, ends in segment 2
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(2, 23, 41, 18.2),
        trigger="push",
        ctx=day_ctx(nov(2)),
    )


def november_3(t: Trail, u: Iterator[int]) -> None:
    """3 November: a failed nightly and its manual re-run, a cancelled run."""
    inventory(t, u, 3, 1, 0.395)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(3, 2, 0, 0.117),
        trigger="schedule",
        ctx=day_ctx(nov(3)),
        outcomes={"extract": ["pg_timeout", None], "build_mart": ["bq_quota"]},
    )
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(3, 3, 0, 0.244),
        trigger="schedule",
        ctx=day_ctx(nov(3)),
    )
    t.other(
        at(3, 9, 12, 4.0),
        "export",
        user="dana.kim@acme.example",
        destination="http://localhost:5000",
        dryRun=True,
    )
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(3, 9, 31, 55.0),
        trigger="manual",
        ctx=day_ctx(nov(3)),
    )
    inventory(t, u, 3, 13, 0.381)
    t.run(
        "marketing-attribution",
        trace_uuid(next(u), upper=True),
        at(3, 14, 2, 10.0),
        trigger="manual",
        ctx=day_ctx(nov(3)),
        outcomes={"attribute": [CANCEL]},
    )
    t.other(
        at(3, 14, 19, 30.0),
        "edit",
        user="maria.lopez@acme.example",
        change="stage-updated",
        pipeline="marketing-attribution",
        stage="attribute",
    )
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(3, 14, 21, 2.5),
        trigger="manual",
        ctx=day_ctx(nov(3)),
    )
    t.other(
        at(3, 17, 45, 0.0),
        "export",
        user="dana.kim@acme.example",
        destination="http://localhost:5000",
        dryRun=False,
    )


def november_4(t: Trail, u: Iterator[int]) -> None:
    """4 November: Kafka is down at 3 am; a backfill; the churn model is drafted."""
    inventory(t, u, 4, 1, 0.399)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(4, 2, 0, 0.125),
        trigger="schedule",
        ctx=day_ctx(nov(4)),
    )
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(4, 3, 0, 0.236),
        trigger="schedule",
        ctx=day_ctx(nov(4)),
        outcomes={"ingest_events": ["kafka_timeout", "kafka_timeout"]},
    )
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(4, 8, 2, 13.0),
        trigger="manual",
        ctx=day_ctx(date(2026, 10, 31)),
    )  # a backfill of 30 October
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(4, 8, 45, 9.7),
        trigger="manual",
        ctx=day_ctx(nov(4)),
    )
    for minute, change, extra in [
        (2, "pipeline-added", {}),
        (9, "stage-added", {"stage": "features"}),
        (16, "stage-added", {"stage": "train"}),
        (21, "stage-added", {"stage": "score"}),
    ]:
        t.other(
            at(4, 10, minute, 5.0),
            "edit",
            user="priya.shah@acme.example",
            change=change,
            pipeline="churn-model",
            **extra,
        )
    # starts in segment 2, ends in segment 3
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(4, 11, 48, 27.1),
        trigger="push",
        ctx=day_ctx(nov(4)),
    )
    inventory(t, u, 4, 13, 0.402)
    t.run(
        "marketing-attribution",
        trace_uuid(next(u)),
        at(4, 16, 5, 40.3),
        trigger="push",
        ctx=day_ctx(nov(4)),
        announce=False,
    )


def november_5(t: Trail, u: Iterator[int]) -> None:
    """5 November: the trail is read while customer-360 is running."""
    inventory(t, u, 5, 1, 0.391)
    t.run(
        "daily-sales",
        trace_uuid(next(u)),
        at(5, 2, 0, 0.119),
        trigger="schedule",
        ctx=day_ctx(nov(5)),
    )
    # records its progress at every stage; the trail is read while ingest_events runs
    t.run(
        "customer-360",
        trace_uuid(next(u)),
        at(5, 3, 0, 0.228),
        trigger="schedule",
        ctx=day_ctx(nov(5)),
        progress=True,
    )
