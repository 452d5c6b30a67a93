"""The OpenLineage ecosystem's own configuration, read as openlineage-python reads it.

A user of openlineage-python may already have ``OPENLINEAGE__TRANSPORT__URL`` and its kin in
the environment, or an ``openlineage.yml``: found, as that client finds it, at
``$OPENLINEAGE_CONFIG``, else ``./openlineage.yml``, else ``~/.openlineage/openlineage.yml``.
Its precedence is kept: the file's values over the ``OPENLINEAGE__`` variables. Which of their
keys stand for which of our settings is declared once, with each setting (its row's
``ecosystem`` key: ``setting_row.py``); :func:`given_by` reads them.

Both are the *user's*: they come from the environment and the user's home, never from the
workspace. An ``openlineage.yml`` in the current folder that lies inside the workspace travels
with it, so it is not read (a warning says so): the workspace speaks through settings.json.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .setting_row import Setting

ENV_PREFIX = "OPENLINEAGE__"
CONFIG_ENV = "OPENLINEAGE_CONFIG"
FILE_NAME = "openlineage.yml"


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
    file = _config_file(environ, workspace, warnings)
    if file is not None:
        layers.append(_from_file(file))
    return Ecosystem(tuple(layer for layer in layers if layer.values), tuple(warnings))


def _from_variables(environ: Mapping[str, str]) -> Layer:
    layer = Layer()
    # As openlineage-python: a variable's value is JSON when it parses as JSON, else text; the
    # keys are lower-cased; a JSON object spreads below its variable's path.
    for name in sorted(environ):
        if not name.startswith(ENV_PREFIX) or not environ[name]:
            continue
        path = ".".join(part.lower() for part in name[len(ENV_PREFIX):].split("__"))
        text = environ[name]
        try:
            value: object = json.loads(text)
        except ValueError:
            value = text
        for leaf, leaf_value in _leaves(path, value):
            layer.values[leaf] = leaf_value
            layer.sources[leaf] = f"environment ({name})"
    return layer


def _config_file(environ: Mapping[str, str], workspace: Path | None,
                 warnings: list[str]) -> Path | None:
    given = environ.get(CONFIG_ENV)
    if given:
        path = Path(given).expanduser()
        if path.is_file():
            return path
        warnings.append(f"{CONFIG_ENV} names {path}, which is no file: not read")
    here = Path.cwd() / FILE_NAME
    if here.is_file():
        if workspace is not None and here.resolve().is_relative_to(workspace.resolve()):
            warnings.append(f"{here} is inside the workspace, so it travels with it and is not "
                            "read (the workspace's settings are in .workspace/settings.json)")
        else:
            return here
    home = environ.get("HOME")
    if home:
        path = Path(home) / ".openlineage" / FILE_NAME
        if path.is_file():
            return path
    return None


def _from_file(path: Path) -> Layer:
    import yaml

    try:
        loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.__class__.__name__})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{where}: not valid YAML") from None
    if loaded is None:
        return Layer()
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: must hold a mapping (transport: ...)")
    layer = Layer()
    for key, value in loaded.items():
        for leaf, leaf_value in _leaves(str(key).lower(), value):
            layer.values[leaf] = leaf_value
            layer.sources[leaf] = f"{FILE_NAME} ({path})"
    return layer


def _leaves(path: str, value: Any) -> list[tuple[str, object]]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items()
                for leaf in _leaves(f"{path}.{str(key).lower()}", item)]
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
