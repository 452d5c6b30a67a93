"""The OpenLineage ecosystem's own configuration, read as openlineage-python reads it.

A user of openlineage-python may already have ``OPENLINEAGE__TRANSPORT__URL`` and its kin in
the environment, or an ``openlineage.yml``: found, as that client finds it, at
``$OPENLINEAGE_CONFIG``, else ``./openlineage.yml``, else ``~/.openlineage/openlineage.yml``
(``~``: the home folder of ``files/userdirs.py``, the one ``files/whose.py`` judges).
Its precedence is kept: the file's values over the ``OPENLINEAGE__`` variables. Which of their
keys stand for which of our settings is declared once, with each setting (its row's
``ecosystem`` key: ``setting_row.py``); :func:`given_by` reads them.

Both are the *user's*: they come from the environment and the user's home, never from the
workspace. An ``openlineage.yml`` that lies in a checkout (any: a ``.git`` at or above it), or
where the workspace's checkout may be when it has no ``.git`` (``files/whose.py``), travels
with it, whoever names it (the current folder, ``OPENLINEAGE_CONFIG``, a link in the home
folder): such a file is not read at all (a warning says so, naming it); the workspace speaks
through settings.json. A file of the user's is read as plain data: no anchors or aliases
(nothing there needs them, and a few hundred bytes of them stand for gigabytes, or a loop), at
most :data:`MAX_BYTES`, never a FIFO.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..files import named
from ..files.userdirs import home_dir
from ..files.walk import shown_path
from ..files.whose import Checkouts
from .setting_row import Setting

ENV_PREFIX = "OPENLINEAGE__"
CONFIG_ENV = "OPENLINEAGE_CONFIG"
FILE_NAME = "openlineage.yml"
MAX_BYTES = 1 << 20
"""The largest openlineage.yml read: a few lines do in practice."""


@dataclass(frozen=True)
class Layer:
    """One source of the ecosystem's configuration: its values by path (``transport.url``)
    and, for each, the source to name (``environment (OPENLINEAGE__TRANSPORT__URL)``)."""

    values: dict[str, object] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Ecosystem:
    """The layers, weakest first (the variables, then the file), and what was not read."""

    layers: tuple[Layer, ...]
    warnings: tuple[str, ...] = ()

    def get(self, path: str) -> tuple[object, str] | None:
        """The value in force at ``path`` and its source, if any layer sets it."""
        for layer in reversed(self.layers):
            if path in layer.values:
                return layer.values[path], layer.sources[path]
        return None


NOTHING = Ecosystem(())


def read_ecosystem(environ: Mapping[str, str], workspace: Path | None) -> Ecosystem:
    """The ecosystem's configuration in ``environ`` (and the file it leads to). Nothing is read
    from an empty environment: a library host that hands in none gets none."""
    if not environ:
        return NOTHING
    warnings: list[str] = []
    layers = [_from_variables(environ)]
    found = _config_file(environ, workspace, warnings)
    if found is not None:
        layers.append(_from_file(*found))
    return Ecosystem(tuple(layer for layer in layers if layer.values), tuple(warnings))


def _from_variables(environ: Mapping[str, str]) -> Layer:
    layer = Layer()
    # As openlineage-python: a variable's value is JSON when it parses as JSON, else text; the
    # keys are lower-cased; a JSON object spreads below its variable's path.
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or not environ[name]:
            continue
        path = ".".join(part.lower() for part in name[len(ENV_PREFIX) :].split("__"))
        text = environ[name]
        try:
            value: object = json.loads(text)
        except ValueError:
            value = text
        for leaf, leaf_value in _leaves(path, value):
            layer.values[leaf] = leaf_value
            layer.sources[leaf] = f"environment ({name})"
    return layer


def _config_file(
    environ: Mapping[str, str], workspace: Path | None, warnings: list[str]
) -> tuple[Path, Checkouts] | None:
    """The user's own openlineage.yml, found as openlineage-python finds it, and the
    checkouts it was judged against: a file in a checkout (or where one may be: see
    ``files/whose.py``), or a link into one, is not the user's, whoever names it."""
    checkouts = Checkouts.around(workspace, environ)

    def users(path: Path, named_by: bool = False) -> bool:
        why = checkouts.of_file(path)
        if why is not None:
            shown = shown_path(path)
            what = f"{CONFIG_ENV} names {shown}, which" if named_by else shown
            warnings.append(
                f"{what} lies in {why}, so it travels with it (whoever pushed last wrote "
                "it) and is not read as your openlineage-python configuration (the "
                "workspace's settings are in .workspace/settings.json; name your own, "
                f"outside every checkout, with {CONFIG_ENV})"
            )
        return why is None

    given = environ.get(CONFIG_ENV)
    if given:
        path = Path(given).expanduser()
        if named.kind_at(path) != "file":
            warnings.append(f"{CONFIG_ENV} names {path}, which is no file: not read")
        elif users(path, named_by=True):
            return path, checkouts
    here = Path.cwd() / FILE_NAME
    if named.kind_at(here) == "file" and users(here):
        return here, checkouts
    # The home folder whose.py judges (files/userdirs.py): a HOME of "/" or a relative one
    # names no user's folder (in a container whose "/" is the checkout, /.openlineage is the
    # pusher's), so the user database's is read, as for the config and state folders.
    home = home_dir(environ)
    if home is not None:
        path = home / ".openlineage" / FILE_NAME
        if named.kind_at(path) == "file" and users(path):
            return path, checkouts
    return None


def _from_file(path: Path, checkouts: Checkouts) -> Layer:
    loaded = _load(path, checkouts)
    if loaded is None:
        return Layer()
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: must hold a mapping (transport: ...)")
    layer = Layer()
    try:
        for key, value in loaded.items():
            for leaf, leaf_value in _leaves(str(key).lower(), value):
                layer.values[leaf] = leaf_value
                layer.sources[leaf] = f"{FILE_NAME} ({path})"
    except RecursionError:
        raise ConfigError(_too_deep(path)) from None
    return layer


def _load(path: Path, checkouts: Checkouts) -> object:
    """The YAML document in ``path``, as plain data, or one ConfigError naming the file."""
    import yaml

    try:
        text = named.read(path, checkouts, limit=MAX_BYTES).decode("utf-8")
    except named.Refused as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.what(path)})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: cannot read it (not UTF-8 text)") from None
    try:
        return yaml.load(text, Loader=_plain_loader())  # a SafeLoader: no Python objects
    except _AliasFound as exc:
        raise ConfigError(
            f"{path}:{exc.line}: an alias (*{exc.anchor}): openlineage.yml is "
            "read as plain data, without anchors and aliases (a few hundred "
            "bytes of them can stand for gigabytes); write the values out"
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: not valid YAML") from None
    except RecursionError:
        raise ConfigError(_too_deep(path)) from None
    except Exception:  # PyYAML's constructors raise anything for a tagged or
        # mistyped value (2026-13-45: ValueError, !!timestamp x: AttributeError...)
        raise ConfigError(f"{path}: a value in it cannot be read (not valid YAML data)") from None


def _too_deep(path: Path) -> str:
    return f"{path}: nested too deeply to read (no openlineage.yml is nested like that)"


class _AliasFound(Exception):
    def __init__(self, anchor: str, line: int) -> None:
        super().__init__(anchor)
        self.anchor, self.line = anchor, line


@functools.cache
def _plain_loader() -> type[Any]:
    import yaml

    class PlainLoader(yaml.SafeLoader):
        """YAML's safe loader, refusing every alias (``*name``) when it meets it."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()  # type: ignore[no-untyped-call]
                raise _AliasFound(str(event.anchor), event.start_mark.line + 1)
            return super().compose_node(parent, index)

    return PlainLoader


def _leaves(path: str, value: Any) -> list[tuple[str, object]]:
    if isinstance(value, dict):
        return [
            leaf
            for key, item in value.items()
            for leaf in _leaves(f"{path}.{str(key).lower()}", item)
        ]
    return [(path, value)]


def given_by(ecosystem: Ecosystem, rows: Iterable[Setting]) -> Iterator[tuple[str, object, str]]:
    """(our key, value, source) for each value openlineage-python's configuration gives one of
    ``rows`` (its ``ecosystem`` key), weakest layer first. A value the row's
    ``ecosystem_values`` does not list is not ours (``transport.type: console``...)."""
    mapped = [row for row in rows if row.ecosystem]
    for layer in ecosystem.layers:
        for row in mapped:
            assert row.ecosystem is not None
            value = layer.values.get(row.ecosystem)
            if value is None:
                continue
            if row.ecosystem_values is not None:
                value = dict(row.ecosystem_values).get(value) if isinstance(value, str) else None
                if value is None:
                    continue
            yield row.key, value, layer.sources[row.ecosystem]
