"""Step *open* of an export (and of a watch): the workspace read (its settings, graph and how
its events are shaped), the report, cancel flag and recorder begun, the destination opened
and, when sending, the lock taken and the ledger opened."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..deliver.destination import Destination, Opening, Retry, Supplied
from ..deliver.file import FileDestination
from ..deliver.registry import CATALOGUE, doubts, open_destination
from ..errors import ConfigError
from ..files.whose import Checkouts
from ..host.secrets import LazyStore
from ..host.settings import EventSettings, Settings, load_settings
from ..host.workspace import Workspace
from ..hub.graph import read_graph
from ..hub.model import BadEntry, Graph
from ..hub.trail import AuditTrail
from ..state.folder import state_dir
from ..state.ledger import Ledger, config_fingerprint
from ..state.lock import ExportLock
from ..translate import modes
from ..translate.datasets import job_namespace
from ..translate.events import TranslationConfig
from ..translate.facets import PRODUCER
from .recording import Recorder
from .report import ExportReport, Progress
from .request import ExportRequest


@dataclass(frozen=True)
class Opened:
    """Step *open*: the workspace, its settings and graph, and how its events are shaped."""

    workspace: Workspace
    settings: Settings
    graph: Graph
    translation: TranslationConfig
    fingerprint: bytes
    """What besides a run's record shapes its events: a change makes every run pending."""
    trail: AuditTrail
    namespace_from: str | None = None
    """The workspace's name, when the namespace made from it had to differ from it."""


@dataclass(frozen=True)
class Begun:
    """What an export (and a watch) starts from: its report and cancel flag, the recorder
    that fills the one and reads the other, and the workspace opened."""

    report: ExportReport
    cancel: threading.Event
    recorder: Recorder
    opened: Opened
    environ: Mapping[str, str]


def begin(
    request: ExportRequest,
    on_progress: Callable[[Progress], None] | None,
    on_retry: Callable[[Retry], None] | None,
) -> Begun:
    """Step *begin*: the report, the cancel flag (the host's, else one of its own), the
    recorder (telling the host through ``on_progress`` and ``on_retry``) and the workspace."""
    environ = request.environ or {}
    report = ExportReport(destination="dry run" if request.dry_run else "", dry_run=request.dry_run)
    cancel = request.cancel or threading.Event()
    recorder = Recorder(
        report,
        cancel,
        on_bad_entry=request.on_bad_entry,
        on_run=request.on_run,
        on_progress=on_progress,
        on_retry=on_retry,
        on_warning=request.on_warning,
    )
    opened = open_workspace(request.workspace, request.settings, environ, recorder.bad_entry)
    report.namespace = modes.job_namespace(opened.translation)
    report.namespace_from = opened.namespace_from
    return Begun(report, cancel, recorder, opened, environ)


def opened_destination(
    stack: contextlib.AsyncExitStack, request: ExportRequest, begun: Begun
) -> Destination:
    """The destination opened (closed by ``stack``), and named to the recorder."""
    destination = open_for(request, begun.opened, begun.environ, begun.recorder)
    stack.push_async_callback(destination.close)
    begun.recorder.destination(destination.name, destination.redact)
    return destination


def open_workspace(
    path: Path | str,
    settings: Settings | None,
    environ: Mapping[str, str],
    on_bad: Callable[[BadEntry], None],
) -> Opened:
    """Step *open*: read the workspace's settings and graph."""
    workspace = Workspace.open(path)
    settings = settings or load_settings(workspace, CATALOGUE, environ)
    graph = read_graph(
        workspace.graph_file,
        workspace.display(workspace.graph_file),
        on_bad,
        root=workspace.root,
    )
    events = settings.of(EventSettings)
    namespace = job_namespace(events.namespace, graph.workspace_name)
    translation = TranslationConfig(
        namespace=namespace.name,
        source_repository_url=events.source_repository_url,
        source_repository_version=events.source_repository_version,
        server=modes.mode_of(settings).name,
    )
    # The server's shape joins the fingerprint only when it is not the generic one, so that
    # switching a destination to DataHub's shape sends every run again, and nothing else moves.
    shape = () if translation.server == modes.GENERIC.name else (translation.server,)
    fingerprint = config_fingerprint(
        translation.namespace,
        translation.source_repository_url,
        translation.source_repository_version,
        PRODUCER,
        *shape,
    )
    trail = AuditTrail(workspace.audit_dir, display_root=workspace.root)
    return Opened(workspace, settings, graph, translation, fingerprint, trail, namespace.made_from)


def take_ledger(
    stack: contextlib.AsyncExitStack,
    request: ExportRequest,
    opened: Opened,
    destination: Destination,
    recorder: Recorder,
) -> Ledger:
    """Step *open*, when sending: the destination's doubts said, the lock on (workspace,
    destination) taken and the ledger opened, both let go by ``stack``. The recorder is
    handed the ledger later (``recorder.use_ledger(ledger, *ledger_keys(opened))``), once
    what the export asks for holds: one refused leaves no trace in it."""
    environ = request.environ or {}
    for doubt in doubts(opened.settings):
        recorder.warn_host(doubt)  # said at once: the host shows it before the first refusal
    # Taken first and let go last, after the ledger holds everything this export did.
    folder = request.ledger.path.parent if request.ledger else state_dir(environ)
    checkouts = Checkouts.around(opened.workspace.root, environ)
    lock = ExportLock.acquire(folder, opened.workspace.key, destination.name, checkouts)
    stack.callback(lock.release)
    ledger = request.ledger or Ledger.open(environ, checkouts)
    stack.callback(ledger.close if request.ledger is None else ledger.flush)
    return ledger


def open_for(
    request: ExportRequest, opened: Opened, environ: Mapping[str, str], recorder: Recorder
) -> Destination:
    """The destination: the dry run's output stream, else the one the settings name."""
    if request.dry_run:
        if request.output is None:
            raise ConfigError("a dry run needs an output stream")
        return FileDestination.to_stream(request.output)
    return open_destination(
        Opening(
            opened.settings,
            request.secrets or LazyStore(environ, Checkouts.around(opened.workspace.root, environ)),
            environ,
            opened.workspace.root,
            Supplied(
                clients=request.host_clients(),
                on_retry=recorder.retry,
                on_warning=recorder.warn_host,
                on_notice=recorder.notice,
            ),
        )
    )


def ledger_keys(opened: Opened) -> tuple[str, bytes, str]:
    """What the ledger knows an export by: the workspace, its settings' fingerprint and its
    namespace."""
    return opened.workspace.key, opened.fingerprint, opened.translation.namespace
