"""The synthetic trail: runs generated one after the other, their lines written in the order
the hub records them (a run's ``running`` line long before its end, others' lines between)."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..audit import AuditWriter, RecordingOrder
from .bad import bad_line
from .graph import Access, Pipeline
from .shape import (
    CANCEL,
    CANCELLED_ERROR,
    ENGINE_CHOICE,
    ERRORS,
    FAIL_ATTEMPT,
    LIST_SKIPPED,
    MAX_ATTEMPTS,
    NO_DIGEST,
    RETRY,
    SAME_OUTPUT,
    SKIP_BY_CONFIG,
    SOURCE_CHANGED,
    TRIGGER_CHOICE,
    UUID_CLEAR,
    UUID_SET,
)

_WITHIN_MINUTE = [f"{ms // 1000:02d}.{ms % 1000:03d}" for ms in range(60_000)]


class Clock:
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


def _running(head: str, began_iso: str, params: str) -> str:
    """A stage execution as recorded while it runs: no end, no data yet."""
    return f'{head},"status":"running","startedAt":"{began_iso}"{params}}}'


@dataclass
class Trail:
    """Generates the runs and writes the audit trail, line by line, in recording order."""

    rng: random.Random
    segments: AuditWriter
    pipelines: list[Pipeline]  # the ones that run, deleted ones included
    bad_every: int
    updates: float
    clock: Clock = field(default_factory=Clock)
    digests: dict[str, str] = field(default_factory=dict)  # dataset -> current content
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
    queue: RecordingOrder[int] = field(init=False)  # lines recorded later, by their moment

    def __post_init__(self) -> None:
        self.queue = RecordingOrder(lambda at_ms, line: self.emit(line))

    # -- lines -------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        """Write one line, preceded by a malformed one when its turn has come."""
        number = self.lines + 1
        if self.bad_every and number % self.bad_every == 0:
            self.segments.write(bad_line(self.bad, self.last_trace, self.pipelines[0]))
            self.bad += 1
            number += 1
        self.segments.write(line)
        self.lines = number

    def later(self, at_ms: int, line: str) -> None:
        """Queue a line the hub records at ``at_ms``."""
        self.queue.later(at_ms, line)

    def flush(self, until_ms: int | None = None) -> None:
        """Write every queued line recorded up to ``until_ms`` (all of them: None)."""
        self.queue.flush(until_ms)

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

    def digest_read(self, access: Access) -> str:
        """The digest of a dataset as read now; external sources change now and then."""
        current = self.digests.get(access.dataset)
        if current is None or (access.external and self.rng.random() < SOURCE_CHANGED):
            current = self.digests[access.dataset] = f"{self.rng.getrandbits(256):064x}"
        return current

    def digest_write(self, access: Access) -> str:
        """The digest of newly written content (sometimes the same content as before)."""
        current = self.digests.get(access.dataset)
        if current is None or self.rng.random() >= SAME_OUTPUT:
            current = self.digests[access.dataset] = f"{self.rng.getrandbits(256):064x}"
        return current

    # -- runs --------------------------------------------------------------------------

    def run(self, start: int, pipeline: Pipeline, *, running: bool) -> None:
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

    def _write(self, access: Access) -> str:
        """One write of a succeeded stage: new digest, and the stats the dataset reports."""
        digest = self.digest_write(access)
        if not access.stats:
            return f'{access.opening}{digest}"{access.schema}}}'
        rows = 100 + int(self.rng.random() * 5_000_000)
        size = f',"bytes":{rows * 97 + 4096}' if access.stats == "br" else ""
        return f'{access.opening}{digest}"{size},"rows":{rows}{access.schema}}}'

    def other(self, at_ms: int, *, deleted: Pipeline | None = None) -> None:
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
