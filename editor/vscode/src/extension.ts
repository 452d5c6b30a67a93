// OpenLineage Export in VS Code: a thin host over the Python tool (openlineage-export), which
// does every part of the export; the extension runs it with `--progress json --json` and shows
// what it says. A module per concern, wired here:
//
//   cli.ts            the tool: installed on first use, run as a child, its answers read
//   settingsFile.ts   .workspace/settings.json, watched once; the others take its event
//   settingsMirror.ts VS Code's settings -> that file, through the CLI
//   keys.ts           the keys (VS Code's secret storage, the SECRETS view) and where they go
//   runsView.ts       the RUNS view; inForceView.ts the IN FORCE view
//   autoExport.ts     the watch that exports each run once it ends
//   commands.ts       the palette's commands: export, dry run, status, report
//   report.ts         the report's webview; statusBar.ts the status bar item

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { AutoExport, SETTING as AUTO_EXPORT, DRY_RUN } from "./autoExport";
import { Cli, NAME } from "./cli";
import { addBadEntry, Commands } from "./commands";
import { Keys } from "./keys";
import { ReportPanel } from "./report";
import { RunsStanding, RunsView, WEB_URL } from "./runsView";
import { KeyRing } from "./secretsView";
import { SettingsFile } from "./settingsFile";
import { Property, SettingsMirror } from "./settingsMirror";
import { ExportStatusBar } from "./statusBar";
import { InForceView } from "./inForceView";

/** The editor's own settings: not the tool's, never in .workspace/settings.json. */
const EDITOR_ONLY = new Set([AUTO_EXPORT, DRY_RUN, WEB_URL]);

let shutdown: (() => Promise<void>) | undefined;
let settle: (() => Promise<void>) | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel(NAME);
  const problems = vscode.languages.createDiagnosticCollection("openlineage-export");
  const log = (line: string) => output.appendLine(line);
  const root = workspaceRoot();
  // The tool's settings, which .workspace/settings.json holds; not the editor's own.
  const properties = Object.fromEntries(Object.entries(
    (context.extension.packageJSON.contributes.configuration.properties ?? {}) as
      Record<string, Property>).filter(([key]) => !EDITOR_ONLY.has(key)));
  startJsonSettingsMachinery();
  const status = new ExportStatusBar(context.workspaceState);
  const report = new ReportPanel(context);
  const ring = new KeyRing(context);
  const cli = new Cli(context, root, log, () => ring.held());
  context.subscriptions.push(output, problems, status, report, ring);

  const settings = root ? new SettingsFile(root) : undefined;
  // First of its listeners: what the others read next is the changed file.
  settings?.onDidChange(() => cli.forget(), undefined, context.subscriptions);
  const mirror = settings &&
    new SettingsMirror(settings, properties, (key, value) => cli.writeSetting(key, value), log);
  settle = mirror && (() => mirror.settled());
  if (settings && mirror) {
    context.subscriptions.push(settings, mirror);
    void mirror.enqueue(() => mirror.pullFromFile());
  }

  const keys = new Keys(ring, cli, settings, mirror);
  const runs = new RunsView({
    // The file as it is: a view being drawn never writes what is being typed.
    standing: async () => root ? cli.json<RunsStanding>(["status", "--runs", "--json", "-w", root]) :
      { error: "open a workspace folder" },
    log,
  });
  const inForce = new InForceView(cli);
  settings?.onDidChange(() => inForce.refresh(), undefined, context.subscriptions);
  context.subscriptions.push(keys, runs, inForce);

  const auto = root && settings ? new AutoExport({
    folder: root,
    tool: () => cli.tool(),
    run: (found, args, options) => cli.run(found, args, options),
    settled: () => mirror?.settled() ?? Promise.resolve(),
    environment: async () => {
      const found = await cli.tool();
      return found && keys.environment(found, false,
        keys.askLater(async () => { await auto?.apply(); }));
    },
    badEntry: (line) => {
      const bad = new Map<string, vscode.Diagnostic[]>();
      addBadEntry(bad, root, line);
      for (const [file, list] of bad) {
        const uri = vscode.Uri.file(file);
        problems.set(uri, [...(problems.get(uri) ?? []), ...list]);
      }
    },
    clearBadEntries: () => problems.clear(),
    log,
    status,
    ranOne: () => runs.refreshSoon(),
  }, context.secrets, settings.onDidChange) : undefined;
  if (auto) {
    context.subscriptions.push(auto);
    shutdown = () => auto.shutdown();
    void auto.apply();
  }
  // Where the runs stand, read at start (installing the exporter on first use): the status
  // bar's tooltip says it from the first minute, not only after an export in this window.
  if (root) {
    void runs.refresh().then((standing) => {
      if (standing) {
        status.standingIs(runs.summary(standing), !auto?.enabled());
      }
    });
  }

  context.subscriptions.push(new Commands({
    context, cli, mirror, keys, runs, status, report, problems, output, auto,
  }));
}

/** What was typed in Settings and not written yet, written; auto-export's watch stopped as
 * Ctrl-C stops it, and waited for; everything else is disposed through the context's
 * subscriptions. */
export async function deactivate(): Promise<void> {
  await Promise.all([settle?.(), shutdown?.()]);
}

/** VS Code's JSON settings machinery (the JSON language features) started now, at
 * activation, rather than by the first settings write of a fresh profile: started then, about
 * 2 s later the Settings editor draws its rows again, and the keys a person is typing at that
 * moment land in the next box (issue 44: "http://local" kept as the url, the rest of it in
 * the secret's name). A JSON-with-comments document (untitled, empty, never shown) is opened
 * for it; VS Code's own settings files are JSON with comments. */
function startJsonSettingsMachinery(): void {
  void vscode.workspace.openTextDocument({ language: "jsonc", content: "" });
}

/** The first workspace folder holding .workspace/, else the first folder. */
function workspaceRoot(): string | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const withHub = folders.find((f) => fs.existsSync(path.join(f.uri.fsPath, ".workspace")));
  return (withHub ?? folders[0])?.uri.fsPath;
}
