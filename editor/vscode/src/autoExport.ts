// Auto-export (openlineage.autoExport, off by default, the user's alone): while the folder is
// open, the CLI's `export --watch` runs as the extension's child and sends each run once it
// ends; the status bar item says what it does. The watch reads the settings once, so a change to
// .workspace/settings.json, to a stored key or to the setting itself starts it again. A manual
// export pauses it (both would take the ledger's lock) and starts it again after.
//
// The child is stopped as Ctrl-C stops it (SIGINT: the requests in flight are answered, the
// ledger kept); its standard input is a pipe it is told to end with (--until-stdin-closes),
// so a window closed or an editor killed without a word ends the watch too.

import * as vscode from "vscode";
import { cliError, Finished, ProgressLine } from "./child";
import { RunOptions } from "./cli";
import { ExportStatusBar } from "./statusBar";
import { Tool } from "./tool";
import { DRY_RUN, dryRunInForce } from "./dryRun";
import * as say from "./say";

export { DRY_RUN };
export const SETTING = "openlineage.autoExport";

export interface AutoExportHost {
  folder: string;
  tool(): Promise<Tool | undefined>;
  /** Runs the tool (cli.ts). */
  run(found: Tool, args: string[], options: RunOptions): Promise<Finished>;
  /** Settings being written reach the file first. */
  settled(): Promise<void>;
  /** The watch's environment (the key, where it may go); undefined: it may not start now
   * (the host said why). */
  environment(): Promise<NodeJS.ProcessEnv | undefined>;
  badEntry(line: ProgressLine): void;
  /** The bad entries said so far are dropped: a watch that starts reads the trail again. */
  clearBadEntries(): void;
  log(line: string): void;
  status: ExportStatusBar;
  /** A run was sent or refused (the RUNS view reads the standing again). */
  ranOne?(): void;
}

interface Running {
  source: vscode.CancellationTokenSource;
  ended: Promise<void>;
}

export class AutoExport implements vscode.Disposable {
  private running: Running | undefined;
  private pauses = 0;
  private queue: Promise<void> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];
  private sent = 0;
  private refused = 0;
  private last = "";
  private restartTimer: NodeJS.Timeout | undefined;
  /** Whether the first decision (on or off) was logged. */
  private said = false;

  /** `settingsChanged`: .workspace/settings.json changed (the watch read it once). */
  constructor(private readonly host: AutoExportHost, secrets: vscode.SecretStorage,
    settingsChanged: vscode.Event<void>) {
    this.disposables.push(vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration(SETTING) || event.affectsConfiguration(DRY_RUN)) {
        void this.apply();
      }
    }));
    this.disposables.push(settingsChanged(() => this.restartSoon()),
      secrets.onDidChange(() => this.restartSoon()));
  }

  /** Whether the user turned it on, in their User settings: it starts sending on its own, so
   * it is the user's alone (the setting's scope is "application": a folder's settings, which
   * travel with the workspace, cannot turn it on; and its User value is the only one read
   * here); and openlineage.dryRun is not on at any level (then nothing is sent: the palette's
   * export is a dry run, and auto-export waits; a folder can turn it on, never off: dryRun.ts). */
  enabled(): boolean {
    return this.wanted() && !dryRunInForce(this.host.folder);
  }

  /** Whether openlineage.autoExport is on in the User settings (its only place). */
  private wanted(): boolean {
    const config = vscode.workspace.getConfiguration("openlineage",
      vscode.Uri.file(this.host.folder));
    return config.inspect<boolean>("autoExport")?.globalValue === true;
  }

  /** Start it if it is on and not paused, stop it if not. */
  apply(): Promise<void> {
    return this.serially(async () => {
      if (!this.said) {
        this.said = true;
        this.host.log(this.enabled() ? "auto-export: on (openlineage.autoExport, in your " +
          "User settings)" : this.wanted() ? `auto-export: waits (${DRY_RUN} is on: ` +
          "nothing is sent while any Settings level turns it on)" : "auto-export: off " +
          "(openlineage.autoExport, in your User settings, turns it on)");
      }
      if (this.enabled() && !this.pauses) {
        await this.start();
      } else {
        await this.stop();
        if (!this.pauses) {
          this.host.status.idle();
        }
      }
    });
  }

  /** `work` (a manual export) with the watch stopped around it, started again after. */
  async paused<T>(work: () => Promise<T>): Promise<T> {
    this.pauses += 1;
    await this.serially(() => this.stop());
    try {
      return await work();
    } finally {
      this.pauses -= 1;
      await this.apply();
    }
  }

  /** Started again (after a burst of changes is over): the watch read the settings and the
   * key once; one that had stopped on a bad setting may start now. */
  private restartSoon(): void {
    if (!this.enabled()) {
      return;
    }
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => {
      void this.serially(() => this.stop()).then(() => this.apply());
    }, 500);
  }

  private serially(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error) => this.host.log(`auto-export: ${error}`));
    return this.queue;
  }

  private async start(): Promise<void> {
    if (this.running) {
      return;
    }
    const found = await this.host.tool();
    if (!found) {
      this.host.status.set("$(error) OpenLineage: auto-export stopped",
        "Auto-export could not start: the exporter is not available.", "error");
      return;
    }
    await this.host.settled();
    const env = await this.host.environment();
    if (!env) {
      this.host.status.set("$(warning) OpenLineage: auto-export waits",
        "Auto-export did not start: see the OpenLineage Export output.", "warning");
      return;
    }
    this.sent = this.refused = 0;
    this.last = "";
    this.host.clearBadEntries();
    this.host.status.set("$(sync~spin) OpenLineage: auto-export starting",
      "Auto-export is on: it exports what is pending, then each run once it ends.");
    this.host.log(`auto-export: on for ${this.host.folder} (${new Date().toISOString()})`);
    const source = new vscode.CancellationTokenSource();
    const args = ["export", "-w", this.host.folder, "--watch", "--until-stdin-closes",
      "--json", "--progress", "json"];
    let error: string | undefined;
    let lastRetry = "";
    const onLine = (line: ProgressLine) => {
      switch (line.event) {
        case "progress":
          if (line.phase !== "reading") {
            this.host.status.set(`$(sync~spin) OpenLineage: exporting ${line.runsDone ?? 0} ` +
              `of ${line.runsTotal ?? 0}`, "Auto-export is on: exporting what is pending first.");
          }
          break;
        case "run":
          this.ran(line);
          break;
        case "watching":
        case "back":
          if (line.event === "back") {
            this.host.log(`auto-export: ${line.destination} answers again`);
          }
          this.following();
          break;
        case "outage":
          this.host.log(`auto-export: ${line.message}; the runs that end meanwhile are sent ` +
            "once it answers");
          this.host.status.set("$(debug-disconnect) OpenLineage: waiting for the server",
            `Auto-export: ${line.message}. The runs that end meanwhile are sent once it answers.`,
            "warning");
          break;
        case "retry": {
          const said = String(line.reason);
          if (said !== lastRetry) {  // one line per reason, not per attempt
            this.host.log(`auto-export: retrying: ${said}`);
            lastRetry = said;
          }
          break;
        }
        case "badEntry":
          this.host.badEntry(line);
          break;
        case "warning":
          this.host.log(`auto-export: warning: ${line.message}`);
          break;
        case "error":
          error = String(line.message);
          break;
      }
    };
    const ended = this.host.run(found, args, { env, onLine, token: source.token, stdin: "pipe" })
      .then((done) => this.ended(done, source.token.isCancellationRequested, error))
      .catch((failure) => this.ended(undefined, false, String(failure)));
    this.running = { source, ended };
  }

  private ran(line: ProgressLine): void {
    if (line.state === "sent") {
      this.sent += 1;
      this.last = `${line.pipeline} ${line.traceId} (${line.status})`;
      this.host.log(`auto-export: sent ${this.last}, ${line.events} events`);
    } else if (line.state === "failed") {
      this.refused += 1;
      this.host.log(`auto-export: refused: ${line.traceId} (${line.pipeline}): ${line.reason}`);
    }
    this.host.ranOne?.();
    this.following();
  }

  private following(): void {
    const refused = this.refused ? ` · ${this.refused} refused` : "";
    this.host.status.set(`$(eye) OpenLineage: following · ${this.sent} sent${refused}`,
      "Auto-export is on: each run is sent once it ends.\n\n" +
      `${this.sent} sent since it started${this.last ? `, the last: ${this.last}` : ""}` +
      (this.refused ? `; ${this.refused} refused (their reasons in the output)` : "") +
      ".\n\nClick for the export status.",
      this.refused ? "warning" : "normal");
  }

  private ended(done: Finished | undefined, asked: boolean, error: string | undefined): void {
    this.running = undefined;
    if (asked) {
      this.host.log(`auto-export: off (${this.sent} sent)`);
      return;
    }
    const reason = error ?? (done ? cliError(done) : "the exporter could not be run");
    this.host.log(`auto-export: stopped: ${reason}`);
    this.host.status.set("$(error) OpenLineage: auto-export stopped",
      `Auto-export stopped: ${reason}\n\nIt starts again when the settings change.`, "error");
    void say.error(`OpenLineage Export: auto-export stopped: ${reason}`);
  }

  private async stop(): Promise<void> {
    const running = this.running;
    if (running) {
      running.source.cancel();
      await running.ended;
      running.source.dispose();
    }
  }

  /** On deactivation: stopped as Ctrl-C stops it, waited for. */
  async shutdown(): Promise<void> {
    await this.serially(() => this.stop());
  }

  dispose(): void {
    clearTimeout(this.restartTimer);
    this.disposables.forEach((d) => d.dispose());
    void this.shutdown();
  }
}
