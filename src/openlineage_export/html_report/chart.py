"""How the report writes times, durations and counts for a person, and each pipeline's chart
of runs per day (or week, or month) by state."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

from .collector import RUN_STATES, PipelineHistory
from .details import utc

MAX_BARS = 36
"""Bars of a pipeline's chart: days, else weeks, else months, whichever fits. Few enough that
each bar is wide enough to carry its count."""

CHART_WIDTH = 840
"""The widest a chart is drawn (it fits a 1024 px wide window)."""

STATE_COLOURS = {
    "completed": "#2e7d4f",
    "failed": "#c0392b",
    "aborted": "#b7791f",
    "running": "#2b6cb0",
}
"""What became of a run in the editor; being refused by the server has a colour of its own
(:data:`~.drawing.REFUSED_COLOUR`)."""


def when(text: str) -> str:
    """An event time as the page shows every time: in UTC, to the second
    (``2026-11-03 01:00:00``); the text itself if it is not a time."""
    moment = utc(text)
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else text


def duration(seconds: float | None) -> str:
    """How long something took, for a person: ``42.1 s``, ``7 min 31 s``, ``2 h 05 min``."""
    if seconds is None:
        return "still running"
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"


def bucket_name(histories: list[PipelineHistory]) -> str:
    days = [date.fromisoformat(d) for h in histories for d in h.days if _is_day(d)]
    if not days:
        return "day"
    span = (max(days) - min(days)).days + 1
    if span <= MAX_BARS:
        return "day"
    return "week" if span <= MAX_BARS * 7 else "month"


def _is_day(text: str) -> bool:
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _bucket(day: date, bucket: str) -> date:
    if bucket == "week":
        return day - timedelta(days=day.weekday())
    if bucket == "month":
        return day.replace(day=1)
    return day


def chart(history: PipelineHistory, bucket: str) -> dict[str, Any]:
    """Stacked bars of runs per day (or week, or month) by state, gaps included."""
    counts: dict[date, dict[str, int]] = {}
    for text, day_counts in history.days.items():
        if _is_day(text):
            key = _bucket(date.fromisoformat(text), bucket)
            into = counts.setdefault(key, {})
            for state, n in day_counts.items():
                into[state] = into.get(state, 0) + n
    labels: list[tuple[str, Mapping[str, int]]] = []
    if sum(history.earlier.values()):
        labels.append(("earlier", history.earlier))
    if counts:
        step = {"day": 1, "week": 7}.get(bucket)
        current, last = min(counts), max(counts)
        while current <= last:
            text = current.isoformat() if bucket != "month" else current.isoformat()[:7]
            labels.append(
                ((f"week of {text}" if bucket == "week" else text), counts.get(current, {}))
            )
            current = (
                current + timedelta(days=step)
                if step
                else (current.replace(day=28) + timedelta(days=4)).replace(day=1)
            )
    height, top = 56, max([sum(c.values()) for _, c in labels] + [1])
    width_each = max(14, min(40, CHART_WIDTH // max(1, len(labels))))
    bars = []
    for index, (text, states) in enumerate(labels):
        y = float(height + LABEL_ROOM)
        rects = []
        for state in RUN_STATES:
            n = states.get(state, 0)
            if n:
                h = max(1.0, n / top * (height - 2))
                y -= h
                rects.append({"y": f"{y:.1f}", "h": f"{h:.1f}", "fill": STATE_COLOURS[state]})
        total = sum(states.values())
        title = (
            text
            + ": "
            + (", ".join(f"{states[s]:,} {s}" for s in RUN_STATES if states.get(s)) or "no run")
        )
        bars.append(
            {
                "x": index * width_each,
                "w": max(2, width_each - 2),
                "rects": rects,
                "title": title,
                "count": count(total) if total else "",
                "cx": f"{index * width_each + (width_each - 2) / 2:.1f}",
                "cy": f"{y - 3:.1f}",
            }
        )
    return {
        "width": max(180, len(labels) * width_each),
        "height": height + LABEL_ROOM,
        "bars": bars,
        "first": labels[0][0] if labels else "",
        "last": labels[-1][0] if labels else "",
    }


LABEL_ROOM = 13
"""Pixels above the tallest bar for its count."""


def count(n: int) -> str:
    """A bar's count in at most four characters: ``7``, ``312``, ``4.2k``, ``35k``, ``1.2M``."""
    if n < 1000:
        return str(n)
    if n < 9_950:  # 9,950 would round to 10.0k
        return f"{n / 1000:.1f}".removesuffix(".0") + "k"
    if n < 999_500:
        return f"{round(n / 1000)}k"
    return f"{n / 1_000_000:.1f}".removesuffix(".0") + "M"
