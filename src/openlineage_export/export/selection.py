"""A part of the trail: the runs of some pipelines, started within a window of time.

A host hands a :class:`Selection` to the export (``ExportRequest.selection``). Its times are
instants (aware datetimes), so an export of the same trail with the same selection builds the
same events wherever and whenever it runs; a time relative to now (``7d``) is resolved by the
host, once, before it asks: :func:`parse_when` reads the forms the CLI takes, against the
``now`` it is given.

A run is selected when its pipeline is one of ``pipelines`` (any, when there are none) and
its start (the run record's ``startedAt``) is at or after ``since`` and before ``until``. Its
stage runs go with it. The runs left out are neither built, nor sent, nor recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import ConfigError
from ..hub.model import Graph
from ..hub.times import microseconds, parse_time
from ..state.index import RunFilter

WHEN_FORMS = (
    "a date (2026-11-01), an RFC 3339 time with an offset (2026-11-03T10:00:00+01:00) "
    "or a duration back from now (7d, 12h, 30m, 2w, 90s)"
)
"""What :func:`parse_when` reads, in words for a message."""

PIPELINES_LISTED = 20
"""How many of the graph's pipeline ids an unknown id's message lists."""

_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_DATE_TIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?P<offset>[Zz]|[+-]\d{2}:\d{2})?",
    re.ASCII,
)
_DURATION = re.compile(r"(\d+)([smhdw])", re.ASCII)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True)
class Selection:
    """Which runs of the trail an export takes; the default takes every run."""

    pipelines: tuple[str, ...] = ()
    """Pipeline ids (of the graph, or with runs on the trail); empty: every pipeline."""
    since: datetime | None = None
    """Runs that started at or after this instant (an aware datetime); None: no lower bound."""
    until: datetime | None = None
    """Runs that started before this instant (an aware datetime); None: no upper bound."""

    def __post_init__(self) -> None:
        if isinstance(self.pipelines, str):
            raise TypeError("Selection.pipelines is a tuple of pipeline ids, not one string")
        object.__setattr__(self, "pipelines", tuple(dict.fromkeys(self.pipelines)))
        for name, value in (("since", self.since), ("until", self.until)):
            if value is not None and value.utcoffset() is None:
                raise ConfigError(
                    f"the selection's {name} ({value.isoformat()}) has no time zone: "
                    "give an instant (an aware datetime, e.g. in UTC)"
                )
        if self.since is not None and self.until is not None and self.since >= self.until:
            raise ConfigError(
                f"the selection's since ({instant_text(self.since)}) is not before its until "
                f"({instant_text(self.until)}): no run could start in between"
            )

    @property
    def takes_every_run(self) -> bool:
        """True when nothing is left out (no pipeline named, no time bound)."""
        return not self.pipelines and self.since is None and self.until is None

    def run_filter(self) -> RunFilter:
        """The selection in the run index's terms."""
        return RunFilter(
            self.pipelines,
            None if self.since is None else microseconds(self.since),
            None if self.until is None else microseconds(self.until),
        )

    def describe(self) -> str:
        """The selection in words: ``pipeline daily-sales; started at or after ...``."""
        parts = []
        if self.pipelines:
            noun = "pipeline" if len(self.pipelines) == 1 else "pipelines"
            parts.append(f"{noun} {', '.join(self.pipelines)}")
        window = []
        if self.since is not None:
            window.append(f"at or after {instant_text(self.since)}")
        if self.until is not None:
            window.append(f"before {instant_text(self.until)}")
        if window:
            parts.append("started " + " and ".join(window))
        return "; ".join(parts) or "every run"

    def to_dict(self) -> dict[str, Any]:
        """The selection as plain data (``--json``): the ids, the times in RFC 3339 or null."""
        return {
            "pipelines": list(self.pipelines),
            "since": None if self.since is None else instant_text(self.since),
            "until": None if self.until is None else instant_text(self.until),
        }


def instant_text(moment: datetime) -> str:
    """An instant in RFC 3339, with the offset it was given in (``Z`` for UTC)."""
    text = moment.isoformat()
    return f"{text[:-6]}Z" if text.endswith("+00:00") else text


def parse_when(text: str, now: datetime) -> datetime:
    """The instant ``text`` names: a date (midnight UTC that day), an RFC 3339 time with an
    offset or ``Z``, or a duration back from ``now`` (an aware datetime): a whole number of
    seconds, minutes, hours, days or weeks (``90s``, ``30m``, ``12h``, ``7d``, ``2w``).

    Raises :class:`ValueError` saying what is wrong with it (the caller names the option)."""
    value = text.strip()
    duration = _DURATION.fullmatch(value)
    if duration is not None:
        if now.utcoffset() is None:
            raise ValueError("now must be an aware datetime")
        try:
            return now - timedelta(**{_UNITS[duration[2]]: int(duration[1])})
        except (OverflowError, ValueError):
            raise ValueError("reaches back further than a date can (year 1)") from None
    date = _DATE.fullmatch(value)
    if date is not None:
        try:
            return datetime(int(date[1]), int(date[2]), int(date[3]), tzinfo=UTC)
        except ValueError as exc:
            raise ValueError(f"is not a date ({exc})") from None
    moment = _DATE_TIME.fullmatch(value)
    if moment is not None:
        if moment["offset"] is None:
            raise ValueError("has no UTC offset: add Z for UTC, or one such as +01:00")
        try:
            return parse_time(value)
        except ValueError as exc:
            raise ValueError(f"is not a valid time ({exc})") from None
    raise ValueError(f"is not {WHEN_FORMS}")


def selecting(selection: Selection | None) -> Selection | None:
    """The selection an export applies: None when it takes every run."""
    return None if selection is None or selection.takes_every_run else selection


def check_pipelines(
    selection: Selection | None, graph: Graph, on_trail: Callable[[], Collection[str]]
) -> None:
    """Every pipeline ``selection`` names is one of the graph, or has runs on the trail (one
    deleted from the graph: ``on_trail()`` lists those that have); else a ConfigError naming
    the unknown ids and listing the graph's."""
    known = {p.id for p in graph.pipelines}
    wanted = [p for p in selection.pipelines if p not in known] if selection is not None else []
    if wanted:
        ran = on_trail()
        unknown = [p for p in wanted if p not in ran]
        if unknown:
            raise unknown_pipelines(unknown, [p.id for p in graph.pipelines])


def unknown_pipelines(unknown: Sequence[str], graph_ids: Sequence[str]) -> ConfigError:
    """The error for ids of a selection that are neither in the graph nor on the trail,
    naming them and listing the graph's pipeline ids (the first :data:`PIPELINES_LISTED`)."""
    named = ", ".join(f"'{p}'" for p in unknown[:5])
    if len(unknown) > 5:
        named += f" and {len(unknown) - 5} more"
    noun = "pipeline" if len(unknown) == 1 else "pipelines"
    if graph_ids:
        listed = ", ".join(graph_ids[:PIPELINES_LISTED])
        more = len(graph_ids) - PIPELINES_LISTED
        known = f"the graph's pipelines: {listed}" + (f" and {more} more" if more > 0 else "")
    else:
        known = "the graph has no pipeline"
    return ConfigError(f"no {noun} {named} in the graph nor on the trail; {known}")
