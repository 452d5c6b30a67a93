"""The lineage graph drawn by Graphviz: pipelines as boxes holding their stage jobs, datasets
as cylinders, reads and writes as arrows, laid out by ``dot`` and inlined as SVG.

Graphviz is a program, not a library: when ``dot`` is missing or fails, :func:`draw` returns a
note to show in place of the drawing, and the report is written all the same.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import graphviz  # type: ignore[import-untyped]

from .collector import JobKey, LineageGraph

FONT = "Helvetica,Arial,sans-serif"
WRAP = 60
"""Names longer than this are broken over several lines (never cut)."""

INSTALL_HINT = "install Graphviz (Debian/Ubuntu: apt-get install graphviz)"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)
_TITLE = re.compile(r"<title>[^<]*</title>\n?")
_FONT = re.compile(f' font-family="{re.escape(FONT)}"')


@dataclass(frozen=True, slots=True)
class Drawing:
    """The graph as inline SVG, or why there is none (``note``)."""

    svg: str | None
    note: str | None = None
    """Shown in the page in place of the drawing."""
    warning: str | None = None
    """One line for the host to print (the report is written all the same)."""


def draw(graph: LineageGraph) -> Drawing:
    """Lay the graph out with ``dot`` and return it as SVG markup ready to inline."""
    if graph.nodes == 0:
        return Drawing(None, "No run was exported, so there is no graph to draw.")
    try:
        svg = to_dot(graph).pipe(format="svg", encoding="utf-8")
    except graphviz.ExecutableNotFound:
        return Drawing(None, f"The graph is not drawn: Graphviz's dot program was not found; "
                             f"{INSTALL_HINT}. Jobs and datasets are listed below.",
                       f"the report's lineage graph is not drawn: Graphviz's dot was not found "
                       f"({INSTALL_HINT})")
    except (graphviz.CalledProcessError, OSError) as exc:
        detail = getattr(exc, "stderr", None) or str(exc)
        if isinstance(detail, bytes):
            detail = detail.decode("utf-8", "replace")
        first = (detail.strip().splitlines() or ["no message"])[0]
        return Drawing(None, f"The graph is not drawn: Graphviz's dot failed ({first}). "
                             "Jobs and datasets are listed below.",
                       f"the report's lineage graph is not drawn: Graphviz's dot failed ({first})")
    return Drawing(_clean(svg))


def to_dot(graph: LineageGraph) -> graphviz.Digraph:
    """The DOT source: one cluster per pipeline job, its stage jobs inside, datasets outside.

    Every name goes into an HTML-like label, escaped; node ids are ours (``p3``, ``j7``,
    ``d12``), so nothing from the trail is ever read by dot as syntax.
    """
    dot = graphviz.Digraph("lineage")
    dot.attr("graph", rankdir="LR", fontname=FONT, nodesep="0.2", ranksep="0.5",
             bgcolor="transparent", pad="0.1")
    dot.attr("node", fontname=FONT, fontsize="11", shape="box", style="rounded,filled",
             fillcolor="#e8effa", color="#4a6fa5", penwidth="1.2", margin="0.12,0.05")
    dot.attr("edge", color="#7b8494", arrowsize="0.7", penwidth="1.1")

    jobs: dict[JobKey, str] = {}
    by_pipeline: dict[JobKey, list[JobKey]] = {}
    for stage, pipeline in graph.stages.items():
        by_pipeline.setdefault(pipeline, []).append(stage)
    for p_index, (pipeline, delivered) in enumerate(sorted(graph.pipelines.items())):
        with dot.subgraph(name=f"cluster_p{p_index}") as box:
            box.attr(label=label(pipeline, bold=True), labeljust="l", fontsize="11", margin="10",
                     style="rounded,filled" + ("" if delivered else ",dashed"),
                     fillcolor="#f5f7fb", color="#9aa9c4" if delivered else "#c0392b",
                     **{"class": "pipeline" + ("" if delivered else " refused")})
            stages = sorted(by_pipeline.get(pipeline, ()))
            if not stages:
                box.node(f"p{p_index}", label="no stage ran", shape="plaintext",
                         style="", fontcolor="#6b7280")
            for stage in stages:
                node_id = jobs[stage] = f"j{len(jobs)}"
                style = {} if stage in graph.delivered_jobs else _REFUSED
                box.node(node_id, label=label(stage), **{"class": "job"}, **style)

    datasets: dict[JobKey, str] = {}
    for d_index, (dataset, delivered) in enumerate(sorted(graph.datasets.items())):
        node_id = datasets[dataset] = f"d{d_index}"
        # One dict: a refused dataset's colours replace the defaults (not twice the keyword).
        dot.node(node_id, label=label(dataset), shape="cylinder",
                 **{"fillcolor": "#fdf6e3", "color": "#b08d3c", "class": "dataset",
                    **({} if delivered else _REFUSED)})
    for (dataset, job), delivered in sorted(graph.reads.items()):
        if dataset in datasets and job in jobs:
            dot.edge(datasets[dataset], jobs[job], **{"class": "read"},
                     **({} if delivered else _REFUSED_EDGE))
    for (job, dataset), delivered in sorted(graph.writes.items()):
        if dataset in datasets and job in jobs:
            dot.edge(jobs[job], datasets[dataset],
                     **{"color": "#2f4f7f", "class": "write",
                        **({} if delivered else _REFUSED_EDGE)})
    return dot


_REFUSED = {"style": "rounded,filled,dashed", "color": "#c0392b", "fillcolor": "#fbeaea"}
_REFUSED_EDGE = {"style": "dashed", "color": "#c0392b"}


def label(key: JobKey, *, bold: bool = False) -> str:
    """An HTML-like label: the namespace small and grey, the name below it."""
    namespace, name = (_lines(part) for part in key)
    if bold:
        name = f"<B>{name}</B>"
    return (f'<<FONT POINT-SIZE="9" COLOR="#5f6b7a">{namespace}</FONT>'
            f'<BR ALIGN="LEFT"/>{name}<BR ALIGN="LEFT"/>>')


def _lines(text: str) -> str:
    text = _CONTROL.sub("\N{REPLACEMENT CHARACTER}", text) or " "
    parts = [text[i:i + WRAP] for i in range(0, len(text), WRAP)]
    return '<BR ALIGN="LEFT"/>'.join(html.escape(part) for part in parts)


def _clean(svg: str) -> str:
    """Drop the XML prolog, comments, our node ids (``<title>``, shown as tooltips) and the
    font on every text (the page's style sheet sets it once: a large graph is lighter)."""
    svg = _PROLOG.sub("", svg, count=1)
    svg = _COMMENT.sub("", svg)
    svg = _FONT.sub("", svg)
    return _TITLE.sub("", svg).strip()
