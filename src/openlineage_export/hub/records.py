"""Turn one audit-trail line into a :class:`~.model.Run`, or say precisely why not.

msgspec decodes and type-checks a record in C, straight into the model; the rules types cannot
say (times with an offset, fields required by status, one execution per stage attempt) are
checked here. The reader adds the file and line number.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import msgspec

from ..errors import value_kind
from .model import Run, StageExecution


class BadRecord(ValueError):
    """A record breaks the contract; the message says which field and how."""


class _Kind(msgspec.Struct):
    kind: Any = None
    trace_id: Any = msgspec.field(default=None, name="traceId")


_kind_decoder = msgspec.json.Decoder(_Kind)
_run_decoder = msgspec.json.Decoder(Run)

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,  # digits 0-9 only: \d would also take other scripts' digits (Arabic, fullwidth)
)


_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)",
                        re.ASCII)

_EDGE_YEARS = ("0001", "9999")
"""Only in these years can an offset move a time out of what UTC (and run ids) can hold."""


def normalise_time(value: object, where: str) -> str:
    """Check an RFC 3339 time with an offset and return it with ``T`` and ``Z`` upper-case.

    A leap second (``23:59:60`` UTC, which RFC 3339 allows) is accepted and written as
    ``23:59:59.999999`` of the same offset: the lineage servers built on ``java.time``
    (Marquez, DataHub) refuse a second 60, and every time must stay one they can store. For the
    same reason, a time whose offset is beyond ±18:00 (valid RFC 3339: up to ±23:59) is written
    as the same instant in UTC (``Z``).
    """
    if type(value) is str and _CANONICAL.fullmatch(value):
        # The common form, checked for real dates and times by the C parser.
        if value[-1] != "Z" and value[-5:] > MAX_OFFSET:
            return _in_utc(value, where)
        try:
            moment = datetime.fromisoformat(value)
        except ValueError as exc:
            if value[17:19] != "60":
                raise BadRecord(f"{where} {value!r} is not a valid time ({exc})") from None
            moment = _parsed(value, where)
        if value[:4] in _EDGE_YEARS:
            _check_utc(moment, value, where)
        return value if value[17] != "6" else _leap_free(value)  # (second 60; 61+ fail above)
    if not isinstance(value, str):
        raise BadRecord(f"{where} must be an RFC 3339 time string, got {value_kind(value)}")
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise BadRecord(f"{where} {value!r} is not an RFC 3339 time")
    offset = match.group(8)
    if offset is None:
        raise BadRecord(f"{where} {value!r} has no UTC offset")
    if offset not in "Zz" and offset[1:] > MAX_OFFSET:
        return _in_utc(value, where)
    moment = _parsed(value, where)
    if value[:4] in _EDGE_YEARS:
        _check_utc(moment, value, where)
    date, time_part = value[:10], value[11 : match.end(7) if match.group(7) else 19]
    return _leap_free(f"{date}T{time_part}{'Z' if offset in 'Zz' else offset}")


MAX_OFFSET = "18:00"
"""The farthest UTC offset a time keeps, either way: what ``java.time`` (``ZoneOffset``)
reads, so Marquez and DataHub, which refuse a time beyond it (Marquez with a 500). Every
offset in use is within it (-12:00 to +14:00); a time beyond it is written in UTC."""


def _in_utc(value: str, where: str) -> str:
    """A valid time with an offset beyond :data:`MAX_OFFSET`, as the same instant in UTC (its
    fraction of a second as written; a leap second as the last microsecond before it)."""
    moment = _parsed(value, where)  # checks it, and that a second 60 is a leap second
    try:
        utc = moment.astimezone(UTC)
    except OverflowError:
        raise BadRecord(f"{where} {value!r} is out of range (in UTC it falls before year 1 "
                        "or after year 9999)") from None
    match = _RFC3339.fullmatch(value)
    assert match is not None
    fraction = ".999999" if value[17:19] == "60" else match.group(7) or ""
    return f"{utc.replace(tzinfo=None, microsecond=0).isoformat()}{fraction}Z"


def _far(value: str) -> bool:
    """Whether an accepted time's offset is beyond :data:`MAX_OFFSET`."""
    return value[-1] not in "Zz" and value[-5:] > MAX_OFFSET


def _parsed(value: str, where: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError as exc:
        raise BadRecord(f"{where} {value!r} is not a valid time ({exc})") from None


_LEAP = re.compile(r"(.{17})60(?:\.\d*)?(.*)", re.ASCII | re.DOTALL)


def _leap_free(normal: str) -> str:
    """A normalised time with a leap second written as the last microsecond before it."""
    if normal[17:19] != "60":
        return normal
    match = _LEAP.fullmatch(normal)
    return normal if match is None else f"{match[1]}59.999999{match[2]}"


def trusted_time(value: str) -> str:
    """:func:`normalise_time` of a time it has already accepted, without checking it again."""
    if value[10] == "T" and value[-1] != "z" and value[17] != "6" and not _far(value):
        return value
    if _far(value):
        return _in_utc(value, "")
    tail = "Z" if value[-1] in "zZ" else value[-1]
    return _leap_free(f"{value[:10]}T{value[11:-1]}{tail}")


def _check_utc(moment: datetime, value: str, where: str) -> None:
    try:
        moment.astimezone(UTC)
    except OverflowError:
        raise BadRecord(f"{where} {value!r} is out of range (in UTC it falls before year 1 "
                        "or after year 9999)") from None


def parse_time(value: str) -> datetime:
    """Parse a time that :func:`normalise_time` accepted into an aware datetime.

    A leap second (second 60) is the last microsecond of the second before it, so times
    compare and derive ids the same way on every machine; it must fall at 23:59:60 UTC.
    """
    if value[17:19] != "60" and _CANONICAL.fullmatch(value):
        return datetime.fromisoformat(value)
    match = _RFC3339.fullmatch(value)
    if match is None or match.group(8) is None:
        raise ValueError(f"not an RFC 3339 time with an offset: {value!r}")
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    fraction = (match.group(7) or ".0")[1:]
    micro = int(fraction[:6].ljust(6, "0"))
    leap = second == 60
    if leap:
        second, micro = 59, 999_999
    offset = match.group(8)
    if offset in ("Z", "z"):
        tz = UTC
    else:
        sign = -1 if offset[0] == "-" else 1
        hours, minutes = int(offset[1:3]), int(offset[4:6])
        if hours > 23 or minutes > 59:
            raise ValueError(f"offset {offset} out of range")
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    moment = datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    if leap:
        try:
            utc = moment.astimezone(UTC)
        except OverflowError:
            utc = moment
        if (utc.hour, utc.minute) != (23, 59):
            raise ValueError("second 60 is a leap second, which falls at 23:59:60 UTC only")
    return moment


def ends_before_start(run: Run) -> list[str]:
    """What in a run ends before it starts: the run itself, or a stage attempt (in words).

    Not an error (the trail says so, and the events say what the trail says); worth a warning.
    """
    found = []
    end, start = run.ended_at, run.started_at
    # _in_order settles nearly every pair at the cost of a comparison.
    if end is not None and not _in_order(end, start) and _before(end, start):
        found.append(f"ends ({end}) before it starts ({start})")
    for stage in run.stages:
        ended, began = stage.ended_at, stage.started_at
        if ended is not None and began is not None and not _in_order(ended, began) and (
                _before(ended, began)):
            found.append(f"stage {stage.stage!r} attempt {stage.attempt} ends ({ended}) before "
                         f"it starts ({began})")
    return found


def _in_order(end: str, start: str) -> bool:
    """True when the text alone shows ``end`` at or after ``start`` (one form, both in UTC)."""
    return end >= start and end[-1] == "Z" == start[-1] and len(end) == len(start)


def _before(end: str, start: str) -> bool:
    if len(end) == len(start) and (end[-1] == start[-1] == "Z" or end[-6:] == start[-6:]):
        return end < start  # one form, one offset: the text orders as the time does
    return parse_time(end) < parse_time(start)


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
        if value is not None and (value[10] != "T" or value[-1] == "z" or value[17] == "6"
                                  or (value[-1] != "Z" and (value[-5] == "2" or (
                                      value[-5] == "1" and value[-4] >= "8")))):
            return _checked(run, trusted=True)
    for stage in run.stages:
        if stage.ended_at is not None and stage.status in ("running", "skipped"):
            return _checked(run, trusted=True)
        for value in (stage.started_at, stage.ended_at):
            if value is not None and (value[10] != "T" or value[-1] == "z" or value[17] == "6"
                                      or (value[-1] != "Z" and (value[-5] == "2" or (
                                          value[-5] == "1" and value[-4] >= "8")))):
                return _checked(run, trusted=True)
    return run


MAX_NESTING = 500
"""The deepest nesting of lists and objects a line may have. A fixed limit: how deep a decoder
can go depends on how deep in the stack it is called, and a line the first pass read must
read the same in the second."""

_TOO_DEEP = f"JSON nested more than {MAX_NESTING} levels deep"
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
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


_TYPE_WORDS = {"str": "a string", "int": "a whole number", "float": "a number",
               "bool": "a boolean", "array": "a list", "object": "an object", "null": "null"}
_ALLOWED = {"status": "succeeded, failed, cancelled, running",
            "stages[].status": "succeeded, failed, cancelled, running, skipped"}


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
                raise BadRecord(f"stage {stage.stage!r} attempt {stage.attempt} appears twice")
            seen.add(key)
        stages.append(_checked_stage(stage, f"stages[{i}]", time))
    if started_at is run.started_at and ended_at is run.ended_at and all(
            a is b for a, b in zip(stages, run.stages, strict=True)):
        return run
    return msgspec.structs.replace(run, started_at=started_at, ended_at=ended_at,
                                   stages=tuple(stages))


def _trusted_time(value: object, where: str) -> str:
    return trusted_time(value)  # type: ignore[arg-type]


def _checked_stage(stage: StageExecution, where: str,
                   time: Callable[[object, str], str]) -> StageExecution:
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
