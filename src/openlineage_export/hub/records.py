"""Turn one decoded audit-trail record into a :class:`~.model.Run`, or say precisely why not.

Pure validation of the contract's field rules; the reader adds the file and line number.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from .model import (
    RUN_STATUSES,
    STAGE_STATUSES,
    DataAccess,
    Engine,
    ErrorInfo,
    Field,
    Run,
    StageExecution,
)


class BadRecord(ValueError):
    """A record breaks the contract; the message says which field and how."""


_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?"
)


_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)")


def normalise_time(value: object, where: str) -> str:
    """Check an RFC 3339 time with an offset and return it with ``T`` and ``Z`` upper-case."""
    if type(value) is str and _CANONICAL.fullmatch(value):
        # The common form, checked for real dates and times by the C parser.
        try:
            datetime.fromisoformat(value)
        except ValueError as exc:
            raise BadRecord(f"{where} {value!r} is not a valid time ({exc})") from None
        return value
    if not isinstance(value, str):
        raise BadRecord(f"{where} must be an RFC 3339 time string, got {_kind(value)}")
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise BadRecord(f"{where} {value!r} is not an RFC 3339 time")
    offset = match.group(8)
    if offset is None:
        raise BadRecord(f"{where} {value!r} has no UTC offset")
    try:
        parse_time(value)
    except ValueError as exc:
        raise BadRecord(f"{where} {value!r} is not a valid time ({exc})") from None
    date, time_part = value[:10], value[11 : match.end(7) if match.group(7) else 19]
    return f"{date}T{time_part}{'Z' if offset in 'Zz' else offset}"


def parse_time(value: str) -> datetime:
    """Parse a time that :func:`normalise_time` accepted into an aware datetime."""
    if _CANONICAL.fullmatch(value):
        return datetime.fromisoformat(value)
    match = _RFC3339.fullmatch(value)
    if match is None or match.group(8) is None:
        raise ValueError(f"not an RFC 3339 time with an offset: {value!r}")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = (match.group(7) or ".0")[1:]
    micro = int(fraction[:6].ljust(6, "0"))
    offset = match.group(8)
    if offset in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = -1 if offset[0] == "-" else 1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if hours > 23 or minutes > 59:
            raise ValueError(f"offset {offset} out of range")
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def _text(obj: dict[str, Any], key: str, where: str, *, required: bool) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise BadRecord(f"missing required field {where}{key!r}")
        return None
    if not isinstance(value, str) or not value:
        raise BadRecord(f"{where}{key!r} must be a non-empty string, got {_kind(value)}")
    return value


def _count(obj: dict[str, Any], key: str, where: str) -> int | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRecord(f"{where}{key!r} must be a whole number >= 0, got {_kind(value)}")
    return value


def _list(obj: dict[str, Any], key: str, where: str) -> list[Any]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRecord(f"{where}{key!r} must be a list, got {_kind(value)}")
    return value


def _object(obj: dict[str, Any], key: str, where: str) -> dict[str, Any] | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise BadRecord(f"{where}{key!r} must be an object, got {_kind(value)}")
    return value


def _status(obj: dict[str, Any], where: str, allowed: tuple[str, ...]) -> str:
    status = _text(obj, "status", where, required=True)
    if status not in allowed:
        raise BadRecord(f"{where}'status' {status!r} is not one of {', '.join(allowed)}")
    return status  # type: ignore[return-value]


def _error(obj: dict[str, Any], where: str) -> ErrorInfo | None:
    error = _object(obj, "error", where)
    if error is None:
        return None
    inner = f"{where}error."
    message = _text(error, "message", inner, required=True)
    assert message is not None
    return ErrorInfo(
        message=message,
        type=_text(error, "type", inner, required=False),
        stack_trace=_text(error, "stackTrace", inner, required=False),
        programming_language=_text(error, "programmingLanguage", inner, required=False),
    )


def _access(item: object, where: str, *, write: bool) -> DataAccess:
    if not isinstance(item, dict):
        raise BadRecord(f"{where} must be an object, got {_kind(item)}")
    inner = f"{where}."
    dataset = _text(item, "dataset", inner, required=True)
    assert dataset is not None
    schema: tuple[Field, ...] | None = None
    if write and item.get("schema") is not None:
        fields = []
        for i, column in enumerate(_list(item, "schema", inner)):
            col_where = f"{where}.schema[{i}]."
            if not isinstance(column, dict):
                raise BadRecord(f"{col_where[:-1]} must be an object, got {_kind(column)}")
            name = _text(column, "name", col_where, required=True)
            assert name is not None
            fields.append(Field(name, _text(column, "type", col_where, required=False)))
        schema = tuple(fields)
    return DataAccess(
        dataset=dataset,
        digest=_text(item, "digest", inner, required=False),
        bytes=_count(item, "bytes", inner) if write else None,
        rows=_count(item, "rows", inner) if write else None,
        schema=schema,
    )


def _stage(item: object, index: int) -> StageExecution:
    where = f"stages[{index}]"
    if not isinstance(item, dict):
        raise BadRecord(f"{where} must be an object, got {_kind(item)}")
    inner = f"{where}."
    stage = _text(item, "stage", inner, required=True)
    assert stage is not None
    attempt = item.get("attempt", 1)
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise BadRecord(f"{inner}'attempt' must be a whole number >= 1, got {_kind(attempt)}")
    status = _status(item, inner, STAGE_STATUSES)
    started = item.get("startedAt")
    started_at = None
    if status != "skipped" or started is not None:
        if started is None:
            raise BadRecord(f"missing required field {inner}'startedAt'")
        started_at = normalise_time(started, f"{inner}startedAt")
    ended_at = None
    if status not in ("running", "skipped"):
        if item.get("endedAt") is None:
            raise BadRecord(f"missing required field {inner}'endedAt' (stage is {status})")
        ended_at = normalise_time(item["endedAt"], f"{inner}endedAt")
    parameters = _object(item, "parameters", inner) or {}
    return StageExecution(
        stage=stage,
        attempt=attempt,
        status=status,
        started_at=started_at,
        ended_at=ended_at,
        parameters=parameters,
        reads=tuple(_access(r, f"{where}.reads[{i}]", write=False)
                    for i, r in enumerate(_list(item, "reads", inner))),
        writes=tuple(_access(w, f"{where}.writes[{i}]", write=True)
                     for i, w in enumerate(_list(item, "writes", inner))),
        error=_error(item, inner),
    )


def trace_id_of(record: dict[str, Any]) -> str:
    """The record's trace id, checked, so a bad record can still be named by it."""
    trace_id = _text(record, "traceId", "", required=True)
    assert trace_id is not None
    return trace_id


def parse_run(record: dict[str, Any]) -> Run:
    """Validate a ``kind: run`` record against the contract and build the :class:`Run`."""
    trace_id = trace_id_of(record)
    pipeline = _text(record, "pipeline", "", required=True)
    assert pipeline is not None
    status = _status(record, "", RUN_STATUSES)
    if record.get("startedAt") is None:
        raise BadRecord("missing required field 'startedAt'")
    started_at = normalise_time(record["startedAt"], "startedAt")
    ended_at = None
    if status != "running":
        if record.get("endedAt") is None:
            raise BadRecord(f"missing required field 'endedAt' (run is {status})")
        ended_at = normalise_time(record["endedAt"], "endedAt")
    engine = None
    engine_obj = _object(record, "engine", "")
    if engine_obj is not None:
        name = _text(engine_obj, "name", "engine.", required=True)
        assert name is not None
        engine = Engine(name, _text(engine_obj, "version", "engine.", required=False))
    stages = tuple(_stage(item, i) for i, item in enumerate(_list(record, "stages", "")))
    seen: set[tuple[str, int]] = set()
    for stage in stages:
        key = (stage.stage, stage.attempt)
        if key in seen:
            raise BadRecord(f"stage {stage.stage!r} attempt {stage.attempt} appears twice")
        seen.add(key)
    return Run(
        trace_id=trace_id,
        pipeline=pipeline,
        status=status,
        started_at=started_at,
        ended_at=ended_at,
        engine=engine,
        trigger=_text(record, "trigger", "", required=False),
        parameters=_object(record, "parameters", "") or {},
        error=_error(record, ""),
        stages=stages,
    )
