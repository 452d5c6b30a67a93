// The IN FORCE view: where the events go, in the CLI's words: the transport, its address (the
// url), the endpoint, the namespace and the secret's name in force, each with where it comes
// from (the workspace's .workspace/settings.json, the environment VS Code was started in, the
// workspace's name in graph.json, a default). VS Code's Settings editor shows VS Code's own
// values (the User and Workspace tabs), which are not these: a value the workspace's file
// holds, or the environment gives, shows nowhere else without a terminal.

import * as vscode from "vscode";
import * as say from "./say";
import { InForce } from "./cli";
import { KIND_ADDRESSES, KIND_SECRETS } from "./kindSecrets";

/** What the view needs of the rest of the extension. */
export interface InForceHost {
  /** `settings list --json`: each setting's value in force and its source. */
  inForce(): Promise<Record<string, InForce> | { error: string }>;
}

interface Row { key: string; value: unknown; source: string }

export class InForceView implements vscode.TreeDataProvider<Row>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly tree: vscode.TreeView<Row>;
  /** The last answer; undefined until the first. */
  private last: Record<string, InForce> | { error: string } | undefined;
  private reading = false;
  private again = false;

  constructor(private readonly host: InForceHost) {
    this.tree = vscode.window.createTreeView("openlineage.inForce", { treeDataProvider: this });
  }

  /** Read again (the settings changed: the file, the editor's settings); the rows shown stay
   * until the answer comes. */
  refresh(): void {
    this.read();
  }

  /** The CLI asked in the background: the tree is drawn at once, never waiting for the tool
   * (its first install takes a minute), so that VS Code does not give it the keyboard's focus
   * late, when a person already types elsewhere (a view opened is focused once drawn). */
  private read(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    void this.host.inForce().then((answer) => {
      this.last = answer;
    }, (failure: unknown) => {
      this.last = { error: String(failure) };
    }).finally(() => {
      this.reading = false;
      this.changed.fire();
      if (this.again) {
        this.again = false;
        this.read();
      }
    });
  }

  async getChildren(row?: Row): Promise<Row[]> {
    if (row) {
      return [];
    }
    const inForce = this.last;
    if (inForce === undefined) {
      say.viewSays(this.tree, { message: "Reading the settings in force..." });
      this.read();
      return [];
    }
    if ("error" in inForce) {
      say.viewSays(this.tree, { message: `Cannot read the settings: ${inForce.error}` });
      return [];
    }
    say.viewSays(this.tree, { message: undefined });
    const transport = String(inForce["openlineage.transport"]?.value ?? "http");
    const secret = KIND_SECRETS.find((s) => s.kind === transport);
    const keys = ["openlineage.transport", KIND_ADDRESSES[transport],
      ...(transport === "http" ? ["openlineage.endpoint"] : []), "openlineage.namespace",
      ...(secret ? [secret.setting] : [])].filter((key): key is string => !!key);
    return keys.filter((key) => inForce[key]).map((key) => ({ key, ...inForce[key] }));
  }

  getTreeItem(row: Row): vscode.TreeItem {
    const shown = row.value === null || row.value === undefined || row.value === "" ?
      "not set" : String(row.value);
    // The CLI's "settings.json" is the workspace's: said so, beside VS Code's own.
    const source = row.source === "settings.json" ? ".workspace/settings.json" : row.source;
    const item = say.treeItem(row.key.replace(/^openlineage\./, ""),
      vscode.TreeItemCollapsibleState.None, {
        description: `${shown} · ${source}`,
        tooltip: `${row.key} = ${shown}\nfrom: ${source}\n\nClick: the setting in ` +
          "Settings (what you type there is written to .workspace/settings.json)",
        accessible: `${row.key}: ${shown}, from ${source}`,
      });
    item.iconPath = new vscode.ThemeIcon(row.source === "default" ? "circle-outline" :
      "circle-filled");
    item.command = { command: "workbench.action.openSettings", title: "Open in Settings",
      arguments: [row.key] };
    return item;
  }

  dispose(): void {
    this.tree.dispose();
    this.changed.dispose();
  }
}
