// OpenLineage Export in VS Code: a thin host over the Python tool (openlineage-export), which
// does every part of the export; the extension runs it with `--progress json --json` and shows
// what it says. A module per concern, wired here:
//
//   cli.ts            the tool: installed on first use, run as a child, its answers read
//   settingsFile.ts   .workspace/settings.json, watched once; the others take its event
//   settingsMirror.ts VS Code's settings -> that file, through the CLI
//   keys.ts           the keys (VS Code's secret storage, the SECRETS view) and where they go
//   runsView.ts       the RUNS view
//   autoExport.ts     the watch that exports each run once it ends
//   commands.ts       the palette's commands: export, dry run, status, report
//   report.ts         the report's webview; statusBar.ts the status bar item

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { AutoExport, SETTING as AUTO_EXPORT, DRY_RUN } from "./autoExport";
import { baseEnvironment, Cli, NAME } from "./cli";
import { addBadEntry, Commands } from "./commands";
import { Keys } from "./keys";
import { ReportPanel } from "./report";
import { RunsStanding, RunsView, WEB_URL } from "./runsView";
import { SettingsFile } from "./settingsFile";
import { Property, SettingsMirror } from "./settingsMirror";
import { ExportStatusBar } from "./statusBar";

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
  const status = new ExportStatusBar();
  const report = new ReportPanel(context);
  const cli = new Cli(context, root, log);
  context.subscriptions.push(output, problems, status, report);

  const settings = root ? new SettingsFile(root) : undefined;
  const mirror = settings &&
    new SettingsMirror(settings, properties, (key, value) => cli.writeSetting(key, value), log);
  settle = mirror && (() => mirror.settled());
  if (settings && mirror) {
    context.subscriptions.push(settings, mirror);
    void mirror.enqueue(() => mirror.pullFromFile());
  }

  const keys = new Keys(context, cli, settings, mirror, properties);
  const runs = new RunsView({
    standing: async () => {
      await mirror?.settled();
      return root ? cli.json<RunsStanding>(["status", "--runs", "--json", "-w", root]) :
        { error: "open a workspace folder" };
    },
    log,
  });
  context.subscriptions.push(keys, runs);

  const auto = root && settings ? new AutoExport({
    folder: root,
    tool: () => cli.tool(),
    settled: () => mirror?.settled() ?? Promise.resolve(),
    environment: async () => {
      const found = await cli.tool();
      return found && keys.environment(found, baseEnvironment(), false,
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

/** The first workspace folder holding .workspace/, else the first folder. */
function workspaceRoot(): string | undefined {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const withHub = folders.find((f) => fs.existsSync(path.join(f.uri.fsPath, ".workspace")));
  return (withHub ?? folders[0])?.uri.fsPath;
}
