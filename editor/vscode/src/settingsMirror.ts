// One source of truth for the settings: the workspace's .workspace/settings.json, which the CLI
// reads (and a CI job running the CLI on the same workspace reads). VS Code's own settings
// ("OpenLineage Export" in the Settings UI) are a view of it:
//
// - a value changed in VS Code (Settings UI, settings.json, either scope) is written there by the
//   CLI itself, `openlineage-export settings set KEY VALUE` (or `settings unset KEY` for an empty
//   or default value), so the CLI's checks are the ones: a value it refuses (a key typed where a
//   secret's name belongs, a bad URL...) is refused with its message, and VS Code's value goes
//   back to the one in force;
// - when .workspace/settings.json changes (opened, edited, pulled from git, `settings set` in a
//   terminal), its values are copied into VS Code's workspace settings so the Settings UI shows
//   them.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

export type Property = { default: unknown; type: string };
export type WriteSetting = (key: string, value: string | undefined) => Promise<void>;

export class SettingsMirror implements vscode.Disposable {
  private queue: Promise<void> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly root: string,
    private readonly properties: Record<string, Property>,
    private readonly write: WriteSetting,
    private readonly log: (line: string) => void,
  ) {
    this.disposables.push(vscode.workspace.onDidChangeConfiguration((event) => {
      const keys = Object.keys(this.properties).filter((key) => event.affectsConfiguration(key));
      if (keys.length) {
        this.enqueue(() => this.pushToFile(keys));
      }
    }));
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.Uri.file(path.join(root, ".workspace")), "settings.json"));
    watcher.onDidChange(() => this.enqueue(() => this.pullFromFile()));
    watcher.onDidCreate(() => this.enqueue(() => this.pullFromFile()));
    watcher.onDidDelete(() => this.enqueue(() => this.pullFromFile()));
    this.disposables.push(watcher);
  }

  get file(): string {
    return path.join(this.root, ".workspace", "settings.json");
  }

  /** What settings.json holds now ({} when it is missing or not a JSON object). */
  readFile(): Record<string, unknown> {
    try {
      const parsed: unknown = JSON.parse(fs.readFileSync(this.file, "utf8"));
      return parsed && typeof parsed === "object" && !Array.isArray(parsed)
        ? parsed as Record<string, unknown> : {};
    } catch {
      return {};
    }
  }

  /** Settings in flight are written before anything reads the file (an export). */
  settled(): Promise<void> {
    return this.queue;
  }

  enqueue(work: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(work).catch((error) => this.log(`settings: ${error}`));
    return this.queue;
  }

  /** The value in force by settings.json: its own, else the default ("" for none). */
  private fileValue(raw: Record<string, unknown>, key: string): unknown {
    const value = raw[key];
    return value === undefined || value === null ? this.properties[key].default : value;
  }

  /** VS Code's settings <- settings.json, for every key that differs. */
  async pullFromFile(): Promise<void> {
    const raw = this.readFile();
    const config = vscode.workspace.getConfiguration();
    for (const key of Object.keys(this.properties)) {
      const wanted = this.fileValue(raw, key);
      if (same(config.get(key), wanted)) {
        continue;
      }
      const stored = raw[key] === undefined || raw[key] === null ? undefined : raw[key];
      await config.update(key, stored, vscode.ConfigurationTarget.Workspace);
      if (!same(vscode.workspace.getConfiguration().get(key), wanted)) {
        // A user-scope value shadows the default: the workspace's must say it outright.
        await config.update(key, wanted, vscode.ConfigurationTarget.Workspace);
      }
    }
  }

  /** settings.json <- VS Code's settings, through the CLI, for the keys that changed. */
  private async pushToFile(keys: string[]): Promise<void> {
    const raw = this.readFile();
    const config = vscode.workspace.getConfiguration();
    for (const key of keys) {
      const value = config.get(key);
      if (same(value, this.fileValue(raw, key))) {
        continue;
      }
      const unset = value === undefined || value === null || value === "" ||
        (same(value, this.properties[key].default) && raw[key] === undefined);
      try {
        await this.write(key, unset ? undefined : String(value));
        this.log(unset ? `${key} removed from ${this.file}` : `${key} written to ${this.file}`);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        void vscode.window.showErrorMessage(`OpenLineage Export: ${key} was not changed: ${reason}`);
        this.log(`${key} was not changed: ${reason}`);
        // Back to the value in force, so the Settings UI never shows a value nothing uses.
        const stored = raw[key] === undefined || raw[key] === null ? undefined : raw[key];
        await config.update(key, stored, vscode.ConfigurationTarget.Workspace);
        if (config.inspect(key)?.globalValue !== undefined &&
          !same(vscode.workspace.getConfiguration().get(key), this.fileValue(raw, key))) {
          await config.update(key, this.fileValue(raw, key), vscode.ConfigurationTarget.Workspace);
        }
      }
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? "") === JSON.stringify(b ?? "");
}
