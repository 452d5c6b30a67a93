#!/usr/bin/env python3
"""Validate OpenLineage events against the official JSON schemas they name.

Usage: scripts/validate.py FILE.jsonl [FILE.jsonl ...] [--spec DIR]    (- reads stdin)

Each event names its schema (``schemaURL``) and each facet its own (``_schemaURL``): every
event is checked against the first, every facet against the second. The schemas are read from
a copy of the spec/ folder of the OpenLineage repository: DIR, else $OPENLINEAGE_SPEC_DIR, else
../shared/openlineage-spec next to this checkout when it is there (no network then); without
one they are fetched from openlineage.io on first use and kept in
~/.cache/openlineage-export/schemas. A schema that cannot be loaded (offline, not in the copy)
never makes an event invalid: it is said once, and the event counted as not checked.

Exits 0 when every event is valid, 1 when one is invalid, 2 when none is invalid but some
could not be checked; the last line is a summary.

Needs jsonschema 4.18 or later: scripts/demo.sh installs it (as scripts/setup.sh --validate, or
--test, does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

try:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.exceptions import Unresolvable
except ImportError:
    sys.exit("validate.py needs jsonschema 4.18 or later: scripts/setup.sh --validate installs it")

CACHE = Path.home() / ".cache" / "openlineage-export" / "schemas"
SHARED_SPEC = Path(__file__).resolve().parent.parent.parent / "shared" / "openlineage-spec"
"""The copy of the spec next to this checkout, when there is one."""
HOW_TO_POINT = (
    "point --spec DIR (or OPENLINEAGE_SPEC_DIR) at a copy of the spec/ folder of "
    "the OpenLineage repository"
)


class SchemaMissing(Exception):
    """A schema that could not be loaded: the event is not checked against it."""


def spec_folder(given: Path | None) -> Path | None:
    """The spec copy to read: --spec, else $OPENLINEAGE_SPEC_DIR, else the shared copy."""
    if given is not None:
        return given
    if os.environ.get("OPENLINEAGE_SPEC_DIR"):
        return Path(os.environ["OPENLINEAGE_SPEC_DIR"])
    return SHARED_SPEC if SHARED_SPEC.is_dir() else None


def local_schemas(spec: Path) -> dict[str, Any]:
    """Every schema under ``spec`` by its ``$id``."""
    found = {}
    for path in sorted(spec.rglob("*.json")):
        schema = json.loads(path.read_text())
        if isinstance(schema, dict) and "$id" in schema:
            found[schema["$id"]] = schema
    return found


def fetched(uri: str) -> Any:
    """The schema at ``uri``, from the cache or the web."""
    cached = CACHE / uri.split("://", 1)[-1]
    if not cached.is_file():
        with urllib.request.urlopen(uri, timeout=30) as answer:
            data = answer.read()
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(data)
    return json.loads(cached.read_text())


def registry_for(spec: Path | None) -> Registry:
    known = local_schemas(spec) if spec is not None else {}
    offline: list[str] = []  # the first network failure: no more waiting on the network

    def retrieve(uri: str) -> Resource:
        if spec is not None:
            if uri not in known:
                raise SchemaMissing(f"it is not in {spec}")
            return Resource.from_contents(known[uri])
        if offline:
            raise SchemaMissing(offline[0])
        try:
            return Resource.from_contents(fetched(uri))
        except OSError as exc:
            offline.append(f"openlineage.io could not be reached ({exc})")
            raise SchemaMissing(offline[0]) from None

    return Registry(retrieve=retrieve)  # type: ignore[call-arg]


def schema_refs(value: Any, where: str = "") -> Iterator[tuple[str, str, Any]]:
    """(path, schema URL, object) of the event and of every facet in it."""
    if isinstance(value, dict):
        for key in ("schemaURL", "_schemaURL"):
            if isinstance(value.get(key), str):
                yield where or "event", value[key], value
        for key, item in value.items():
            yield from schema_refs(item, f"{where}.{key}" if where else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from schema_refs(item, f"{where}[{index}]")


def lines(names: list[str]) -> Iterator[tuple[str, int, str]]:
    for name in names:
        stream = sys.stdin if name == "-" else open(name, encoding="utf-8")  # noqa: SIM115
        with stream:
            for number, line in enumerate(stream, 1):
                if line.strip():
                    yield name, number, line


def missing_cause(exc: BaseException) -> SchemaMissing | None:
    """The :class:`SchemaMissing` behind a referencing error, if that is what it is."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, SchemaMissing):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE.jsonl")
    parser.add_argument(
        "--spec",
        type=Path,
        help="a copy of the OpenLineage spec/ folder "
        "(default: $OPENLINEAGE_SPEC_DIR, else ../shared/openlineage-spec, "
        "else openlineage.io)",
    )
    args = parser.parse_args()
    registry = registry_for(spec_folder(args.spec))
    valid = invalid = unchecked = 0
    missing: dict[str, str] = {}  # schema URL -> why it could not be loaded, said once
    for name, number, line in lines(args.files):
        problems = []
        not_checked = False
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"not JSON ({exc.msg})")
            event = None
        refs = list(schema_refs(event)) if event is not None else []
        if event is not None and not any(path == "event" for path, _, _ in refs):
            problems.append("no schemaURL")
        for path, url, value in refs:
            if url.split("#")[0] in missing:
                not_checked = True
                continue
            validator = Draft202012Validator({"$ref": url}, registry=registry)
            try:
                problems += [f"{path}: {error.message}" for error in validator.iter_errors(value)]
            except Unresolvable as exc:
                cause = missing_cause(exc)
                if cause is None:
                    raise
                not_checked = True
                missing[url.split("#")[0]] = str(cause)
        if problems:
            invalid += 1
            for problem in problems[:5]:
                print(f"{name}:{number}: {problem}")
        elif not_checked:
            unchecked += 1
        else:
            valid += 1
    if missing:
        first, why = next(iter(missing.items()))
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        print(
            f"cannot load the schema {first} ({why}){more}: what they describe is not "
            f"checked; {HOW_TO_POINT}"
        )
    print(
        f"{valid} valid, {invalid} invalid"
        + (
            f", {unchecked} not checked whole ({len(missing)} schemas not loaded)"
            if unchecked
            else ""
        )
    )
    if invalid:
        return 1
    return 2 if unchecked or not valid else 0


if __name__ == "__main__":
    sys.exit(main())
