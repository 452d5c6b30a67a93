"""Read ``graph.json``: the pipelines and stages the editor holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from ..errors import WorkspaceError
from ..files.confine import read_file
from .model import BadEntry, Graph, Pipeline, Stage

GRAPH_FORMAT = "lineage-hub/graph@1"


def read_graph(path: Path, display: str, on_bad: Callable[[BadEntry], None]) -> Graph:
    """Load the graph; a broken file is a :class:`WorkspaceError`, a broken entry a bad entry."""
    try:
        data = orjson.loads(read_file(path))
    except FileNotFoundError:
        raise WorkspaceError(
            f"{display} not found: this folder is not a workspace with a Lineage hub graph"
        ) from None
    except orjson.JSONDecodeError as exc:
        raise WorkspaceError(f"{display} is not JSON ({exc})") from None
    except OSError as exc:
        raise WorkspaceError(f"cannot read {display} ({exc.strerror or exc})") from None
    if not isinstance(data, dict):
        raise WorkspaceError(f"{display} must hold a JSON object")
    fmt = data.get("format")
    if fmt is not None and fmt != GRAPH_FORMAT:
        raise WorkspaceError(f"{display} has format {fmt!r}; this exporter reads {GRAPH_FORMAT!r}")
    workspace = data.get("workspace")
    name = workspace.get("name") if isinstance(workspace, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise WorkspaceError(f"{display} has no workspace name ('workspace.name')")
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
                BadEntry(display, 0, f"pipelines[{i}]: pipeline id {pipeline.id!r} appears twice")
            )
            continue
        seen.add(pipeline.id)
        pipelines.append(pipeline)
    return Graph(workspace_name=name, pipelines=tuple(pipelines))


def _str(obj: dict[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None:
        if required:
            raise ValueError(f"{where}: missing '{key}'")
        return None
    if not isinstance(value, str) or (required and not value):
        raise ValueError(f"{where}.{key} must be a non-empty string")
    return value


def _names(obj: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}.{key} must be a list of strings")
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
