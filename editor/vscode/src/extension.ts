// OpenLineage Export in VS Code: a thin host over the Python tool (openlineage-export), which
// does every part of the export; the extension runs it with `--progress json --json` and shows
// what it says: a cancellable progress notification, the summary in the "OpenLineage Export"
// output channel, bad trail entries in the Problems panel, refused runs with the server's
// reason, a dry run's events in an editor tab and its report in a webview.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { AutoExport, SETTING as AUTO_EXPORT, DRY_RUN } from "./autoExport";
import { cliError, Finished, ProgressLine, runTool } from "./child";
import { SettingsMirror, Property } from "./settingsMirror";
import { RunsStanding, RunsView } from "./runsView";
import { KeyRing, SecretsView } from "./secretsView";
import { ExportStatusBar } from "./statusBar";
import { ensureTool, Tool, ToolMissing } from "./tool";

const NAME = "OpenLineage Export";
const SECRET_REFS: Record<string, string> = {
  "openlineage.apiKey.secretRef": "OPENLINEAGE_API_KEY",
  "openlineage.kafka.sasl.password.secretRef": "OPENLINEAGE_KAFKA_SASL_PASSWORD",
};
const SECRET_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const LAST_REPORT = "openlineage.lastReport";
const SEND_THERE = "Send it there";
/** The final notification's offer: this export's report, in the report pane. */
const OPEN_REPORT = "Open Report";
/** Its offer of the export's jobs in Marquez's web UI (openlineage.marquez.webUrl set). */
const OPEN_IN_MARQUEZ = "Open in Marquez";
/** The editor's own settings: not the tool's, never in .workspace/settings.json. */
const EDITOR_ONLY = new Set([AUTO_EXPORT, DRY_RUN, "openlineage.marquez.webUrl"]);

/** The runs not sent because the destination has them, as the CLI's summary says it. */
function kept(runs: ExportResult["runs"]): string {
  const held = runs.held ?? 0;
  const unchanged = runs.unchanged - held;
  return (unchanged ? `, ${unchanged} unchanged` : "") +
    (held ? `, ${held} already held by the server` : "");
}

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

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel(NAME);
  const problems = vscode.languages.createDiagnosticCollection("openlineage-export");
  const log = (line: string) => output.appendLine(line);
  const root = workspaceRoot();
  // The tool's settings, which .workspace/settings.json holds; not the editor's own.
  const properties = Object.fromEntries(Object.entries(
    (context.extension.packageJSON.contributes.configuration.properties ?? {}) as
      Record<string, Property>).filter(([key]) => !EDITOR_ONLY.has(key)));
  const storage = (context.storageUri ?? context.globalStorageUri).fsPath;
  const status = new ExportStatusBar();
  /** The keys' names and the servers each is approved for: the user's, never the workspace's. */
  const ring = new KeyRing(context);
  context.subscriptions.push(output, problems, status, ring);

  const tool = async (): Promise<Tool | undefined> => {
    try {
      return await ensureTool(context, log);
    } catch (error) {
      const message = error instanceof ToolMissing ? error.message : `${NAME}: ${error}`;
      void vscode.window.showErrorMessage(message);
      return undefined;
    }
  };

  /** `settings set KEY VALUE` (or `settings unset KEY`) by the CLI: its checks, its file;
   * resolves to its warnings (a url that ends with the endpoint...). */
  const writeSetting = async (key: string, value: string | undefined): Promise<string[]> => {
    const found = await tool();
    if (!found || !root) {
      throw new Error("the exporter is not available");
    }
    const args = value === undefined ? ["settings", "unset", key] : ["settings", "set", key, value];
    const done = await runTool(found, [...args, "-w", root], { cwd: root, env: baseEnvironment() });
    if (done.code !== 0) {
      throw new Error(cliError(done));
    }
    return done.messages.filter((line) => line.startsWith("warning: "))
      .map((line) => line.slice("warning: ".length));
  };

  const mirror = root ? new SettingsMirror(root, properties, writeSetting, log) : undefined;
  settle = mirror && (() => mirror.settled());
  if (mirror) {
    context.subscriptions.push(mirror);
    void mirror.enqueue(() => mirror.pullFromFile());
  }

  const needRoot = (): string | undefined => {
    if (!root) {
      void vscode.window.showErrorMessage(`${NAME}: open a workspace folder (the one holding ` +
        ".workspace/) first");
    }
    return root;
  };

  /** The export's environment, with the key when it may go where the settings send events;
   * undefined when it may not (said). The key goes only where the CLI's trust model says it
   * may (`secrets check`: plain http only to this machine, and only to a server its owner
   * approved); the extension then vouches for the url (a key from the environment goes only
   * to a url from it). A workspace that names a server not approved for the key: `ask`
   * says whether its owner sends it there (and approves it for that server from now on). */
  const keyedEnvironment = async (found: Tool, folder: string, dryRun: boolean,
    ask: (ref: string, origin: string) => Promise<boolean>):
    Promise<NodeJS.ProcessEnv | undefined> => {
    const settings = mirror?.readFile() ?? {};
    const env = await exportEnvironment(context.secrets, settings, dryRun);
    if (dryRun || env.OPENLINEAGE_API_KEY === undefined) {
      return env;
    }
    const url = urlInForce(settings, properties);
    const ref = String(settings["openlineage.apiKey.secretRef"]);
    const verdict = await checkKey(found, folder, ref, url, ring.approved(ref));
    if (typeof verdict === "string" || (!verdict.may && verdict.reason !== "not approved")) {
      const why = typeof verdict === "string" ? verdict : verdict.message;
      log(`export not started: ${why}`);
      void vscode.window.showErrorMessage(`${NAME}: ${why}`);
      return undefined;
    }
    if (!verdict.may) {
      if (!await ask(ref, verdict.origin)) {
        log(`export not started: the key '${ref}' is not approved for ${verdict.origin}`);
        return undefined;
      }
      await ring.approve(ref, verdict.origin);
    }
    env.OPENLINEAGE_URL = url;
    return env;
  };
  const question = (ref: string, origin: string) => `${NAME}: the workspace's settings send ` +
    `the API key '${ref}' to ${origin}, which you have not approved for it. Send it there, ` +
    "now and from now on?";
  /** A person's export asks, and waits for the answer. */
  const askModal = async (ref: string, origin: string): Promise<boolean> =>
    await vscode.window.showWarningMessage(question(ref, origin), { modal: true },
      SEND_THERE) === SEND_THERE;

  const runs = new RunsView({
    standing: async () => {
      const found = root && await tool();
      if (!root || !found) {
        return { error: root ? "the exporter is not available" : "open a workspace folder" };
      }
      await mirror?.settled();
      const done = await runTool(found, ["status", "--runs", "--json", "-w", root], {
        cwd: root, env: baseEnvironment(),
      });
      try {
        return JSON.parse(done.stdout) as RunsStanding;
      } catch {
        return { error: cliError(done) };
      }
    },
    log,
  });
  context.subscriptions.push(runs);

  const auto = root ? new AutoExport({
    folder: root,
    tool,
    settled: () => mirror?.settled() ?? Promise.resolve(),
    environment: async () => {
      const found = await tool();
      return found && keyedEnvironment(found, root, false, async (ref, origin) => {
        // Nobody asked for this export just now: a notice, not a modal; its answer starts it.
        void vscode.window.showWarningMessage(question(ref, origin), SEND_THERE)
          .then(async (choice) => {
            if (choice === SEND_THERE) {
              await ring.approve(ref, origin);
              await auto?.apply();
            }
          });
        return false;
      });
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
  }, context.secrets) : undefined;
  if (auto) {
    context.subscriptions.push(auto);
    shutdown = () => auto.shutdown();
    void auto.apply();
  }

  /** `bySetting`: openlineage.dryRun decided it (said in the outcome, so a person who forgot
   * it is on knows why nothing was sent). */
  const exportRuns = async (dryRun: boolean, bySetting: boolean): Promise<void> => {
    if (!dryRun && auto?.enabled()) {
      return auto.paused(() => exportOnce(false, false));  // both would take the ledger's lock
    }
    return exportOnce(dryRun, bySetting);
  };

  const exportOnce = async (dryRun: boolean, bySetting: boolean): Promise<void> => {
    const folder = needRoot();
    const found = folder && await tool();
    if (!folder || !found) {
      return;
    }
    await mirror?.settled();
    fs.mkdirSync(storage, { recursive: true });
    const report = path.join(storage, dryRun ? "dry-run-report.html" : "export-report.html");
    const events = path.join(storage, "dry-run-events.jsonl");
    const args = ["export", "-w", folder, "--json", "--progress", "json", "--report", report];
    if (dryRun) {
      args.push("--dry-run", "-o", events);
    }
    const env = await keyedEnvironment(found, folder, dryRun, askModal);
    if (!env) {
      return;
    }
    fs.rmSync(report, { force: true });  // an export that writes none never shows an older one
    const bad = new Map<string, vscode.Diagnostic[]>();
    let error: string | undefined;
    problems.clear();
    log(`${dryRun ? "dry run" : "export"} of ${folder} (${new Date().toISOString()})`);
    status.set(`$(sync~spin) OpenLineage: ${dryRun ? "dry run" : "exporting"}`,
      "An export is running: its progress is in its notification.");
    let lastRetry = "";
    const done = await vscode.window.withProgress({
      location: vscode.ProgressLocation.Notification,
      title: dryRun ? "OpenLineage: dry run" : "OpenLineage: exporting",
      cancellable: true,
    }, (progress, token) => {
      const shown = new ProgressText();
      const onLine = (line: ProgressLine) => {
        switch (line.event) {
          case "progress": {
            const { message, percent } = shown.update(line);
            progress.report({ message, increment: percent - shown.reported });
            shown.reported = percent;
            break;
          }
          case "badEntry":
            addBadEntry(bad, folder, line);
            break;
          case "retry":
            progress.report({ message: `retrying: ${line.reason} (attempt ${line.attempt})` });
            if (String(line.reason) !== lastRetry) {  // the output: once per reason
              lastRetry = String(line.reason);
              log(`retrying: ${lastRetry}`);
            }
            break;
          case "warning":
            log(`warning: ${line.message}`);
            break;
          case "message":
            log(String(line.message));
            progress.report({ message: String(line.message) });
            break;
          case "summary":
            log(String(line.text));
            break;
          case "error":
            error = String(line.message);
            log(`error: ${error}`);
            break;
        }
      };
      token.onCancellationRequested(() => log("cancel: stopping as Ctrl-C does (the requests " +
        "in flight are answered, what was accepted is kept)"));
      return runTool(found, args, { cwd: folder, env, onLine, token });
    });
    done.messages.forEach(log);
    problems.set([...bad].map(([file, list]) => [vscode.Uri.file(file), list]));
    const result = parseResult(done);
    if (fs.existsSync(report)) {
      await context.workspaceState.update(LAST_REPORT, report);
    }
    output.show(true);
    if (!result) {
      const why = error ?? cliError(done);
      status.idle(`failed: ${why}`);
      void vscode.window.showErrorMessage(`${NAME}: ${why}`);
      return;
    }
    if (dryRun && !result.cancelled && fs.existsSync(events)) {
      // The events and the report first: the notification below is the last thing shown.
      const document = await vscode.workspace.openTextDocument(vscode.Uri.file(events));
      await vscode.window.showTextDocument(document, { preview: false });
      showReport(report);
    } else if (reportPanel) {
      showReport(report);  // an open report is this export's, never an earlier one's
    }
    for (const failed of result.failedRuns) {
      log(`refused: ${failed.traceId} (${failed.pipeline}): ${failed.reason}`);
    }
    const badCount = [...bad.values()].reduce((n, list) => n + list.length, 0);
    const problemsNote = !badCount ? "" :
      `; ${badCount === 1 ? "1 bad trail entry" : `${badCount} bad trail entries`} in Problems`;
    const [shown, said] = outcome(result, dryRun, problemsNote +
      (bySetting && dryRun ? ` (${DRY_RUN} is on in Settings)` : ""));
    const standing = await runs.refresh().catch((failure) => log(`runs: ${failure}`));
    status.idle(said, standing ? runs.summary(standing) : undefined);
    const marquez = dryRun ? undefined : runs.marquezPage();
    const offers = [...(fs.existsSync(report) ? [OPEN_REPORT] : []),
      ...(marquez ? [OPEN_IN_MARQUEZ] : [])];
    void shown(`${NAME}: ${said}`, ...offers).then((choice) => {
      if (choice === OPEN_REPORT) {
        showReport(report);
      } else if (choice === OPEN_IN_MARQUEZ && marquez) {
        void vscode.env.openExternal(marquez);
      }
    });
  };

  /** `askName`: the SECRETS view's +, which asks for the name even when the workspace names
   * one (offered first). */
  const storeApiKey = async (askName = false): Promise<void> => {
    const folder = needRoot();
    if (!folder || !mirror) {
      return;
    }
    await mirror.settled();
    const named = mirror.readFile()["openlineage.apiKey.secretRef"];
    let name: unknown = named;
    if (askName || typeof name !== "string" || !name) {
      name = await vscode.window.showInputBox({
        title: "OpenLineage: Store API Key",
        prompt: "A name for the key, saying what it is for (e.g. marquez-prod): " +
          "openlineage.apiKey.secretRef will hold this name, never the key",
        value: typeof named === "string" ? named : undefined,
        ignoreFocusOut: true,
        validateInput: (text) => SECRET_NAME.test(text) ? undefined :
          "1 to 128 letters, digits, '.', '_' or '-'",
      });
      if (!name) {
        return;
      }
    }
    if (typeof named !== "string" || !named) {
      try {
        await writeSetting("openlineage.apiKey.secretRef", name as string);
      } catch (error) {
        void vscode.window.showErrorMessage(`${NAME}: ${error instanceof Error ? error.message : error}`);
        return;
      }
      await mirror.enqueue(() => mirror.pullFromFile());
    }
    const found = await tool();
    const checked = found && await checkKey(found, folder, name as string,
      urlInForce(mirror.readFile(), properties), []);
    const origin = checked && typeof checked !== "string" ? checked.origin : undefined;
    const key = await vscode.window.showInputBox({
      title: "OpenLineage: Store API Key",
      prompt: `The API key for '${name}', sent only to ` +
        `${origin ?? "the server in openlineage.url"} ` +
        "(kept in VS Code's secret storage; exports pass it to the exporter in its environment " +
        "only)",
      password: true,
      ignoreFocusOut: true,
      validateInput: (text) => !text ? "the key cannot be empty" :
        /[\s\x00-\x1f\x7f]/.test(text) ? "one line, without spaces" : undefined,
    });
    if (!key) {
      return;
    }
    await ring.store(name as string, key);
    if (origin) {
      await ring.approve(name as string, origin);  // the server it was stored for
    }
    log(`API key stored in VS Code's secret storage as '${name}'` +
      (origin ? `, for ${origin}` : ""));
    void vscode.window.showInformationMessage(`${NAME}: API key stored as '${name}' in VS Code's ` +
      "secret storage; exports send it");
  };

  const showStatus = async (): Promise<void> => {
    const folder = needRoot();
    const found = folder && await tool();
    if (!folder || !found) {
      return;
    }
    await mirror?.settled();
    const done = await runTool(found, ["status", "-w", folder], {
      cwd: folder, env: baseEnvironment(),
    });
    if (done.code !== 0) {
      void vscode.window.showErrorMessage(`${NAME}: ${cliError(done)}`);
      return;
    }
    const text = done.stdout.trim();
    log(`status of ${folder}:`);
    log(text);
    output.show(true);
    void vscode.window.showInformationMessage(`${NAME}: ${text.split("\n").slice(0, 3).join("; ")}`);
  };

  const openReport = async (): Promise<void> => {
    const report = context.workspaceState.get<string>(LAST_REPORT);
    if (!report || !fs.existsSync(report)) {
      void vscode.window.showInformationMessage(`${NAME}: no report yet: run OpenLineage: ` +
        "Export Lineage Runs (or OpenLineage: Dry Run) first");
      return;
    }
    showReport(report);
  };

  const secrets = new SecretsView(ring, {
    inUse: () => {
      const settings = mirror?.readFile() ?? {};
      return new Map(Object.keys(SECRET_REFS).flatMap((setting) => {
        const name = settings[setting];
        return typeof name === "string" && name ? [[name, setting] as [string, string]] : [];
      }));
    },
    destinationOrigin: async (name) => {
      const found = root && await tool();
      if (!root || !found) {
        return { error: "the exporter is not available" };
      }
      await mirror?.settled();
      const verdict = await checkKey(found, root, name, urlInForce(mirror?.readFile() ?? {},
        properties), []);
      return typeof verdict === "string" ? { error: verdict } : verdict.origin;
    },
    add: () => storeApiKey(true),
  });
  if (mirror) {  // the names the workspace uses, as its settings change
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(path.dirname(mirror.file)), "settings.json"));
    [watcher.onDidChange, watcher.onDidCreate, watcher.onDidDelete].forEach((on) =>
      on(() => secrets.refresh()));
    context.subscriptions.push(watcher);
  }

  context.subscriptions.push(
    // A keybinding or task may pass {"dryRun": true} (or false); else openlineage.dryRun says.
    vscode.commands.registerCommand("openlineage.export", (args?: unknown) => exportRuns(
      asked(args, "dryRun") ?? vscode.workspace.getConfiguration().get<boolean>(DRY_RUN, false),
      asked(args, "dryRun") === undefined)),
    vscode.commands.registerCommand("openlineage.exportDryRun", () => exportRuns(true, false)),
    vscode.commands.registerCommand("openlineage.storeApiKey", () => storeApiKey()),
    secrets,
    vscode.commands.registerCommand("openlineage.showStatus", showStatus),
    vscode.commands.registerCommand("openlineage.openReport", openReport),
  );
}

let shutdown: (() => Promise<void>) | undefined;
let settle: (() => Promise<void>) | undefined;

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

/** The editor's environment with its HTTP surface: http.proxy, http.noProxy and
 * http.proxyStrictSSL apply to the export as they apply to the editor. */
function baseEnvironment(): NodeJS.ProcessEnv {
  // The CLI words its hints for VS Code ("openlineage.url in Settings", not "--url").
  const env: NodeJS.ProcessEnv = { ...process.env, OPENLINEAGE_EXPORT_HOST: "vscode" };
  const http = vscode.workspace.getConfiguration("http");
  const proxy = http.get<string>("proxy");
  if (proxy && http.get<string>("proxySupport") !== "off") {
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) {
      env[name] = proxy;
    }
  }
  const noProxy = http.get<string[]>("noProxy") ?? [];
  if (noProxy.length) {
    const before = env.NO_PROXY ?? env.no_proxy;
    env.NO_PROXY = env.no_proxy = [...(before ? [before] : []), ...noProxy].join(",");
  }
  const proxied = env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy;
  if (proxied && http.get<boolean>("proxyStrictSSL") === false) {
    env.OPENLINEAGE_TLS_VERIFY = "false";
  }
  return env;
}

/** The export's environment: the keys the settings name, from VS Code's secret storage (the
 * only way a key reaches the exporter: never an argument, a file or a setting). */
async function exportEnvironment(secrets: vscode.SecretStorage,
  settings: Record<string, unknown>, dryRun: boolean): Promise<NodeJS.ProcessEnv> {
  const env = baseEnvironment();
  if (dryRun) {
    return env;  // a dry run sends nothing: it needs no key
  }
  for (const [setting, variable] of Object.entries(SECRET_REFS)) {
    const name = settings[setting];
    if (typeof name === "string" && SECRET_NAME.test(name)) {
      const value = await secrets.get(name);
      if (value) {
        env[variable] = value;
      }
    }
  }
  return env;
}

function addBadEntry(bad: Map<string, vscode.Diagnostic[]>, root: string, line: ProgressLine) {
  const file = path.resolve(root, String(line.file));
  const at = Math.max(0, Number(line.line ?? 1) - 1);
  const diagnostic = new vscode.Diagnostic(new vscode.Range(at, 0, at, 10_000),
    `bad entry, not exported: ${line.reason}`, vscode.DiagnosticSeverity.Warning);
  diagnostic.source = NAME;
  bad.set(file, [...(bad.get(file) ?? []), diagnostic]);
}

/** How an export ended, in one sentence, and how loud to say it. */
type Say = (message: string, ...offers: string[]) => Thenable<string | undefined>;

function outcome(result: ExportResult, dryRun: boolean, problemsNote: string): [Say, string] {
  const error: Say = (message, ...offers) => vscode.window.showErrorMessage(message, ...offers);
  const warning: Say = (message, ...offers) => vscode.window.showWarningMessage(message, ...offers);
  const information: Say = (message, ...offers) =>
    vscode.window.showInformationMessage(message, ...offers);
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


let reportPanel: vscode.WebviewPanel | undefined;

function showReport(file: string): void {
  if (!reportPanel) {
    reportPanel = vscode.window.createWebviewPanel("openlineageReport",
      "OpenLineage Export Report", vscode.ViewColumn.Beside, { enableScripts: true });
    reportPanel.onDidDispose(() => { reportPanel = undefined; });
  }
  reportPanel.webview.html = fs.existsSync(file) ? fs.readFileSync(file, "utf8") :
    "<!DOCTYPE html><html><body><h1>No report</h1><p>The last export ended before it wrote " +
    "its report: the output channel \"OpenLineage Export\" says why.</p></body></html>";
  reportPanel.reveal(undefined, true);
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

function duration(seconds: number): string {
  if (seconds < 60) {
    return `${Math.max(1, Math.round(seconds))}s`;
  }
  if (seconds < 3600) {
    return `${Math.round(seconds / 60)}m`;
  }
  return `${Math.floor(seconds / 3600)}h ${Math.round((seconds % 3600) / 60)}m`;
}

/** openlineage.url as the export will use it: settings.json's, else the default. */
function urlInForce(settings: Record<string, unknown>, properties: Record<string, Property>): string {
  const url = settings["openlineage.url"];
  return typeof url === "string" && url ? url : String(properties["openlineage.url"]?.default ?? "");
}

/** The CLI's verdict on a key of the editor's (`secrets check`). */
interface KeyVerdict {
  name: string;
  /** The server's origin, as the CLI spells it (the one spelling every address of it shares). */
  origin: string;
  may: boolean;
  /** "approved", "not approved" (its owner may approve it), "in clear text". */
  reason: string;
  message: string;
}

/** May the key `name` go to `url`? The CLI decides, with its own trust model and the servers
 * approved for the key here (`approved`); a string: why it could not say (not a URL...). */
async function checkKey(found: Tool, cwd: string, name: string, url: string,
  approved: string[]): Promise<KeyVerdict | string> {
  const args = ["secrets", "check", name, url, "--json",
    ...approved.flatMap((origin) => ["--approved", origin])];
  const done = await runTool(found, args, { cwd, env: baseEnvironment() });
  try {
    return JSON.parse(done.stdout) as KeyVerdict;
  } catch {
    return cliError(done);
  }
}
