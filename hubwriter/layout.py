"""One workspace's hub files, each written whole, as a test or the hub's editor writes them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .audit import gzip_bytes
from .records import Line, line_bytes


class Workspace:
    """The hub's files under ``root`` (made, with the audit folder, when missing).

    ``pretty`` writes a file as the editor saves it (indented, a final newline, text as it is);
    without it, on one line (``json.dumps``'s defaults), as a test writes it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.audit.mkdir(parents=True, exist_ok=True)

    @property
    def audit(self) -> Path:
        """The audit trail's folder, ``.workspace/lineage/audit``."""
        return self.root / ".workspace" / "lineage" / "audit"

    def settings(self, settings: dict[str, Any], *, pretty: bool = False) -> Path:
        """Write ``.workspace/settings.json``."""
        return _write_json(self.root / ".workspace" / "settings.json", settings, pretty)

    def graph(self, graph: dict[str, Any], *, pretty: bool = False) -> Path:
        """Write ``.workspace/lineage/graph.json``."""
        return _write_json(self.root / ".workspace" / "lineage" / "graph.json", graph, pretty)

    def segment(self, name: str, lines: list[Line], *, end_newline: bool = True) -> Path:
        """Write the segment ``name`` whole from ``lines`` (records, text or raw bytes), one a
        line; without ``end_newline`` the last line is left half-written (no newline)."""
        data = b"\n".join(line_bytes(line) for line in lines)
        return self.segment_bytes(name, data + (b"\n" if end_newline else b""))

    def segment_bytes(self, name: str, data: bytes) -> Path:
        """Write the segment ``name`` whole, gzip-compressed when the name ends in ``.gz``."""
        path = self.audit / name
        path.write_bytes(gzip_bytes(data) if name.endswith(".gz") else data)
        return path


def append(segment: Path, *lines: Line) -> None:
    """Append whole lines (records or text; raw bytes as they are, newline included or not) to
    ``segment``, as the hub does: one write each, flushed."""
    with segment.open("ab") as out:
        for line in lines:
            out.write(line if isinstance(line, bytes) else line_bytes(line) + b"\n")
            out.flush()


def gzip_segment(segment: Path) -> Path:
    """Compress the closed ``segment`` as the hub does: its ``.gz`` written whole under another
    name and renamed into place, then the plain one removed; returns the ``.gz``."""
    packed = segment.with_name(segment.name + ".gz")
    partial = segment.with_name(segment.name + ".gz.part")
    partial.write_bytes(gzip_bytes(segment.read_bytes()))
    os.replace(partial, packed)
    segment.unlink()
    return packed


def _write_json(path: Path, value: dict[str, Any], pretty: bool) -> Path:
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n" if pretty else json.dumps(value)
    path.write_text(text, encoding="utf-8")
    return path
