"""The trail's times: RFC 3339 with an offset, checked and written in one form (upper-case
``T`` and ``Z``, a leap second folded, an offset beyond ±18:00 in UTC), parsed, and compared
without parsing where the text alone tells."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from ..errors import value_kind
from .model import BadRecord, Run, quoted

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,  # digits 0-9 only: \d would also take other scripts' digits (Arabic, fullwidth)
)


_CANONICAL = re.compile(
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?(?:Z|[+-]\d\d:\d\d)", re.ASCII
)

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
                raise BadRecord(f"{where} {quoted(value)} is not a valid time ({exc})") from None
            moment = _parsed(value, where)
        if value[:4] in _EDGE_YEARS:
            _check_utc(moment, value, where)
        return value if value[17] != "6" else _leap_free(value)  # (second 60; 61+ fail above)
    if not isinstance(value, str):
        raise BadRecord(f"{where} must be an RFC 3339 time string, got {value_kind(value)}")
    match = _RFC3339.fullmatch(value)
    if match is None:
        raise BadRecord(f"{where} {quoted(value)} is not an RFC 3339 time")
    offset = match.group(8)
    if offset is None:
        raise BadRecord(f"{where} {quoted(value)} has no UTC offset")
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
        raise BadRecord(
            f"{where} {quoted(value)} is out of range "
            "(in UTC it falls before year 1 or after year 9999)"
        ) from None
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
        raise BadRecord(f"{where} {quoted(value)} is not a valid time ({exc})") from None


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
        raise BadRecord(
            f"{where} {quoted(value)} is out of range "
            "(in UTC it falls before year 1 or after year 9999)"
        ) from None


def parse_time(value: str) -> datetime:
    """Parse a time that :func:`normalise_time` accepted into an aware datetime.

    A leap second (second 60) is the last microsecond of the second before it, so times
    compare and derive ids the same way on every machine; it must fall at 23:59:60 UTC.
    """
    if value[17:19] != "60" and _CANONICAL.fullmatch(value):
        return datetime.fromisoformat(value)
    match = _RFC3339.fullmatch(value)
    if match is None or match.group(8) is None:
        raise ValueError(f"not an RFC 3339 time with an offset: {quoted(value)}")
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
        if (
            ended is not None
            and began is not None
            and not _in_order(ended, began)
            and (_before(ended, began))
        ):
            found.append(
                f"stage {quoted(stage.stage)} attempt {stage.attempt} ends ({ended}) before "
                f"it starts ({began})"
            )
    return found


def _in_order(end: str, start: str) -> bool:
    """True when the text alone shows ``end`` at or after ``start`` (one form, both in UTC)."""
    return end >= start and end[-1] == "Z" == start[-1] and len(end) == len(start)


def _before(end: str, start: str) -> bool:
    if len(end) == len(start) and (end[-1] == start[-1] == "Z" or end[-6:] == start[-6:]):
        return end < start  # one form, one offset: the text orders as the time does
    return parse_time(end) < parse_time(start)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def microseconds(moment: datetime) -> int:
    """An aware time as whole microseconds since 1970-01-01 UTC: how the run index keeps a
    run's start, so that times with different offsets compare as the instants they are."""
    return (moment - EPOCH) // _MICROSECOND


def start_microseconds(value: str) -> int:
    """:func:`microseconds` of a time :func:`normalise_time` returned (a run's ``startedAt``)."""
    try:
        moment = datetime.fromisoformat(value)  # every normalised time, on Python 3.11+
    except ValueError:
        moment = parse_time(value)
    return microseconds(moment)
