// The workspace's .workspace/settings.json, the one place the tool's settings live: watched once
// here, for the whole extension (the settings mirror, the SECRETS view, auto-export and the
// other views take this watcher's event), and read here.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

export class SettingsFile implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  /** The file was changed, created or deleted (by the CLI, a person, git...). */
  readonly onDidChange = this.changed.event;
  private readonly watcher: vscode.FileSystemWatcher;

  constructor(readonly root: string) {
    this.watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(path.join(root, ".workspace")), "settings.json"));
    for (const on of [this.watcher.onDidChange, this.watcher.onDidCreate,
      this.watcher.onDidDelete]) {
      on(() => this.changed.fire());
    }
  }

  get path(): string {
    return path.join(this.root, ".workspace", "settings.json");
  }

  /** What settings.json holds now ({} when it is missing or not a JSON object). */
  read(): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(this.path, "utf8"));
      return parsed && typeof parsed === "object" && !Array.isArray(parsed)
        ? parsed as Record<string, unknown> : {};
    } catch {
      return {};
    }
  }

  dispose(): void {
    this.watcher.dispose();
    this.changed.dispose();
  }
}
