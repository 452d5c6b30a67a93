"""A setting's value, checked: text (the command line, the environment) parsed by the
setting's type, then every value checked against its row (type, bounds, choices, pattern,
what a URL or a path must be).

Messages name the type a value has, never the value: it could be a misplaced credential.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from .. import DISTRIBUTION
from ..errors import ConfigError, value_kind
from ..files import named
from .credentials import credential_error, looks_like_credential, secret_path_parameter
from .setting_row import Setting

_SURROGATE = re.compile("[\ud800-\udfff]")
_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})

_EXPECTED: dict[str, str] = {
    "string": "a string",
    "url": "an http:// or https:// URL",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "path": "a file path (a string)",
    "output": "a file or folder path (a string)",
}


def parse_text(row: Setting, text: str, subject: str | None = None) -> object:
    """Parse command-line (or environment) text by the setting's type; checking comes after."""
    t = row.type
    subject = subject or row.key
    if t == "boolean":
        word = text.strip().lower()
        if word in _TRUE or word in _FALSE:
            return word in _TRUE
        raise ConfigError(f"{subject} must be true or false (also yes/no, 1/0, on/off)")
    if t == "integer":
        if re.fullmatch(r"\s*[+-]?\d+\s*", text, re.ASCII):
            return int(text)
        raise ConfigError(f"{subject} must be an integer, e.g. {row.default}")
    if t == "number":
        if re.fullmatch(r"\s*[+-]?\d+\s*", text, re.ASCII):
            return int(text)
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{subject} must be a number, e.g. {row.default}") from None
    return text


def check_value(row: Setting, value: object, subject: str, base: Path) -> object:
    """``value`` as its Python type, or ConfigError telling what ``subject`` must be (relative
    paths start at ``base``)."""
    if value is None:
        return None
    wrong = ConfigError(f"{subject} must be {_EXPECTED[row.type]}, not {value_kind(value)}")
    if row.type == "boolean":
        if not isinstance(value, bool):
            raise wrong
        return value
    if row.type in ("integer", "number"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong
        if row.type == "integer" and not isinstance(value, int):
            raise wrong
        return _check_bounds(row, value, subject)
    if not isinstance(value, str):
        raise wrong
    return _check_text(row, value, subject, base)


def _check_text(row: Setting, value: str, subject: str, base: Path) -> object:
    _check_unicode(row, value, subject)
    if not value.strip():
        raise ConfigError(f"{subject} must not be empty")
    if row.key.lower().endswith("secretref") and looks_like_credential(value):
        raise credential_error(subject)
    if row.choices is not None and value not in row.choices:
        raise ConfigError(f"{subject} must be one of: {', '.join(row.choices)}")
    if row.pattern is not None and not re.fullmatch(row.pattern, value):
        raise ConfigError(f"{subject} must match {row.pattern} ({row.pattern_help})")
    if row.type == "url":
        _check_url(value, subject, sent=row.ascii)
    if (row.type == "url" or row.key.endswith("endpoint")) and secret_path_parameter(value):
        raise ConfigError(
            f"{subject} carries credentials (a ;name=value parameter whose name says it holds "
            f"a secret). Keys never go in settings: store the key with `{DISTRIBUTION} secrets "
            "set NAME` and set openlineage.apiKey.secretRef to NAME."
        )
    if row.type == "path":
        path = Path(value).expanduser()
        path = path if path.is_absolute() else base / path
        if named.kind_at(path) != "file":
            raise ConfigError(f"{subject}: no file at {path}")
        return path
    return value


def _check_unicode(row: Setting, value: str, subject: str) -> None:
    """Text is Unicode where it enters: a lone surrogate (``"\\udcff"`` is valid JSON; Python
    reads the bytes of an environment variable that are not UTF-8 as one) has no UTF-8, so no
    request, event or file could carry it. A file name may hold the ones that stand for bytes
    of a name that is not UTF-8 (``os.fsencode`` gives those bytes back), and nothing else."""
    if row.type in ("path", "output"):
        if "\0" in value:  # valid JSON and YAML (\u0000, "\0"); no file name holds one
            where = value.index("\0")
            raise ConfigError(f"{subject} is no file name: character {where + 1} is a NUL")
        try:
            os.fsencode(value)
        except UnicodeEncodeError as exc:
            raise ConfigError(
                f"{subject} is no file name: {_surrogate_at(value, exc.start)}"
            ) from None
        return
    found = _SURROGATE.search(value)
    if found is not None:
        raise ConfigError(f"{subject} is not Unicode text: {_surrogate_at(value, found.start())}")
    if row.ascii and not value.isascii():
        where = next(i for i, c in enumerate(value) if not c.isascii())
        raise ConfigError(
            f"{subject} must be ASCII (it goes into every request as it is): character "
            f"{where + 1} is U+{ord(value[where]):04X}; write a host in its ASCII form (xn--...) "
            "and a path's other characters percent-encoded (%C3%A4 for ä)"
        )


def _surrogate_at(value: str, at: int) -> str:
    return (
        f"character {at + 1} is a lone surrogate (U+{ord(value[at]):04X}), which no file, "
        "request or terminal can take; fix it"
    )


def _check_bounds(row: Setting, value: float, subject: str) -> float:
    """The number if it is in its row's range, else one line naming the range. Compared
    exactly: an integer too large for a float (valid JSON) is out of range, not an
    OverflowError."""
    low, high = row.minimum, row.maximum
    assert low is not None and high is not None, "declared by every numeric row"
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        kind = "an integer" if row.type == "integer" else "a number"
        raise ConfigError(f"{subject} must be {kind} {accepted_range(row)}")
    return float(value) if row.type == "number" else value


def accepted_range(row: Setting) -> str:
    """The values a numeric setting takes, in words: ``from 0.1 to 900``."""
    return f"from {_number(row.minimum)} to {_number(row.maximum)}"


def _number(bound: float | None) -> str:
    return str(int(bound)) if bound is not None and float(bound).is_integer() else f"{bound:g}"


def _check_url(value: str, subject: str, *, sent: bool) -> None:
    from urllib.parse import unquote, urlsplit

    if any(c.isspace() or not c.isprintable() for c in value):
        raise ConfigError(f"{subject} must not contain spaces or control characters")
    try:
        parts = urlsplit(value)
        host, _ = parts.hostname, parts.port
    except ValueError:
        raise ConfigError(f"{subject} is not a valid URL (bad host or port)") from None
    if parts.scheme not in ("http", "https") or not value.lower().startswith(parts.scheme + "://"):
        # A bare host[:port] (localhost:5000) is the usual slip: show what was meant. Only
        # then is the value repeated: it has no room for a credential.
        bare = "://" not in value and re.fullmatch(r"[A-Za-z0-9.-]+(:\d{1,5})?(/[\w./-]*)?", value)
        meant = f"; did you mean http://{value}?" if bare else ""
        raise ConfigError(f"{subject} must start with http:// or https://{meant}")
    if not host:
        raise ConfigError(f"{subject} has no host")
    if sent and not unquote(host).isascii():
        # libcurl resolves the bytes the escapes stand for, while a name compared in Unicode
        # (the origins a key is approved for) may fold them into another: the Kelvin sign
        # %E2%84%AA lower-cases to 'k'. A host that is ASCII is read one way by all.
        raise ConfigError(
            f"{subject}: its host must be ASCII once its %-escapes are decoded; "
            "write it in its ASCII form (xn--...)"
        )
    if parts.port == 0:
        raise ConfigError(f"{subject} has port 0: a port is from 1 to 65535")
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{subject} carries credentials (user or password before '@'). Keys never go in "
            f"settings: store the key with `{DISTRIBUTION} secrets set NAME` and set "
            "openlineage.apiKey.secretRef to NAME."
        )
    if parts.query or parts.fragment:
        raise ConfigError(
            f"{subject} must not carry a query (?...) or fragment (#...); "
            "an API key goes in the secrets store, not in the address"
        )
