"""The exporter's settings: each declared once, in the group of the part that uses it.

A setting is one field of a :class:`SettingsGroup` dataclass, declared with :func:`setting`:
that one row gives its key in ``.workspace/settings.json``, its type, default, choices, help,
the environment variable that overrides it, and the attribute it is read as. Groups live
beside what they configure (the events here, each destination kind in ``deliver/``); a
:class:`Catalogue` lists the groups, and reading (:func:`load_settings`), editing
(:func:`set_setting`, :func:`unset_setting`) and listing (:func:`describe`) all work from it.

``settings.json`` travels with the workspace (it is committed and shared), so it may only
*name* a secret (``...secretRef``); the value lives in the secrets store. A key that looks like
it holds a secret is refused, and no message here ever repeats a value that could be one.
openlineage-python's own configuration (``OPENLINEAGE__TRANSPORT__URL``..., ``openlineage.yml``)
is read too, as the user's (:data:`ECOSYSTEM` maps its keys onto ours; ``host/ecosystem.py``
reads it). Each value in force knows its source (:meth:`Settings.source`): a setting declared
``user_only`` (it weakens how keys travel) is the user's alone, and ``trust.py`` refuses it
from the workspace (see docs/security.md).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from ..errors import ConfigError, value_kind
from .jsonfile import check_editable, parse_object, raw_entries, read_text, write_entries
from .workspace import Workspace

SettingType = Literal["string", "url", "integer", "number", "boolean", "path", "output"]
"""The kinds of value a setting can hold: ``path`` names a file that must exist, ``output`` a
file or folder to write (it may not exist yet)."""

PREFIX = "openlineage."
"""Every key of this exporter starts so; the other keys belong to other extensions."""

WORKSPACE_SOURCE = "settings.json"
"""The source of a value read from the workspace's settings.json: written by whoever last
pushed to the repository, not necessarily the user."""

SECRET_NAME_PATTERN = r"[A-Za-z0-9._-]{1,128}"
"""What a secret's name may be: the rule of the secrets store and of ``secretRef``."""

_ROW = "openlineage_export.setting"

ECOSYSTEM: dict[str, str] = {
    "transport.type": "openlineage.transport",
    "transport.url": "openlineage.url",
    "transport.endpoint": "openlineage.endpoint",
    "transport.timeout": "openlineage.timeout",
    "transport.compression": "openlineage.compression",
    "transport.verify": "openlineage.tls.verify",
    "transport.topic": "openlineage.kafka.topic",
    "transport.config.bootstrap.servers": "openlineage.kafka.bootstrapServers",
    "transport.config.client.id": "openlineage.kafka.clientId",
    "transport.log_file_path": "openlineage.file.path",
}
"""The keys of openlineage-python's configuration (``OPENLINEAGE__TRANSPORT__URL``, or
``transport: url:`` in ``openlineage.yml``; see ``host/ecosystem.py``) that stand for our
settings. They are the user's (environment, home), so they may set user-only settings and
name the server an API key from the environment goes to."""

ECOSYSTEM_API_KEY = ("transport.auth.api_key", "transport.auth.apikey")
"""Where openlineage-python's configuration holds the API key: used as ``OPENLINEAGE_API_KEY``
is (only for a server the user named), never stored, never shown."""

ECOSYSTEM_TRANSPORTS = ("http", "kafka", "file")
"""The values of ``transport.type`` we have a destination for."""


@dataclass(frozen=True)
class Setting:
    """One setting: its key in settings.json, its type, default and meaning.

    ``minimum``/``maximum`` bound numbers (inclusive) and ``pattern`` is a regular expression a
    string must match whole. ``attribute`` is the field of its group it is read as.
    """

    key: str
    type: SettingType
    default: object
    description: str
    env: str | None = None
    choices: tuple[str, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    pattern_help: str = "letters, digits, '.', '_', '-'; at most 128"
    user_only: bool = False
    """Only the user may set it (environment, command line), never the workspace: it weakens
    how keys travel or which servers are trusted (``trust.py`` enforces it)."""
    attribute: str = ""


def setting(key: str, type: SettingType, default: object, description: str,
            **options: Any) -> Any:
    """Declare one field of a :class:`SettingsGroup` as the setting ``key`` (see :class:`Setting`).

    Typed ``Any`` so that ``timeout: float = setting(...)`` reads as the field's own type.
    """
    row = Setting(key, type, default, description, **options)
    return dataclasses.field(default=default, metadata={_ROW: row})


G = TypeVar("G", bound="SettingsGroup")


class SettingsGroup:
    """Base of a group of settings: a frozen dataclass whose fields come from :func:`setting`."""

    title: ClassVar[str] = ""
    """What the group configures, for ``settings list``."""

    @classmethod
    def rows(cls) -> tuple[Setting, ...]:
        """The group's settings, in declaration order, each knowing its attribute."""
        return tuple(dataclasses.replace(f.metadata[_ROW], attribute=f.name)
                     for f in dataclasses.fields(cls)  # type: ignore[arg-type]
                     if _ROW in f.metadata)

    @classmethod
    def from_settings(cls: type[G], settings: Settings) -> G:
        """The group's values in force."""
        return cls(**{row.attribute: settings.value(row.key) for row in cls.rows()})


@dataclass(frozen=True)
class Catalogue:
    """Every setting the exporter knows, by group, in the order ``settings list`` shows them."""

    groups: tuple[type[SettingsGroup], ...]

    def __iter__(self) -> Iterator[Setting]:
        for group in self.groups:
            yield from group.rows()

    def settings(self, values: Mapping[str, object] | None = None, *,
                 base: Path | None = None) -> Settings:
        """Settings from ``{key: value}`` as settings.json would hold them, checked as
        :func:`load_settings` checks them (relative paths start at ``base``, else the current
        folder); every other key takes its default."""
        return Settings(self).with_values(values or {}, base=base)

    def get(self, key: str) -> Setting | None:
        """The setting declared with ``key``, if any."""
        return next((row for row in self if row.key == key), None)

    def declared(self, key: str, where: str | None) -> Setting:
        """The setting ``key``; a ConfigError naming ``where`` when it is unknown or secret."""
        row = self.get(key)
        if row is not None:
            return row
        if looks_like_secret_key(key):
            raise _secret_key_error(key, where)
        known = {s.key.lower(): s.key for s in self}
        close = difflib.get_close_matches(key.lower(), list(known), n=1, cutoff=0.6)
        hint = f"; did you mean '{known[close[0]]}'?" if close else ""
        raise ConfigError(f"{_at(where)}unknown setting '{key}'{hint} "
                          "(openlineage-export settings list shows them all)")


@dataclass(frozen=True)
class Settings:
    """The settings in force, resolved: defaults, then settings.json, then the environment.

    ``values`` holds the checked value of every key that is set; the rest take their default.
    Read a group with :meth:`of`, e.g. ``settings.of(EventSettings).namespace``.
    """

    catalogue: Catalogue
    values: Mapping[str, object] = dataclasses.field(default_factory=dict)
    sources: Mapping[str, str] = dataclasses.field(default_factory=dict, compare=False)
    """Where each set value comes from: ``settings.json`` (:data:`WORKSPACE_SOURCE`),
    ``environment (VAR)``, ``openlineage.yml (PATH)`` or ``given`` (by the host: the command
    line)."""
    warnings: tuple[str, ...] = dataclasses.field(default=(), compare=False)
    """Worth telling once: two sources that disagree on a value, a file not read."""

    def of(self, group: type[G]) -> G:
        """The values of one group of settings."""
        return group.from_settings(self)

    def value(self, key: str) -> object:
        """The value in force of ``key`` (its default when unset)."""
        if key in self.values:
            return self.values[key]
        row = self.catalogue.declared(key, None)
        return row.default

    def source(self, key: str) -> str:
        """Where the value in force of ``key`` comes from."""
        return self.sources.get(key, "default")

    def with_values(self, values: Mapping[str, object], *, base: Path | None = None,
                    subjects: Mapping[str, str] | None = None) -> Settings:
        """These settings with ``values`` (as settings.json would hold them) set on top;
        ``subjects`` names a value in errors by what the user typed (``--url``), not its key."""
        origin = Path.cwd() if base is None else base
        named = subjects or {}
        checked = {key: _check(self.catalogue.declared(key, None), value, named.get(key, key),
                               origin)
                   for key, value in values.items()}
        merged = {**self.values, **{k: v for k, v in checked.items() if v is not None}}
        for key, value in checked.items():
            if value is None:
                merged.pop(key, None)
        return Settings(self.catalogue, merged, {**self.sources, **dict.fromkeys(values, "given")},
                        self.warnings)


@dataclass(frozen=True)
class EventSettings(SettingsGroup):
    """What shapes the events themselves, whatever the destination."""

    title: ClassVar[str] = "events"

    namespace: str | None = setting(
        "openlineage.namespace", "string", None,
        "Namespace of the jobs; defaults to the workspace name from graph.json.",
        env="OPENLINEAGE_NAMESPACE", pattern=r"[A-Za-z0-9:/_.@+\-]{1,1024}",
        pattern_help="letters, digits and : / _ . @ + -, as lineage servers accept them; "
                     "at most 1024")
    source_repository_url: str | None = setting(
        "openlineage.sourceRepository.url", "url", None,
        "Git repository URL used to build the sourceCodeLocation job facet from each stage's "
        "source path.")
    source_repository_version: str | None = setting(
        "openlineage.sourceRepository.version", "string", None,
        "Branch, tag or commit of openlineage.sourceRepository.url.")
    server: str = setting(
        "openlineage.server", "string", "auto",
        "Whose OpenLineage converter the events are shaped for. datahub: DataHub's, so that it "
        "keeps every run and dataset (docs/datahub.md); generic: any other server (Marquez...); "
        "auto: datahub when openlineage.endpoint is DataHub's "
        "(openapi/openlineage/api/v1/lineage), else generic. Set it for a proxy in front of "
        "DataHub.", env="OPENLINEAGE_SERVER", choices=("auto", "datahub", "generic"))


def load_settings(workspace: Path | Workspace, catalogue: Catalogue,
                  environ: Mapping[str, str] | None = None) -> Settings:
    """Read, check and resolve the settings of ``workspace``.

    A missing settings.json means every default. When ``environ`` is given (the CLI passes
    ``os.environ``), the ecosystem's configuration (:data:`ECOSYSTEM`) and then the variables
    the catalogue declares override the file; empty ones count as unset. A JSON ``null`` also
    counts as unset. Keys of other extensions are ignored.

    Raises WorkspaceError when the folder is no workspace, ConfigError for any value, key or
    file we cannot use.
    """
    ws = Workspace.at(workspace)
    file = ws.settings_file
    raw = parse_object(read_text(file), file)
    mine = [key for key in raw if key.startswith(PREFIX)]
    # Secret-looking keys first: they are the most urgent thing to tell.
    for key in mine:
        if catalogue.get(key) is None and looks_like_secret_key(key):
            raise _secret_key_error(key, str(file))
    # Every value of settings.json is checked, even one the user's environment overrides.
    from_file = {key: _check(catalogue.declared(key, str(file)), raw[key], f"{key} in {file}",
                             ws.root) for key in mine}
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    found = _found(catalogue, raw, environ, ws.root)
    for row in catalogue:
        if not found[row.key]:
            continue
        value, source = found[row.key][-1]
        if source == WORKSPACE_SOURCE:
            checked = from_file[row.key]
        elif source == f"environment ({row.env})":
            subject = f"the environment variable {row.env} ({row.key})"
            checked = _check(row, _from_text(row, str(value), subject), subject, ws.root)
        else:
            checked = _check(row, value, f"{row.key} from {source}", ws.root)
        if checked is not None:
            values[row.key], sources[row.key] = checked, source
    return Settings(catalogue, values, sources, _disagreements(found) + _ecosystem_warnings(
        environ, ws.root))


def _found(catalogue: Catalogue, raw: Mapping[str, object], environ: Mapping[str, str] | None,
           root: Path) -> dict[str, list[tuple[object, str]]]:
    """Every value each setting is given, unchecked, with its source, weakest first:
    settings.json, the ecosystem's variables, its openlineage.yml, our own variables."""
    from .ecosystem import read_ecosystem

    found: dict[str, list[tuple[object, str]]] = {row.key: [] for row in catalogue}
    for key, value in raw.items():
        if key in found and value is not None:
            found[key].append((value, WORKSPACE_SOURCE))
    if environ is None:
        return found
    ecosystem = read_ecosystem(environ, root)
    for layer in ecosystem.layers:
        for path, key in ECOSYSTEM.items():
            if path in layer.values and key in found and layer.values[path] is not None:
                value = layer.values[path]
                if path == "transport.type" and value not in ECOSYSTEM_TRANSPORTS:
                    continue  # console, composite...: not a destination of ours
                found[key].append((value, layer.sources[path]))
    for row in catalogue:
        if row.env and environ.get(row.env):
            found[row.key].append((environ[row.env], f"environment ({row.env})"))
    return found


def _disagreements(found: Mapping[str, list[tuple[object, str]]]) -> tuple[str, ...]:
    """One warning per setting two sources give different values (never the values: one
    could be a misplaced credential)."""
    warnings = []
    for key, given in found.items():
        # Our own variable over settings.json is what it is for (a CI job's server): said only
        # when openlineage-python's configuration is one of the voices.
        if not any(source.startswith(_ECOSYSTEM_SOURCES) for _, source in given):
            continue
        if len({json.dumps(value, sort_keys=True, default=str) for value, _ in given}) > 1:
            used = given[-1][1]
            others = ", ".join(source for _, source in given[:-1])
            warnings.append(f"{key}: {used} and {others} disagree; the value from {used} is "
                            "used")
    return tuple(warnings)


_ECOSYSTEM_SOURCES = ("environment (OPENLINEAGE__", "openlineage.yml (")


def _ecosystem_warnings(environ: Mapping[str, str] | None, root: Path) -> tuple[str, ...]:
    from .ecosystem import read_ecosystem

    return read_ecosystem(environ, root).warnings if environ is not None else ()


def looks_like_secret_key(key: str) -> bool:
    """Whether an ``openlineage.*`` key looks like it would hold a credential itself."""
    if not key.startswith(PREFIX) or key.lower().endswith("secretref"):
        return False
    segments = key.removeprefix(PREFIX).lower().split(".")
    return any(segment.endswith(_SECRET_ENDINGS) for segment in segments)


_KEY_PREFIXES = ("sk-", "sk_", "pk_live", "pk_test", "rk_live", "ghp_", "gho_", "ghu_", "ghs_",
                 "ghr_", "github_pat_", "glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "AKIA",
                 "ASIA", "AIza", "hf_", "npm_", "pypi-", "dapi", "shpat_", "SG.")
"""How well-known API keys and tokens begin (OpenAI, Stripe, GitHub, GitLab, Slack, AWS, Google,
Hugging Face, npm, PyPI, Databricks, Shopify, SendGrid)."""


def looks_like_credential(text: str) -> bool:
    """Whether a *name* (a secret's, a ``secretRef``) looks like a key itself: a known key
    prefix, a JSON web token, or a long random-looking run of letters and digits.

    A name says what a secret is for (``marquez-prod``); a key typed there would be stored in
    settings.json, which travels with the workspace.
    """
    if len(text) >= 16 and text.startswith(_KEY_PREFIXES):
        return True
    if text.startswith("eyJ") and text.count(".") == 2:
        return True
    for token in re.split(r"[-_.]", text):
        if len(token) < 20 or not re.search(r"\d", token) or not re.search(r"[A-Za-z]", token):
            continue
        switches = len(re.findall(r"(?<=\d)[A-Za-z]|(?<=[A-Za-z])\d", token))
        if switches >= 3 or len(token) >= 32:
            return True
    return False


def credential_error(subject: str) -> ConfigError:
    """The refusal of a name that looks like a key (never repeating it)."""
    return ConfigError(
        f"{subject} looks like a key itself, not the name of one, and was not stored. Keys "
        f"never go in settings (they travel with the workspace): store the key with "
        f"`openlineage-export secrets set NAME` (NAME says what it is for, e.g. marquez-prod) "
        f"and use NAME here.")


def read_raw(workspace: Path | Workspace) -> dict[str, object]:
    """The settings.json object of ``workspace`` as it is, unchecked ({} when missing)."""
    file = Workspace.at(workspace).settings_file
    return parse_object(read_text(file), file)


def set_setting(workspace: Path | Workspace, catalogue: Catalogue, key: str,
                value_text: str) -> object:
    """Store one setting, given as text, in settings.json and return the value stored.

    ``value_text`` is parsed by the key's type (booleans: true/false, yes/no, 1/0, on/off) and
    checked as :func:`load_settings` checks it. Every other key keeps its place and its text.
    """
    ws = Workspace.at(workspace)
    row = catalogue.declared(key, None)
    if row.user_only:
        raise user_only_error(row, "is not stored in the workspace's settings.json",
                              present=False)
    # What the user wrote is stored (a relative path stays relative, 30 stays 30).
    value = _from_text(row, value_text)
    _check(row, value, key, ws.root)
    file = ws.settings_file
    check_editable(ws.root, file)
    entries = raw_entries(file)
    raw_key = entries[key][0] if key in entries else json.dumps(key, ensure_ascii=False)
    entries[key] = (raw_key, json.dumps(value, ensure_ascii=False))
    write_entries(file, entries, root=ws.root)
    return value


def unset_setting(workspace: Path | Workspace, catalogue: Catalogue, key: str) -> bool:
    """Remove ``key`` from settings.json; True if it was there.

    Any ``openlineage.*`` key present in the file can be removed, so that a misspelled or a
    secret-holding key can be got rid of. Keys of other extensions are refused.
    """
    ws = Workspace.at(workspace)
    if not key.startswith(PREFIX):
        raise ConfigError(f"'{key}' is not an openlineage.* setting; keys of other extensions "
                          "are left alone")
    file = ws.settings_file
    check_editable(ws.root, file)
    entries = raw_entries(file)
    if key not in entries:
        if catalogue.get(key) is not None or looks_like_secret_key(key):
            return False
        catalogue.declared(key, str(file))  # raises: unknown, with a suggestion
    del entries[key]
    write_entries(file, entries, root=ws.root)
    return True


def describe(catalogue: Catalogue, workspace: Path | Workspace | None = None,
             environ: Mapping[str, str] | None = None) -> list[dict[str, object]]:
    """One row per setting for ``settings list``.

    Each row has ``key``, ``group``, ``type``, ``default``, ``description``, ``env`` and
    ``choices``, plus ``value`` and ``source`` ("default", "settings.json", "environment
    (VAR)", "openlineage.yml (PATH)"): the value in force, unchecked, given the workspace and
    environment (see :func:`load_settings` for the order).
    """
    raw = read_raw(workspace) if workspace is not None else {}
    root = Workspace.at(workspace).root if workspace is not None else None
    found = (_found(catalogue, raw, environ, root) if root is not None
             else {row.key: [] for row in catalogue})
    rows: list[dict[str, object]] = []
    for group in catalogue.groups:
        for s in group.rows():
            value, source = found[s.key][-1] if found[s.key] else (s.default, "default")
            rows.append({"key": s.key, "group": group.title, "type": s.type,
                         "default": s.default, "description": s.description, "env": s.env,
                         "choices": s.choices, "value": shown(s, value), "source": source})
    return rows


def shown(row: Setting, value: object) -> object:
    """``value`` as it may be shown: a password in an address (``user:PASSWORD@``) and the
    query and fragment of an address (``?api_key=...``) masked, whatever the source."""
    if not isinstance(value, str) or (row.type != "url" and not row.key.endswith("endpoint")):
        return value
    value = re.sub(r"\?.*|#.*", lambda m: m.group(0)[0] + "***", value, flags=re.DOTALL)
    return re.sub(r"^([^:/?#]*://[^/?#@]*?:)[^/?#]*@", r"\1***@", value)


def user_only_error(row: Setting, what: str, *, present: bool = True) -> ConfigError:
    """The refusal of a user-only setting from (``present``) or into the workspace, saying how
    the user sets it."""
    how = f"set {row.env} in your environment" if row.env else "it has no other source"
    remove = (f" (and remove it from settings.json: openlineage-export settings unset "
              f"{row.key})" if present else "")
    return ConfigError(
        f"{row.key} {what}: it weakens how keys travel, and settings.json travels with the "
        f"workspace, so only you may set it: {how}{remove}")


# Lower-cased endings of a key segment that would hold a credential itself.
_SECRET_ENDINGS = ("apikey", "api_key", "token", "password", "passwd", "secret")
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


def _secret_key_error(key: str, where: str | None) -> ConfigError:
    # Never the value: the point of this error is that it may be a real credential.
    remove = f"Remove it (openlineage-export settings unset {key}), store" if where else "Store"
    ref = ("openlineage.kafka.sasl.password.secretRef" if key.startswith(PREFIX + "kafka.")
           else "openlineage.apiKey.secretRef")
    return ConfigError(
        f"{_at(where)}'{key}' looks like it holds a secret. Keys never go in settings (they "
        f"travel with the workspace). {remove} the key with `openlineage-export secrets set "
        f"NAME` and set {ref} to NAME."
    )


def _at(where: str | None) -> str:
    return f"{where}: " if where else ""


def _from_text(row: Setting, text: str, subject: str | None = None) -> object:
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


def _check(row: Setting, value: object, subject: str, base: Path) -> object:
    """``value`` as its Python type, or ConfigError telling what ``subject`` must be.

    Messages name the type a value has, never the value: it could be a misplaced credential.
    """
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
    if not value.strip():
        raise ConfigError(f"{subject} must not be empty")
    if row.key.lower().endswith("secretref") and looks_like_credential(value):
        raise credential_error(subject)
    if row.choices is not None and value not in row.choices:
        raise ConfigError(f"{subject} must be one of: {', '.join(row.choices)}")
    if row.pattern is not None and not re.fullmatch(row.pattern, value):
        raise ConfigError(f"{subject} must match {row.pattern} ({row.pattern_help})")
    if row.type == "url":
        _check_url(value, subject)
    if row.type == "path":
        path = Path(value).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise ConfigError(f"{subject}: no file at {path}")
        return path
    return value


def _check_bounds(row: Setting, value: float, subject: str) -> float:
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer no float can hold (over 308 digits): valid JSON
        raise ConfigError(f"{subject} is a number too large for any setting") from None
    if not finite:
        raise ConfigError(f"{subject} must be a finite number")
    low, high = row.minimum, row.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            bounds = f"from {low:g} to {high:g}"
        else:
            bounds = f"at least {low:g}" if low is not None else f"at most {high:g}"
        raise ConfigError(f"{subject} must be {bounds}")
    return float(value) if row.type == "number" else value


def _check_url(value: str, subject: str) -> None:
    from urllib.parse import urlsplit

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
    if parts.username is not None or parts.password is not None:
        raise ConfigError(
            f"{subject} carries credentials (user or password before '@'). Keys never go in "
            "settings: store the key with `openlineage-export secrets set NAME` and set "
            "openlineage.apiKey.secretRef to NAME."
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"{subject} must not carry a query (?...) or fragment (#...); "
                          "an API key goes in the secrets store, not in the address")
