// The export's HTML report (`--report`), shown in a webview: one panel per window, always the
// last export's report, never an earlier one's. It survives a reload (a serializer: VS Code
// gives the panel back and the last report is shown in it again), and opens where there is
// room: an empty editor group if there is one, else beside the active editor without ever
// making a third column.

import * as fs from "node:fs";
import * as vscode from "vscode";
import * as say from "./say";

export const LAST_REPORT = "openlineage.lastReport";
/** The webview's type, as package.json's activation event (onWebviewPanel:...) names it. */
const VIEW_TYPE = "openlineageReport";
const TITLE = "OpenLineage Export Report";
/** The report is self-contained: it loads no file and runs no command (enableCommandUris is
 * off); its own script draws its charts. */
const OPTIONS: vscode.WebviewOptions = { enableScripts: true, localResourceRoots: [] };

export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly context: vscode.ExtensionContext) {
    this.disposables.push(vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
      // The state a webview kept is its page's, never trusted for a path: the last report of
      // this folder is shown again, as the workspace state (the user's) names it.
      deserializeWebviewPanel: async (panel) => {
        panel.webview.options = OPTIONS;
        this.adopt(panel);
        this.render(this.context.workspaceState.get<string>(LAST_REPORT));
      },
    }));
  }

  /** Whether a report is shown (an export then shows its own in it). */
  get open(): boolean {
    return this.panel !== undefined;
  }

  /** The last report of this folder, if there is one (false: none yet). */
  showLast(): boolean {
    const report = this.context.workspaceState.get<string>(LAST_REPORT);
    if (!report || !fs.existsSync(report)) {
      return false;
    }
    this.show(report);
    return true;
  }

  /** `file` is the last report from now on (an export wrote it). */
  async remember(file: string): Promise<void> {
    await this.context.workspaceState.update(LAST_REPORT, file);
  }

  show(file: string): void {
    if (!this.panel) {
      this.adopt(say.webviewPanel(VIEW_TYPE, TITLE,
        { viewColumn: placeFor(), preserveFocus: true }, OPTIONS));
    }
    this.render(file);
    this.panel?.reveal(undefined, true);
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.onDidDispose(() => {
      if (this.panel === panel) {
        this.panel = undefined;
      }
    });
  }

  private render(file: string | undefined): void {
    if (this.panel) {
      this.panel.webview.html = file && fs.existsSync(file) ? fs.readFileSync(file, "utf8") :
        "<!DOCTYPE html><html><body><h1>No report</h1><p>The last export ended before it " +
        "wrote its report: the output channel \"OpenLineage Export\" says why.</p></body></html>";
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
    this.panel?.dispose();
  }
}

/** Where a new report goes: an empty editor group if there is one (VS Code leaves one after
 * "New Editor Group", or when closing its last editor does not close it); else, with one group,
 * beside it; with two or more, the last group that is not the active one: never a new, third,
 * narrow column. */
function placeFor(): vscode.ViewColumn {
  const groups = vscode.window.tabGroups.all;
  const empty = groups.find((group) => group.tabs.length === 0);
  if (empty) {
    return empty.viewColumn;
  }
  const active = vscode.window.tabGroups.activeTabGroup;
  const others = groups.filter((group) => group !== active);
  return others.length ? others[others.length - 1].viewColumn : vscode.ViewColumn.Beside;
}
