"""Text from strangers made safe to print: every control character shown escaped.

A server's error body, a pipeline or trace id, a dataset or file name, a setting's value: each
was written by someone else (a server, whoever pushed the workspace) and may carry escape
sequences (OSC 0 sets the terminal's title, CSI 2J clears the screen) or a line break that
forges a line of our own (``exported to https://prod...: 9 of 9 runs sent``).

The rule: every line the command prints for a person goes through :func:`shown` as a whole, one
line at a time (the command never puts a line break inside a message; a text of several lines
is a list of lines joined after each was shown). So a line break, carriage return or escape
inside a value is printed as ``\\n``, ``\\r``, ``\\x1b`` and cannot act on the terminal. The
JSON outputs escape the same characters in their one encoder (``jsonout.py``): JSON itself
escapes C0 only, not DEL nor C1.
"""

from __future__ import annotations

import re

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""C0 (tab, line feed and escape included), DEL, and C1 (CSI 0x9b, OSC 0x9d...)."""

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def shown(text: str) -> str:
    """``text`` with each control character escaped (``\\x1b``, ``\\n``): one inert line."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_escape, text)


def shown_lines(lines: list[str]) -> str:
    """Several lines for a person: each one :func:`shown`, then joined by line breaks."""
    return "\n".join(shown(line) for line in lines)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _NAMED.get(char) or f"\\x{ord(char):02x}"
