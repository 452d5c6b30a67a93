"""The export, as one library call a host makes: hub -> translate -> deliver.

A host (the editor, or our CLI) hands in what it owns: the workspace, its settings, a secrets
store, its HTTP client, a progress callback and a cancel flag. Nothing here prints or exits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import httpx

from .deliver.destination import Destination, RunOutcome
from .deliver.engine import deliver
from .deliver.http import HttpDestination, build_client, check_key_transport
from .deliver.jsonl import JsonLinesDestination
from .deliver.ledger import Ledger, config_fingerprint
from .deliver.retry import RetryPolicy
from .errors import ConfigError, DestinationUnreachable
from .host.secrets import SecretStore, default_store, resolve_api_key
from .host.settings import Settings, load_settings
from .host.workspace import Workspace
from .hub.graph import read_graph
from .hub.index import Winner
from .hub.model import BadEntry, Graph
from .hub.trail import AuditTrail, TrailScan
from .report import ExportReport, FailedRun, Progress, RunResult
from .translate.datasets import namespace_safe
from .translate.events import TranslatedRun, TranslationConfig, Translator
from .translate.facets import PRODUCER


@dataclass(frozen=True)
class ExportRequest:
    """Everything a host hands to :func:`run_export`; only ``workspace`` is required."""

    workspace: Path | str
    dry_run: bool = False
    output: BinaryIO | None = None
    """Where a dry run writes its JSON Lines (required for a dry run)."""
    settings: Settings | None = None
    """Resolved settings; default: read from the workspace (and ``environ``)."""
    environ: Mapping[str, str] | None = None
    """Environment for OPENLINEAGE_* overrides; None means no overrides."""
    secrets: SecretStore | None = None
    http: httpx.Client | httpx.BaseTransport | None = None
    """The host's HTTP surface: a configured client, or a transport to build one around."""
    on_bad_entry: Callable[[BadEntry], None] | None = None
    on_progress: Callable[[Progress], None] | None = None
    on_run: Callable[[RunResult], None] | None = None
    """Called once per editor run with its events and what became of it (for reports)."""
    cancel: threading.Event | None = None
    full: bool = False
    """Send every run again, even those the destination already accepted."""
    ledger: Ledger | None = None
    """The export ledger; default: the user's (see ``deliver.ledger``). Never used by a dry run."""


def run_export(request: ExportRequest) -> ExportReport:
    """Export the workspace's runs; returns the report (raises only for config/workspace errors)."""
    workspace = Workspace.open(request.workspace)
    settings = request.settings or load_settings(workspace.root, request.environ)
    cancel = request.cancel or threading.Event()
    report = ExportReport(destination="dry run" if request.dry_run else "", dry_run=request.dry_run)

    def on_bad(entry: BadEntry) -> None:
        report.add_bad(entry)
        if request.on_bad_entry is not None:
            request.on_bad_entry(entry)

    graph = read_graph(workspace.graph_file, workspace.display(workspace.graph_file), on_bad)
    config = translation_config(settings, graph)
    report.namespace = config.namespace
    owned_client: httpx.Client | None = None
    destination: Destination
    if request.dry_run:
        if request.output is None:
            raise ConfigError("a dry run needs an output stream")
        destination = JsonLinesDestination(request.output)
    else:
        destination, owned_client = open_destination(settings, request)
        report.destination = destination.name
    ledger: Ledger | None = None
    trail = AuditTrail(workspace.audit_dir, display_root=workspace.root)
    scan: TrailScan | None = None
    try:
        scan = trail.scan(on_bad)
        report.runs_total = scan.runs
        report.never_run = never_run(graph, scan)
        translator = Translator(graph, config)
        winners = scan.index.in_trail_order()
        destination_id = 0
        fingerprint = events_fingerprint(config)
        if not request.dry_run:
            ledger = request.ledger or Ledger.open(request.environ or {})
            destination_id = ledger.destination_id(str(workspace.root), destination.name)
            ledger.started(destination_id)
            if not request.full:
                winners = ledger.classify(scan.index, destination_id, fingerprint)
        in_flight: dict[str, Winner] = {}

        def progress() -> None:
            if request.on_progress is not None:
                request.on_progress(Progress(
                    report.runs_sent + report.runs_failed + report.runs_unchanged,
                    report.runs_total, report.events_sent, report.runs_failed))

        def pending_only(all_winners: Iterator[Winner]) -> Iterator[Winner]:
            for winner in all_winners:
                if winner.pending:
                    yield winner
                else:
                    report.runs_unchanged += 1
                    progress()

        def translated() -> Iterator[TranslatedRun]:
            chosen = winners if request.on_run is not None else pending_only(winners)
            for run, winner in trail.runs(scan, chosen):
                events = translator.translate(run)
                if not winner.pending:
                    report.runs_unchanged += 1
                    assert request.on_run is not None
                    request.on_run(RunResult(events, "unchanged"))
                    progress()
                    continue
                in_flight[events.trace_id] = winner
                yield events

        def on_outcome(run: TranslatedRun, outcome: RunOutcome) -> None:
            winner = in_flight.pop(run.trace_id)
            report.events_sent += outcome.accepted
            if outcome.delivered:
                report.runs_sent += 1
                state = "built" if request.dry_run else "sent"
            elif not cancel.is_set():
                report.add_failed(FailedRun(run.trace_id, run.run_id, run.pipeline,
                                            outcome.error or "", outcome.accepted))
                state = "failed"
            else:
                state = "interrupted"
            if ledger is not None and state in ("sent", "failed"):
                ledger.record(destination_id, winner, run.run_id, fingerprint,
                              delivered=state == "sent", events=outcome.accepted,
                              reason=outcome.error)
            if request.on_run is not None:
                request.on_run(RunResult(run, state, outcome.error))
            progress()

        try:
            deliver(translated(), destination, on_outcome, cancel)
        except DestinationUnreachable as exc:
            report.outage = str(exc)
        report.cancelled = cancel.is_set()
        if ledger is not None:
            ledger.finished(destination_id)
    finally:
        destination.close()
        if owned_client is not None:
            owned_client.close()
        if ledger is not None and request.ledger is None:
            ledger.close()
        elif ledger is not None:
            ledger.commit()
        if scan is not None:
            scan.index.close()
    return report


def events_fingerprint(config: TranslationConfig) -> bytes:
    """What besides a run's record shapes its events: a change makes every run pending again."""
    return config_fingerprint(config.namespace, config.source_repository_url,
                              config.source_repository_version, PRODUCER)


def translation_config(settings: Settings, graph: Graph) -> TranslationConfig:
    """The translation settings: namespace (the setting, else the workspace name) and repo."""
    return TranslationConfig(
        namespace=settings.namespace or namespace_safe(graph.workspace_name),
        source_repository_url=settings.source_repository_url,
        source_repository_version=settings.source_repository_version)


def never_run(graph: Graph, scan: TrailScan) -> list[str]:
    """Pipelines of the graph with no run on the trail: OpenLineage is a log of runs."""
    return [p.id for p in graph.pipelines if p.id not in scan.pipelines]


def open_destination(settings: Settings,
                     request: ExportRequest) -> tuple[Destination, httpx.Client | None]:
    """The destination the settings name, and the HTTP client we built for it (to close)."""
    if settings.transport != "kafka":
        return _http_destination(settings, request)
    from .deliver.kafka import KafkaConfig, KafkaDestination  # loads librdkafka: only if used
    from .errors import MissingSecret
    from .host.settings import KAFKA_PASSWORD_ENV

    if not settings.kafka_bootstrap_servers or not settings.kafka_topic:
        raise ConfigError("openlineage.transport is kafka: set openlineage.kafka.bootstrapServers "
                          "and openlineage.kafka.topic (or OPENLINEAGE_KAFKA_BOOTSTRAP_SERVERS "
                          "and OPENLINEAGE_KAFKA_TOPIC), or use --dry-run")
    environ = request.environ or {}
    password = environ.get(KAFKA_PASSWORD_ENV) or None
    name = settings.kafka_sasl_password_secret_ref
    if password is None and name is not None:
        store = request.secrets or default_store(environ)
        password = store.get(name)
        if not password:
            raise MissingSecret(
                f"the secret '{name}' named by openlineage.kafka.sasl.password.secretRef is not "
                f"in the secrets store ({store.description}); store it with: "
                f"openlineage-export secrets set {name}")
    config = KafkaConfig(
        settings.kafka_bootstrap_servers, settings.kafka_topic,
        client_id=settings.kafka_client_id, security_protocol=settings.kafka_security_protocol,
        sasl_mechanism=settings.kafka_sasl_mechanism, sasl_username=settings.kafka_sasl_username,
        sasl_password=password, compression=settings.kafka_compression,
        ca_location=str(settings.tls_ca_bundle) if settings.tls_ca_bundle else None,
        verify_certificates=settings.tls_verify, request_timeout=settings.timeout,
        delivery_timeout=settings.retry_max_time or settings.timeout,
        allow_insecure_password=settings.allow_insecure_key)
    return KafkaDestination(config, concurrency=settings.concurrency), None


def _http_destination(settings: Settings,
                      request: ExportRequest) -> tuple[HttpDestination, httpx.Client | None]:
    url = settings.events_url
    if url is None:
        raise ConfigError("openlineage.url is not set: set it with "
                          "'openlineage-export settings set openlineage.url http://localhost:5000' "
                          "(or OPENLINEAGE_URL), or use --dry-run")
    store = request.secrets or default_store(request.environ or {})
    api_key = resolve_api_key(settings, store, request.environ or {})
    check_key_transport(url, api_key is not None, settings.allow_insecure_key)
    owned = None
    if isinstance(request.http, httpx.Client):
        client = request.http
    else:
        verify: bool | str = (str(settings.tls_ca_bundle) if settings.tls_ca_bundle
                              else settings.tls_verify)
        client = owned = build_client(timeout=settings.timeout, verify=verify,
                                      concurrency=settings.concurrency, transport=request.http)
    destination = HttpDestination(
        client, url, api_key=api_key, gzip_body=settings.compression == "gzip",
        concurrency=settings.concurrency, retry=RetryPolicy(max_time=settings.retry_max_time))
    return destination, owned
