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

  /** What settings.json holds now ({} when it is missing, not a JSON object, or not a file of
   * the workspace: a link, or a file larger than the CLI reads). What decides anything (the
   * values in force, where a key goes) is the CLI's reading, `settings list`; this one only
   * tells a value typed from the one already there. */
  read(): Record<string, unknown> {
    const text = readInside(this.root, [".workspace", "settings.json"]);
    try {
      const parsed: unknown = text === undefined ? {} : JSON.parse(text);
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

const MAX_BYTES = 1 << 20;

/** The text of `root/parts...`, walked one name at a time without following a link, a regular
 * file of at most MAX_BYTES opened without blocking; undefined for anything else. */
function readInside(root: string, parts: string[]): string | undefined {
  let at = root;
  try {
    for (const [index, part] of parts.entries()) {
      at = path.join(at, part);
      const stat = fs.lstatSync(at);
      const last = index === parts.length - 1;
      if (stat.isSymbolicLink() || (last ? !stat.isFile() : !stat.isDirectory())) {
        return undefined;
      }
    }
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    const fd = fs.openSync(at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      const stat = fs.fstatSync(fd);
      return stat.isFile() && stat.size <= MAX_BYTES ? fs.readFileSync(fd, "utf8") : undefined;
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return undefined;
  }
}
