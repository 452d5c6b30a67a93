"""Text from strangers made safe to print: every control character shown escaped.

A server's error body, a pipeline or trace id, a dataset or file name, a setting's value: each
was written by someone else (a server, whoever pushed the workspace) and may carry escape
sequences (OSC 0 sets the terminal's title, CSI 2J clears the screen) or a line break that
forges a line of our own (``exported to https://prod...: 9 of 9 runs sent``).

The rule: every line the command prints for a person goes through :func:`shown` as a whole, one
line at a time (the command never puts a line break inside a message; a text of several lines
is a list of lines joined after each was shown). So a line break, carriage return or escape
inside a value is printed as ``\\n``, ``\\r``, ``\\x1b`` and cannot act on the terminal, and a
line longer than :data:`LINE_LIMIT` is cut there, saying how much more it held.

Escaped the same way, as ``\\u202e`` (``\\U000e0041`` beyond U+FFFF): what would change how the
rest of the line shows, or show nothing, without being seen (the bidirectional controls: U+202E
RIGHT-TO-LEFT OVERRIDE makes ``refused`` read ``desufer``; U+2028 and U+2029, a line break to
some terminals; every other format character but the joiners U+200C and U+200D: the invisible
U+200B, U+2060-U+2064, U+FEFF, tags U+E0000-U+E007F...; the Hangul fillers, shown blank), and
a lone surrogate (``\\udcff``: from a settings.json's ``"\\udcff"``, or the bytes of
a name that is not UTF-8), which has no UTF-8 to print at all. The JSON outputs escape the same
characters in their one encoder (``jsonout.py``): JSON itself escapes C0 only.
"""

from __future__ import annotations

import re

from ..jsonout import ESCAPED

_CONTROL = re.compile(
    "["
    + "".join(re.escape(chr(first)) + "-" + re.escape(chr(last)) for first, last in ESCAPED)
    + "\ud800-\udfff]"
)
"""What :data:`~openlineage_export.jsonout.ESCAPED` holds (the one list: control, format and
invisible characters), and lone surrogates."""

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


LINE_LIMIT = 10_000
"""The most characters of one line shown to a person: a pipeline id of two megabytes (the
trail and the graph allow it) floods no terminal; the JSON outputs keep every character."""


def shown(text: str) -> str:
    """``text`` with each control character escaped (``\\x1b``, ``\\n``): one inert line, cut
    at :data:`LINE_LIMIT` characters."""
    if len(text) > LINE_LIMIT:
        head = shown(text[:LINE_LIMIT])[:LINE_LIMIT]
        return f"{head}... ({len(text) - LINE_LIMIT:,} more characters)"
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_escape, text)


def shown_lines(lines: list[str]) -> str:
    """Several lines for a person: each one :func:`shown`, then joined by line breaks."""
    return "\n".join(shown(line) for line in lines)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code > 0xFFFF:
        return f"\\U{code:08x}"
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
