// The RUNS view: the trail's runs by pipeline, each with where it stands with the server the
// settings send to (exported, pending, or refused with the server's reason), as
// `openlineage-export status --runs --json` says. A run opens its job's page in Marquez's web
// UI when openlineage.marquez.webUrl names it.

import * as vscode from "vscode";

export const WEB_URL = "openlineage.marquez.webUrl";

export interface RunRow {
  traceId: string;
  pipeline: string;
  job: string;
  state: "exported" | "pending" | "refused";
  reason: string | null;
  runId: string | null;
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

const ICONS: Record<RunRow["state"], [string, string]> = {
  exported: ["pass", "testing.iconPassed"],
  pending: ["clock", "disabledForeground"],
  refused: ["error", "testing.iconFailed"],
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
        this.tree.message = `Cannot list the runs: ${standing.error}`;
        this.tree.description = undefined;
        return undefined;
      }
      this.last = standing;
      this.tree.description = standing.destination;
      this.tree.message = this.summary(standing);
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
      const item = new vscode.TreeItem(node.pipeline, vscode.TreeItemCollapsibleState.Collapsed);
      const counts = (["exported", "pending", "refused"] as const)
        .map((state) => [state, node.runs.filter((r) => r.state === state).length] as const)
        .filter(([, n]) => n).map(([state, n]) => `${n} ${state}`);
      item.description = counts.join(" · ");
      item.iconPath = new vscode.ThemeIcon("symbol-event");
      item.contextValue = "pipeline";
      return item;
    }
    const { run } = node;
    const item = new vscode.TreeItem(run.traceId, vscode.TreeItemCollapsibleState.None);
    item.description = run.state + (run.reason ? `: ${run.reason}` : "");
    item.tooltip = `${run.pipeline} · ${run.traceId}\n${run.state}` +
      (run.reason ? ` by the server: ${run.reason}` : "") +
      (run.runId ? `\nOpenLineage run id ${run.runId}` : "") +
      (pageOf(node.namespace, run.job) ? "\nClick: its job in Marquez's web UI" :
        `\nSet ${WEB_URL} to open its job in Marquez's web UI`);
    const [icon, color] = ICONS[run.state];
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
      void vscode.window.showInformationMessage(`OpenLineage Export: ${node.run.traceId} is ` +
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
