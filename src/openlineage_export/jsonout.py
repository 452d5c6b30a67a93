"""The one JSON encoder of everything we print or write as JSON: safe for a terminal, whatever
it holds.

Every JSON output goes through :func:`dumps`: ``--json``, ``--progress json``, ``settings
get|list --json``, ``status --json``, an error line in JSON, and the events themselves (a dry
run prints them on standard output, often a terminal). A value there may come from a stranger
(a setting, a pipeline id, a segment name, a server's reply), so:

- C0 control characters are escaped by orjson itself (``\\u001b``); DEL and the C1 controls
  (U+0080-U+009F: CSI ``\\u009b``, OSC ``\\u009d``, ST ``\\u009c`` start and end 8-bit escape
  sequences on many terminals) are escaped here the same way. The text outputs escape the same
  characters (``terminal/text.py``).
- A value orjson cannot write (an integer over 64 bits, lists nested more than 254 deep, both
  valid JSON that our readers take) is written by msgspec instead: the output says what the
  input said, never a traceback.

The escapes change no value: a JSON reader gets the very same strings back.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec
import orjson

_RISKY = re.compile(rb"\x7f|\xc2[\x80-\x9f]")
"""DEL, and the C1 controls as UTF-8 (``\\xc2`` is always a lead byte there, so no other
character's bytes can match)."""


def dumps(
    value: object, *, indent: bool = False, default: Callable[[object], object] | None = None
) -> bytes:
    """``value`` as JSON (UTF-8), every control character escaped; ``indent``: two spaces a
    level. ``default`` turns a value JSON has no type for into one (``str`` for a path)."""
    try:
        data = orjson.dumps(value, default=default, option=orjson.OPT_INDENT_2 if indent else None)
    except orjson.JSONEncodeError:
        data = msgspec.json.encode(value, enc_hook=default)
        if indent:
            data = msgspec.json.format(data, indent=2)
    return escape_controls(data)


def fragment(value: object) -> bytes:
    """``value`` as compact JSON, for a part of a larger JSON text that
    :func:`escape_controls` is applied to as a whole (``translate/encoded.py``)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return msgspec.json.encode(value)


def escape_controls(data: bytes) -> bytes:
    """JSON text ``data`` with DEL and the C1 controls written as ``\\u00XX`` escapes (they can
    only stand inside a string there, where an escape means the same character)."""
    if b"\x7f" not in data and b"\xc2" not in data:
        return data  # nearly always: two scans in C
    return _RISKY.sub(_escape, data)


def _escape(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode("utf-8"))
