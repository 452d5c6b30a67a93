"""The settings file as JSON text: read it, edit it keeping other keys byte for byte, write it
atomically. Knows nothing of what the settings mean (that is ``settings.py``)."""

from __future__ import annotations

import errno
import json
import sys
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError, value_kind
from ..files.tree import WorkspaceTree
from ..files.walk import Refused, shown_path

MAX_BYTES = 1 << 20
"""The largest settings.json read: a few lines do in practice, and a file of a GiB (of
blanks: a megabyte of git objects) would take GiBs of memory."""


def read_text(file: Path, *, root: Path | None = None) -> str | None:
    """The text of the workspace file ``file``, walked from the workspace ``root`` without
    following a link (None: from the file's own folder, which the caller trusts); None when
    it is missing. Anything else we cannot read (a link, a FIFO, more than :data:`MAX_BYTES`,
    not UTF-8) is one ConfigError naming it."""
    tree = WorkspaceTree(root if root is not None else file.parent)
    try:
        data = tree.read(file.relative_to(tree.root).parts, limit=MAX_BYTES)
    except FileNotFoundError:
        return None
    except Refused as exc:
        # A link that leaves would have us read (and send) the user's other settings.
        hint = " (a workspace's files are read inside it, never through a link)"
        raise ConfigError(
            f"cannot read {shown_path(file)}: {exc.what(file)}"
            + (hint if exc.errno == errno.ELOOP else "")
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read {shown_path(file)}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")  # editors on Windows may add a BOM
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{file} is not UTF-8 text (byte {exc.start})") from None


class _LongNumber:
    """A JSON integer with more digits than Python turns into an int (4,300 by default): kept
    as its length, so the reader can name where it is instead of failing with a ValueError."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


def _parse_int(text: str) -> int | _LongNumber:
    try:
        return int(text)
    except ValueError:
        return _LongNumber(len(text.lstrip("-")))


def loads(text: str, what: str) -> object:
    """``json.loads`` of a file of ours, with a number too long to read named by its key:
    ``<what>: openlineage.retry.maxTime is a number of 5,000 digits`` (never the number: in
    a secrets file it could be a secret). Other errors are ``json.loads``'s own."""
    value = json.loads(text, parse_int=_parse_int)
    found = _long_number(value)
    if found is not None:
        where, number = found
        raise ConfigError(
            f"{what}: {where or 'the document'} is a number of "
            f"{number.digits:,} digits, longer than any setting or secret "
            "(and than Python reads); fix or remove it"
        )
    return value


def _long_number(value: object) -> tuple[str, _LongNumber] | None:
    """Where in ``value`` the first too-long number is (``key.sub[2]``), if any; iterative,
    as the document may be nested as deep as the reader allows."""
    stack: list[tuple[str, object]] = [("", value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, _LongNumber):
            return where, item
        if isinstance(item, dict):
            stack.extend(
                (f"{where}.{key}" if where else str(key), child)
                for key, child in reversed(item.items())
            )
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return None


def parse_object(text: str | None, file: Path) -> dict[str, object]:
    if text is None or not text.strip():
        return {}
    try:
        value = loads(text, str(file))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{file} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    except RecursionError:
        raise ConfigError(too_deep(file)) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{file} must hold one JSON object, not {value_kind(value)}")
    return value


def too_deep(file: Path) -> str:
    """The message for a JSON file nested deeper than Python's reader can follow."""
    return (
        f"{file} is nested too deeply to read (lists or objects inside each other, about "
        f"{sys.getrecursionlimit()} levels or more); no setting is nested like that: "
        "fix or replace the file"
    )


def raw_entries(file: Path, *, root: Path | None = None) -> dict[str, tuple[str, str]]:
    """The top-level entries of settings.json as ``key -> (key text, value text)`` (read as
    :func:`read_text` reads it).

    Other keys are written back with exactly the text they had, so that an edit never
    reformats, re-escapes or re-rounds what belongs to someone else.
    """
    text = read_text(file, root=root)
    if text is None or not parse_object(text, file):
        return {}
    # parse_object has vouched for the syntax, so the walk below can trust every character.
    decoder = json.JSONDecoder(parse_int=_parse_int)
    entries: dict[str, tuple[str, str]] = {}
    at = _skip_blank(text, 0) + 1  # past "{"
    while True:
        key_start = _skip_blank(text, at)
        key, at = decoder.raw_decode(text, key_start)
        raw_key = text[key_start:at]
        value_start = _skip_blank(text, _skip_blank(text, at) + 1)  # past ":"
        _, at = decoder.raw_decode(text, value_start)
        # Assigning keeps a repeated key at its first place with its last value, as json does.
        entries[key] = (raw_key, text[value_start:at])
        at = _skip_blank(text, at)
        if text[at] == "}":
            return entries
        at += 1  # past ","


def _skip_blank(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def check_editable(root: Path, file: Path) -> None:
    """Refuse at once (before it is read to be edited) a file of the workspace ``root`` that
    :func:`write_entries` could not write: one that is, or lies in a folder that is, a link."""
    try:
        WorkspaceTree(root).check_replaceable(file.relative_to(root).parts)
    except Refused as exc:
        raise _through_a_link(file, exc) from None
    except OSError:
        return  # said when it is written, as any other failure to write


def write_entries(file: Path, entries: Mapping[str, tuple[str, str]], *, root: Path) -> None:
    """Write ``entries`` as settings.json ``file`` of the workspace ``root``: atomically, never
    through a link (a settings.json or a .workspace that is one is refused, nothing written:
    a link pushed with the workspace would make us rewrite a file that is not the workspace's)."""
    lines = [f"  {raw_key}: {raw_value}" for raw_key, raw_value in entries.values()]
    text = "{\n" + ",\n".join(lines) + "\n}\n" if lines else "{}\n"
    try:
        WorkspaceTree(root).replace(file.relative_to(root).parts, text.encode("utf-8"))
    except Refused as exc:
        raise _through_a_link(file, exc) from None
    except OSError as exc:
        raise ConfigError(f"cannot write {file}: {exc.strerror or exc}") from None


def _through_a_link(file: Path, exc: Refused) -> ConfigError:
    return ConfigError(
        f"cannot write {shown_path(file)}: {shown_path(exc.filename)} is {exc.strerror}; the "
        "workspace's settings are written only inside the workspace, never through a link: "
        "nothing was written"
    )
