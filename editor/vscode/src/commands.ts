// The palette's commands: the export (and its dry run) with a cancellable progress
// notification, bad trail entries in the Problems panel and one notification at the end; the
// export status; the last report.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { AutoExport, DRY_RUN } from "./autoExport";
import { cliError, Finished, ProgressLine } from "./child";
import { Cli, NAME } from "./cli";
import { dryRunInForce } from "./dryRun";
import { Keys } from "./keys";
import { ReportPanel } from "./report";
import { RunsView } from "./runsView";
import { SettingsMirror } from "./settingsMirror";
import { ExportStatusBar } from "./statusBar";
import * as say from "./say";

/** The final notification's offer: this export's report, in the report pane. */
const OPEN_REPORT = "Open Report";
/** Its offer of the export's jobs in Marquez's web UI (openlineage.marquez.webUrl set). */
const OPEN_IN_MARQUEZ = "Open in Marquez";

interface ExportResult {
  destination: string;
  dryRun: boolean;
  /** `held`: of the unchanged, the runs the server was found to hold (a first export asks). */
  runs: { total: number; sent: number; unchanged: number; held?: number; failed: number };
  /** A dry run sends nothing: it says what it built (`built`), with `sent` 0. */
  events: { sent: number; built?: number };
  failedRuns: { traceId: string; pipeline: string; reason: string }[];
  cancelled: boolean;
  outage: string | null;
  exitCode: number;
}

/** What the commands use of the rest of the extension. */
export interface CommandsHost {
  context: vscode.ExtensionContext;
  cli: Cli;
  mirror: SettingsMirror | undefined;
  keys: Keys;
  runs: RunsView;
  status: ExportStatusBar;
  report: ReportPanel;
  problems: vscode.DiagnosticCollection;
  output: vscode.OutputChannel;
  auto: AutoExport | undefined;
}

export class Commands implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly host: CommandsHost) {
    this.disposables.push(
      // A keybinding or task may pass {"dryRun": true} (or false); else openlineage.dryRun says
      // (on at any level: a folder can turn it on, never off, dryRun.ts).
      vscode.commands.registerCommand("openlineage.export", (args?: unknown) => this.exportRuns(
        asked(args, "dryRun") ?? dryRunInForce(host.cli.root),
        asked(args, "dryRun") === undefined)),
      vscode.commands.registerCommand("openlineage.exportDryRun",
        () => this.exportRuns(true, false)),
      vscode.commands.registerCommand("openlineage.storeApiKey", () => host.keys.store()),
      vscode.commands.registerCommand("openlineage.showStatus", () => this.showStatus()),
      vscode.commands.registerCommand("openlineage.openReport", () => this.openReport()),
    );
  }

  private needRoot(): string | undefined {
    const root = this.host.cli.root;
    if (!root) {
      void say.error(`${NAME}: open a workspace folder (the one holding ` +
        ".workspace/) first");
    }
    return root;
  }

  /** `bySetting`: openlineage.dryRun decided it (said in the outcome, so a person who forgot
   * it is on knows why nothing was sent). */
  private async exportRuns(dryRun: boolean, bySetting: boolean): Promise<void> {
    const auto = this.host.auto;
    if (!dryRun && auto?.enabled()) {
      return auto.paused(() => this.exportOnce(false, false));  // both would take the ledger's lock
    }
    return this.exportOnce(dryRun, bySetting);
  }

  private async exportOnce(dryRun: boolean, bySetting: boolean): Promise<void> {
    const { cli, keys, problems, status, report: panel, runs } = this.host;
    const folder = this.needRoot();
    const found = folder && await cli.tool();
    if (!folder || !found) {
      return;
    }
    await this.host.mirror?.settled();
    const storage = (this.host.context.storageUri ?? this.host.context.globalStorageUri).fsPath;
    fs.mkdirSync(storage, { recursive: true });
    const report = path.join(storage, dryRun ? "dry-run-report.html" : "export-report.html");
    const events = path.join(storage, "dry-run-events.jsonl");
    const args = ["export", "-w", folder, "--json", "--progress", "json", "--report", report];
    if (dryRun) {
      args.push("--dry-run", "-o", events);
    }
    const env = await keys.environment(found, dryRun, keys.askModal);
    if (!env) {
      return;
    }
    fs.rmSync(report, { force: true });  // an export that writes none never shows an older one
    const bad = new Map<string, vscode.Diagnostic[]>();
    let error: string | undefined;
    problems.clear();
    cli.log(`${dryRun ? "dry run" : "export"} of ${folder} (${new Date().toISOString()})`);
    status.set(`$(sync~spin) OpenLineage: ${dryRun ? "dry run" : "exporting"}`,
      "An export is running: its progress is in its notification.");
    let lastRetry = "";
    const done = await say.withProgress(dryRun ? "OpenLineage: dry run" :
      "OpenLineage: exporting", true, (progress, token) => {
      const shown = new ProgressText();
      const onLine = (line: ProgressLine) => {
        switch (line.event) {
          case "progress": {
            const { message, percent } = shown.update(line);
            say.progress(progress, message, percent - shown.reported);
            shown.reported = percent;
            break;
          }
          case "badEntry":
            addBadEntry(bad, folder, line);
            break;
          case "retry":
            say.progress(progress, `retrying: ${line.reason} (attempt ${line.attempt})`);
            if (String(line.reason) !== lastRetry) {  // the output: once per reason
              lastRetry = String(line.reason);
              cli.log(`retrying: ${lastRetry}`);
            }
            break;
          case "warning":
            cli.log(`warning: ${line.message}`);
            break;
          case "message":
            cli.log(String(line.message));
            say.progress(progress, String(line.message));
            break;
          case "summary":
            cli.log(String(line.text));
            break;
          case "error":
            error = String(line.message);
            cli.log(`error: ${error}`);
            break;
        }
      };
      token.onCancellationRequested(() => cli.log("cancel: stopping as Ctrl-C does (the " +
        "requests in flight are answered, what was accepted is kept)"));
      return cli.run(found, args, { env, onLine, token });
    });
    done.messages.forEach(cli.log);
    problems.set([...bad].map(([file, list]) => [vscode.Uri.file(file), list]));
    const result = parseResult(done);
    if (fs.existsSync(report)) {
      await panel.remember(report);
    }
    this.host.output.show(true);
    if (!result) {
      const why = error ?? cliError(done);
      status.idle(`failed: ${why}`);
      void say.error(`${NAME}: ${why}`);
      return;
    }
    if (dryRun && !result.cancelled && fs.existsSync(events)) {
      // The events and the report first: the notification below is the last thing shown.
      const document = await vscode.workspace.openTextDocument(vscode.Uri.file(events));
      await vscode.window.showTextDocument(document, { preview: false });
      panel.show(report);
    } else if (panel.open) {
      panel.show(report);  // an open report is this export's, never an earlier one's
    }
    for (const failed of result.failedRuns) {
      cli.log(`refused: ${failed.traceId} (${failed.pipeline}): ${failed.reason}`);
    }
    const badCount = [...bad.values()].reduce((n, list) => n + list.length, 0);
    const problemsNote = !badCount ? "" :
      `; ${badCount === 1 ? "1 bad trail entry" : `${badCount} bad trail entries`} in Problems`;
    const [shown, said] = outcome(result, dryRun, problemsNote +
      (bySetting && dryRun ? ` (${DRY_RUN} is on in Settings)` : ""));
    const standing = await runs.refresh().catch((failure) => cli.log(`runs: ${failure}`));
    status.idle(said, standing ? runs.summary(standing) : undefined);
    const marquez = dryRun ? undefined : runs.marquezPage();
    const offers = [...(fs.existsSync(report) ? [OPEN_REPORT] : []),
      ...(marquez ? [OPEN_IN_MARQUEZ] : [])];
    void shown(`${NAME}: ${said}`, ...offers).then((choice) => {
      if (choice === OPEN_REPORT) {
        panel.show(report);
      } else if (choice === OPEN_IN_MARQUEZ && marquez) {
        void vscode.env.openExternal(marquez);
      }
    });
  }

  private async showStatus(): Promise<void> {
    const { cli } = this.host;
    const folder = this.needRoot();
    const found = folder && await cli.tool();
    if (!folder || !found) {
      return;
    }
    await this.host.mirror?.settled();
    const done = await cli.run(found, ["status", "-w", folder]);
    if (done.code !== 0) {
      void say.error(`${NAME}: ${cliError(done)}`);
      return;
    }
    const text = done.stdout.trim();
    cli.log(`status of ${folder}:`);
    cli.log(text);
    this.host.output.show(true);
    void say.info(`${NAME}: ${text.split("\n").slice(0, 3).join("; ")}`);
  }

  private async openReport(): Promise<void> {
    if (!this.host.report.showLast()) {
      void say.info(`${NAME}: no report yet: run OpenLineage: ` +
        "Export Lineage Runs (or OpenLineage: Dry Run) first");
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

/** The runs not sent because the destination has them, as the CLI's summary says it. */
function kept(runs: ExportResult["runs"]): string {
  const held = runs.held ?? 0;
  const unchanged = runs.unchanged - held;
  return (unchanged ? `, ${unchanged} unchanged` : "") +
    (held ? `, ${held} already held by the server` : "");
}

/** A bad trail entry (a `badEntry` line) as a warning at its file and line. */
export function addBadEntry(bad: Map<string, vscode.Diagnostic[]>, root: string,
  line: ProgressLine): void {
  const file = path.resolve(root, String(line.file));
  const at = Math.max(0, Number(line.line ?? 1) - 1);
  const diagnostic = say.diagnostic(new vscode.Range(at, 0, at, 10_000),
    `bad entry, not exported: ${line.reason}`, vscode.DiagnosticSeverity.Warning);
  diagnostic.source = NAME;
  bad.set(file, [...(bad.get(file) ?? []), diagnostic]);
}

/** How an export ended, in one sentence, and how loud to say it. */
type Say = (message: string, ...offers: string[]) => Thenable<string | undefined>;

function outcome(result: ExportResult, dryRun: boolean, problemsNote: string): [Say, string] {
  const error: Say = say.error;
  const warning: Say = say.warn;
  const information: Say = say.info;
  if (result.cancelled) {
    return [warning, `cancelled after ${result.runs.sent} of ${result.runs.total} runs; what ` +
      "was accepted is kept, the next export sends the rest"];
  }
  if (result.outage) {
    return [error, result.outage];
  }
  if (result.failedRuns.length) {
    const first = result.failedRuns[0];
    const runs = result.runs.failed === 1 ? "1 run" : `${result.runs.failed} runs`;
    return [warning, `${runs} refused by ${result.destination}: ${first.reason}${problemsNote}`];
  }
  if (dryRun) {
    return [information, `dry run: ${result.runs.total} runs, ` +
      `${result.events.built ?? result.events.sent} events built; nothing was sent` +
      problemsNote];
  }
  return [information, `exported to ${result.destination}: ${result.runs.sent} of ` +
    `${result.runs.total} runs sent (${result.events.sent} events)` + kept(result.runs) +
    problemsNote];
}

function parseResult(done: Finished): ExportResult | undefined {
  try {
    return JSON.parse(done.stdout) as ExportResult;
  } catch {
    return undefined;
  }
}

/** `args[name]` when a keybinding or task passed it as a boolean. */
function asked(args: unknown, name: string): boolean | undefined {
  const value = args && typeof args === "object" ? (args as Record<string, unknown>)[name] : undefined;
  return typeof value === "boolean" ? value : undefined;
}

/** Progress lines -> the notification's text (phase, runs done, ETA) and percentage. */
class ProgressText {
  reported = 0;
  private phase = "";
  private phaseStarted = 0;

  update(line: ProgressLine): { message: string; percent: number } {
    const phase = String(line.phase);
    const elapsed = Number(line.elapsed ?? 0);
    if (phase !== this.phase) {
      this.phase = phase;
      this.phaseStarted = elapsed;
    }
    if (phase === "reading") {
      const total = Number(line.bytesTotal ?? 0);
      const share = total ? Number(line.bytesDone ?? 0) / total : 0;
      return { message: `reading the trail (${Math.round(share * 100)}%)`, percent: share * 10 };
    }
    const done = Number(line.runsDone ?? 0);
    const total = Number(line.runsTotal ?? 0);
    const spent = elapsed - this.phaseStarted;
    let eta = "";
    if (done > 0 && total > done && spent > 0) {
      eta = ` · ETA ${duration(((total - done) * spent) / done)}`;
    }
    const verb = phase === "building" ? "building" : "sending";
    const failed = Number(line.runsFailed ?? 0);
    const message = `${verb}: ${done} of ${total} runs · ${line.eventsBuilt ?? line.eventsSent ?? 0} events` +
      (failed ? ` · ${failed} failed` : "") + eta;
    return { message, percent: Math.max(this.reported, 10 + (total ? (90 * done) / total : 0)) };
  }
}

/** Seconds as a person reads them: 42s, 7m, 1h 5m. */
export function duration(seconds: number): string {
  if (seconds < 60) {
    return `${Math.max(1, Math.round(seconds))}s`;
  }
  if (seconds < 3600) {
    return `${Math.round(seconds / 60)}m`;
  }
  return `${Math.floor(seconds / 3600)}h ${Math.round((seconds % 3600) / 60)}m`;
}
