"""Events shaped for DataHub: what its OpenLineage converter needs to keep every run and dataset.

DataHub's server runs each event through its own converter (``OpenLineageToDataHub``), which
makes a DataFlow ``(orchestrator, job name up to its first dot, namespace)``, a DataJob per job
name, a DataProcessInstance per run id and a dataset per input and output. Events shaped for
every other server lose data there, silently (see docs/datahub.md). In DataHub mode:

- the ``processing_engine`` is named ``lineage-hub`` (the engine becomes its version), so that
  every run of a pipeline lands in one DataFlow, whatever engine ran it;
- a pipeline id is written with ``%`` and ``.`` percent-encoded in job names, so the flow (the
  job name up to its first dot) is the whole pipeline id and no two jobs share a name;
- URN components carry no ``,``, ``(``, ``)`` or ``␟`` (DataHub's server refuses them, and
  DataHub's own connectors percent-encode them the same way), nor a bare ``%``;
- a dataset is named as DataHub names it: a database table or Kafka topic keeps its
  ``scheme://host:port`` namespace and its connector name (``db.schema.table``), so it joins the
  table DataHub's own connector catalogs (a server setting maps hosts to platform instances);
  every other dataset is given as DataHub's platform and a name that keeps its bucket, host or
  workspace, so that nothing merges and nothing goes through the converter's ``new URI(...)``,
  which drops names a URI cannot hold (a space); a name whose URN DataHub would find too long is
  shortened, with a hash of the whole name;
- the ``parent`` facet is stamped with openlineage-python's own producer, the only kind of
  producer the converter of 2025-10 can take a parent's orchestrator from;
- a schema field without a type gets the empty type, as the newest converter reads it.

Run ids, times, event types and the other facets are unchanged, so re-exports stay idempotent.
Pure, like the rest of ``translate/``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Any

from ..hub.model import DataAccess, Engine, Run
from . import facets, spec
from .bounded import cached_when_short
from .datasets import DB_SCHEMES
from .events import Translator

ENDPOINT = "openapi/openlineage/api/v1/lineage"
"""The path of DataHub's OpenLineage endpoint (under its server's address)."""

REFUSAL = (
    "HTTP 500 with an empty answer, which is how DataHub before 2025-10 (1.2 and older) refuses "
    "events from a producer it does not know (its converter: 'Unable to determine "
    "orchestrator'): upgrade DataHub, or on a newer DataHub set the server's "
    "DATAHUB_OPENLINEAGE_ORCHESTRATOR; the run stays pending"
)
"""The reason of a run that DataHub's endpoint answered with an empty 500 (docs/datahub.md)."""


def refusal(status: int, body: bytes) -> str | None:
    """The reason of a run DataHub refused in its own way: an empty 500 (None: any other)."""
    return REFUSAL if status == 500 and not body.strip() else None


PARENT_PRODUCER = spec.LIBRARY_PRODUCER
"""The ``_producer`` of the parent facet in DataHub mode: openlineage-python's own, the library
that defines the facet (DataHub 2025-10 takes the parent's orchestrator from it and knows only
OpenLineage's own integrations)."""

KEEP_NAMESPACE = DB_SCHEMES | {"kafka"}
"""Schemes whose dataset keeps ``scheme://host:port``: DataHub's connector names it without the
host (``db.schema.table``, the topic), and its newest converter maps the namespace to a
platform instance."""

PLATFORMS = {"gs": "gcs", "abfss": "abs", "abfs": "abs", "wasbs": "abs", "wasb": "abs"}
"""DataHub's platform of a storage scheme, where the two names differ (HdfsPlatform)."""

WORKSPACE_PLATFORM = "workspace"
"""The platform of a path relative to a workspace; its name starts with the workspace's."""

_RESERVED = {"%": "%25", ",": "%2C", "(": "%28", ")": "%29", "\u241f": "%E2%90%9F"}
_URI_PATH_ASCII = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-!.~'*;:$&+=/@?"
)
"""ASCII characters ``java.net.URI`` takes in a path as they are (less ``,()`` and ``%``)."""


def urn_part(text: str) -> str:
    """``text`` with what DataHub refuses in a URN component (``,`` ``(`` ``)`` ``␟``)
    percent-encoded, and ``%`` too, so that two texts stay two."""
    if not any(c in _RESERVED for c in text):
        return text
    return "".join(_RESERVED.get(c, c) for c in text)


def flow_id(pipeline: str) -> str:
    """A pipeline id as the first part of a job name: the whole id is the DataFlow's id."""
    return urn_part(pipeline).replace(".", "%2E")


def pipeline_job(pipeline: str) -> str:
    """The job name of a pipeline in DataHub mode."""
    return flow_id(pipeline)


def stage_job(pipeline: str, stage: str) -> str:
    """The job name of a stage: ``<flow id>.<stage id>`` (a stage id may hold dots)."""
    return f"{flow_id(pipeline)}.{urn_part(stage)}"


def _uri_safe(text: str) -> str:
    """``text`` as ``java.net.URI`` parses it in a path, reserved characters encoded too;
    letters of any script stay as they are (URI takes them: RFC 2396 "other")."""
    out = []
    for c in text:
        if c in _RESERVED:
            out.append(_RESERVED[c])
        elif c in _URI_PATH_ASCII or (ord(c) > 127 and unicodedata.category(c)[0] not in "ZC"):
            out.append(c)
        else:
            out.append("".join(f"%{b:02X}" for b in c.encode()))
    return "".join(out)


def _dataset(namespace: str, name: str) -> tuple[str, str]:
    """An OpenLineage dataset (as named for every server) named for DataHub's converter; cached,
    as a trail names the same data over and over (when no longer than
    :data:`~.bounded.CACHED_KEY_LIMIT` together: a name may be as long as a trail's line)."""
    scheme, sep, authority = namespace.partition("://")
    if not sep:
        # A platform already: file, bigquery, an opaque scheme.
        return scheme, fit(scheme, urn_part(name))
    if scheme == "workspace":
        where = f"{authority.replace('/', '%2F')}/{urn_part(name)}"
        return WORKSPACE_PLATFORM, fit(WORKSPACE_PLATFORM, where)
    if scheme in KEEP_NAMESPACE and authority:
        return namespace, fit(CONVERTER_PLATFORMS.get(scheme, scheme), _uri_safe(name))
    platform = PLATFORMS.get(scheme, scheme)
    where = f"{authority}{name}" if name.startswith("/") else f"{authority}/{name}"
    return platform, fit(platform, urn_part(where))


def _size(namespace: str, name: str) -> int:
    return len(namespace) + len(name)


dataset = cached_when_short(_dataset, _size, 4096)

URN_LIMIT = 448
"""The longest dataset URN (URL-encoded) sent as it is. DataHub's server refuses a URN over 512
bytes URL-encoded; the rest is room for a platform instance the server may put before the name."""

CONVERTER_PLATFORMS = {"sqlserver": "mssql", "awsathena": "athena"}
"""The platform DataHub's converter gives a ``scheme://`` namespace, where it is not the scheme."""

_URL_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-*_ ")
"""What ``java.net.URLEncoder`` writes as one character (a space as ``+``)."""


def _url_encoded_length(text: str) -> int:
    return sum(1 if c in _URL_SAFE else 3 * len(c.encode()) for c in text)


def fit(platform: str, name: str) -> str:
    """``name``, or when its dataset URN would be too long for DataHub (:data:`URN_LIMIT`), its
    longest beginning that fits followed by ``~`` and a hash of the whole name (two names stay
    two, and the same name is always shortened alike)."""
    overhead = _url_encoded_length(f"urn:li:dataset:(urn:li:dataPlatform:{platform},,PROD)")
    if overhead + _url_encoded_length(name) <= URN_LIMIT:
        return name
    digest = "~" + hashlib.blake2b(name.encode(), digest_size=8).hexdigest()
    budget = URN_LIMIT - overhead - _url_encoded_length(digest)
    kept: list[str] = []
    for c in name:
        budget -= _url_encoded_length(c)
        if budget < 0:
            break
        kept.append(c)
    # Never end on half a percent-escape (a name may hold %2C...).
    return _HALF_ESCAPE.sub("", "".join(kept)) + digest


_HALF_ESCAPE = re.compile(r"%[0-9A-Fa-f]?$")


ORCHESTRATOR = "lineage-hub"
"""The ``processing_engine`` name in DataHub mode: DataHub makes it the DataFlow's orchestrator
(its platform), so it is the same for every run of a pipeline, whatever engine ran it."""


def _processing_engine(engine: Engine | None) -> dict[str, Any]:
    """``processing_engine`` named :data:`ORCHESTRATOR`; the engine (name and version) is its
    version, which DataHub shows among the flow's and job's properties (cached as
    :func:`..facets.processing_engine` is)."""
    facet = facets.processing_engine(engine)
    version = f"{engine.name} {engine.version or 'unknown'}" if engine else "unknown"
    return {**facet, "name": ORCHESTRATOR, "version": version}


processing_engine = cached_when_short(_processing_engine, facets.engine_size, 256)


class DataHubTranslator(Translator):
    """The :class:`Translator` whose events DataHub's converter keeps whole (module docstring)."""

    def pipeline_job_name(self, pipeline: str) -> str:
        return pipeline_job(pipeline)

    def stage_job_name(self, pipeline: str, stage: str) -> str:
        return stage_job(pipeline, stage)

    def engine_facet(self, run: Run) -> dict[str, Any]:
        return processing_engine(run.engine)

    def parent_facet(self, namespace: str, pipeline_job_name: str, run_id: str) -> dict[str, Any]:
        facet = facets.parent(namespace, pipeline_job_name, run_id)
        facet["_producer"] = PARENT_PRODUCER
        return facet

    def dataset_name(self, location: str) -> tuple[str, str]:
        return dataset(*super().dataset_name(location))

    def dataset_facets(self, access: DataAccess, *, output: bool) -> dict[str, Any]:
        found = super().dataset_facets(access, output=output)
        schema = found.get("schema")
        if schema is not None and any("type" not in f for f in schema["fields"]):
            fields = [f if "type" in f else {**f, "type": ""} for f in schema["fields"]]
            found = {**found, "schema": {**schema, "fields": fields}}
        return found
