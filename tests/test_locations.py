"""Credentials never reach a name: the one rule (translate/locations.py) in every form a
location is written in, whatever the location's shape, and in every output of an export."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers import WorkspaceMaker, cli_command, cli_env, run_record, stage_record
from hypothesis import given, settings
from hypothesis import strategies as st

from openlineage_export.translate.datasets import DatasetNamer
from openlineage_export.translate.locations import (
    is_credential_name,
    is_secret_parameter,
    masked,
    without_credentials,
)

NAMER = DatasetNamer("acme-analytics")

FORMS = {
    # issue 43, finding 6: the forms that reached the event's dataset name
    "jdbc:postgresql://admin:PW@db:5432/a.b.c": ("jdbc", "postgresql://db:5432/a.b.c"),
    "jdbc:sqlserver://db:1433;databaseName=x;password=PW": (
        "jdbc",
        "sqlserver://db:1433;databaseName=x",
    ),
    "sqlserver://db;password=PW": ("sqlserver://db:1433", ""),
    "oracle://user/PW@host:1521/svc": ("oracle://host:1521", "svc"),
    "jdbc:mysql://db/x.t?password=PW": ("jdbc", "mysql://db/x.t"),
    "bigquery:p.d.t?key=PW": ("bigquery", "p.d.t"),
    # the two that held, kept so
    "postgres://u:PW@db/a.b.c": ("postgres://db:5432", "a.b.c"),
    "s3://AKIA:PW@bucket/k": ("s3://bucket", "k"),
    # userinfo in any scheme, a network path, no scheme at all
    "kafka://u:PW@broker:9092/t": ("kafka://broker:9092", "t"),
    "file://u:PW@nas/p": ("file://nas", "/p"),
    "mongodb+srv://u:PW@cluster/db": ("mongodb+srv://cluster", "db"),
    "redis://:PW@cache:6379/0": ("redis://cache:6379", "0"),
    "wasbs://u:PW@acct.blob.core.windows.net/raw/y": (
        "wasbs://acct.blob.core.windows.net",
        "raw/y",
    ),
    "abfss://key:PW@acct.dfs.core.windows.net/raw/x": (
        "abfss://acct.dfs.core.windows.net",
        "raw/x",
    ),
    "//svc:PW@fileserver/share/z": ("file", "//fileserver/share/z"),
    "\\\\svc:PW@fileserver\\share\\w": ("file", "//fileserver/share/w"),
    "u:PW@host/path": ("workspace://acme-analytics", "host/path"),
    "postgres://u:p@ss:PW@db/a.b.c": ("postgres://db:5432", "a.b.c"),
    "postgres://u:P%40W@db/a.b.c": ("postgres://db:5432", "a.b.c"),
    "postgres://u:PW\uff20db/a.b.c": ("postgres://db:5432", "a.b.c"),
    # Oracle's user/password@
    "jdbc:oracle:thin:scott/PW@db:1521/svc": ("jdbc", "oracle:thin:db:1521/svc"),
    'jdbc:oracle:thin:scott/"P@W"@//db:1521/svc': ("jdbc", "oracle:thin://db:1521/svc"),
    "jdbc:oracle:oci:scott/PW@tns": ("jdbc", "oracle:oci:tns"),
    "oracle:scott/PW@db:1521/svc": ("oracle", "db:1521/svc"),
    # parameters: any case, ';' or a query, braced, percent-encoded, DB2's ':'
    "jdbc:sqlserver://db;user=sa;Password=PW;databaseName=x": (
        "jdbc",
        "sqlserver://db;user=sa;databaseName=x",
    ),
    "jdbc:sqlserver://db;PWD={P;W}}x};databaseName=x": ("jdbc", "sqlserver://db;databaseName=x"),
    "jdbc:db2://db:50000/SAMPLE:password=PW;user=u;": ("jdbc", "db2://db:50000/SAMPLE;user=u;"),
    "odbc:Driver={PG};Server=h;Uid=u;Pwd=PW": ("odbc", "Driver={PG};Server=h;Uid=u"),
    "postgres://db:5432/sales.public.t;PASSWORD=PW": ("postgres://db:5432", "sales.public.t"),
    "postgres://db:5432/sales.public.t%3Bpassword%3DPW": ("postgres://db:5432", "sales.public.t"),
    "s3://bucket/key;X-Amz-Signature=PW": ("s3://bucket", "key"),
    "hdfs://nn/p;token=PW": ("hdfs://nn", "/p"),
    "bigquery:p.d.t?access_token=PW": ("bigquery", "p.d.t"),
    "custom:thing?pass%77ord=PW": ("custom", "thing"),
    "s3://b/k?X-Amz-Credential=AK%2FPW&X-Amz-Signature=PW": ("s3://b", "k"),
    "gs://b/k?X-Goog-Signature=PW": ("gs://b", "k"),
    "https://acct.blob.core.windows.net/c/b?sv=2024&sig=PW": (
        "https://acct.blob.core.windows.net",
        "c/b",
    ),
    "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=PW": (
        "workspace://acme-analytics",
        "DefaultEndpointsProtocol=https;AccountName=a",
    ),
    "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=n;SharedAccessKey=PW": (
        "workspace://acme-analytics",
        "Endpoint=sb:/ns.servicebus.windows.net/;SharedAccessKeyName=n",
    ),
    # attack F, F1: the forms that still reached a name
    "jdbc:mysql://address=(host=db)(port=3306)(user=etl)(password=PW)/sales": (
        "jdbc",
        "mysql://address=(host=db)(port=3306)(user=etl)/sales",
    ),
    "jdbc:mysql://(host=db,port=3306,user=etl,password=PW)/sales": (
        "jdbc",
        "mysql://(host=db,port=3306,user=etl)/sales",
    ),
    "jdbc:mysql://[(host=db,password=PW),(host=db2)]/sales": (
        "jdbc",
        "mysql://[(host=db),(host=db2)]/sales",
    ),
    "jdbc:teradata://td.internal/DATABASE=sales,USER=etl,PASSWORD=PW": (
        "jdbc",
        "teradata://td.internal/DATABASE=sales,USER=etl",
    ),
    "jdbc:teradata://td.internal/USER=etl, password = PW,TMODE=ANSI": (
        "jdbc",
        "teradata://td.internal/USER=etl,TMODE=ANSI",
    ),
    "odbc:Driver={SQL Server};Server=db;Database=sales; Uid=etl; Pwd=PW;": (
        "odbc",
        "Driver={SQL Server};Server=db;Database=sales; Uid=etl;",
    ),
    "Server=db;Database=x;User Id=u;\tPassword=PW;": (
        "workspace://acme-analytics",
        "Server=db;Database=x;User Id=u;",
    ),
    "jdbc:sqlserver://db:1433;databaseName=sales;password = PW": (
        "jdbc",
        "sqlserver://db:1433;databaseName=sales",
    ),
    "jdbc:sqlserver://db:1433;PassWord = PW": ("jdbc", "sqlserver://db:1433"),
    "jdbc:sqlserver://db:1433;password\t=PW": ("jdbc", "sqlserver://db:1433"),
    "host=db user=etl password=PW dbname=sales": (
        "workspace://acme-analytics",
        "host=db user=etl dbname=sales",
    ),
    "Password=PW;Server=db": ("workspace://acme-analytics", ";Server=db"),
    "oracle+cx_oracle://etl:PW@db:1521/?service_name=sales": ("oracle+cx_oracle://db:1521", "/"),
    "https://api.internal/export;jsessionid=PW": ("https://api.internal", "export"),
    "data/file.csv#token=PW": ("workspace://acme-analytics", "data/file.csv"),
    "PW@host/path": ("workspace://acme-analytics", "host/path"),
    " postgres://u:PW@h/db/s/t": ("workspace://acme-analytics", " postgres:/h/db/s/t"),
    "\tpostgres://u:PW@h/db/s/t": ("workspace://acme-analytics", "\tpostgres:/h/db/s/t"),
    "jdbc: postgresql://u:PW@h/db": ("jdbc", " postgresql://h/db"),
    "postgres:/\\u:PW@h/db/s/t": ("postgres", "/\\h/db/s/t"),
    "postgres:\\\\u:PW@h/db/s/t": ("postgres", "\\\\h/db/s/t"),
}


@pytest.mark.parametrize(("location", "named"), FORMS.items())
def test_a_credential_in_any_form_never_reaches_a_name(
    location: str, named: tuple[str, str]
) -> None:
    assert NAMER.name(location) == named


@pytest.mark.parametrize(
    "location",
    [
        "postgres://db.acme.internal:5432/sales.public.orders",
        "abfss://raw@acme.dfs.core.windows.net/events/x",
        "jdbc:oracle:thin:@db:1521:orcl",
        "jdbc:sqlserver://db:1433;databaseName=sales;encrypt=true",
        "s3://bucket/dir/file@v2.parquet",
        "s3://bucket/table/keyspace=eu/part-0.parquet",
        "bigquery:acme.crm.customer_360",
        "data/raw/orders.parquet",
        "data/report@2024.csv",
        "jdbc:mysql://address=(host=db)(port=3306)(user=etl)/sales",
        "jdbc:teradata://td/DATABASE=sales,USER=etl",
        "host=db user=etl dbname=sales",
    ],
)
def test_what_is_no_credential_is_left_as_it_is(location: str) -> None:
    assert without_credentials(location) == location


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("PASSWORD", True),
        ("pass%77ord", True),
        ("pass%2577ord", True),
        ("sslpassword", True),
        ("client_secret", True),
        ("X-Amz-Signature", True),
        ("X-Goog-Signature", True),
        ("X-Amz-Security-Token", True),
        ("AccountKey", True),
        ("api-key", True),
        ("sig", True),
        ("pwd", True),
        ("user", False),
        ("databaseName", False),
        ("sslmode", False),
        ("SharedAccessKeyName", False),
        ("keyspace", False),
        ("jsessionid", True),
    ],
)
def test_a_parameter_holds_a_secret_by_its_name(name: str, secret: bool) -> None:
    assert is_credential_name(name) is secret


# -- fuzzed: any secret, in any form, written as a careful writer of that form writes it -------

SECRET_LETTERS = "QXZJKVW"
"""Letters no name, namespace or word of our outputs uses, so a run of them is the secret's."""
SECRETS = st.text(
    alphabet=st.sampled_from(SECRET_LETTERS) | st.sampled_from("@:/;?#&=%{}\"'+ \u00e9"),
    min_size=8,
    max_size=24,
).filter(
    lambda s: (
        sum(c in SECRET_LETTERS for c in s) >= 6
        # a run of three is what ``leaked`` looks for: a secret without one would check nothing
        and any(len(run) >= 3 for run in _letter_runs(s))
    )
)
HOSTS = st.text(alphabet="abcdefghilmnoprstuy-.", min_size=1, max_size=12).map(lambda h: "h" + h)
PARAMS = st.sampled_from(
    ["password", "Password", "PWD", "pwd", "key", "token", "secret", "sig", "access_token",
     "X-Amz-Signature", "X-Goog-Signature", "AccountKey", "pass%77ord", "client_secret"]
)  # fmt: skip


def braced(secret: str) -> str:
    return "{" + secret.replace("}", "}}") + "}"


def written(form: int, secret: str, host: str, param: str) -> str:
    """A location holding ``secret``, written as that form's own readers read it."""
    encoded = quote(secret, safe="")
    oracle = '"' + secret.replace('"', "") + '"'
    return [
        f"postgres://admin:{encoded}@{host}:5432/db.s.t",
        f"jdbc:postgresql://admin:{encoded}@{host}/db.s.t?sslmode=require",
        f"jdbc:sqlserver://{host}:1433;databaseName=x;{param}={braced(secret)}",
        f"sqlserver://{host};{param}={braced(secret)};encrypt=true",
        f"oracle://user/{oracle}@{host}:1521/svc",
        f"jdbc:oracle:thin:user/{oracle}@//{host}:1521/svc",
        f"jdbc:mysql://{host}/db.t?user=u&{param}={encoded}",
        f"bigquery:proj.ds.t?{param}={encoded}",
        f"s3://{host}/key/x.parquet?{param}={encoded}&X-Amz-Date=1",
        f"kafka://u:{encoded}@{host}:9092/topic",
        f"file://u:{encoded}@{host}/share/x",
        f"wasbs://u:{encoded}@{host}/raw",
        f"admin:{encoded}@{host}:5432/db",
        f"//svc:{encoded}@{host}/share/x",
        f"odbc:Driver={{PG}};Server={host};{param}={braced(secret)}",
        f"hdfs://{host}/p;{param}={braced(secret)}",
        f"postgres://{host}/db.s.t{quote(';' + param + '=' + braced(secret), safe='')}",
    ][form]


FORM_COUNT = 17


def leaked(secret: str, *texts: str) -> list[str]:
    """The runs of the secret's own letters (three or more) found in ``texts``, any case."""
    runs = [run for run in _letter_runs(secret) if len(run) >= 3]
    haystack = "\n".join(texts).lower()
    return [run for run in runs if run.lower() in haystack]


def _letter_runs(secret: str) -> list[str]:
    runs, current = [], ""
    for char in secret:
        if char in SECRET_LETTERS:
            current += char
        else:
            runs.append(current)
            current = ""
    return [*runs, current]


@settings(max_examples=400, deadline=None, database=None)
@given(
    form=st.integers(0, FORM_COUNT - 1),
    secret=SECRETS,
    host=HOSTS,
    param=PARAMS,
    workspace=st.text(alphabet="abcdefghilmnoprstuy", min_size=1, max_size=8),
)
def test_a_generated_credential_never_appears_in_any_name(
    form: int, secret: str, host: str, param: str, workspace: str
) -> None:
    location = written(form, secret, host, param)
    namespace, name = DatasetNamer(workspace).name(location)
    assert not leaked(secret, namespace, name), (location, namespace, name)
    assert DatasetNamer(workspace).name(location) == (namespace, name)  # deterministic


def test_no_credential_reaches_any_output_of_an_export(ws: WorkspaceMaker, tmp_path: Path) -> None:
    """The issue's forms and the fuzzer's, in a trail: not in the events, the summary, the
    JSON report, the progress events nor the HTML report."""
    secret = "QXZJKVWQXZ"
    locations = [re.sub("PW(?!D)", secret, loc) for loc in FORMS] + [
        written(form, secret, "db", "password") for form in range(FORM_COUNT)
    ]
    ws.segment(
        "000001.jsonl",
        [
            run_record(
                "r1",
                stages=[stage_record(reads=[{"dataset": loc} for loc in locations], writes=[])],
            )
        ],
    )
    events = tmp_path / "events.jsonl"
    report = tmp_path / "report.html"
    done = subprocess.run(
        cli_command(
            "export", "-w", str(ws.root), "--dry-run", "-o", str(events),
            "--report", str(report), "--json", "--progress", "json",
        ),
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    inputs = [
        dataset
        for line in events.read_text().splitlines()
        for dataset in json.loads(line)["inputs"]
    ]
    assert len({(d["namespace"], d["name"]) for d in inputs}) > 30
    for text in (
        events.read_text(),
        done.stdout.decode(),
        done.stderr.decode(),
        report.read_text(),
    ):
        assert not leaked(secret, text)
    text = subprocess.run(
        cli_command("export", "-w", str(ws.root), "--dry-run", "-o", str(tmp_path / "e2")),
        env=cli_env(tmp_path),
        capture_output=True,
        timeout=120,
    )
    assert text.returncode == 0 and "datasets" in text.stderr.decode()
    assert not leaked(secret, text.stderr.decode(), text.stdout.decode())


# -- the same rule in text: a run's parameters, an error's message (attack F, F6) -------------


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "(psycopg2.OperationalError) (Background: postgresql://etl:PW@db.internal/sales)",
            "(psycopg2.OperationalError) (Background: postgresql://***@db.internal/sales)",
        ),
        ("engine('mysql+pymysql://u:PW@h/db')", "engine('mysql+pymysql://***@h/db')"),
        ("clone https://PW@github.com/o/r.git", "clone https://***@github.com/o/r.git"),
        ("jdbc:oracle:thin:scott/PW@db:1521/svc down", "jdbc:oracle:thin:***@db:1521/svc down"),
        ('connect(host=h, password="P W", user=u)', "connect(host=h, password=***, user=u)"),
        ("login failed: password = PW\nnext line", "login failed: password = ***\nnext line"),
        ("Server=db;Pwd={P;W}}x};y", "Server=db;Pwd=***;y"),
        ("at /p/t%3Bpassword%3DPW%3Bx=1", "at /p/t%3Bpassword%3D***%3Bx=1"),
        ("mail a@b.com: x=1, key error 'k'", "mail a@b.com: x=1, key error 'k'"),
        ("https://h/a@b and day=2026", "https://h/a@b and day=2026"),
    ],
)
def test_a_credential_in_a_text_is_masked(text: str, shown: str) -> None:
    assert masked(text) == shown


def test_a_value_is_masked_as_a_location_reads_it() -> None:
    assert masked("Driver={PG};Pwd=two words;Server=db", location=True) == (
        "Driver={PG};Pwd=***;Server=db"
    )


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("db_password", True),
        ("dbPassword", True),
        ("api_token", True),
        ("apiKey", True),
        ("API_KEY", True),
        ("private_key_path", True),
        ("auth_mode", True),
        ("credentials_file", True),
        ("pwd", True),
        ("dsn", False),
        ("keyspace", False),
        ("author", False),
        ("batch_size", False),
    ],
)
def test_a_run_parameter_is_secret_by_a_word_of_its_name(name: str, secret: bool) -> None:
    assert is_secret_parameter(name) is secret


@settings(max_examples=400, deadline=None, database=None)
@given(
    form=st.integers(0, FORM_COUNT - 1),
    secret=SECRETS,
    host=HOSTS,
    param=PARAMS,
    value=st.booleans(),
)
def test_a_generated_credential_is_masked_in_a_text(
    form: int, secret: str, host: str, param: str, value: bool
) -> None:
    location = written(form, secret, host, param)
    text = location if value else f"could not connect to {location}\n  at line 3"
    shown = masked(text, location=value)
    assert not leaked(secret, shown), (text, shown)
    assert masked(text, location=value) == shown  # deterministic
