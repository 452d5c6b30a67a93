"""The one JSON encoder of everything we print or write as JSON: safe for a terminal, whatever
it holds.

Every JSON output goes through :func:`dumps`: ``--json``, ``--progress json``, ``settings
get|list --json``, ``status --json``, an error line in JSON, and the events themselves (a dry
run prints them on standard output, often a terminal). A value there may come from a stranger
(a setting, a pipeline id, a segment name, a server's reply), so:

- C0 control characters are escaped by orjson itself (``\\u001b``); DEL and the C1 controls
  (U+0080-U+009F: CSI ``\\u009b``, OSC ``\\u009d``, ST ``\\u009c`` start and end 8-bit escape
  sequences on many terminals) are escaped here the same way, and so are the characters that
  change how the rest of a line shows without being seen: the bidirectional controls (U+202E
  RIGHT-TO-LEFT OVERRIDE, U+2066-U+2069, U+200E, U+200F, U+061C), the line and paragraph
  separators U+2028 and U+2029 (a line break to some terminals, and to JavaScript before
  ES2019), every other format character but the joiners (the invisible U+200B, U+2060-U+2064,
  U+FEFF, tags U+E0000-U+E007F: a character beyond U+FFFF as its surrogate pair) and the
  Hangul fillers: :data:`ESCAPED`, the one list, which the text outputs escape too
  (``terminal/text.py``).
- A lone surrogate (``"\\udcff"`` is valid JSON, and Python reads it from a settings.json, an
  environment variable or a file name that is not UTF-8) has no UTF-8: it is written as its
  JSON escape ``\\udcff``, so the output is valid UTF-8 and reads back as the same string.
- A value orjson cannot write (an integer over 64 bits, lists nested more than 254 deep, both
  valid JSON that our readers take, or a lone surrogate) is written by msgspec instead: the
  output says what the input said, never a traceback.

The escapes change no value: a JSON reader gets the very same strings back (a dictionary *key*
holding a lone surrogate, which no output of ours has, is written with the escape as its text).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, cast

import msgspec
import orjson

ESCAPED: tuple[tuple[int, int], ...] = (
    (0x00, 0x1F),  # C0: tab, line feed, escape...
    (0x7F, 0x9F),  # DEL and C1: CSI 0x9b, OSC 0x9d, ST 0x9c
    (0x00AD, 0x00AD),
    (0x0600, 0x0605),
    (0x061C, 0x061C),
    (0x06DD, 0x06DD),
    (0x070F, 0x070F),
    (0x0890, 0x0891),
    (0x08E2, 0x08E2),
    (0x115F, 0x1160),  # Hangul fillers (Lo, shown blank)
    (0x180E, 0x180E),
    (0x200B, 0x200B),  # U+200C and U+200D join Persian, Devanagari, emoji: text
    (0x200E, 0x200F),
    (0x2028, 0x202E),  # the line and paragraph separators (Zl, Zp), the bidi embeddings
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0x3164, 0x3164),  # Hangul filler
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F),  # tags: an invisible copy of ASCII
)
"""Every character no output of ours prints raw (text, JSON, the HTML report), as ranges of code
points: the one list. The control characters (C0, DEL, C1), the line and paragraph
separators, every format character (Unicode category Cf: the bidi controls, the invisible
U+200B, U+2060-U+2064, U+FEFF, U+00AD, tags...) but the joiners U+200C and U+200D, and the
Hangul fillers, which show as blanks. ``tests/test_jsonout.py`` checks it holds all of Cf."""


def _risky_pattern() -> re.Pattern[bytes]:
    """:data:`ESCAPED` above ASCII's printable range as UTF-8 (orjson escapes C0 itself), as a
    tree of their bytes: a byte that starts no risky character is left at once."""
    tree: dict[int, Any] = {}
    for first, final in ESCAPED:
        for code in range(max(first, 0x7F), final + 1):
            node = tree
            for byte in chr(code).encode():
                node = node.setdefault(byte, {})
    return re.compile(_branches(tree))


def _branches(tree: dict[int, Any]) -> bytes:
    """The pattern of a tree of bytes: leaves as one class, each inner byte with its own."""
    leaves = [byte for byte, below in tree.items() if not below]
    parts = [b"[" + b"".join(b"\\x%02x" % byte for byte in leaves) + b"]"] if leaves else []
    parts += [b"\\x%02x" % byte + _branches(below) for byte, below in tree.items() if below]
    return parts[0] if len(parts) == 1 else b"(?:" + b"|".join(parts) + b")"


def _leads() -> tuple[tuple[int, int, frozenset[bytes]], ...]:
    """Each lead byte of :data:`ESCAPED`'s characters, how many bytes follow it, and which."""
    follow: dict[int, set[bytes]] = {}
    for first, final in ESCAPED:
        for code in range(max(first, 0x80), final + 1):
            encoded = chr(code).encode()
            follow.setdefault(encoded[0], set()).add(encoded[1:])
    return tuple((lead, len(min(rests)), frozenset(rests)) for lead, rests in follow.items())


_RISKY = _risky_pattern()
"""The characters of :data:`ESCAPED` JSON does not escape itself, as UTF-8 (each starts with a
lead byte, so no other character's bytes can match)."""
_LEADS = _leads()
"""Each risky character's lead byte, how many bytes follow it, and which: looked for with
``find`` (memchr, many times faster than a longer needle), as an event's text holds a lead byte
rarely (``€``, ``—``: 0xE2; an emoji's 0xF0, kana's 0xE3)."""
_LOOKS = 16
"""Lead bytes looked at before leaving the rest to :data:`_RISKY`: text full of them (Arabic,
0xD8) costs no more than the regular expression alone."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(
    value: object, *, indent: bool = False, default: Callable[[object], object] | None = None
) -> bytes:
    """``value`` as JSON (UTF-8), every control character escaped; ``indent``: two spaces a
    level. ``default`` turns a value JSON has no type for into one (``str`` for a path)."""
    try:
        data = orjson.dumps(value, default=default, option=orjson.OPT_INDENT_2 if indent else None)
    except orjson.JSONEncodeError:
        data = _beyond_orjson(value, default)
        if indent:
            data = indented(data)
    return escape_controls(data)


def fragment(value: object) -> bytes:
    """``value`` as compact JSON, for a part of a larger JSON text that
    :func:`escape_controls` is applied to as a whole (``translate/encoded.py``)."""
    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        return _beyond_orjson(value, None)


def _beyond_orjson(value: object, default: Callable[[object], object] | None) -> bytes:
    """What orjson refuses, written by msgspec: an integer over 64 bits, deep nesting, and a
    lone surrogate (as its escape)."""
    try:
        return msgspec.json.encode(value, enc_hook=default)
    except UnicodeEncodeError:  # a lone surrogate: no UTF-8 for it
        pass

    def hook(item: object) -> object:
        if default is None:
            raise TypeError(f"{type(item).__name__} is not JSON")
        return _surrogates_escaped(default(item))

    return msgspec.json.encode(_surrogates_escaped(value), enc_hook=hook)


def _surrogates_escaped(value: object) -> object:
    """``value`` with every string that holds a lone surrogate given as its JSON text (the
    surrogate as ``\\udcff``); iterative, as a value may be nested as deep as a reader took."""
    top: dict[object, object] = {0: None}
    stack: list[tuple[list[object] | dict[object, object], object, object]] = [(top, 0, value)]
    while stack:
        parent, slot, item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item) is not None:
                item = msgspec.Raw(_json_string(item))
        elif isinstance(item, dict):
            copy: dict[object, object] = {}
            for key, child in item.items():
                if isinstance(key, str) and _SURROGATE.search(key) is not None:
                    key = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", key)
                copy[key] = None
                stack.append((copy, key, child))
            item = copy
        elif isinstance(item, (list, tuple)):
            items: list[object] = [None] * len(item)
            stack.extend((items, i, child) for i, child in enumerate(item))
            item = items
        if isinstance(parent, list):
            parent[cast(int, slot)] = item
        else:
            parent[slot] = item
    return top[0]


def _json_string(text: str) -> bytes:
    """``text`` as a JSON string, a lone surrogate written as its ``\\u`` escape (Python's
    ``backslashreplace`` writes a surrogate just so)."""
    return json.dumps(text, ensure_ascii=False).encode("utf-8", "backslashreplace")


def indented(data: bytes) -> bytes:
    """Compact JSON text ``data`` laid out as orjson's ``OPT_INDENT_2`` lays it out: two spaces
    a level, ``{}`` and ``[]`` when empty. Reads tokens only (never decodes a string), so it
    takes what a JSON reader would refuse to decode (a lone surrogate's escape)."""
    out = bytearray()
    depth, i, size = 0, 0, len(data)
    while i < size:
        byte = data[i]
        if byte == 0x22:  # '"': copy the string whole, escapes included
            end = i + 1
            while data[end] != 0x22:
                end += 2 if data[end] == 0x5C else 1
            out += data[i : end + 1]
            i = end + 1
            continue
        if byte in b"{[":
            if i + 1 < size and data[i + 1] in b"}]":
                out += data[i : i + 2]
                i += 2
                continue
            depth += 1
            out += bytes([byte]) + b"\n" + b"  " * depth
        elif byte in b"}]":
            depth -= 1
            out += b"\n" + b"  " * depth + bytes([byte])
        elif byte == 0x2C:  # ','
            out += b",\n" + b"  " * depth
        elif byte == 0x3A:  # ':'
            out += b": "
        elif byte not in b" \t\r\n":
            out.append(byte)
        i += 1
    return bytes(out)


def escape_controls(data: bytes) -> bytes:
    """JSON text ``data`` with the characters of :data:`ESCAPED` orjson leaves (DEL, C1, format
    characters...) written as ``\\u`` escapes (they can only stand inside a string there, where
    an escape means the same character)."""
    if data.isascii():  # nearly always: a scan in C, and DEL is the only risk left
        return data if b"\x7f" not in data else _RISKY.sub(_escape, data)
    if not _may_be_risky(data):
        return data
    return _RISKY.sub(_escape, data)


def _may_be_risky(data: bytes) -> bool:
    """Whether ``data`` may hold a character :data:`_RISKY` escapes (False: surely not)."""
    if b"\x7f" in data:
        return True
    looked = 0
    for lead, size, risky in _LEADS:
        at = data.find(lead)
        while at >= 0:
            if data[at + 1 : at + 1 + size] in risky:
                return True
            looked += 1
            if looked > _LOOKS:
                return True
            at = data.find(lead, at + 1)
    return False


def _escape(match: re.Match[bytes]) -> bytes:
    code = ord(match.group().decode("utf-8"))
    if code < 0x10000:
        return b"\\u%04x" % code
    code -= 0x10000  # JSON writes a character beyond the BMP as its surrogate pair
    return b"\\u%04x\\u%04x" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))
