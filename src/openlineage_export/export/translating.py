"""Steps *check names* and *translate*: the job names that would stand for two jobs, then
the events of each pending run, read from the trail a second time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..deliver.http.held import Holdings
from ..hub.model import BadEntry, BadRecord, Run, quoted
from ..hub.times import ends_before_start
from ..hub.trail import TrailScan
from ..state.answers import Classified
from ..state.index import Winner
from ..translate import modes
from ..translate.encoded import TranslatedRun
from ..translate.events import Translator
from ..translate.names import JobNames, graph_claims, may_clash
from .opening import Opened
from .recording import Recorder


def check_names(opened: Opened, scan: TrailScan, recorder: Recorder) -> JobNames:
    """Step *check names*: the job names that would stand for two different jobs.

    Pipelines and stages of the graph and of the trail (a pipeline deleted from the graph
    still has runs) are all counted; each ambiguous name is one warning, and the runs that
    would use one are refused in :func:`translate`.
    """
    pipelines = scan.pipelines
    if not modes.MODES[opened.translation.server].checks_job_names:
        return JobNames(())  # its job names encode the ids (DataHub's: translate/datahub.py)
    if not may_clash([*pipelines, *(p.id for p in opened.graph.pipelines)]):
        return JobNames(())
    names = JobNames(
        [
            *graph_claims(opened.graph),
            *((p, None) for p in sorted(pipelines)),
            *scan.index.stages_run(),
        ]
    )
    for clash in names.clashes.values():
        recorder.add_warning(
            f"{clash}: the runs that would use it are not exported, so that the "
            "server does not merge two jobs into one; give one of them another id"
        )
    return names


def translate(
    opened: Opened,
    scan: TrailScan,
    plan: Iterable[Classified],
    recorder: Recorder,
    names: JobNames,
    *,
    keep_unchanged: bool,
    held: Holdings | None = None,
) -> Iterator[tuple[TranslatedRun, Winner]]:
    """Step *translate*: the events of each pending run, read from the trail a second time.

    Unchanged runs are counted without being read, unless ``keep_unchanged`` (a report wants
    their events too). A run the server already ``held`` as its events would leave it is
    recorded as accepted, not sent; of a run it holds in part, only the events it lacks go.
    The others are sent if they :func:`goes`.
    """
    translator = modes.translator_for(opened.translation)(opened.graph, opened.translation)
    for run, item in opened.trail.runs(
        scan, _to_read(plan, recorder, keep_unchanged), recorder.bad_entry
    ):
        events = translated(opened, scan, recorder, translator, run, item.winner)
        if events is None:
            continue
        if not item.pending:
            recorder.unchanged(events)
            continue
        if held is not None and names.clash(run) is None:
            lacking = held.missing(events.facts)
            if not lacking:
                recorder.held(events, item.winner)
                continue
            if len(lacking) < len(events):  # a server holding events apart: the rest only
                events = events.only(lacking)
        if goes(opened, scan, recorder, names, run, events, item.winner):
            yield events, item.winner


def translated(
    opened: Opened,
    scan: TrailScan,
    recorder: Recorder,
    translator: Translator,
    run: Run,
    winner: Winner,
) -> TranslatedRun | None:
    """The events of ``run``, or None when they would be too large to build: then a bad entry
    naming the run's line (the runs around it still go; the next export tries it again)."""
    try:
        return translator.translate(run)
    except BadRecord as exc:
        file = opened.trail.display(scan.segments[winner.segment])
        recorder.bad_entry(BadEntry(file, winner.line, str(exc)))
        return None


def goes(
    opened: Opened,
    scan: TrailScan,
    recorder: Recorder,
    names: JobNames,
    run: Run,
    events: TranslatedRun,
    winner: Winner,
) -> bool:
    """Whether a pending run's ``events`` go to the destination: not when its job name is
    ambiguous (refused: a failed run, nothing sent); one that ends before it starts goes as
    recorded, with a warning."""
    for problem in ends_before_start(run):
        recorder.add_warning(
            f"{opened.trail.where(scan, winner)}: run {quoted(run.trace_id)} "
            f"{problem}; exported as recorded"
        )
    clash = names.clash(run)
    if clash is not None:
        recorder.refused(events, winner, f"{clash}; not exported")
        return False
    return True


def _to_read(
    plan: Iterable[Classified], recorder: Recorder, keep_unchanged: bool
) -> Iterator[Classified]:
    for item in plan:
        if item.pending or keep_unchanged:
            yield item
        else:
            recorder.unchanged(None)
