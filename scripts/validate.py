#!/usr/bin/env python3
"""Validate OpenLineage events against the official JSON schemas they name.

Usage: scripts/validate.py FILE.jsonl [FILE.jsonl ...] [--spec DIR]    (- reads stdin)

Each event names its schema (``schemaURL``) and each facet its own (``_schemaURL``): every
event is checked against the first, every facet against the second. The schemas are fetched
from openlineage.io on first use and kept in ~/.cache/openlineage-export/schemas, or read from
DIR, a copy of the spec/ folder of the OpenLineage repository (no network then). Exits 0 when
every event is valid, 1 otherwise; the last line is a summary.

Needs jsonschema 4.18 or later: .venv/bin/pip install jsonschema (the [test] extra has it).
"""

from __future__ import annotations

import argparse
import json
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
    sys.exit("validate.py needs jsonschema 4.18 or later: .venv/bin/pip install jsonschema")

CACHE = Path.home() / ".cache" / "openlineage-export" / "schemas"


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

    def retrieve(uri: str) -> Resource:
        if spec is not None:
            if uri not in known:
                raise LookupError(f"{uri} is not in {spec}")
            return Resource.from_contents(known[uri])
        return Resource.from_contents(fetched(uri))

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE.jsonl")
    parser.add_argument("--spec", type=Path, help="a copy of the OpenLineage spec/ folder")
    args = parser.parse_args()
    registry = registry_for(args.spec)
    valid = invalid = 0
    for name, number, line in lines(args.files):
        problems = []
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"not JSON ({exc.msg})")
            event = None
        refs = list(schema_refs(event)) if event is not None else []
        if event is not None and not any(path == "event" for path, _, _ in refs):
            problems.append("no schemaURL")
        for path, url, value in refs:
            validator = Draft202012Validator({"$ref": url}, registry=registry)
            try:
                problems += [f"{path}: {error.message}" for error in validator.iter_errors(value)]
            except Unresolvable as exc:
                problems.append(f"{path}: cannot load its schema {url} ({exc})")
        if problems:
            invalid += 1
            for problem in problems[:5]:
                print(f"{name}:{number}: {problem}")
        else:
            valid += 1
    print(f"{valid} valid, {invalid} invalid")
    return 1 if invalid or not valid else 0


if __name__ == "__main__":
    sys.exit(main())
