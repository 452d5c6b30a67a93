"""The OpenLineage spec's schema URLs we emit, and its static run ids, without importing it.

openlineage-python is the reference for both: ``tests/test_spec.py`` checks that each URL here
is the one its generated class names, and that :func:`static_uuid` is its
``generate_static_uuid``, so a library upgrade that moves either fails the tests. Importing the
library at run time would cost about half a second of CPU per process: ``openlineage.client``
loads every transport it has (requests, urllib3, httpx...), a third of a whole dry run's CPU
on 20,000 runs.
"""

from __future__ import annotations

from datetime import UTC, datetime
from hashlib import sha1

_SPEC = "https://openlineage.io/spec"

LIBRARY_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"
"""openlineage-python's own producer URL (``openlineage.client.constants.DEFAULT_PRODUCER``) at
the version this project is tested with: pinned, so events do not change with the installed
library's version; ``tests/test_spec.py`` checks it has the library's form."""

RUN_EVENT = f"{_SPEC}/2-0-2/OpenLineage.json#/$defs/RunEvent"
RUN_FACET = f"{_SPEC}/2-0-2/OpenLineage.json#/$defs/RunFacet"
"""The base of every run facet: the ``_schemaURL`` of a custom facet without a schema of its own."""
DATASET_VERSION = (
    f"{_SPEC}/facets/1-0-1/DatasetVersionDatasetFacet.json#/$defs/DatasetVersionDatasetFacet"
)
DOCUMENTATION = f"{_SPEC}/facets/1-1-0/DocumentationJobFacet.json#/$defs/DocumentationJobFacet"
ERROR_MESSAGE = f"{_SPEC}/facets/1-0-1/ErrorMessageRunFacet.json#/$defs/ErrorMessageRunFacet"
EXECUTION_PARAMETERS = (
    f"{_SPEC}/facets/1-0-0/ExecutionParametersRunFacet.json#/$defs/ExecutionParametersRunFacet"
)
JOB_TYPE = f"{_SPEC}/facets/2-0-4/JobTypeJobFacet.json#/$defs/JobTypeJobFacet"
OUTPUT_STATISTICS = (
    f"{_SPEC}/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json"
    "#/$defs/OutputStatisticsOutputDatasetFacet"
)
PARENT = f"{_SPEC}/facets/1-2-0/ParentRunFacet.json#/$defs/ParentRunFacet"
PROCESSING_ENGINE = (
    f"{_SPEC}/facets/1-1-1/ProcessingEngineRunFacet.json#/$defs/ProcessingEngineRunFacet"
)
SCHEMA = f"{_SPEC}/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
SOURCE_CODE_LOCATION = (
    f"{_SPEC}/facets/1-1-0/SourceCodeLocationJobFacet.json#/$defs/SourceCodeLocationJobFacet"
)
TAGS = f"{_SPEC}/facets/1-0-0/TagsRunFacet.json#/$defs/TagsRunFacet"


def static_uuid(instant: datetime, data: bytes) -> str:
    """openlineage-python's ``generate_static_uuid(instant, data)``, as a string: a UUIDv7
    whose time part is ``instant`` and whose other bits are a SHA-1 of it and ``data``.

    Its 128 bits are the time in milliseconds (48), the version 7 (4), then the first 76 bits
    of the digest with the variant ``10`` written over the two at bit 64: as text, the time's
    12 hex digits, ``7``, and the digest's first 19 hex digits, the fourth of them with its top
    two bits replaced (no arithmetic on 128-bit integers: a third of the time)."""
    utc = instant.astimezone(UTC)
    timestamp_ms = int(utc.timestamp() * 1000) & 0xFFFFFFFFFFFF
    digest = sha1(utc.isoformat().encode("utf-8") + data).hexdigest()
    t = f"{timestamp_ms:012x}"
    variant = _VARIANT_DIGITS[digest[3]]
    return f"{t[:8]}-{t[8:]}-7{digest[:3]}-{variant}{digest[4:7]}-{digest[7:19]}"


_VARIANT_DIGITS = {f"{n:x}": f"{0x8 | (n & 0x3):x}" for n in range(16)}
"""A hex digit with its top two bits set to the variant ``10``."""


# -- the dataset naming conventions, as openlineage.client.naming.dataset's helpers build them:
# (namespace, name); a part that is blank is refused with ValueError, as there.


def _check(*parts: str) -> None:
    for part in parts:
        if not part.strip():
            raise ValueError("a part of the dataset's name is empty")


def bigquery(project_id: str, dataset_name: str, table_name: str) -> tuple[str, str]:
    """``BigQuery``: bigquery, project.dataset.table."""
    _check(project_id, dataset_name, table_name)
    return "bigquery", f"{project_id}.{dataset_name}.{table_name}"


def remote_file(host: str, path: str) -> tuple[str, str]:
    """``RemoteFileSystem``: file://host, path."""
    _check(host, path)
    return f"file://{host}", path


def s3(bucket_name: str, object_key: str) -> tuple[str, str]:
    """``S3``: s3://bucket, key."""
    _check(bucket_name, object_key)
    return f"s3://{bucket_name}", object_key


def gcs(bucket_name: str, object_key: str) -> tuple[str, str]:
    """``GCS``: gs://bucket, key."""
    _check(bucket_name, object_key)
    return f"gs://{bucket_name}", object_key


def kafka(host: str, port: str, topic: str) -> tuple[str, str]:
    """``Kafka``: kafka://host:port, topic."""
    _check(host, port, topic)
    return f"kafka://{host}:{port}", topic


def postgres(host: str, port: str, database: str, schema: str, table: str) -> tuple[str, str]:
    """``Postgres``: postgres://host:port, database.schema.table."""
    _check(host, port, database, schema, table)
    return f"postgres://{host}:{port}", f"{database}.{schema}.{table}"


def mysql(host: str, port: str, database: str, table: str) -> tuple[str, str]:
    """``MySQL``: mysql://host:port, database.table."""
    _check(host, port, database, table)
    return f"mysql://{host}:{port}", f"{database}.{table}"
