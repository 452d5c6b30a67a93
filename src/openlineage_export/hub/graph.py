"""Read ``graph.json``: the pipelines and stages the editor holds."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ..errors import WorkspaceError
from ..files.tree import WorkspaceTree
from ..files.walk import Refused
from .model import BadEntry, Graph, Pipeline, Stage, quoted

GRAPH_FORMAT = "lineage-hub/graph@1"
NOT_UNICODE = "is not Unicode text (a byte that is no UTF-8, or a lone surrogate)"
_STRAY = re.compile("[\ud800-\udfff]")


MAX_BYTES = 256 * 1024 * 1024
"""The largest graph.json read: a graph of tens of thousands of stages takes a few MB, and a
file of a GiB (of blanks: a megabyte of git objects) would take GiBs of memory to parse."""


def read_graph(
    path: Path, display: str, on_bad: Callable[[BadEntry], None], *, root: Path | None = None
) -> Graph:
    """Load the graph ``path``, walked from the workspace root ``root`` (no link below it
    followed; None: from the graph's own folder, whose path the caller trusts). A broken,
    linked or oversized file is a :class:`WorkspaceError`, a broken entry a bad entry."""
    tree = WorkspaceTree(root if root is not None else path.parent)
    try:
        raw = tree.read(path.relative_to(tree.root).parts, limit=MAX_BYTES)
    except FileNotFoundError:
        raise WorkspaceError(
            f"{display} not found: this folder is not a workspace with a Lineage hub graph"
        ) from None
    except Refused as exc:
        # Said as what it is, the link included: one that leaves the workspace would have us
        # read (and send) the user's other files.
        raise WorkspaceError(f"cannot read {display} ({exc.what(path)})") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot read {display} ({exc.strerror or exc})") from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        data = _not_all_unicode(raw, display, exc)
    if not isinstance(data, dict):
        raise WorkspaceError(f"{display} must hold a JSON object")
    fmt = data.get("format")
    if fmt is not None and fmt != GRAPH_FORMAT:
        raise WorkspaceError(f"{display} has format {fmt!r}; this exporter reads {GRAPH_FORMAT!r}")
    workspace = data.get("workspace")
    name = workspace.get("name") if isinstance(workspace, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise WorkspaceError(f"{display} has no workspace name ('workspace.name')")
    if _STRAY.search(name):
        raise WorkspaceError(f"{display}: 'workspace.name' {NOT_UNICODE}")
    pipelines_raw = data.get("pipelines", [])
    if not isinstance(pipelines_raw, list):
        raise WorkspaceError(f"{display}: 'pipelines' must be a list")
    pipelines: list[Pipeline] = []
    seen: set[str] = set()
    for i, item in enumerate(pipelines_raw):
        try:
            pipeline = _pipeline(item, f"pipelines[{i}]")
        except ValueError as exc:
            on_bad(BadEntry(display, 0, str(exc)))
            continue
        if pipeline.id in seen:
            on_bad(
                BadEntry(
                    display, 0, f"pipelines[{i}]: pipeline id {quoted(pipeline.id)} appears twice"
                )
            )
            continue
        seen.add(pipeline.id)
        pipelines.append(pipeline)
    return Graph(workspace_name=name, pipelines=tuple(pipelines))


def _not_all_unicode(raw: bytes, display: str, exc: orjson.JSONDecodeError) -> object:
    """A graph orjson refused: JSON whose text is not all Unicode (a byte that is no UTF-8, a
    lone surrogate ``\\udcff``) is read by Python's reader, each such character kept as a lone
    surrogate, so that only the pipelines holding one are bad entries; anything else is no
    JSON, as orjson said."""
    try:
        return json.loads(raw.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        raise WorkspaceError(f"{display} is not JSON ({exc})") from None


def _str(obj: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise ValueError(f"{where}: missing '{key}'")
        return None
    if not isinstance(value, str) or (required and not value):
        raise ValueError(f"{where}.{key} must be a non-empty string")
    if _STRAY.search(value):
        raise ValueError(f"{where}.{key} {NOT_UNICODE}")
    return value


def _names(obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}.{key} must be a list of strings")
    if any(_STRAY.search(v) for v in value):
        raise ValueError(f"{where}.{key} {NOT_UNICODE}")
    return tuple(value)


def _pipeline(item: object, where: str) -> Pipeline:
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")
    stages = []
    raw_stages = item.get("stages") or []
    if not isinstance(raw_stages, list):
        raise ValueError(f"{where}.stages must be a list")
    for j, raw in enumerate(raw_stages):
        at = f"{where}.stages[{j}]"
        if not isinstance(raw, dict):
            raise ValueError(f"{at} must be an object")
        stage_id = _str(raw, "id", at, required=True)
        assert stage_id is not None
        stages.append(
            Stage(
                id=stage_id,
                name=_str(raw, "name", at),
                description=_str(raw, "description", at),
                source=_str(raw, "source", at),
                reads=_names(raw, "reads", at),
                writes=_names(raw, "writes", at),
            )
        )
    pipeline_id = _str(item, "id", where, required=True)
    assert pipeline_id is not None
    return Pipeline(
        id=pipeline_id,
        name=_str(item, "name", where),
        description=_str(item, "description", where),
        stages=tuple(stages),
    )
