// The RUNS view: the trail's runs by pipeline, each by its start time, with its duration, how
// it ended in the editor (succeeded, failed, cancelled, running) and where it stands with the
// server the settings send to (exported, pending, or refused with the server's reason), as
// `openlineage-export status --runs --json` says; its trace id in its tooltip. A run's icon is
// its outcome (a failed run is never a green check, exported or not). A run opens its job's
// page in Marquez's web UI when openlineage.marquez.webUrl names it.

import * as vscode from "vscode";
import * as say from "./say";

export const WEB_URL = "openlineage.marquez.webUrl";

export interface RunRow {
  traceId: string;
  pipeline: string;
  job: string;
  state: "exported" | "pending" | "refused";
  reason: string | null;
  runId: string | null;
  /** How the run ended in the editor (null: its record could not be read again). */
  status: "succeeded" | "failed" | "cancelled" | "running" | null;
  /** ISO 8601, as the trail says them. */
  startedAt: string | null;
  endedAt: string | null;
}

export interface RunsStanding {
  destination: string;
  namespace: string;
  runs: RunRow[];
}

/** What the view needs of the rest of the extension. */
export interface RunsHost {
  /** `status --runs --json`, or why it could not say. */
  standing(): Promise<RunsStanding | { error: string }>;
  log(line: string): void;
}

type Node =
  | { kind: "pipeline"; pipeline: string; runs: RunRow[]; namespace: string }
  | { kind: "run"; run: RunRow; namespace: string };

/** A run's icon: how it ended in the editor. */
const OUTCOMES: Record<NonNullable<RunRow["status"]>, [string, string]> = {
  succeeded: ["pass", "testing.iconPassed"],
  failed: ["error", "testing.iconFailed"],
  cancelled: ["circle-slash", "testing.iconSkipped"],
  running: ["sync", "testing.iconQueued"],
};

export class RunsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly tree: vscode.TreeView<Node>;
  private last: RunsStanding | undefined;
  private loading: Promise<RunsStanding | undefined> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly host: RunsHost) {
    this.tree = vscode.window.createTreeView("openlineage.runs", { treeDataProvider: this });
    this.disposables.push(
      this.tree,
      vscode.commands.registerCommand("openlineage.runs.refresh", () => this.refresh()),
      vscode.commands.registerCommand("openlineage.runs.open", (node?: Node) => this.open(node)),
    );
  }

  /** The standing read again now; resolves once the view shows it. */
  async refresh(): Promise<RunsStanding | undefined> {
    this.loading = undefined;
    this.changed.fire();
    return this.load();
  }

  /** Read again in a moment (auto-export's runs come one by one). */
  refreshSoon(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.refresh(), 1000);
  }

  /** The page in Marquez's web UI of the job of the trail's last run, if its address is set. */
  marquezPage(): vscode.Uri | undefined {
    const last = this.last?.runs.at(-1);
    return last && this.last ? pageOf(this.last.namespace, last.job) : undefined;
  }

  /** "31 runs: 30 exported, 0 pending, 1 refused, at http://...". */
  summary(standing: RunsStanding): string {
    const count = (state: string) => standing.runs.filter((r) => r.state === state).length;
    return `${standing.runs.length} runs: ${count("exported")} exported, ` +
      `${count("pending")} pending, ${count("refused")} refused, at ${standing.destination}`;
  }

  private load(): Promise<RunsStanding | undefined> {
    this.loading ??= this.host.standing().then((standing) => {
      if ("error" in standing) {
        this.last = undefined;
        say.viewSays(this.tree, { message: `Cannot list the runs: ${standing.error}`,
          description: undefined });
        return undefined;
      }
      this.last = standing;
      say.viewSays(this.tree, { description: standing.destination,
        message: this.summary(standing) });
      return standing;
    });
    return this.loading;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node?.kind === "pipeline") {
      return node.runs.map((run) => ({ kind: "run", run, namespace: node.namespace }));
    }
    if (node) {
      return [];
    }
    const standing = await this.load();
    if (!standing) {
      return [];
    }
    const byPipeline = new Map<string, RunRow[]>();
    for (const run of standing.runs) {
      byPipeline.set(run.pipeline, [...(byPipeline.get(run.pipeline) ?? []), run]);
    }
    return [...byPipeline].map(([pipeline, runs]) => ({
      kind: "pipeline", pipeline, runs: [...runs].reverse(), namespace: standing.namespace,
    }));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "pipeline") {
      const counts = (["exported", "pending", "refused"] as const)
        .map((state) => [state, node.runs.filter((r) => r.state === state).length] as const)
        .filter(([, n]) => n).map(([state, n]) => `${n} ${state}`);
      const failed = node.runs.filter((r) => r.status === "failed").length;
      const item = say.treeItem(node.pipeline, vscode.TreeItemCollapsibleState.Collapsed, {
        description: [...counts, ...(failed ? [`${failed} failed in the editor`] : [])]
          .join(" · "),
      });
      item.iconPath = new vscode.ThemeIcon("symbol-event");
      item.contextValue = "pipeline";
      return item;
    }
    const { run } = node;
    const label = startTime(run.startedAt) ?? run.traceId;
    const took = run.status === "running" ? undefined : runDuration(run.startedAt, run.endedAt);
    const exported = run.state + (run.reason ? `: ${run.reason}` : "");
    const description = [took, run.status, exported].filter(Boolean).join(" · ");
    const tooltip = `${run.pipeline}, started ${run.startedAt ?? "?"}` +
      (run.endedAt ? `, ended ${run.endedAt}` : "") + `\ntrace id ${run.traceId}\n` +
      `In the editor: ${run.status ?? "unknown"}\nAt the server: ${run.state}` +
      (run.reason ? ` by the server: ${run.reason}` : "") +
      (run.runId ? `\nOpenLineage run id ${run.runId}` : "") +
      (pageOf(node.namespace, run.job) ? "\nClick: its job in Marquez's web UI" :
        `\nSet ${WEB_URL} to open its job in Marquez's web UI`);
    const item = say.treeItem(label, vscode.TreeItemCollapsibleState.None, {
      description, tooltip,
      accessible: `${label} ${run.pipeline}: ${description}; trace id ${run.traceId}`,
    });
    const [icon, color] = run.status ? OUTCOMES[run.status] : ["question", "disabledForeground"];
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
    item.contextValue = `run.${run.state}`;
    item.command = { command: "openlineage.runs.open", title: "Open in Marquez", arguments: [node] };
    return item;
  }

  private async open(node?: Node): Promise<void> {
    if (node?.kind !== "run") {
      return;
    }
    const page = pageOf(node.namespace, node.run.job);
    if (!page) {
      this.host.log(`${node.run.traceId} (${node.run.pipeline}): ${node.run.state}` +
        (node.run.reason ? `: ${node.run.reason}` : ""));
      void say.info(`OpenLineage Export: ${node.run.traceId} is ` +
        `${node.run.state}${node.run.reason ? `: ${node.run.reason}` : ""}. Set ${WEB_URL} ` +
        "(Settings) to open runs in Marquez's web UI.");
      return;
    }
    await vscode.env.openExternal(page);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposables.forEach((d) => d.dispose());
    this.changed.dispose();
  }
}

/** Marquez's web UI page of a job (its lineage and runs), when its address is set. */
export function pageOf(namespace: string, job: string): vscode.Uri | undefined {
  const web = vscode.workspace.getConfiguration().get<string>(WEB_URL, "").trim();
  if (!/^https?:\/\/[^/]/.test(web)) {
    return undefined;
  }
  return vscode.Uri.parse(`${web.replace(/\/+$/, "")}/lineage/job/` +
    `${encodeURIComponent(namespace)}/${encodeURIComponent(job)}`, true);
}

/** A run's start as a person reads it, in the editor's time zone: 2026-11-02 03:00:00. */
export function startTime(iso: string | null): string | undefined {
  const at = iso ? new Date(iso) : undefined;
  if (!at || Number.isNaN(at.getTime())) {
    return undefined;
  }
  const two = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ` +
    `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}`;
}

/** How long a run took: 850 ms, 42s, 6m 40s, 1h 02m. */
export function runDuration(started: string | null, ended: string | null): string | undefined {
  const ms = started && ended ? new Date(ended).getTime() - new Date(started).getTime() : NaN;
  if (!Number.isFinite(ms) || ms < 0) {
    return undefined;
  }
  if (ms < 1000) {
    return `${Math.round(ms)} ms`;
  }
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) {
    return `${seconds}s`;
  }
  if (seconds < 3600) {
    return `${Math.floor(seconds / 60)}m ${seconds % 60}s`;
  }
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor(seconds % 3600 / 60)).padStart(2, "0")}m`;
}
