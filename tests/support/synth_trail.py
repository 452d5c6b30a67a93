"""Write large synthetic Lineage hub workspaces for tests and benchmarks.

A workspace follows ``shared/lineage-hub/CONTRACT.md``: ``settings.json``, ``graph.json`` and an
audit trail in segments (closed ones gzip-compressed, the newest plain). The trail is what a
busy hub would write: runs of several stages that read and write datasets of every storage kind
with content digests, retries, failures, cancellations, skipped stages, runs recorded when they
start and again when they end (``updates``), runs still going at the end (``running_tail``),
runs of pipelines since deleted from the graph, UUID and older-style trace ids, times in ``Z`` and
in other offsets, and lines of other kinds (``edit``, ``settings``, ``export``) in between.
Every pipeline in the graph runs except the ``never_run`` ones.

With ``bad_every=N`` every N-th line is malformed, in turn one of: not JSON (cut short, a merge
conflict marker, bytes that are not UTF-8), JSON that is not an object, a required field
missing, a field of the wrong type or an empty trace id, a time without an offset, an unknown
run or stage status. A bad line names the trace id of a recent good run (or none), so a reader
that wrongly accepted it would change that run's state, which tests can see in ``statuses``. With
``torn_tail=True`` the newest segment ends in a half-written line of a run that is not counted.

Use it from tests::

    summary = write_workspace(tmp_path, 1_000, seed=7, bad_every=50)
    assert summary["bad_lines"] == summary["lines"] // 50

or from a shell (the summary is printed as JSON)::

    python tests/support/synth_trail.py /tmp/ws --runs 1000000 --bad-every 1000

Only the standard library is used, so it runs before the package is installed. Output is
streamed (memory does not grow with ``runs``) and depends only on the arguments: the same seed
gives byte-identical files, gzip segments included.
"""

from __future__ import annotations

import argparse
import gzip
import heapq
import json
import random
import shutil
import sys
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

__all__ = ["main", "write_workspace"]

START = datetime(2026, 11, 1, tzinfo=UTC)
"""When the first synthetic run starts."""

MEAN_GAP_MS = 20_000
"""Mean time between two run starts: one million runs span about seven months."""

GZIP_LEVEL = 1
"""Compression of closed segments; it runs on its own thread, alongside generation."""

# The shape of the trail, as shares (0..1) of runs, stages or attempts.
FAIL_ATTEMPT = 0.04  # an attempt of a stage fails
RETRY = 0.6  # a failed attempt is retried (up to MAX_ATTEMPTS)
MAX_ATTEMPTS = 3
CANCEL = 0.015  # a run is cancelled during one of its stages
SKIP_BY_CONFIG = 0.02  # a stage after the first is skipped by configuration
LIST_SKIPPED = 0.7  # a failed run lists the stages it did not reach as skipped
SOURCE_CHANGED = 0.35  # an external source has new content when read
SAME_OUTPUT = 0.1  # a write reproduces the dataset's previous content
NO_DIGEST = 0.03  # a read without a digest
OTHER_KIND = 0.02  # before a run, a line of another kind is recorded
DELETED_RUNS = 0.01  # a run of a pipeline that is later deleted from the graph

# Weighted choices (weights in percent): the run's engine (and whether that engine writes
# ``attempt`` when it is 1), its trigger, and a pipeline host's UTC offset.
ENGINES = (
    ((',"engine":{"name":"hub-engine","version":"4.2.0"}', True), 85),
    ((',"engine":{"name":"hub-engine","version":"4.1.3"}', False), 10),
    (("", False), 5),
)
TRIGGERS = (
    (',"trigger":"schedule"', 70),
    (',"trigger":"manual"', 15),
    (',"trigger":"push"', 10),
    (',"trigger":"api"', 3),
    ("", 2),
)
OFFSETS = (
    ((0, "Z"), 70),
    ((3_600_000, "+01:00"), 20),
    ((-18_000_000, "-05:00"), 7),
    ((19_800_000, "+05:30"), 3),
)
ERRORS = tuple(
    ',"error":' + json.dumps(e, ensure_ascii=False, separators=(",", ":"))
    for e in (
        {
            "message": "could not connect to server: Connection timed out",
            "type": "psycopg2.OperationalError",
            "stackTrace": 'Traceback (most recent call last):\n  File "extract.py", line 41, in main\n'
            "    conn = psycopg2.connect(dsn)\npsycopg2.OperationalError: timed out",
        },
        {
            "message": "403 Quota exceeded: Your project exceeded quota for concurrent queries.",
            "type": "google.api_core.exceptions.Forbidden",
        },
        {
            "message": "KafkaTimeoutError: Failed to update metadata after 60.0 secs.",
            "type": "kafka.errors.KafkaTimeoutError",
            "stackTrace": "kafka.errors.KafkaTimeoutError: Failed to update metadata after 60.0 secs.",
        },
        {"message": "Worker lost: container killed (OOMKilled, exit code 137)"},
        {"message": 'Colonne « montant » introuvable dans la table "ventes"', "type": "KeyError"},
        {
            "message": "An error occurred (SlowDown) when calling the PutObject operation",
            "type": "botocore.exceptions.ClientError",
        },
    )
)
CANCELLED_ERROR = ',"error":{"message":"Run cancelled by a user from the editor."}'

DOMAINS = (
    "sales",
    "orders",
    "customers",
    "inventory",
    "marketing",
    "finance",
    "billing",
    "shipping",
    "payments",
    "support",
    "web",
    "ads",
    "products",
    "returns",
    "pricing",
    "fraud",
    "churn",
    "supply",
    "hr",
    "risk",
)
CADENCES = ("daily", "hourly", "sync", "mart", "etl", "report", "backfill", "snapshot")
TABLES = (
    "events",
    "orders",
    "customers",
    "accounts",
    "items",
    "invoices",
    "sessions",
    "payments",
    "stock",
    "prices",
    "tickets",
    "campaigns",
    "shipments",
    "refunds",
)
FIRST_STAGES = ("extract", "ingest", "pull", "read_source")
MIDDLE_STAGES = ("clean", "validate", "transform", "enrich", "join", "aggregate", "dedupe")
LAST_STAGES = ("build_mart", "load", "publish", "export", "score")
PARAMETERS = (
    "",
    ',"parameters":{"day":"%s"}',
    ',"parameters":{"batch_size":50000}',
    ',"parameters":{"model":"last_touch","window_days":7}',
    ',"parameters":{"from":"%sT00:00:00Z","dry_run":false}',
)
SCHEMAS = (
    [{"name": "id", "type": "BIGINT"}, {"name": "amount", "type": "DECIMAL(12,2)"}],
    [
        {"name": "customer_id", "type": "BIGINT"},
        {"name": "country", "type": "CHAR(2)"},
        {"name": "created_at", "type": "TIMESTAMP"},
    ],
    [{"name": "sku", "type": "VARCHAR"}, {"name": "on_hand", "type": "INTEGER"}],
)


def _percent(table: tuple[tuple[Any, int], ...]) -> list[Any]:
    """A weighted table as a list of 100 values: a uniform pick from it picks by weight."""
    assert sum(weight for _, weight in table) == 100
    return [value for value, weight in table for _ in range(weight)]


ENGINE_CHOICE = _percent(ENGINES)
TRIGGER_CHOICE = _percent(TRIGGERS)
OFFSET_CHOICE = _percent(OFFSETS)

# A UUID's version (4) and variant (RFC 4122) bits, set on 128 random bits.
UUID_CLEAR = ~((0xF << 76) | (0x3 << 62))
UUID_SET = (0x4 << 76) | (0x2 << 62)


# --------------------------------------------------------------------------- the graph


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
class _Access:
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
class _Stage:
    """A stage with everything that does not change between its runs already rendered."""

    id: str
    reads: list[_Access]
    writes: list[_Access]
    duration_ms: int
    parameters: str  # ',"parameters":{...}' with an optional %s for the run's day
    source: str | None
    opening: str = ""  # '{"stage":"<id>"'

    def __post_init__(self) -> None:
        self.opening = '{"stage":' + json.dumps(self.id)


@dataclass
class _Pipeline:
    """A pipeline of the graph (or one deleted from it) and the UTC offset its host logs in."""

    id: str
    name: str
    description: str | None
    stages: list[_Stage]
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


def _make_pipelines(rng: random.Random, count: int, prefix: str = "") -> list[_Pipeline]:
    """``count`` pipelines of 2-5 stages, each chain reading sources and writing sinks.

    The first source and the last sink of pipeline ``i`` take turns through the storage
    kinds, so any five consecutive pipelines use all of them.
    """
    pipelines: list[_Pipeline] = []
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
        previous: list[_Access] = []
        stages: list[_Stage] = []
        for position, sid in enumerate(names):
            last = position == n_stages - 1
            if position == 0:
                kinds = [SOURCE_KINDS[index % len(SOURCE_KINDS)]]
                if rng.random() < 0.5:
                    kinds.append(rng.choice([k for k in SOURCE_KINDS if k != kinds[0]]))
                reads = [_Access(_dataset(rng, k, domain), True) for k in kinds]
            else:
                reads = list(previous)
                if rng.random() < 0.25:
                    reads.append(_Access(_dataset(rng, rng.choice(SOURCE_KINDS), domain), True))
            kinds = [SINK_KINDS[index % len(SINK_KINDS)] if last else rng.choice(STEP_KINDS)]
            if rng.random() < 0.2:
                kinds.append(rng.choice(SINK_KINDS if last else STEP_KINDS))
            taken_names = {r.dataset for r in reads}
            writes = []
            for kind in kinds:
                name = _dataset(rng, kind, domain)
                if name not in taken_names:  # a stage does not overwrite what it reads
                    taken_names.add(name)
                    writes.append(_Access(name, False))
            if not writes:
                writes.append(_Access(f"data/staged/{pid}_{sid}.parquet", False))
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
                _Stage(
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
            _Pipeline(
                pid, f"{domain.capitalize()} {pid.split('-')[1]}", description, stages, offset
            )
        )
    return pipelines


# --------------------------------------------------------------------------- output


_WITHIN_MINUTE = [f"{ms // 1000:02d}.{ms % 1000:03d}" for ms in range(60_000)]


class _Clock:
    """Formats epoch milliseconds as RFC 3339 fast: the trail holds millions of times.

    The date, hour and minute of recent minutes are cached; the rest is a table look-up.
    """

    def __init__(self) -> None:
        self._minutes: dict[int, str] = {}

    def format(self, ms: int, offset: tuple[int, str]) -> str:
        """``ms`` as local time at ``offset``, with milliseconds and the offset's suffix."""
        minute, rest = divmod(ms + offset[0], 60_000)
        prefix = self._minutes.get(minute)
        if prefix is None:
            if len(self._minutes) > 200_000:
                self._minutes.clear()
            moment = datetime(1970, 1, 1) + timedelta(minutes=minute)
            prefix = self._minutes[minute] = moment.strftime("%Y-%m-%dT%H:%M:")
        return prefix + _WITHIN_MINUTE[rest] + offset[1]


class _Segments:
    """Appends lines to numbered segments, starting a new one every ``limit`` lines.

    A segment that is full is closed; with ``gzip_closed`` it is compressed on a worker
    thread (zlib releases the GIL, so this overlaps with generation) and the plain file removed.
    """

    def __init__(self, audit: Path, limit: int, gzip_closed: bool) -> None:
        self._audit = audit
        self._limit = limit
        self._pool = ThreadPoolExecutor(max_workers=1) if gzip_closed else None
        self._pending: list[Future[None]] = []
        self.count = 0
        self._in_segment = 0
        self._file: TextIO = self._open()

    def _open(self) -> TextIO:
        self.count += 1
        self._in_segment = 0
        path = self._audit / f"{self.count:06d}.jsonl"
        # surrogateescape lets a deliberately bad line carry bytes that are not UTF-8
        return open(
            path, "w", encoding="utf-8", errors="surrogateescape", newline="\n", buffering=1 << 20
        )

    def write(self, line: str) -> None:
        """Append one complete line (ending in a newline)."""
        if self._in_segment == self._limit:
            self._file.close()
            if self._pool is not None:
                self._pending.append(self._pool.submit(_compress, Path(self._file.name)))
            self._file = self._open()
        self._file.write(line)
        self._in_segment += 1

    def close(self, torn: str = "") -> None:
        """End the newest segment, optionally with a half-written last line, and finish."""
        self._file.write(torn)
        self._file.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            for future in self._pending:
                future.result()  # re-raise a failed compression


def _compress(path: Path) -> None:
    """Replace a closed segment by its gzip form; the header has no time stamp."""
    with (
        open(path, "rb") as src,
        open(f"{path}.gz", "wb") as raw,
        gzip.GzipFile(
            filename=path.name, mode="wb", fileobj=raw, mtime=0, compresslevel=GZIP_LEVEL
        ) as out,
    ):
        shutil.copyfileobj(src, out, 1 << 20)
    path.unlink()


# --------------------------------------------------------------------------- the trail


def _running(head: str, began_iso: str, params: str) -> str:
    """A stage execution as recorded while it runs: no end, no data yet."""
    return f'{head},"status":"running","startedAt":"{began_iso}"{params}}}'


@dataclass
class _Trail:
    """Generates the runs and writes the audit trail, line by line, in recording order."""

    rng: random.Random
    segments: _Segments
    pipelines: list[_Pipeline]  # the ones that run, deleted ones included
    bad_every: int
    updates: float
    clock: _Clock = field(default_factory=_Clock)
    digests: dict[str, str] = field(default_factory=dict)  # dataset -> current content
    pending: list[tuple[int, int, str]] = field(default_factory=list)  # heap of later lines
    seq: int = 0
    lines: int = 0
    records: int = 0
    bad: int = 0
    others: int = 0
    last_trace: str = ""
    final: Counter[str] = field(default_factory=Counter)  # runs by their current status
    ran: set[str] = field(default_factory=set)  # pipeline ids that ran
    day: int = -1  # for old-style trace ids
    day_text: str = ""
    day_count: int = 0

    # -- lines -------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        """Write one line, preceded by a malformed one when its turn has come."""
        number = self.lines + 1
        if self.bad_every and number % self.bad_every == 0:
            self.segments.write(self._bad_line())
            self.bad += 1
            number += 1
        self.segments.write(line)
        self.lines = number

    def later(self, at_ms: int, line: str) -> None:
        """Queue a line the hub records at ``at_ms``."""
        self.seq += 1
        heapq.heappush(self.pending, (at_ms, self.seq, line))

    def flush(self, until_ms: int) -> None:
        """Write every queued line recorded up to ``until_ms``."""
        pending = self.pending
        while pending and pending[0][0] <= until_ms:
            self.emit(heapq.heappop(pending)[2])

    # -- values ------------------------------------------------------------------------

    def trace_id(self, start: int) -> str:
        """A UUID (mostly lower case) or an older-style id such as ``run-20261101-0007``.

        Old-style ids count the runs of each UTC day, so they are unique like the UUIDs.
        """
        rng = self.rng
        roll = rng.random()
        if roll < 0.15:
            day = start // 86_400_000
            if day != self.day:
                self.day, self.day_count = day, 0
                self.day_text = self.clock.format(start, (0, "Z"))[:10].replace("-", "")
            self.day_count += 1
            return f"run-{self.day_text}-{self.day_count:04d}"
        if roll < 0.16:
            return f"manual-{rng.getrandbits(64):016x}"
        h = f"{rng.getrandbits(128) & UUID_CLEAR | UUID_SET:032x}"
        text = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        return text.upper() if roll > 0.95 else text

    def digest_read(self, access: _Access) -> str:
        """The digest of a dataset as read now; external sources change now and then."""
        current = self.digests.get(access.dataset)
        if current is None or (access.external and self.rng.random() < SOURCE_CHANGED):
            current = self.digests[access.dataset] = f"{self.rng.getrandbits(256):064x}"
        return current

    def digest_write(self, access: _Access) -> str:
        """The digest of newly written content (sometimes the same content as before)."""
        current = self.digests.get(access.dataset)
        if current is None or self.rng.random() >= SAME_OUTPUT:
            current = self.digests[access.dataset] = f"{self.rng.getrandbits(256):064x}"
        return current

    # -- runs --------------------------------------------------------------------------

    def run(self, start: int, pipeline: _Pipeline, *, running: bool) -> None:
        """Generate one run starting at ``start`` and queue its records.

        A ``running`` run is recorded only as a snapshot while one of its stages executes.
        """
        rng = self.rng
        rand = rng.random  # int(rand() * n) rather than randrange: this is the hot path
        fmt = self.clock.format
        offset = pipeline.offset
        start_iso = fmt(start, offset)
        trace = self.trace_id(start)
        engine, explicit_attempt = ENGINE_CHOICE[int(rand() * 100)]
        context = engine + TRIGGER_CHOICE[int(rand() * 100)]
        self.ran.add(pipeline.id)
        opening = f'{{"kind":"run","traceId":"{trace}","pipeline":{pipeline.quoted},"status":"'
        day = start_iso[:10]
        cancel_at = int(rand() * len(pipeline.stages)) if rand() < CANCEL else -1

        done: list[str] = []  # rendered stage executions, in order
        # per attempt: start ms, index in done, and what renders it as running
        started: list[tuple[int, int, str, str, str]] = []
        status = "succeeded"
        now = start + 50 + int(rand() * 350)
        for index, stage in enumerate(pipeline.stages):
            if status != "succeeded":
                if status == "failed" and rand() < LIST_SKIPPED:
                    done.append(f'{stage.opening},"status":"skipped"}}')
                    continue
                break
            if index and rand() < SKIP_BY_CONFIG:
                done.append(f'{stage.opening},"status":"skipped"}}')
                continue
            params = stage.parameters.replace("%s", day) if stage.parameters else ""
            attempt = 1
            while True:
                began = now
                now += int(stage.duration_ms * (0.6 + 0.8 * rand()))
                head = (
                    f'{stage.opening},"attempt":{attempt}'
                    if explicit_attempt or attempt > 1
                    else stage.opening
                )
                began_iso = fmt(began, offset)
                started.append((began, len(done), head, began_iso, params))
                reads = ",".join(
                    [
                        a.bare if rand() < NO_DIGEST else a.opening + self.digest_read(a) + '"}'
                        for a in stage.reads
                    ]
                )
                times = f'"startedAt":"{began_iso}","endedAt":"{fmt(now, offset)}"'
                if index == cancel_at:
                    done.append(
                        f'{head},"status":"cancelled",{times}{params},"reads":[{reads}],'
                        f'"writes":[]{CANCELLED_ERROR}}}'
                    )
                    status = "cancelled"
                    break
                if rand() < FAIL_ATTEMPT:
                    error = ERRORS[int(rand() * len(ERRORS))]
                    done.append(
                        f'{head},"status":"failed",{times}{params},"reads":[{reads}]{error}}}'
                    )
                    if attempt < MAX_ATTEMPTS and rand() < RETRY:
                        attempt += 1
                        now += 30_000  # the engine's back-off
                        continue
                    status = "failed"
                    break
                writes = ",".join([self._write(a) for a in stage.writes])
                done.append(
                    f'{head},"status":"succeeded",{times}{params},"reads":[{reads}],'
                    f'"writes":[{writes}]}}'
                )
                break
            now += 100 + int(rand() * 800)
        end = now + 50 + int(rand() * 200)

        if running:
            began, upto, head, began_iso, params = started[int(rand() * len(started))]
            at = began + 40
            stages = ",".join([*done[:upto], _running(head, began_iso, params)])
            self.later(
                at,
                f'{opening}running","startedAt":"{start_iso}",'
                f'"recordedAt":"{fmt(at, offset)}"{context},"stages":[{stages}]}}\n',
            )
            self.records += 1
            self.final["running"] += 1
            self.last_trace = trace
            return
        if rand() < self.updates:
            began, _, head, began_iso, params = started[0]
            at = began + 40
            self.later(
                at,
                f'{opening}running","startedAt":"{start_iso}",'
                f'"recordedAt":"{fmt(at, offset)}"{context},'
                f'"stages":[{_running(head, began_iso, params)}]}}\n',
            )
            self.records += 1
        at = end + 20 + int(rand() * 180)
        self.later(
            at,
            f'{opening}{status}","startedAt":"{start_iso}",'
            f'"endedAt":"{fmt(end, offset)}","recordedAt":"{fmt(at, offset)}"{context},'
            f'"stages":[{",".join(done)}]}}\n',
        )
        self.records += 1
        self.final[status] += 1
        self.last_trace = trace

    def _write(self, access: _Access) -> str:
        """One write of a succeeded stage: new digest, and the stats the dataset reports."""
        digest = self.digest_write(access)
        if not access.stats:
            return f'{access.opening}{digest}"{access.schema}}}'
        rows = 100 + int(self.rng.random() * 5_000_000)
        size = f',"bytes":{rows * 97 + 4096}' if access.stats == "br" else ""
        return f'{access.opening}{digest}"{size},"rows":{rows}{access.schema}}}'

    def other(self, at_ms: int, *, deleted: _Pipeline | None = None) -> None:
        """A line of another kind, which the exporter must skip (or the deletion of a pipeline)."""
        when = self.clock.format(at_ms, (0, "Z"))
        user = self.rng.choice(("dana.kim", "maria.lopez", "priya.shah", "tomasz.nowak"))
        kind = self.rng.randrange(3)
        if deleted is not None:
            line = (
                f'{{"kind":"edit","recordedAt":"{when}","user":"{user}@acme.example",'
                f'"change":"pipeline-deleted","pipeline":{deleted.quoted}}}\n'
            )
        elif kind == 0:
            pipeline = self.rng.choice(self.pipelines)
            line = (
                f'{{"kind":"edit","recordedAt":"{when}","user":"{user}@acme.example",'
                f'"change":"stage-updated","pipeline":{pipeline.quoted},'
                f'"stage":{json.dumps(pipeline.stages[-1].id)}}}\n'
            )
        elif kind == 1:
            line = (
                f'{{"kind":"settings","recordedAt":"{when}","user":"{user}@acme.example",'
                f'"key":"editor.fontSize","value":{self.rng.randint(11, 16)}}}\n'
            )
        else:
            dry_run = "true" if self.rng.random() < 0.7 else "false"
            line = (
                f'{{"kind":"export","recordedAt":"{when}","user":"{user}@acme.example",'
                f'"destination":"http://localhost:5000","dryRun":{dry_run}}}\n'
            )
        self.others += 1
        self.emit(line)

    # -- malformed lines ---------------------------------------------------------------

    def _bad_line(self) -> str:
        """The next malformed line in turn; see the module docstring for the kinds."""
        trace = self.last_trace or "run-00000000-0000"
        when = "2026-11-02T02:00:00.120Z"
        good: dict[str, Any] = {
            "kind": "run",
            "traceId": trace,
            "pipeline": self.pipelines[0].id,
            "status": "succeeded",
            "startedAt": when,
            "endedAt": "2026-11-02T02:07:31.904Z",
            "recordedAt": "2026-11-02T02:07:32.010Z",
            "stages": [
                {
                    "stage": self.pipelines[0].stages[0].id,
                    "attempt": 1,
                    "status": "succeeded",
                    "startedAt": "2026-11-02T02:00:00.300Z",
                    "endedAt": "2026-11-02T02:03:10.000Z",
                }
            ],
        }
        stage = good["stages"][0]
        turn = self.bad % 17
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


# --------------------------------------------------------------------------- the workspace


def write_workspace(
    root: Path,
    runs: int,
    *,
    seed: int = 0,
    pipelines: int = 20,
    segment_lines: int = 50_000,
    gzip_closed: bool = True,
    bad_every: int = 0,
    updates: float = 0.3,
    running_tail: int = 0,
    torn_tail: bool = False,
) -> dict[str, Any]:
    """Write a complete contract workspace under ``root`` and return a summary of it.

    ``runs`` runs of ``pipelines`` graph pipelines (at least 2; the last tenth, at least one,
    never run) are written as an audit trail of segments of ``segment_lines`` lines, the closed
    ones gzip-compressed when ``gzip_closed``. ``updates`` is the share of runs also recorded
    when they start; the last ``running_tail`` runs are only recorded as ``running``.
    ``bad_every`` > 1 makes every ``bad_every``-th line malformed (0: none); ``torn_tail`` ends
    the newest segment with half a line. The same arguments give the same bytes.

    The summary: ``runs`` (distinct trace ids with a good record), ``records`` (good run
    lines), ``lines`` (complete lines of every kind, bad ones included), ``bad_lines``,
    ``other_lines`` (edit/settings/export), ``statuses`` (runs by their current status),
    ``pipelines`` (in the graph), ``never_run`` (graph pipelines without a run: the reserved
    ones, and more when ``runs`` is small), ``deleted`` (pipelines that ran, then left the
    graph), ``segments`` and ``torn_tail``.
    """
    if runs < 0 or pipelines < 2 or segment_lines < 1 or not 0 <= updates <= 1:
        raise ValueError("need runs >= 0, pipelines >= 2, segment_lines >= 1, 0 <= updates <= 1")
    if bad_every == 1 or bad_every < 0 or not 0 <= running_tail <= runs:
        raise ValueError("need bad_every 0 or >= 2 and 0 <= running_tail <= runs")
    root = Path(root)
    workspace = root / ".workspace"
    audit = workspace / "lineage" / "audit"
    if audit.exists() and any(audit.iterdir()):
        raise FileExistsError(f"{audit} already holds a trail; write into a new directory")
    audit.mkdir(parents=True, exist_ok=True)

    rng = random.Random(seed)
    graph = _make_pipelines(rng, pipelines)
    never = graph[-max(1, pipelines // 10) :]
    deleted = _make_pipelines(rng, 2, prefix="retired-")
    (workspace / "settings.json").write_text(
        json.dumps(
            {
                "openlineage.url": "http://localhost:5000",
                "editor.fontSize": 13,
                "git.autofetch": True,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    (workspace / "lineage" / "graph.json").write_text(
        json.dumps(
            {
                "format": "lineage-hub/graph@1",
                "workspace": {"name": f"synthetic-{seed}"},
                "pipelines": [p.as_graph() for p in graph],
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )

    active = graph[: len(graph) - len(never)]
    segments = _Segments(audit, segment_lines, gzip_closed)
    trail = _Trail(rng, segments, active + deleted, bad_every, updates)
    trail.emit(
        '{"kind":"settings","recordedAt":"'
        + trail.clock.format(int(START.timestamp() * 1000) - 60_000, (0, "Z"))
        + '","user":"dana.kim@acme.example","key":"openlineage.url","value":"http://localhost:5000"}\n'
    )
    trail.others += 1
    now = int(START.timestamp() * 1000)
    retire_after = runs * 3 // 10  # the deleted pipelines ran in the first 30 % of the trail
    for number in range(runs):
        now += 1_000 + int(rng.random() * 2 * (MEAN_GAP_MS - 1_000))
        trail.flush(now)
        if number == retire_after:
            for gone in deleted:
                trail.other(now, deleted=gone)
        elif rng.random() < OTHER_KIND:
            trail.other(now)
        if number < retire_after and rng.random() < DELETED_RUNS:
            pipeline = deleted[int(rng.random() * len(deleted))]
        else:
            pipeline = active[int(rng.random() * len(active))]
        trail.run(now, pipeline, running=number >= runs - running_tail)
    trail.flush(sys.maxsize)
    torn = ""
    if torn_tail:
        torn = (
            f'{{"kind":"run","traceId":"{rng.getrandbits(128):032x}",'
            f'"pipeline":{active[0].quoted},"status":"succeeded","startedAt":"2026-'
        )
    segments.close(torn)

    return {
        "runs": sum(trail.final.values()),
        "records": trail.records,
        "lines": trail.lines,
        "bad_lines": trail.bad,
        "other_lines": trail.others,
        "statuses": dict(sorted(trail.final.items())),
        "pipelines": len(graph),
        "never_run": [p.id for p in graph if p.id not in trail.ran],
        "deleted": sorted(trail.ran & {p.id for p in deleted}),
        "segments": segments.count,
        "torn_tail": torn_tail,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python tests/support/synth_trail.py DIR --runs N [options]``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path, help="workspace directory to create")
    parser.add_argument("--runs", type=int, required=True, help="number of runs")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--pipelines", type=int, default=20, help="pipelines in the graph")
    parser.add_argument("--segment-lines", type=int, default=50_000, help="lines per segment")
    parser.add_argument(
        "--no-gzip",
        dest="gzip_closed",
        action="store_false",
        help="leave closed segments uncompressed",
    )
    parser.add_argument(
        "--bad-every", type=int, default=0, help="make every N-th line malformed (default 0: none)"
    )
    parser.add_argument(
        "--updates",
        type=float,
        default=0.3,
        help="share of runs also recorded when they start (default 0.3)",
    )
    parser.add_argument(
        "--running-tail", type=int, default=0, help="how many of the last runs are still running"
    )
    parser.add_argument(
        "--torn-tail", action="store_true", help="end the newest segment with a half-written line"
    )
    args = parser.parse_args(argv)
    began = time.perf_counter()
    summary = write_workspace(
        args.root,
        args.runs,
        seed=args.seed,
        pipelines=args.pipelines,
        segment_lines=args.segment_lines,
        gzip_closed=args.gzip_closed,
        bad_every=args.bad_every,
        updates=args.updates,
        running_tail=args.running_tail,
        torn_tail=args.torn_tail,
    )
    print(json.dumps(summary))
    print(f"wrote {args.root} in {time.perf_counter() - began:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
