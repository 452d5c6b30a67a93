"""The facets we emit, as plain dicts shaped exactly like openlineage-python's facet classes.

Schema URLs are the library's generated classes' (``spec.py``, checked against them by
``tests/test_spec.py``, so a library upgrade that moves them fails the tests);
``tests/test_translate.py`` rebuilds the demo's events with those classes and ``Serde`` and
checks they are equal, so the shapes cannot drift either. Building dicts rather
than attrs objects is what keeps translation near the JSON encoder's speed (see bench/).
"""

from __future__ import annotations

import posixpath
from typing import Any

from .. import DISTRIBUTION, __version__
from ..hub.model import DataAccess, Engine, ErrorInfo
from ..jsonout import fragment
from . import spec
from .bounded import cached_when_short
from .locations import is_secret_parameter, masked

PRODUCER = f"https://pypi.org/project/{DISTRIBUTION}/{__version__}/"
"""Our producer URI: names this package and its version, on every event and every facet."""

INTEGRATION = "LINEAGE_HUB"
"""The ``integration`` of the jobType facet: the system whose runs these are."""

SECRET_SHOWN = "***"
"""What a secret parameter's value is sent as."""

UNKNOWN_LANGUAGE = "unknown"
"""``errorMessage.programmingLanguage`` when neither the trail nor the stage's source tells."""

RUN_EVENT_SCHEMA = spec.RUN_EVENT

_LANGUAGES = {
    ".py": "python",
    ".ipynb": "python",
    ".sql": "sql",
    ".scala": "scala",
    ".java": "java",
    ".kt": "kotlin",
    ".r": "r",
    ".sh": "shell",
    ".js": "javascript",
    ".ts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".jl": "julia",
}


def _facet(schema_url: str, **fields: Any) -> dict[str, Any]:
    facet: dict[str, Any] = {"_producer": PRODUCER, "_schemaURL": schema_url}
    facet.update((k, v) for k, v in fields.items() if v is not None)
    return facet


# Schema URLs of the facets built once per event or dataset, looked up once.
_VERSION_URL = spec.DATASET_VERSION
_SCHEMA_URL = spec.SCHEMA
_STATS_URL = spec.OUTPUT_STATISTICS
_PARENT_URL = spec.PARENT


def job_type(kind: str) -> dict[str, Any]:
    """``jobType``: BATCH, our integration, ``DAG`` for a pipeline and ``TASK`` for a stage."""
    return _facet(spec.JOB_TYPE, processingType="BATCH", integration=INTEGRATION, jobType=kind)


def documentation(description: str) -> dict[str, Any]:
    """``documentation`` from a pipeline's or stage's description in the graph."""
    return _facet(spec.DOCUMENTATION, description=description)


def source_code_location(repo_url: str, path: str, version: str | None) -> dict[str, Any]:
    """``sourceCodeLocation``: the repository, the stage's source path in it and its version."""
    return _facet(
        spec.SOURCE_CODE_LOCATION,
        type="git",
        url=repo_url,
        repoUrl=repo_url,
        path=path,
        version=version,
    )


def engine_size(engine: Engine | None) -> int:
    """How long an engine's name and version are together, as a cache counts a key."""
    return 0 if engine is None else len(engine.name) + len(engine.version or "")


def _processing_engine(engine: Engine | None) -> dict[str, Any]:
    """``processing_engine``: the trail's engine, else this package (DataHub requires one).

    Cached per engine: the same (read-only) dict serves every run of that engine (one whose
    name and version are longer than :data:`~.bounded.CACHED_KEY_LIMIT` is made each time).
    """
    name, version = (
        (engine.name, engine.version or "unknown") if engine else (DISTRIBUTION, __version__)
    )
    return _facet(
        spec.PROCESSING_ENGINE, version=version, name=name, openlineageAdapterVersion=__version__
    )


processing_engine = cached_when_short(_processing_engine, engine_size, 256)


def parent(namespace: str, pipeline: str, run_id: str) -> dict[str, Any]:
    """``parent`` (with ``root``): a stage run is filed under its pipeline run."""
    job = {"namespace": namespace, "name": pipeline}
    run = {"runId": run_id}
    return {
        "_producer": PRODUCER,
        "_schemaURL": _PARENT_URL,
        "run": run,
        "job": job,
        "root": {"run": run, "job": job},
    }


def error_message(error: ErrorInfo, source: str | None) -> dict[str, Any]:
    """``errorMessage``; the language is the trail's, else guessed from the source file's type."""
    language = error.programming_language
    if language is None and source:
        language = _LANGUAGES.get(posixpath.splitext(source)[1].lower())
    # A driver's error quotes its connection string: the location rule masks its credentials.
    return _facet(
        spec.ERROR_MESSAGE,
        message=masked(error.message),
        programmingLanguage=language or UNKNOWN_LANGUAGE,
        stackTrace=None if error.stack_trace is None else masked(error.stack_trace),
    )


def tags(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """``tags`` on a run: the editor's trace id and trigger, findable in the lineage tool."""
    return _facet(spec.TAGS, tags=[{"key": k, "value": v, "source": INTEGRATION} for k, v in pairs])


def execution_parameters(parameters: dict[str, Any]) -> dict[str, Any]:
    """``executionParameters`` from the trail's ``parameters`` (values as strings): the value
    of a parameter whose name says it is a secret is ``***``, and every credential the
    location rule knows is masked in the others (docs/mapping.md)."""
    return _facet(
        spec.EXECUTION_PARAMETERS,
        parameters=[
            {"key": masked(str(k)), "value": _as_text(_without_secrets(str(k), v))}
            for k, v in parameters.items()
        ],
    )


def _without_secrets(name: str, value: Any) -> Any:
    """``value`` of the parameter ``name``, its secrets masked, nested ones too (a loop, not
    recursion: a value may nest as deep as the trail's reader allows)."""
    if is_secret_parameter(name):
        return SECRET_SHOWN
    if not isinstance(value, (dict, list)):
        return masked(value, location=True) if isinstance(value, str) else value
    copy: dict[Any, Any] | list[Any] = {} if isinstance(value, dict) else []
    todo: list[tuple[Any, Any]] = [(value, copy)]
    while todo:
        source, target = todo.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            new: Any = item
            if isinstance(source, dict) and is_secret_parameter(str(key)):
                new = SECRET_SHOWN
            elif isinstance(item, str):
                new = masked(item, location=True)
            elif isinstance(item, (dict, list)):
                new = {} if isinstance(item, dict) else []
                todo.append((item, new))
            if isinstance(target, dict):
                target[key] = new
            else:
                target.append(new)
    return copy


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    # The one encoder's (jsonout.py): what orjson cannot write (an integer over 64 bits,
    # nesting over 254 levels: valid JSON the reader took) is written back all the same.
    return fragment(value).decode()


def dataset_facets(access: DataAccess, *, output: bool) -> dict[str, Any]:
    """Dataset facets: the digest as ``version``; for a write, its ``schema`` too."""
    facets: dict[str, Any] = {}
    if access.digest is not None:
        facets["version"] = {
            "_producer": PRODUCER,
            "_schemaURL": _VERSION_URL,
            "datasetVersion": access.digest,
        }
    if output and access.schema is not None:
        facets["schema"] = {
            "_producer": PRODUCER,
            "_schemaURL": _SCHEMA_URL,
            "fields": [
                {"name": f.name} if f.type is None else {"name": f.name, "type": f.type}
                for f in access.schema
            ],
        }
    return facets


def output_statistics(access: DataAccess) -> dict[str, Any] | None:
    """``outputStatistics`` from a write's ``rows`` and ``bytes``, when the trail has them."""
    if access.rows is None and access.bytes is None:
        return None
    stats: dict[str, Any] = {"_producer": PRODUCER, "_schemaURL": _STATS_URL}
    if access.rows is not None:
        stats["rowCount"] = access.rows
    if access.bytes is not None:
        stats["size"] = access.bytes
    return stats
