"""The settings file as JSON text: read it, edit it keeping other keys byte for byte, write it
atomically. Knows nothing of what the settings mean (that is ``settings.py``)."""

from __future__ import annotations

import json
import os
import stat
import sys
import uuid
from collections.abc import Mapping
from pathlib import Path

from ..errors import ConfigError, value_kind
from ..files.confine import Refused, open_folder, read_file, replace_file


def write_file_atomically(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` so that readers see the old file or the new, never a part.

    ``mode`` gives the new file's permission bits, set before any byte is written; without it
    the file keeps the mode of the one it replaces (a new file: 0666 less the umask). The data
    is written to a temporary file in the same folder, flushed to disk, then renamed over.
    When ``path`` is a symbolic link, the file it points to is replaced and the link stays
    (a settings file kept in a dotfiles repository stays shared).
    """
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    try:
        kept: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        kept = None
    final = mode if mode is not None else kept
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:12]}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    # Born owner-only when the mode is known, then given its bits before the first byte.
    fd = os.open(temp, flags, 0o666 if final is None else 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            if final is not None and hasattr(os, "fchmod"):
                os.fchmod(out.fileno(), final)
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    # Makes the rename itself durable; not possible on every platform, hence best effort.
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_text(file: Path) -> str | None:
    try:
        data = read_file(file)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {file}: {exc.strerror or exc}") from None
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


def raw_entries(file: Path) -> dict[str, tuple[str, str]]:
    """The top-level entries of settings.json as ``key -> (key text, value text)``.

    Other keys are written back with exactly the text they had, so that an edit never
    reformats, re-escapes or re-rounds what belongs to someone else.
    """
    text = read_text(file)
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
    parts = file.relative_to(root).parts
    try:
        folder = open_folder(root, parts[:-1], create=False)
    except Refused as exc:
        raise _through_a_link(file, exc) from None
    except OSError:
        return  # said when it is written, as any other failure to write
    try:
        info = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
    except OSError:
        return
    finally:
        os.close(folder)
    if stat.S_ISLNK(info.st_mode):
        raise _through_a_link(
            file, Refused(0, "it is a link, not a file of the workspace's own", str(file))
        )


def write_entries(file: Path, entries: Mapping[str, tuple[str, str]], *, root: Path) -> None:
    """Write ``entries`` as settings.json ``file`` of the workspace ``root``: atomically, never
    through a link (a settings.json or a .workspace that is one is refused, nothing written:
    a link pushed with the workspace would make us rewrite a file that is not the workspace's)."""
    lines = [f"  {raw_key}: {raw_value}" for raw_key, raw_value in entries.values()]
    text = "{\n" + ",\n".join(lines) + "\n}\n" if lines else "{}\n"
    try:
        replace_file(root, file.relative_to(root).parts, text.encode("utf-8"))
    except Refused as exc:
        raise _through_a_link(file, exc) from None
    except OSError as exc:
        raise ConfigError(f"cannot write {file}: {exc.strerror or exc}") from None


def _through_a_link(file: Path, exc: Refused) -> ConfigError:
    what = (exc.strerror or "").removeprefix("it ")
    return ConfigError(
        f"cannot write {file}: {exc.filename} {what}; the workspace's settings "
        "are written only inside the workspace, never through a link: nothing "
        "was written"
    )
