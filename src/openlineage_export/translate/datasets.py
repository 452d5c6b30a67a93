"""Dataset naming: where the data lives -> OpenLineage (namespace, name).

Follows the OpenLineage dataset naming conventions, as openlineage-python's naming helpers
build them where the location has their shape (``spec.py``, checked against them).
Credentials, query strings and fragments in a location never reach a name. A path relative to
the workspace root is named in the namespace ``workspace://<workspace name>``, so it is the
same dataset on every machine.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, unquote, urlsplit

from . import spec
from .bounded import cached_when_short
from .locations import without_credentials, without_secret_parameters

_NAMESPACE_UNSAFE = re.compile(r"[^A-Za-z0-9_.:/@+\-]")
"""What Marquez keeps in a namespace as it is (``OpenLineageDao.formatNamespaceName``; its
``NamespaceName`` pattern also takes ``;`` and ``=``, but ingestion rewrites those)."""
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+._\-]*):(.*)", re.DOTALL)

DEFAULT_PORTS = {
    "postgres": 5432,
    "mysql": 3306,
    "kafka": 9092,
    "redshift": 5439,
    "sqlserver": 1433,
    "oracle": 1521,
    "db2": 50000,
    "trino": 8080,
    "hive": 10000,
    "teradata": 1025,
    "cassandra": 9042,
    "crate": 5432,
    "oceanbase": 2881,
}
SCHEME_ALIASES = {
    "postgresql": "postgres",
    "s3a": "s3",
    "s3n": "s3",
    "mssql": "sqlserver",
    "gcs": "gs",
    "mariadb": "mysql",
}
DB_SCHEMES = frozenset(
    {
        "postgres",
        "mysql",
        "redshift",
        "sqlserver",
        "oracle",
        "db2",
        "trino",
        "hive",
        "teradata",
        "cassandra",
        "crate",
        "oceanbase",
        "snowflake",
    }
)
"""Database schemes: the path is a table (``db.schema.table``), the host its server."""
_PATH_SCHEMES = {"file", "hdfs", "dbfs"}  # names keep their leading slash


def workspace_namespace(workspace_name: str) -> str:
    """The namespace of datasets named by a path relative to the workspace root."""
    return f"workspace://{namespace_safe(workspace_name)}"


@dataclass(frozen=True, slots=True)
class JobNamespace:
    """The namespace of the jobs, and where it came from."""

    name: str
    made_from: str | None
    """The workspace's name, when the namespace had to be changed from it to be one a server
    accepts (``acme analytics`` -> ``acme-analytics``); None when set, or used as it is."""


def job_namespace(configured: str | None, workspace_name: str) -> JobNamespace:
    """The jobs' namespace: ``openlineage.namespace`` when set, else the workspace's name made
    safe for servers (:func:`namespace_safe`)."""
    if configured is not None:
        return JobNamespace(configured, None)
    name = namespace_safe(workspace_name)
    return JobNamespace(name, workspace_name if name != workspace_name else None)


def namespace_safe(text: str) -> str:
    """``text`` with each character a lineage server refuses in a namespace replaced by ``-``.

    Marquez rewrites such characters (into ``_``) in a job namespace and answers 400 (then
    fails on later reads) for them in a dataset namespace, so no namespace we emit may carry
    them. ``-`` rather than Marquez's ``_``, so that ``acme analytics`` and ``acme_analytics``
    stay two namespaces; at most 1024 characters, as Marquez allows.
    """
    return _NAMESPACE_UNSAFE.sub("-", text.strip())[:1024] or "-"


class DatasetNamer:
    """Names the datasets of one workspace; cached, as a trail names the same data over and over."""

    def __init__(self, workspace_name: str) -> None:
        self._relative_namespace = workspace_namespace(workspace_name)
        self.name = cached_when_short(self._safe_name, len, 4096)
        """The (namespace, name) of the data at a location: cached when the location is no
        longer than :data:`~.bounded.CACHED_KEY_LIMIT`, else worked out again."""

    def _safe_name(self, location: str) -> tuple[str, str]:
        # Credentials out first (locations.py), and once more from the name, whose
        # percent-encoding is decoded ('t%3Bpassword%3DPW' is named 't;password=PW').
        namespace, name = self._name(without_credentials(location))
        return namespace_safe(namespace), without_secret_parameters(name)

    def _name(self, location: str) -> tuple[str, str]:
        match = _SCHEME.fullmatch(location)
        if match is None or len(match.group(1)) == 1:  # no scheme, or a drive letter
            return self._path(location)
        scheme = match.group(1).lower()
        scheme = SCHEME_ALIASES.get(scheme, scheme)
        rest = match.group(2)
        if not rest.startswith("//"):
            return _opaque(scheme, rest)
        try:
            parts = _urlsplit(f"x:{rest}")
        except ValueError:  # a host urllib refuses: '[' never closed, NFKC turning into '/'...
            return _unsplittable(scheme, rest)
        host = (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError:
            port = None
        path = unquote(parts.path)
        # In abfss/wasbs the part before '@' is the container; elsewhere it is a credential.
        authority = (
            parts.netloc if scheme in ("abfss", "wasbs") else parts.netloc.rpartition("@")[2]
        )
        return _hierarchical(scheme, authority, host, port, path)

    def _path(self, location: str) -> tuple[str, str]:
        path = location.replace("\\", "/")
        if path.startswith("/"):
            return "file", posixpath.normpath(path)
        normal = posixpath.normpath(path)
        return self._relative_namespace, normal


_urlsplit: Callable[[str], SplitResult] = getattr(urlsplit, "__wrapped__", urlsplit)
"""``urlsplit`` without the cache Python gives it (3.11: the last 128 strings split, whole):
a location may be as long as a trail's line, and ours are cached above."""


def _unsplittable(scheme: str, rest: str) -> tuple[str, str]:
    """``scheme://authority/path`` split by hand, credentials, query and fragment dropped."""
    authority, _, path = re.split(r"[?#]", rest[2:], maxsplit=1)[0].partition("/")
    return f"{scheme}://{authority.rpartition('@')[2].lower()}", unquote(path) or "/"


def _opaque(scheme: str, rest: str) -> tuple[str, str]:
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]  # a query or fragment is never a name
    if scheme == "bigquery":
        parts = rest.split(".")
        if len(parts) == 3 and all(part.strip() for part in parts):
            return spec.bigquery(parts[0], parts[1], parts[2])
        return "bigquery", rest
    return scheme, rest


def _hierarchical(
    scheme: str, authority: str, host: str, port: int | None, path: str
) -> tuple[str, str]:
    try:
        return _conventional(scheme, authority, host, port, path)
    except ValueError:
        # openlineage-python's helpers refuse a part that is blank (a bucket of one space):
        # such a location is still named, the generic way.
        return _generic(scheme, authority, path.lstrip("/"))


def _conventional(
    scheme: str, authority: str, host: str, port: int | None, path: str
) -> tuple[str, str]:
    """The naming convention of ``scheme``, as openlineage-python's helpers name it."""
    stripped = path.lstrip("/")
    if scheme == "file":
        if host in ("", "localhost"):
            return "file", posixpath.normpath("/" + stripped) if stripped else "/"
        return spec.remote_file(host, path or "/")
    if scheme in ("s3", "gs") and host and stripped:
        return spec.s3(authority, stripped) if scheme == "s3" else spec.gcs(authority, stripped)
    if scheme == "kafka" and host:
        return spec.kafka(host, str(port or DEFAULT_PORTS["kafka"]), stripped or "-")
    if scheme == "postgres" and host:
        pieces = stripped.replace("/", ".").split(".")
        if len(pieces) == 3 and all(piece.strip() for piece in pieces):
            return spec.postgres(
                host, str(port or DEFAULT_PORTS["postgres"]), pieces[0], pieces[1], pieces[2]
            )
    if scheme == "mysql" and host:
        pieces = stripped.replace("/", ".").split(".")
        if len(pieces) == 2 and all(piece.strip() for piece in pieces):
            return spec.mysql(host, str(port or DEFAULT_PORTS["mysql"]), pieces[0], pieces[1])
    if scheme in DB_SCHEMES and host:
        default = DEFAULT_PORTS.get(scheme)
        where = f"{host}:{port or default}" if (port or default) else host
        return f"{scheme}://{where}", stripped.replace("/", ".")
    return _generic(scheme, authority, stripped)


def _generic(scheme: str, authority: str, stripped: str) -> tuple[str, str]:
    # Everything else (hdfs, abfss, wasbs, dbfs, custom stores): namespace = scheme://authority.
    where = authority.lower() if scheme not in ("abfss", "wasbs") else authority
    name = (
        posixpath.normpath("/" + stripped)
        if scheme in _PATH_SCHEMES and stripped
        else stripped or "/"
    )
    return f"{scheme}://{where}", name
