"""The synthetic graph: pipelines of stages that read sources and write sinks of every kind."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

from .shape import (
    CADENCES,
    DOMAINS,
    FIRST_STAGES,
    LAST_STAGES,
    MIDDLE_STAGES,
    OFFSET_CHOICE,
    PARAMETERS,
    SCHEMAS,
    TABLES,
)


def _dataset(rng: random.Random, kind: str, domain: str) -> str:
    """A dataset name of one storage kind, in the shape the contract gives for it."""
    table = rng.choice(TABLES)
    host = rng.randint(1, 3)
    return {
        "postgres": f"postgres://pg-{host}.acme.internal:5432/{domain}.public.{table}",
        "mysql": f"mysql://mysql-{host}.acme.internal:3306/{domain}.{table}",
        "kafka": f"kafka://kafka-{host}.acme.internal:9092/{domain}.{table}",
        "file": f"file:///mnt/exports/{domain}/{table}.csv",
        "s3": f"s3://acme-{domain}/raw/{table}/part-{host:04d}.parquet",
        "gs": f"gs://acme-{domain}-warehouse/{table}.parquet",
        "bigquery": f"bigquery:acme-analytics.{domain}.{table}",
        "relative": f"data/{rng.choice(('raw', 'staged', 'marts'))}/{domain}_{table}.parquet",
    }[kind]


SOURCE_KINDS = ("postgres", "mysql", "kafka", "file", "s3")
STEP_KINDS = ("relative", "s3", "gs", "relative")
SINK_KINDS = ("bigquery", "postgres", "gs", "s3", "relative")


@dataclass
class Access:
    """A dataset as a stage reads or writes it, with its JSON pre-rendered."""

    dataset: str
    external: bool  # a source outside the pipelines: its content changes by itself
    stats: str = ""  # which of bytes/rows a write reports: "", "r" or "br"
    schema: str = ""  # ',"schema":[...]' or ""
    bare: str = ""  # '{"dataset":"..."}', a read without a digest
    opening: str = ""  # '{"dataset":"...","digest":"sha256:'

    def __post_init__(self) -> None:
        quoted = json.dumps(self.dataset)
        self.bare = '{"dataset":' + quoted + "}"
        self.opening = '{"dataset":' + quoted + ',"digest":"sha256:'


@dataclass
class Stage:
    """A stage with everything that does not change between its runs already rendered."""

    id: str
    reads: list[Access]
    writes: list[Access]
    duration_ms: int
    parameters: str  # ',"parameters":{...}' with an optional %s for the run's day
    source: str | None
    opening: str = ""  # '{"stage":"<id>"'

    def __post_init__(self) -> None:
        self.opening = '{"stage":' + json.dumps(self.id)


@dataclass
class Pipeline:
    """A pipeline of the graph (or one deleted from it) and the UTC offset its host logs in."""

    id: str
    name: str
    description: str | None
    stages: list[Stage]
    offset: tuple[int, str]  # the engine host's UTC offset: milliseconds and suffix
    quoted: str = ""

    def __post_init__(self) -> None:
        self.quoted = json.dumps(self.id)

    def as_graph(self) -> dict[str, Any]:
        """This pipeline as ``graph.json`` holds it."""
        stages = []
        for stage in self.stages:
            entry: dict[str, Any] = {
                "id": stage.id,
                "name": stage.id.replace("_", " ").capitalize(),
            }
            if stage.source:
                entry["source"] = stage.source
            entry["reads"] = [a.dataset for a in stage.reads]
            entry["writes"] = [a.dataset for a in stage.writes]
            stages.append(entry)
        out: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.description:
            out["description"] = self.description
        out["stages"] = stages
        return out


def make_pipelines(rng: random.Random, count: int, prefix: str = "") -> list[Pipeline]:
    """``count`` pipelines of 2-5 stages, each chain reading sources and writing sinks.

    The first source and the last sink of pipeline ``i`` take turns through the storage
    kinds, so any five consecutive pipelines use all of them.
    """
    pipelines: list[Pipeline] = []
    taken: set[str] = set()
    for index in range(count):
        domain = rng.choice(DOMAINS)
        pid = f"{prefix}{domain}-{rng.choice(CADENCES)}"
        if pid in taken:
            pid = f"{pid}-{index}"
        taken.add(pid)
        n_stages = rng.randint(2, 5)
        names = [
            rng.choice(FIRST_STAGES),
            *rng.sample(MIDDLE_STAGES, n_stages - 2),
            rng.choice(LAST_STAGES),
        ]
        previous: list[Access] = []
        stages: list[Stage] = []
        for position, sid in enumerate(names):
            last = position == n_stages - 1
            if position == 0:
                kinds = [SOURCE_KINDS[index % len(SOURCE_KINDS)]]
                if rng.random() < 0.5:
                    kinds.append(rng.choice([k for k in SOURCE_KINDS if k != kinds[0]]))
                reads = [Access(_dataset(rng, k, domain), True) for k in kinds]
            else:
                reads = list(previous)
                if rng.random() < 0.25:
                    reads.append(Access(_dataset(rng, rng.choice(SOURCE_KINDS), domain), True))
            kinds = [SINK_KINDS[index % len(SINK_KINDS)] if last else rng.choice(STEP_KINDS)]
            if rng.random() < 0.2:
                kinds.append(rng.choice(SINK_KINDS if last else STEP_KINDS))
            taken_names = {r.dataset for r in reads}
            writes = []
            for kind in kinds:
                name = _dataset(rng, kind, domain)
                if name not in taken_names:  # a stage does not overwrite what it reads
                    taken_names.add(name)
                    writes.append(Access(name, False))
            if not writes:
                writes.append(Access(f"data/staged/{pid}_{sid}.parquet", False))
            for access in writes:
                roll = rng.random()
                access.stats = "br" if roll < 0.4 else "r" if roll < 0.7 else ""
                if rng.random() < 0.3:
                    access.schema = ',"schema":' + json.dumps(
                        rng.choice(SCHEMAS), separators=(",", ":")
                    )
            source = None
            if rng.random() < 0.85:
                ext = ".sql" if rng.random() < 0.35 else ".py"
                source = f"pipelines/{pid.replace('-', '_')}/{sid}{ext}"
            stages.append(
                Stage(
                    sid, reads, writes, rng.randint(5_000, 900_000), rng.choice(PARAMETERS), source
                )
            )
            previous = writes
        offset = rng.choice(OFFSET_CHOICE)
        description = (
            None
            if rng.random() < 0.3
            else (
                f"{domain.capitalize()} data, {len(stages)} stages, from sources to marts "
                f"(≈ {rng.randint(1, 90)} GB)."
            )
        )
        pipelines.append(
            Pipeline(pid, f"{domain.capitalize()} {pid.split('-')[1]}", description, stages, offset)
        )
    return pipelines
