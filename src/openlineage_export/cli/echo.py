"""What the commands print: one line for a person, or a JSON document for a program."""

from __future__ import annotations

from .. import jsonout
from ..terminal.streams import write_err, write_out
from ..terminal.text import shown


def echo(text: str, *, err: bool = False) -> None:
    """Print one line for a person: a stranger's control characters in it (a setting's value,
    a server's reply, a pipeline id) are shown escaped (``terminal/text.py``). Standard output
    that cannot be written is an OutputError; standard error, nothing (``terminal/streams.py``).
    """
    (write_err if err else write_out)(shown(text))


def echo_json(value: object, *, indent: bool = True) -> None:
    """Print a JSON document on standard output, every control character escaped (C1 too:
    ``jsonout.py``)."""
    write_out(jsonout.dumps(value, indent=indent, default=str).decode())


def show(value: object) -> str:
    """A setting's value as the commands print it (booleans as in settings.json)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
