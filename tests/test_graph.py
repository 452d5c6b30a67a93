"""graph.json (hub/graph.py): the pipelines and stages the editor holds, read per the contract."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers import GRAPH, WorkspaceMaker, cli_command, cli_env

from openlineage_export.errors import WorkspaceError
from openlineage_export.hub.graph import MAX_BYTES, NOT_UNICODE, read_graph
from openlineage_export.hub.model import BadEntry, Graph, Pipeline, Stage

DISPLAY = ".workspace/lineage/graph.json"


def read(ws: WorkspaceMaker, content: object | None = None) -> tuple[Graph, list[BadEntry]]:
    file = ws.root / DISPLAY
    if content is not None:
        file.write_text(content if isinstance(content, str) else json.dumps(content))
    bad: list[BadEntry] = []
    return read_graph(file, DISPLAY, bad.append), bad


def test_pipelines_and_stages_are_read_with_what_is_optional_left_out(ws: WorkspaceMaker) -> None:
    graph, bad = read(
        ws,
        {
            "workspace": {"name": "w"},
            "pipelines": [
                {"id": "p", "stages": [{"id": "s", "reads": ["a"], "source": "x.py"}, {"id": "t"}]},
                {"id": "q"},
            ],
        },
    )
    assert bad == []
    assert graph == Graph(
        "w",
        (
            Pipeline("p", stages=(Stage("s", source="x.py", reads=("a",)), Stage("t"))),
            Pipeline("q"),
        ),
    )
    assert graph.pipeline("p").stage("t") == Stage("t")  # type: ignore[union-attr]
    assert graph.pipeline("gone") is None


def test_a_broken_pipeline_is_one_bad_entry_and_the_others_are_kept(ws: WorkspaceMaker) -> None:
    graph, bad = read(
        ws,
        {
            "workspace": {"name": "w"},
            "pipelines": [
                {"id": "good"},
                {"id": 7},
                {"id": "p", "stages": [{"name": "no id"}]},
                "text",
                {"id": "good", "name": "again"},
                {"id": "r", "stages": [{"id": "s", "reads": "a"}]},
            ],
        },
    )
    assert [p.id for p in graph.pipelines] == ["good"]
    assert [str(b) for b in bad] == [
        f"{DISPLAY}: pipelines[1].id must be a non-empty string",
        f"{DISPLAY}: pipelines[2].stages[0]: missing 'id'",
        f"{DISPLAY}: pipelines[3] must be an object",
        f"{DISPLAY}: pipelines[4]: pipeline id 'good' appears twice",
        f"{DISPLAY}: pipelines[5].stages[0].reads must be a list of strings",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, f"{DISPLAY} not found: this folder is not a workspace with a Lineage hub graph"),
        ('{"workspace": ', f"{DISPLAY} is not JSON"),
        ("[" * 5000 + "]" * 5000, f"{DISPLAY} is not JSON ("),  # a reason, in orjson's words
        ('["a"]', f"{DISPLAY} must hold a JSON object"),
        (
            {"format": "lineage-hub/graph@2", "workspace": {"name": "w"}},
            f"{DISPLAY} has format 'lineage-hub/graph@2'; this exporter reads 'lineage-hub/graph@1'",
        ),
        ({"workspace": {"name": "  "}}, f"{DISPLAY} has no workspace name ('workspace.name')"),
        ({"workspace": {"name": "w"}, "pipelines": {}}, f"{DISPLAY}: 'pipelines' must be a list"),
    ],
)
def test_a_graph_that_cannot_be_used_at_all_is_a_workspace_error(
    ws: WorkspaceMaker, content: object, message: str
) -> None:
    if content is None:
        (ws.root / DISPLAY).unlink()
    with pytest.raises(WorkspaceError) as caught:
        read(ws, content)
    assert str(caught.value).startswith(message), str(caught.value)


@pytest.mark.parametrize(
    ("make", "kind"),
    [
        (lambda path: os.mkfifo(path), "a named pipe (FIFO)"),
        (lambda path: path.symlink_to("/dev/zero"), "a link"),  # refused before it is opened
    ],
)
def test_a_graph_that_is_no_file_is_one_line_not_a_hang(
    ws: WorkspaceMaker, tmp_path: Path, make: object, kind: str
) -> None:
    graph = ws.root / DISPLAY
    graph.unlink()
    make(graph)  # type: ignore[operator]
    done = subprocess.run(
        cli_command("export", "--dry-run", "-w", str(ws.root), "-o", "/dev/null"),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr == f"error: cannot read {DISPLAY} (it is {kind}, not a file)\n"


def test_the_test_graph_is_read_whole(ws: WorkspaceMaker) -> None:
    graph, bad = read(ws)
    assert bad == [] and graph.workspace_name == GRAPH["workspace"]["name"]  # type: ignore[index]
    assert [p.id for p in graph.pipelines] == ["daily-sales", "never"]


def test_text_that_is_not_unicode_is_a_bad_entry_of_its_pipeline_and_the_rest_is_read(
    ws: WorkspaceMaker,
) -> None:
    """orjson refuses a lone surrogate (``"\\udcff"``, valid JSON) and a byte that is no UTF-8
    anywhere in the file: the whole graph was refused (exit 3) for one pipeline's description."""
    text = json.dumps(
        {
            "workspace": {"name": "w"},
            "pipelines": [
                {"id": "p", "description": "x\udcff"},
                {"id": "q", "stages": [{"id": "s", "source": "RAW"}]},
                {"id": "r", "stages": [{"id": "t", "reads": ["a", "b\ud800"]}]},
                {"id": "kept", "description": "caf\u00e9 \u6771\u4eac"},
            ],
        }
    ).encode()
    (ws.root / DISPLAY).write_bytes(text.replace(b"RAW", b"src/\xff.py"))
    graph, bad = read(ws)
    assert [p.id for p in graph.pipelines] == ["kept"]
    assert [entry.reason for entry in bad] == [
        f"pipelines[0].description {NOT_UNICODE}",
        f"pipelines[1].stages[0].source {NOT_UNICODE}",
        f"pipelines[2].stages[0].reads {NOT_UNICODE}",
    ]


def test_a_workspace_name_that_is_not_unicode_is_one_line(ws: WorkspaceMaker) -> None:
    with pytest.raises(WorkspaceError, match=r"'workspace.name' is not Unicode text"):
        read(ws, json.dumps({"workspace": {"name": "w\udcff"}, "pipelines": []}))
    with pytest.raises(WorkspaceError, match="is not JSON"):
        read(ws, '{"workspace": {"name": "w"}, "pipelines": [}')


def test_a_graph_larger_than_the_limit_is_one_line_never_read(
    ws: WorkspaceMaker, tmp_path: Path
) -> None:
    """Attack A, 9: a 1 GiB graph.json of blanks (a megabyte of git objects) took 2.1 GB and
    ended in SIGSEGV under a memory cap: a size from outside sizes no memory of ours."""
    graph = ws.root / DISPLAY
    with graph.open("r+b") as stream:  # sparse: no disk, and never read
        stream.truncate(MAX_BYTES + 1)
    done = subprocess.run(
        cli_command("export", "--dry-run", "-w", str(ws.root), "-o", "/dev/null"),
        env=cli_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    assert done.stderr == (
        f"error: cannot read {DISPLAY} (it is larger than {MAX_BYTES:,} bytes)\n"
    )
