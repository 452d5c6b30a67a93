"""What translate/spec.py pins is what openlineage-python says: its schema URLs, its static
run ids, its dataset naming helpers. A library upgrade that moves any of them fails here."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openlineage.client.generated import (
    dataset_version_dataset,
    documentation_job,
    error_message_run,
    execution_parameters_run,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
    source_code_location_job,
    tags_run,
)
from openlineage.client.generated.base import RunEvent, RunFacet
from openlineage.client.naming import dataset as naming
from openlineage.client.uuid import generate_static_uuid

from openlineage_export.translate import spec


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (spec.RUN_EVENT, RunEvent),
        (spec.RUN_FACET, RunFacet),
        (spec.DATASET_VERSION, dataset_version_dataset.DatasetVersionDatasetFacet),
        (spec.DOCUMENTATION, documentation_job.DocumentationJobFacet),
        (spec.ERROR_MESSAGE, error_message_run.ErrorMessageRunFacet),
        (spec.EXECUTION_PARAMETERS, execution_parameters_run.ExecutionParametersRunFacet),
        (spec.JOB_TYPE, job_type_job.JobTypeJobFacet),
        (
            spec.OUTPUT_STATISTICS,
            output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet,
        ),
        (spec.PARENT, parent_run.ParentRunFacet),
        (spec.PROCESSING_ENGINE, processing_engine_run.ProcessingEngineRunFacet),
        (spec.SCHEMA, schema_dataset.SchemaDatasetFacet),
        (spec.SOURCE_CODE_LOCATION, source_code_location_job.SourceCodeLocationJobFacet),
        (spec.TAGS, tags_run.TagsRunFacet),
    ],
)
def test_each_schema_url_is_the_librarys(ours: str, theirs: Any) -> None:
    assert ours == theirs._get_schema()


instants = st.datetimes(
    min_value=datetime(1970, 1, 2),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from(
        [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-8))]
    ),
)


@settings(max_examples=500)
@given(instant=instants, data=st.binary(max_size=200))
def test_static_run_ids_are_the_librarys(instant: datetime, data: bytes) -> None:
    assert spec.static_uuid(instant, data) == str(generate_static_uuid(instant, data))


parts = st.text(alphabet=st.sampled_from("ab.-_/ \t1é"), max_size=6)


def _same(ours: Any, theirs: Any) -> None:
    """Both name the dataset alike, or both refuse it (a blank part)."""
    try:
        expected = theirs()
    except ValueError:
        with pytest.raises(ValueError):
            ours()
        return
    assert ours() == (expected.get_namespace(), expected.get_name())


@settings(max_examples=300)
@given(a=parts, b=parts, c=parts, d=parts, e=parts)
def test_dataset_names_are_the_librarys(a: str, b: str, c: str, d: str, e: str) -> None:
    _same(
        lambda: spec.bigquery(a, b, c),
        lambda: naming.BigQuery(project_id=a, dataset_name=b, table_name=c),
    )
    _same(lambda: spec.remote_file(a, b), lambda: naming.RemoteFileSystem(host=a, path=b))
    _same(lambda: spec.s3(a, b), lambda: naming.S3(bucket_name=a, object_key=b))
    _same(lambda: spec.gcs(a, b), lambda: naming.GCS(bucket_name=a, object_key=b))
    _same(
        lambda: spec.kafka(a, b, c), lambda: naming.Kafka(bootstrap_server_host=a, port=b, topic=c)
    )
    _same(
        lambda: spec.postgres(a, b, c, d, e),
        lambda: naming.Postgres(host=a, port=b, database=c, schema=d, table=e),
    )
    _same(lambda: spec.mysql(a, b, c, d), lambda: naming.MySQL(host=a, port=b, database=c, table=d))


def test_the_librarys_producer_is_pinned_in_its_own_form() -> None:
    from openlineage.client.constants import DEFAULT_PRODUCER

    prefix, _, suffix = spec.LIBRARY_PRODUCER.rpartition("/tree/")
    assert DEFAULT_PRODUCER.startswith(prefix + "/tree/")
    assert DEFAULT_PRODUCER.endswith("/" + suffix.split("/", 1)[1])


def test_an_export_never_imports_the_library() -> None:
    """Its import alone (every transport it has) was a third of a dry run's CPU."""
    import subprocess
    import sys

    code = (
        "import sys, openlineage_export.export, openlineage_export.cli; "
        "print(sorted(m for m in sys.modules if m.startswith('openlineage.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
