// The status bar item: what the export is doing now, in a few words (an export in progress,
// auto-export following the trail and how many runs it sent, the server gone away, why
// auto-export stopped), the rest in its tooltip; a click shows the export status.

import * as vscode from "vscode";

export type Tone = "normal" | "warning" | "error";

export class ExportStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor() {
    this.item = vscode.window.createStatusBarItem("openlineage.status",
      vscode.StatusBarAlignment.Left, 10);
    this.item.name = "OpenLineage Export";
    this.item.command = "openlineage.showStatus";
    this.idle();
    this.item.show();
  }

  /** Nothing running: the last export's outcome, if one was seen in this window, and where
   * the trail's runs stand with its server (runs still pending). */
  idle(last?: string, standing?: string): void {
    this.set("$(cloud-upload) OpenLineage",
      (last ? `Last export: ${last}\n\n` : "") + (standing ? `${standing}\n\n` : "") +
      "Click for the export status.");
  }

  /** `text` with its codicon ("$(eye) OpenLineage: ..."); `tone` its background. */
  set(text: string, tooltip: string, tone: Tone = "normal"): void {
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.backgroundColor = tone === "normal" ? undefined :
      new vscode.ThemeColor(`statusBarItem.${tone}Background`);
  }

  dispose(): void {
    this.item.dispose();
  }
}
