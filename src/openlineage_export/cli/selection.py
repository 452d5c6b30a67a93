"""``export --pipeline ID --since WHEN --until WHEN``: a part of the trail.

The options are read here, at the CLI's edge: a duration (``7d``) is resolved once, against
the clock, and the library gets instants (``selection.Selection``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from ..errors import ConfigError
from ..terminal.signals import held_signals

if TYPE_CHECKING:
    from ..export.selection import Selection

F = TypeVar("F", bound=Callable[..., Any])

_WHEN = (
    "a date (2026-11-01: midnight UTC), an RFC 3339 time with an offset "
    "(2026-11-03T10:00:00+01:00) or a duration back from now (90s, 30m, 12h, 7d, 2w)"
)


def selection_options(command: F) -> F:
    """``--pipeline`` (repeatable), ``--since`` and ``--until``."""
    for option in reversed(
        [
            click.option(
                "--pipeline",
                "pipelines",
                metavar="ID",
                multiple=True,
                help="Only the runs of this pipeline (repeat for several); the others are "
                "neither sent nor recorded.",
            ),
            click.option(
                "--since",
                metavar="WHEN",
                help=f"Only the runs that started at or after WHEN: {_WHEN}.",
            ),
            click.option(
                "--until",
                metavar="WHEN",
                help="Only the runs that started before WHEN (as for --since).",
            ),
        ]
    ):
        command = option(command)
    return command


def selection_of(
    pipelines: tuple[str, ...], since: str | None, until: str | None
) -> Selection | None:
    """The selection the options ask for (None: every run), durations resolved against the
    clock once; a WHEN that is none of its forms, or a --since not before --until, is a
    ConfigError naming the option and its value."""
    if not pipelines and since is None and until is None:
        return None
    with held_signals():
        from ..export.selection import Selection, instant_text, parse_when
    now = datetime.now(UTC).replace(microsecond=0)
    start = None if since is None else _when("--since", since, now, parse_when)
    end = None if until is None else _when("--until", until, now, parse_when)
    if start is not None and end is not None and start >= end:
        raise ConfigError(
            f"--since {since} ({instant_text(start)}) is not before --until {until} "
            f"({instant_text(end)}): no run could start in between"
        )
    return Selection(pipelines, start, end)


def _when(
    option: str, value: str, now: datetime, parse: Callable[[str, datetime], datetime]
) -> datetime:
    try:
        return parse(value, now)
    except ValueError as exc:
        raise ConfigError(f"{option} {value!r} {exc}") from None
