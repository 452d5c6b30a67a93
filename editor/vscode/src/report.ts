// The export's HTML report (`--report`), shown in a webview: one panel per window, always the
// last export's report, never an earlier one's.

import * as fs from "node:fs";
import * as vscode from "vscode";

export const LAST_REPORT = "openlineage.lastReport";
const VIEW_TYPE = "openlineageReport";
const TITLE = "OpenLineage Export Report";

export class ReportPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly context: vscode.ExtensionContext) {}

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
      this.panel = vscode.window.createWebviewPanel(VIEW_TYPE, TITLE, vscode.ViewColumn.Beside,
        { enableScripts: true });
      this.panel.onDidDispose(() => { this.panel = undefined; });
    }
    this.panel.webview.html = fs.existsSync(file) ? fs.readFileSync(file, "utf8") :
      "<!DOCTYPE html><html><body><h1>No report</h1><p>The last export ended before it wrote " +
      "its report: the output channel \"OpenLineage Export\" says why.</p></body></html>";
    this.panel.reveal(undefined, true);
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
