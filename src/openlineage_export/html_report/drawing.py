"""The lineage drawn by Graphviz, as inline SVG: one drawing per pipeline job and an overview.

A pipeline's drawing reads left to right in data-flow order, as Marquez's lineage view does:
the datasets it reads first on the left, its stage jobs in the order data flows through them,
its final outputs on the right. The overview shows each pipeline as one node and joins
pipelines through the datasets they share; a click on a pipeline opens its drawing.

Every drawing goes to one ``dot`` run (one process, whatever the number of pipelines).
Graphviz is a program, not a library: when ``dot`` is missing or fails, :func:`draw` returns a
note to show in place of the drawings, and the report is written all the same.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass

import graphviz  # type: ignore[import-untyped]

from ..files.programs import find_program, run_program
from ..files.whose import NOWHERE, Checkouts
from ..terminal.text import shown
from .details import JobKey
from .lineage import LineageViews, Overview, PipelineView, Sharing

FONT = "Helvetica,Arial,sans-serif"
WRAP = 32
"""Names longer than this are broken over several lines (never cut): a drawing stays narrow
enough to read at the page's width."""

_BREAKS = (" ", "/", ".:", "_-")

SCALE = 0.8
"""Every drawing is shown at this share of Graphviz's size, the same for all so their text is
the same size (about 11 px); one wider than the page scrolls sideways in its own box."""

LAYOUT_BUDGET = 10_000
"""Boxes ``dot`` is given to lay out, all drawings together (:func:`layout_size`); past it the
graph is not drawn, only listed. dot's time grows faster than the boxes: a chain of stages
all reading one dataset took 3 s at 50 stages (2,552 boxes), over 2 minutes at 100 (10,102);
with its passes limited (``nslimit``), 1 s at 100 and 7 s at 200 (40,202)."""

NAMED_SHARERS = 2
"""Other pipelines named on a shared dataset; more are counted."""

INSTALL_HINT = "install Graphviz (Debian/Ubuntu: apt-get install graphviz)"

REFUSED_COLOUR = "#7b3fa0"
"""Refused by the server, across the page (a failed run on the trail is red)."""

_SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
_TITLE = re.compile(r"<title>[^<]*</title>\n?")
_WIDTH = re.compile(r'<svg width="([0-9.]+)pt"')
_FONT = re.compile(f' font-family="{re.escape(FONT)}"')

_GRAPH = {
    "rankdir": "LR",
    "fontname": FONT,
    "nodesep": "0.18",
    "ranksep": "0.3",
    "bgcolor": "transparent",
    "pad": "0.1",
    # Network simplex's passes at most twice the nodes (the drawings of small graphs are the
    # same): a drawing is never worth more.
    "nslimit": "2",
    "nslimit1": "2",
}
_NODE = {
    "fontname": FONT,
    "fontsize": "10",
    "shape": "box",
    "style": "rounded,filled",
    "fillcolor": "#e8effa",
    "color": "#4a6fa5",
    "penwidth": "1.2",
    "margin": "0.12,0.05",
}
_DATASET = {"shape": "cylinder", "fillcolor": "#fdf6e3", "color": "#b08d3c"}
_SHARED = {"fillcolor": "#e3f4f1", "color": "#2c7a6b", "penwidth": "1.8"}
_REFUSED = {"style": "rounded,filled,dashed", "color": REFUSED_COLOUR, "fillcolor": "#f3ebf8"}
_REFUSED_EDGE = {"style": "dashed", "color": REFUSED_COLOUR}
_WRITE = {"color": "#2f4f7f"}


@dataclass(frozen=True, slots=True)
class Drawing:
    """The drawings as inline SVG, or why there are none (``note``)."""

    overview: str | None
    pipelines: tuple[str, ...] = ()
    """One SVG per pipeline view, in the views' order."""
    note: str | None = None
    """Shown in the page in place of the drawings."""
    warning: str | None = None
    """One line for the host to print (the report is written all the same)."""


def draw(lineage: LineageViews, namespace: str, checkouts: Checkouts = NOWHERE) -> Drawing:
    """Lay every drawing out with one ``dot`` run and return them as SVG markup to inline.

    Names in ``namespace`` (the page's job namespace, shown once) are drawn without it.
    ``dot`` is found only in absolute ``PATH`` folders that lie in no checkout
    (``checkouts``; ``files/programs.py``): never a ``./dot`` a checkout committed.
    """
    if not lineage.pipelines:
        return Drawing(None, (), "No run was exported, so there is no graph to draw.")
    boxes = _overview_size(lineage.overview) + sum(map(_view_size, lineage.pipelines))
    if boxes > LAYOUT_BUDGET:
        return Drawing(
            None,
            (),
            f"The graph is not drawn: it would be about {boxes:,} boxes to lay out (long "
            f"flows, datasets read or written across them), more than the {LAYOUT_BUDGET:,} "
            "Graphviz is given. Jobs and datasets are listed below.",
            f"the report's lineage graph is not drawn: about {boxes:,} boxes to lay out, more "
            f"than the {LAYOUT_BUDGET:,} Graphviz is given (its jobs and datasets are listed)",
        )
    anchors = {
        view.pipeline: anchor(index) for index, view in enumerate(lineage.pipelines, start=1)
    }
    sources = [overview_dot(lineage.overview, namespace, anchors).source]
    sources += [pipeline_dot(view, namespace).source for view in lineage.pipelines]
    dot = find_program("dot", os.environ, checkouts)
    if dot is None:
        return Drawing(
            None,
            (),
            f"The graph is not drawn: Graphviz's dot program was not "
            f"found; {INSTALL_HINT}. Jobs and datasets are listed below.",
            f"the report's lineage graph is not drawn: Graphviz's dot was not found "
            f"({INSTALL_HINT})",
        )
    try:
        out = run_program(dot, ["-Kdot", "-Tsvg"], "\n".join(sources).encode("utf-8"))
    except OSError as exc:  # ProgramFailed: what dot said
        first = (str(exc.strerror or exc).strip().splitlines() or ["no message"])[0]
        return Drawing(
            None,
            (),
            f"The graph is not drawn: Graphviz's dot failed ({first}). "
            "Jobs and datasets are listed below.",
            f"the report's lineage graph is not drawn: Graphviz's dot failed ({first})",
        )
    svgs = [_clean(svg) for svg in _SVG.findall(out.decode("utf-8", "replace"))]
    if len(svgs) != len(sources):  # cannot happen with a dot that answered: never guess
        return Drawing(
            None,
            (),
            f"The graph is not drawn: Graphviz's dot gave {len(svgs)} drawings for {len(sources)}.",
        )
    return Drawing(svgs[0], tuple(svgs[1:]))


Box = tuple[str, JobKey]
"""A node of a drawing: a job (``j``) or a dataset (``d``) by its key."""


def layout_size(nodes: list[Box], edges: list[tuple[Box, Box]]) -> int:
    """About how many boxes ``dot`` lays out for a drawing: its nodes, and one for each rank an
    edge passes between its ends. Ranked as dot ranks first (an edge that closes a cycle turned
    round, as a depth-first search meets it; each node a rank after the furthest one that leads
    to it), which its later passes only shorten. Linear in the nodes and edges."""
    after: dict[Box, list[Box]] = {node: [] for node in nodes}
    for tail, head in edges:
        if tail != head:
            after.setdefault(tail, []).append(head)
            after.setdefault(head, [])
    dag: dict[Box, list[Box]] = {node: [] for node in after}
    state: dict[Box, bool] = {}  # False: on the search's path; True: done
    finished: list[Box] = []
    for root in after:
        if root in state:
            continue
        state[root] = False
        path = [(root, iter(after[root]))]
        while path:
            node, heads = path[-1]
            for head in heads:
                if head not in state:
                    dag[node].append(head)
                    state[head] = False
                    path.append((head, iter(after[head])))
                    break
                if state[head] is False:  # on the path: this edge closes a cycle
                    dag[head].append(node)
                else:
                    dag[node].append(head)
            else:
                state[node] = True
                finished.append(node)
                path.pop()
    rank = dict.fromkeys(dag, 0)
    passed = 0
    for node in reversed(finished):  # a topological order of ``dag``
        for head in dag[node]:
            rank[head] = max(rank[head], rank[node] + 1)
    for node, targets in dag.items():
        passed += sum(rank[target] - rank[node] - 1 for target in targets)
    return len(dag) + passed


def _view_size(view: PipelineView) -> int:
    nodes = [("j", stage) for stage, _ in view.stages] + [("d", d) for d, _ in view.datasets]
    return layout_size(nodes, _box_edges(view.reads, view.writes))


def _overview_size(overview: Overview) -> int:
    nodes = [("j", p) for p, _ in overview.pipelines] + [("d", d) for d, _ in overview.datasets]
    return layout_size(nodes, _box_edges(overview.reads, overview.writes))


def _box_edges(
    reads: tuple[tuple[JobKey, JobKey, bool], ...], writes: tuple[tuple[JobKey, JobKey, bool], ...]
) -> list[tuple[Box, Box]]:
    return [(("d", d), ("j", j)) for d, j, _ in reads] + [
        (("j", j), ("d", d)) for j, d, _ in writes
    ]


def anchor(index: int) -> str:
    """The page's id for the drawing of the ``index``-th pipeline view (from 1)."""
    return f"lineage-{index}"


def overview_dot(
    overview: Overview, namespace: str, anchors: dict[JobKey, str]
) -> graphviz.Digraph:
    """Pipelines as boxes linking to their drawings (``anchors``: pipeline -> page id), joined
    through the datasets they share; groups of pipelines that share nothing are packed side by
    side, not stacked in one column."""
    dot = _digraph("overview", pack="true")
    ids: dict[JobKey, str] = {}
    for index, (pipeline, delivered) in enumerate(overview.pipelines):
        node_id = ids[pipeline] = f"p{index}"
        stages = overview.stage_counts.get(pipeline, 0)
        count = f"{stages} stage job{'s' if stages != 1 else ''}" if stages else "no stage ran"
        dot.node(
            node_id,
            label=label(pipeline, namespace, bold=True, note=count),
            URL=f"#{anchors[pipeline]}",
            tooltip="Show this pipeline's drawing",
            **{
                "class": "pipeline",
                "fillcolor": "#f5f7fb",
                "color": "#4a6fa5",
                **({} if delivered else _REFUSED),
            },
        )
    _datasets(dot, overview.datasets, ids, namespace, {}, every_one_shared=True)
    _edges(dot, overview.reads, overview.writes, ids)
    return dot


def pipeline_dot(view: PipelineView, namespace: str) -> graphviz.Digraph:
    """One pipeline's stage jobs and datasets, laid out left to right as data flows."""
    dot = _digraph("pipeline")
    ids: dict[JobKey, str] = {}
    if not view.stages:
        dot.node("p0", label="no stage ran", shape="plaintext", style="", fontcolor="#6b7280")
    for index, (stage, delivered) in enumerate(view.stages):
        node_id = ids[stage] = f"j{index}"
        dot.node(
            node_id,
            label=label(stage, namespace),
            **{"class": "job", **({} if delivered else _REFUSED)},
        )
    _datasets(dot, view.datasets, ids, namespace, view.shared)
    _edges(dot, view.reads, view.writes, ids)
    return dot


def _digraph(name: str, **graph: str) -> graphviz.Digraph:
    dot = graphviz.Digraph(name)
    dot.attr("graph", **_GRAPH, **graph)
    dot.attr("node", **_NODE)
    dot.attr("edge", color="#7b8494", arrowsize="0.7", penwidth="1.1")
    return dot


def _datasets(
    dot: graphviz.Digraph,
    datasets: tuple[tuple[JobKey, bool], ...],
    ids: dict[JobKey, str],
    namespace: str,
    shared: dict[JobKey, Sharing],
    *,
    every_one_shared: bool = False,
) -> None:
    for index, (dataset, delivered) in enumerate(datasets):
        node_id = ids[dataset] = f"d{index}"
        sharing = shared.get(dataset)
        is_shared = every_one_shared or sharing is not None
        # One dict: later colours replace earlier ones (never the same keyword twice).
        dot.node(
            node_id,
            label=label(dataset, namespace, note=_shared_note(sharing)),
            **{
                "class": "dataset shared" if is_shared else "dataset",
                **_DATASET,
                **(_SHARED if is_shared else {}),
                **({} if delivered else _REFUSED),
            },
        )


def _edges(
    dot: graphviz.Digraph,
    reads: tuple[tuple[JobKey, JobKey, bool], ...],
    writes: tuple[tuple[JobKey, JobKey, bool], ...],
    ids: dict[JobKey, str],
) -> None:
    for source, target, delivered in reads:
        dot.edge(
            ids[source], ids[target], **{"class": "read", **({} if delivered else _REFUSED_EDGE)}
        )
    for source, target, delivered in writes:
        dot.edge(
            ids[source],
            ids[target],
            **{"class": "write", **_WRITE, **({} if delivered else _REFUSED_EDGE)},
        )


def _shared_note(sharing: Sharing | None) -> str | None:
    if sharing is None:
        return None
    parts = []
    for verb, pipelines in (("written", sharing.written_by), ("read", sharing.read_by)):
        if pipelines:
            names = [name for _, name in pipelines[:NAMED_SHARERS]]
            more = len(pipelines) - len(names)
            parts.append(f"{verb} by {', '.join(names)}" + (f" +{more} more" if more else ""))
    return "also " + "; ".join(parts)


def label(key: JobKey, namespace: str = "", *, bold: bool = False, note: str | None = None) -> str:
    """An HTML-like label: the namespace small and grey unless it is ``namespace`` (the page
    shows that one once), the name below it, and a ``note`` small and grey under the name."""
    name = _lines(key[1])
    lines = [] if key[0] == namespace else [_small(key[0])]
    lines.append(f"<B>{name}</B>" if bold else name)
    if note:
        lines.append(_small(note))
    return "<" + "".join(f'{line}<BR ALIGN="LEFT"/>' for line in lines) + ">"


def _small(text: str) -> str:
    lines = '<BR ALIGN="LEFT"/>'.join(html.escape(part) for part in wrap(text, WRAP + 8))
    return f'<FONT POINT-SIZE="9" COLOR="#5f6b7a">{lines}</FONT>'


def _lines(text: str) -> str:
    return '<BR ALIGN="LEFT"/>'.join(html.escape(part) for part in wrap(text))


def wrap(text: str, width: int = WRAP) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after a separator (a space,
    ``/``, ``.``, ``_``, ...) where there is one in the second half of the line; never cut
    short."""
    text = shown(text) or " "  # as the page and the terminal show it: no control, no surrogate
    lines = []
    while len(text) > width:
        cut = width
        for marks in _BREAKS:  # the strongest separator that is there
            at = max(text.rfind(mark, width // 2, width) for mark in marks)
            if at >= 0:
                cut = at + 1
                break
        lines.append(text[:cut])
        text = text[cut:]
    return [*lines, text]


def _clean(svg: str) -> str:
    """Drop comments, our node ids (``<title>``, shown as tooltips) and the font on every text
    (the page's style sheet sets it once: a large graph is lighter); and size it at
    :data:`SCALE` (Graphviz gives points; a CSS pixel is 3/4 of one)."""
    svg = _COMMENT.sub("", svg)
    svg = _FONT.sub("", svg)
    svg = _WIDTH.sub(
        lambda m: f'{m[0]} style="width:{float(m[1]) * 4 / 3 * SCALE:.0f}px"', svg, count=1
    )
    return _TITLE.sub("", svg).strip()
