"""Turn one audit-trail line into a :class:`~.model.Run`, or say precisely why not.

msgspec decodes and type-checks a record in C, straight into the model; the rules types cannot
say (times with an offset, fields required by status, one execution per stage attempt) are
checked here. The reader adds the file and line number.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from .model import BadRecord, Run, StageExecution, quoted
from .times import normalise_time, trusted_time


class _Kind(msgspec.Struct):
    kind: Any = None
    trace_id: Any = msgspec.field(default=None, name="traceId")


_kind_decoder = msgspec.json.Decoder(_Kind)
_run_decoder = msgspec.json.Decoder(Run)


def kind_of(line: bytes) -> tuple[object, object]:
    """The ``kind`` and ``traceId`` of a line, without decoding the rest.

    Raises :class:`msgspec.DecodeError` when the line is not JSON and :class:`BadRecord` when it
    is not a JSON object or is nested more than :data:`MAX_NESTING` levels deep.
    """
    if line.count(b"[") + line.count(b"{") > MAX_NESTING and _nesting(line) > MAX_NESTING:
        raise BadRecord(_TOO_DEEP)
    try:
        head = _kind_decoder.decode(line)
    except msgspec.ValidationError:
        raise BadRecord("not a JSON object") from None
    except RecursionError:
        raise BadRecord(_TOO_DEEP) from None
    return head.kind, head.trace_id


def parse_run(record: bytes | dict[str, Any]) -> Run:
    """Validate a ``kind: run`` record (a line's bytes, or a decoded object) into a :class:`Run`."""
    try:
        if isinstance(record, dict):
            run = msgspec.convert(record, Run)
        else:
            run = _run_decoder.decode(record)
    except msgspec.ValidationError as exc:
        raise BadRecord(_message(exc)) from None
    except msgspec.DecodeError as exc:
        raise BadRecord(f"not JSON ({exc})") from None
    except RecursionError:
        raise BadRecord(_TOO_DEEP) from None
    return _checked(run)


def parse_trusted(line: bytes) -> Run:
    """A record :func:`parse_run` accepted before, from the very same bytes: decoded (and its
    times normalised) without checking the contract's rules again."""
    run = _run_decoder.decode(line)
    # Most records need nothing done: every time already in the form normalise_time returns
    # (upper-case T and Z, no leap second), no endedAt where the status drops it.
    if run.status == "running" and run.ended_at is not None:
        return _checked(run, trusted=True)
    # (Single characters: indexing a str by one position allocates nothing.)
    # An offset from 18:00 (its tens of hours 1 and units 8 or 9, or tens 2) may be beyond
    # ±18:00, which is written in UTC: trusted_time tells.
    for value in (run.started_at, run.ended_at):
        if value is not None and (
            value[10] != "T"
            or value[-1] == "z"
            or value[17] == "6"
            or (value[-1] != "Z" and (value[-5] == "2" or (value[-5] == "1" and value[-4] >= "8")))
        ):
            return _checked(run, trusted=True)
    for stage in run.stages:
        if stage.ended_at is not None and stage.status in ("running", "skipped"):
            return _checked(run, trusted=True)
        for value in (stage.started_at, stage.ended_at):
            if value is not None and (
                value[10] != "T"
                or value[-1] == "z"
                or value[17] == "6"
                or (
                    value[-1] != "Z"
                    and (value[-5] == "2" or (value[-5] == "1" and value[-4] >= "8"))
                )
            ):
                return _checked(run, trusted=True)
    return run


MAX_NESTING = 500
"""The deepest nesting of lists and objects a line may have. A fixed limit: how deep a decoder
can go depends on how deep in the stack it is called, and a line the first pass read must
read the same in the second."""

_TOO_DEEP = f"JSON nested more than {MAX_NESTING} levels deep"
# A string runs to its closing quote or, unterminated, to the end of the line (then nothing
# after it counts): the pattern matches at every quote and never gives back what it took, so
# one pass over the line is all it costs. A pattern that can fail there (``"(?:[^"\\]|\\.)*"``)
# rescans the rest of the line from every quote of an unterminated ``"\\"\\...``: quadratic.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


def _nesting(line: bytes) -> int:
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub(b"", line)):
        if bracket in (b"[", b"{"):
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


_TYPE_WORDS = {
    "str": "a string",
    "int": "a whole number",
    "float": "a number",
    "bool": "a boolean",
    "array": "a list",
    "object": "an object",
    "null": "null",
}
_ALLOWED = {
    "status": "succeeded, failed, cancelled, running",
    "stages[].status": "succeeded, failed, cancelled, running, skipped",
}


def _words(types: str) -> str:
    names = [t.strip() for t in types.strip("`").split("|") if t.strip() != "null"]
    return " or ".join(_TYPE_WORDS.get(t, t) for t in names) or "null"


def _message(exc: msgspec.ValidationError) -> str:
    """msgspec's ``Expected `str`, got `int` - at `$.stages[0].stage``` in plain words."""
    text = str(exc)
    message, sep, where = text.rpartition(" - at `")
    if not sep:
        message, where = text, "$`"
    path = where.rstrip("`").removeprefix("$").removeprefix(".")
    prefix = f"{path} " if path else ""
    if message.startswith("Object missing required field "):
        field = message.removeprefix("Object missing required field ").strip("`")
        return f"missing required field {path + '.' if path else ''}{field}"
    if message.startswith("Invalid enum value "):
        value = message.removeprefix("Invalid enum value ")
        allowed = _ALLOWED["status" if path == "status" else "stages[].status"]
        return f"{prefix}{value} is not one of {allowed}"
    expected = re.fullmatch(r"Expected (`[^`]+`)(?:, got (`[^`]+`))?(.*)", message)
    if expected is None:
        return f"{path}: {message}" if path else message
    wanted, got, bound = expected.groups()
    if bound.startswith(" of length >= 1"):
        return f"{prefix}must not be empty"
    if got is None:
        return f"{prefix}must be {_words(wanted)}{bound}"
    return f"{prefix}must be {_words(wanted)}, got {_words(got)}"


def _checked(run: Run, *, trusted: bool = False) -> Run:
    """The rules msgspec's types cannot express; returns the run with its times normalised.

    ``trusted``: the record passed these checks before; only normalise its times.
    """
    time = _trusted_time if trusted else normalise_time
    started_at = time(run.started_at, "startedAt")
    ended_at = None
    if run.status != "running":
        if run.ended_at is None:
            raise BadRecord(f"missing required field endedAt (run is {run.status})")
        ended_at = time(run.ended_at, "endedAt")
    stages = []
    seen: set[tuple[str, int]] = set()
    for i, stage in enumerate(run.stages):
        if not trusted:
            key = (stage.stage, stage.attempt)
            if key in seen:
                raise BadRecord(
                    f"stage {quoted(stage.stage)} attempt {stage.attempt} appears twice"
                )
            seen.add(key)
        stages.append(_checked_stage(stage, f"stages[{i}]", time))
    if (
        started_at is run.started_at
        and ended_at is run.ended_at
        and all(a is b for a, b in zip(stages, run.stages, strict=True))
    ):
        return run
    return msgspec.structs.replace(
        run, started_at=started_at, ended_at=ended_at, stages=tuple(stages)
    )


def _trusted_time(value: object, where: str) -> str:
    return trusted_time(value)  # type: ignore[arg-type]


def _checked_stage(
    stage: StageExecution, where: str, time: Callable[[object, str], str]
) -> StageExecution:
    started_at = stage.started_at
    if stage.status != "skipped" or started_at is not None:
        if started_at is None:
            raise BadRecord(f"missing required field {where}.startedAt")
        started_at = time(started_at, f"{where}.startedAt")
    ended_at = None
    if stage.status not in ("running", "skipped"):
        if stage.ended_at is None:
            raise BadRecord(f"missing required field {where}.endedAt (stage is {stage.status})")
        ended_at = time(stage.ended_at, f"{where}.endedAt")
    if started_at is stage.started_at and ended_at is stage.ended_at:
        return stage
    return msgspec.structs.replace(stage, started_at=started_at, ended_at=ended_at)
