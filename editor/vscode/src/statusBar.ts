// The status bar item: what the export is doing now, in a few words (an export in progress,
// auto-export following the trail and how many runs it sent, the server gone away, why
// auto-export stopped), the rest in its tooltip; a click shows the export status. At rest, its
// tooltip says the last export of this folder (kept in the workspace state: it is there again
// after a reload) and where the trail's runs stand with the server (read at start).

import * as vscode from "vscode";
import * as say from "./say";

export type Tone = "normal" | "warning" | "error";

/** The last export's outcome as the workspace state keeps it. */
const LAST_EXPORT = "openlineage.lastExport";

interface LastExport { said: string; at: string }

export class ExportStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private last: string | undefined;
  private standing: string | undefined;

  constructor(private readonly state: vscode.Memento) {
    this.item = vscode.window.createStatusBarItem("openlineage.status",
      vscode.StatusBarAlignment.Left, 10);
    this.item.name = "OpenLineage Export";
    this.item.command = "openlineage.showStatus";
    const kept = state.get<LastExport>(LAST_EXPORT);
    this.last = kept && typeof kept.said === "string" ? `${kept.said} (${kept.at})` : undefined;
    this.idle();
    this.item.show();
  }

  /** Nothing running: the last export's outcome and where the trail's runs stand with its
   * server (each kept from the last time it was said, when not given). */
  idle(last?: string, standing?: string): void {
    this.standing = standing ?? this.standing;
    if (last !== undefined) {
      const at = new Date().toISOString().replace("T", " ").replace(/\.\d+Z$/, " UTC");
      this.last = `${last} (${at})`;
      void this.state.update(LAST_EXPORT, { said: last, at } satisfies LastExport);
    }
    this.set("$(cloud-upload) OpenLineage",
      (this.last ? `Last export: ${this.last}\n\n` : "") +
      (this.standing ? `${this.standing}\n\n` : "") + "Click for the export status.");
  }

  /** Where the runs stand, read again: shown at rest, kept for later otherwise. */
  standingIs(standing: string, atRest: boolean): void {
    this.standing = standing;
    if (atRest) {
      this.idle();
    }
  }

  /** `text` with its codicon ("$(eye) OpenLineage: ..."); `tone` its background. */
  set(text: string, tooltip: string, tone: Tone = "normal"): void {
    say.statusBar(this.item, text, tooltip);
    this.item.backgroundColor = tone === "normal" ? undefined :
      new vscode.ThemeColor(`statusBarItem.${tone}Background`);
  }

  dispose(): void {
    this.item.dispose();
  }
}
