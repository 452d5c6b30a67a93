"""The exporter's settings: the catalogue of every setting, and the values in force.

Each setting is declared once, as one row in the group of the part that uses it
(``setting_row.py``); a :class:`Catalogue` lists the groups, and reading
(:func:`load_settings`), listing (:func:`describe`) and editing (``settings_file.py``) all work
from it. Values are checked by ``setting_values.py``.

``settings.json`` travels with the workspace (it is committed and shared), so it may only
*name* a secret (``...secretRef``); the value lives in the secrets store. A key that looks like
it holds a secret is refused (``credentials.py``), and no message here ever repeats a value that
could be one. openlineage-python's own configuration (``OPENLINEAGE__TRANSPORT__URL``...,
``openlineage.yml``) is read too, as the user's (each row's ``ecosystem`` key names its key
there; ``host/ecosystem.py`` reads it). Each value in force knows its source
(:meth:`Settings.source`): a setting declared ``user_only`` (it weakens how keys travel) is the
user's alone, and ``guards/trust.py`` refuses it from the workspace (see docs/security.md).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TypeVar

from .. import DISTRIBUTION
from ..errors import ConfigError
from .credentials import (
    PREFIX,
    at,
    looks_like_secret_key,
    secret_key_error,
    secret_path_parameter,
)
from .ecosystem import given_by, read_ecosystem
from .jsonfile import parse_object, read_text
from .setting_row import Setting, SettingsGroup, setting
from .setting_values import check_value, parse_text
from .workspace import Workspace

WORKSPACE_SOURCE = "settings.json"
"""The source of a value read from the workspace's settings.json: written by whoever last
pushed to the repository, not necessarily the user."""

G = TypeVar("G", bound=SettingsGroup)


@dataclass(frozen=True)
class Catalogue:
    """Every setting the exporter knows, by group, in the order ``settings list`` shows them."""

    groups: tuple[type[SettingsGroup], ...]

    def __iter__(self) -> Iterator[Setting]:
        for group in self.groups:
            yield from group.rows()

    def settings(
        self, values: Mapping[str, object] | None = None, *, base: Path | None = None
    ) -> Settings:
        """Settings from ``{key: value}`` as settings.json would hold them, checked as
        :func:`load_settings` checks them (relative paths start at ``base``, else the current
        folder); every other key takes its default."""
        return Settings(self).with_values(values or {}, base=base)

    @property
    def secret_refs(self) -> list[str]:
        """The settings that name a secret in the store (``...secretRef``), in order."""
        return [row.key for row in self if row.key.lower().endswith("secretref")]

    def get(self, key: str) -> Setting | None:
        """The setting declared with ``key``, if any."""
        return next((row for row in self if row.key == key), None)

    def declared(self, key: str, where: str | None) -> Setting:
        """The setting ``key``; a ConfigError naming ``where`` when it is unknown or secret."""
        row = self.get(key)
        if row is not None:
            return row
        if looks_like_secret_key(key):
            raise secret_key_error(key, where, self.secret_refs)
        known = {s.key.lower(): s.key for s in self}
        close = difflib.get_close_matches(key.lower(), list(known), n=1, cutoff=0.6)
        hint = f"; did you mean '{known[close[0]]}'?" if close else ""
        raise ConfigError(
            f"{at(where)}unknown setting '{key}'{hint} "
            f"({DISTRIBUTION} settings list shows them all)"
        )


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

    def with_values(
        self,
        values: Mapping[str, object],
        *,
        base: Path | None = None,
        subjects: Mapping[str, str] | None = None,
    ) -> Settings:
        """These settings with ``values`` (as settings.json would hold them) set on top;
        ``subjects`` names a value in errors by what the user typed (``--url``), not its key."""
        origin = Path.cwd() if base is None else base
        named = subjects or {}
        checked = {
            key: check_value(self.catalogue.declared(key, None), value, named.get(key, key), origin)
            for key, value in values.items()
        }
        merged = {**self.values, **{k: v for k, v in checked.items() if v is not None}}
        for key, value in checked.items():
            if value is None:
                merged.pop(key, None)
        return Settings(
            self.catalogue,
            merged,
            {**self.sources, **dict.fromkeys(values, "given")},
            self.warnings,
        )


@dataclass(frozen=True)
class EventSettings(SettingsGroup):
    """What shapes the events themselves, whatever the destination."""

    title: ClassVar[str] = "events"

    namespace: str | None = setting(
        "openlineage.namespace",
        "string",
        None,
        "Namespace of the jobs; defaults to the workspace name from graph.json.",
        env="OPENLINEAGE_NAMESPACE",
        pattern=r"[A-Za-z0-9:/_.@+\-]{1,1024}",
        pattern_help="letters, digits and : / _ . @ + -, as lineage servers accept them; "
        "at most 1024",
    )
    source_repository_url: str | None = setting(
        "openlineage.sourceRepository.url",
        "url",
        None,
        "Git repository URL used to build the sourceCodeLocation job facet from each stage's "
        "source path.",
    )
    source_repository_version: str | None = setting(
        "openlineage.sourceRepository.version",
        "string",
        None,
        "Branch, tag or commit of openlineage.sourceRepository.url.",
    )


def load_settings(
    workspace: Path | Workspace, catalogue: Catalogue, environ: Mapping[str, str] | None = None
) -> Settings:
    """Read, check and resolve the settings of ``workspace``.

    A missing settings.json means every default. When ``environ`` is given (the CLI passes
    ``os.environ``), openlineage-python's configuration (each row's ``ecosystem`` key) and
    then the variables the catalogue declares override the file; empty ones count as unset. A
    JSON ``null`` also counts as unset. Keys of other extensions are ignored.

    Raises WorkspaceError when the folder is no workspace, ConfigError for any value, key or
    file we cannot use.
    """
    ws = Workspace.at(workspace)
    file = ws.settings_file
    raw = parse_object(read_text(file, root=ws.root), file)
    mine = [key for key in raw if key.startswith(PREFIX)]
    # Secret-looking keys first: they are the most urgent thing to tell.
    for key in mine:
        if catalogue.get(key) is None and looks_like_secret_key(key):
            raise secret_key_error(key, str(file), catalogue.secret_refs)
    # Every value of settings.json is checked, even one the user's environment overrides.
    from_file = {
        key: check_value(catalogue.declared(key, str(file)), raw[key], f"{key} in {file}", ws.root)
        for key in mine
    }
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
            checked = check_value(row, parse_text(row, str(value), subject), subject, ws.root)
        else:
            checked = check_value(row, value, f"{row.key} from {source}", ws.root)
        if checked is not None:
            values[row.key], sources[row.key] = checked, source
    return Settings(
        catalogue, values, sources, _disagreements(found) + _ecosystem_warnings(environ, ws.root)
    )


def _found(
    catalogue: Catalogue, raw: Mapping[str, object], environ: Mapping[str, str] | None, root: Path
) -> dict[str, list[tuple[object, str]]]:
    """Every value each setting is given, unchecked, with its source, weakest first:
    settings.json, the ecosystem's variables, its openlineage.yml, our own variables."""
    found: dict[str, list[tuple[object, str]]] = {row.key: [] for row in catalogue}
    for key, value in raw.items():
        if key in found and value is not None:
            found[key].append((value, WORKSPACE_SOURCE))
    if environ is None:
        return found
    for key, value, source in given_by(read_ecosystem(environ, root), catalogue):
        found[key].append((value, source))
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
            warnings.append(f"{key}: {used} and {others} disagree; the value from {used} is used")
    return tuple(warnings)


_ECOSYSTEM_SOURCES = ("environment (OPENLINEAGE__", "openlineage.yml (")


def _ecosystem_warnings(environ: Mapping[str, str] | None, root: Path) -> tuple[str, ...]:
    return read_ecosystem(environ, root).warnings if environ is not None else ()


def read_raw(workspace: Path | Workspace) -> dict[str, object]:
    """The settings.json object of ``workspace`` as it is, unchecked ({} when missing)."""
    ws = Workspace.at(workspace)
    return parse_object(read_text(ws.settings_file, root=ws.root), ws.settings_file)


def describe(
    catalogue: Catalogue,
    workspace: Path | Workspace | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """One row per setting for ``settings list``.

    Each row has ``key``, ``group``, ``type``, ``default``, ``description``, ``env`` and
    ``choices``, plus ``value`` and ``source`` ("default", "settings.json", "environment
    (VAR)", "openlineage.yml (PATH)"): the value in force, unchecked, given the workspace and
    environment (see :func:`load_settings` for the order).
    """
    raw = read_raw(workspace) if workspace is not None else {}
    root = Workspace.at(workspace).root if workspace is not None else None
    found = (
        _found(catalogue, raw, environ, root)
        if root is not None
        else {row.key: [] for row in catalogue}
    )
    rows: list[dict[str, object]] = []
    for group in catalogue.groups:
        for s in group.rows():
            value, source = found[s.key][-1] if found[s.key] else (s.default, "default")
            rows.append(
                {
                    "key": s.key,
                    "group": group.title,
                    "type": s.type,
                    "default": s.default,
                    "description": s.description,
                    "env": s.env,
                    "choices": s.choices,
                    "value": shown(s, value),
                    "source": source,
                }
            )
    return rows


def shown(row: Setting, value: object) -> object:
    """``value`` as it may be shown: a password in an address (``user:PASSWORD@``, in a url or
    in any entry of a list such as the Kafka brokers) and the query and fragment of an
    address (``?api_key=...``) masked, whatever the source. Linear in the value: a pattern
    that looked for the ``@`` from every ``:`` took hours on a url of a million ``:``."""
    if not isinstance(value, str):
        return value
    if row.type == "url" or row.key.endswith("endpoint"):
        cut = min((at for at in (value.find("?"), value.find("#")) if at >= 0), default=-1)
        if cut >= 0:
            value = value[: cut + 1] + "***"
        secret = secret_path_parameter(value)
        if secret is not None:  # refused when read; shown so, so that it can be found
            value = value[: secret[0]] + ";***"
        return _login_masked(value, whole=True)
    if row.type != "string" or "@" not in value:
        return value
    return ",".join(_login_masked(entry, whole="://" in entry) for entry in value.split(","))


def _login_masked(address: str, *, whole: bool = False) -> str:
    """``address`` with the password of its userinfo (``scheme://user:PASSWORD@host``, or
    ``user:PASSWORD@host`` without a scheme) shown as ``***``; with ``whole``, a userinfo with
    no ``:`` (a token alone, ``https://TOKEN@host``, or ``user%3APASSWORD@``) all ``***``."""
    scheme = address.find("://")
    start = scheme + 3 if scheme >= 0 else 0
    end = min((at for at in (address.find(c, start) for c in "/?#") if at >= 0), default=-1)
    authority = address[start:] if end < 0 else address[start:end]
    at = authority.rfind("@")
    colon = authority.find(":", 0, max(at, 0))
    if at < 0 or (colon < 0 and not whole):
        return address
    return address[: start + colon + 1] + "***" + address[start + at :]


def user_only_error(row: Setting, what: str, *, present: bool = True) -> ConfigError:
    """The refusal of a user-only setting from (``present``) or into the workspace, saying how
    the user sets it."""
    how = f"set {row.env} in your environment" if row.env else "it has no other source"
    remove = (
        f" (and remove it from settings.json: {DISTRIBUTION} settings unset {row.key})"
        if present
        else ""
    )
    return ConfigError(
        f"{row.key} {what}: it weakens how keys travel, and settings.json travels with the "
        f"workspace, so only you may set it: {how}{remove}"
    )
