// The SECRETS view (the product page's "SECRETS panel"): the keys stored in VS Code's secret
// storage for exports, by name, each with the servers its owner approved it for; add, remove,
// approve for the server the workspace sends to, revoke a server. Which servers a key may go
// to is the user's (VS Code's global state), never the workspace's: a workspace's settings say
// where events go, not where a key goes.
//
// VS Code's secret storage cannot list what it holds, so the names stored through the extension
// are kept beside the approvals (names only, never a key).

import * as vscode from "vscode";
import * as say from "./say";

const KEY_ORIGINS = "openlineage.keyOrigins";
const NAMES = "openlineage.secretNames";

/** The keys' names and the servers each is approved for: the user's, in global state. */
export class KeyRing {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly context: vscode.ExtensionContext) {}

  private get origins(): Record<string, string[]> {
    return this.context.globalState.get<Record<string, string[]>>(KEY_ORIGINS, {});
  }

  /** Every name stored through the extension (or approved for a server), sorted. */
  names(): string[] {
    const stored = this.context.globalState.get<string[]>(NAMES, []);
    return [...new Set([...stored, ...Object.keys(this.origins)])].sort();
  }

  approved(name: string): string[] {
    return this.origins[name] ?? [];
  }

  async store(name: string, key: string): Promise<void> {
    await this.context.secrets.store(name, key);
    const names = this.context.globalState.get<string[]>(NAMES, []);
    if (!names.includes(name)) {
      await this.context.globalState.update(NAMES, [...names, name]);
    }
    this.changed.fire();
  }

  async remove(name: string): Promise<void> {
    await this.context.secrets.delete(name);
    await this.context.globalState.update(NAMES,
      this.context.globalState.get<string[]>(NAMES, []).filter((n) => n !== name));
    const { [name]: _gone, ...rest } = this.origins;
    await this.context.globalState.update(KEY_ORIGINS, rest);
    this.changed.fire();
  }

  async approve(name: string, origin: string): Promise<void> {
    const origins = this.approved(name);
    if (!origins.includes(origin)) {
      await this.context.globalState.update(KEY_ORIGINS,
        { ...this.origins, [name]: [...origins, origin] });
      this.changed.fire();
    }
  }

  async revoke(name: string, origin: string): Promise<void> {
    await this.context.globalState.update(KEY_ORIGINS,
      { ...this.origins, [name]: this.approved(name).filter((o) => o !== origin) });
    this.changed.fire();
  }

  async has(name: string): Promise<boolean> {
    return (await this.context.secrets.get(name)) !== undefined;
  }

  /** The keys stored here, by name, with their approved servers (never a key): what the CLI
   * is told of them (OPENLINEAGE_EXPORT_HOST_SECRETS), so that its hints and its verdicts
   * are about these keys. */
  async held(): Promise<Record<string, { origins: string[]; value?: string }>> {
    const held: Record<string, { origins: string[]; value?: string }> = {};
    for (const name of this.names()) {
      if (await this.has(name)) {
        held[name] = { origins: this.approved(name) };
      }
    }
    return held;
  }

  /** The key called `name`, if it is stored here. */
  get(name: string): Thenable<string | undefined> {
    return this.context.secrets.get(name);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

/** What the view needs of the rest of the extension. */
export interface SecretsHost {
  /** The names the settings in force use, with the setting naming each (as last read: never
   * waited for). */
  inUse(): Map<string, string>;
  /** The origin (as the CLI spells it) of the server the workspace sends to, or why not. */
  destinationOrigin(name: string): Promise<string | { error: string }>;
  /** Store a key, as OpenLineage: Store API Key does (its name asked first). */
  add(): Promise<void>;
}

type Node =
  | { kind: "secret"; name: string; stored: boolean; usedBy?: string }
  | { kind: "origin"; name: string; origin: string };

export class SecretsView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly ring: KeyRing, private readonly host: SecretsHost) {
    this.disposables.push(
      vscode.window.registerTreeDataProvider("openlineage.secrets", this),
      ring.onDidChange(() => this.refresh()),
      vscode.commands.registerCommand("openlineage.secrets.add", () => host.add()),
      vscode.commands.registerCommand("openlineage.secrets.refresh", () => this.refresh()),
      vscode.commands.registerCommand("openlineage.secrets.remove", (node?: Node) => this.remove(node)),
      vscode.commands.registerCommand("openlineage.secrets.approve", (node?: Node) => this.approve(node)),
      vscode.commands.registerCommand("openlineage.secrets.revoke", (node?: Node) => this.revoke(node)),
    );
  }

  refresh(): void {
    this.changed.fire();
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node?.kind === "secret") {
      return this.ring.approved(node.name).map((origin) => ({ kind: "origin", name: node.name, origin }));
    }
    if (node) {
      return [];
    }
    const used = this.host.inUse();
    const names = [...new Set([...this.ring.names(), ...used.keys()])].sort();
    return Promise.all(names.map(async (name) => ({
      kind: "secret" as const, name, stored: await this.ring.has(name), usedBy: used.get(name),
    })));
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "origin") {
      const item = say.treeItem(node.origin, vscode.TreeItemCollapsibleState.None, {
        description: "approved",
        tooltip: `Exports may send the key '${node.name}' to ${node.origin}.`,
      });
      item.iconPath = new vscode.ThemeIcon("globe");
      item.contextValue = "origin";
      return item;
    }
    const approved = this.ring.approved(node.name);
    const item = say.treeItem(node.name, approved.length
      ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None, {
        description: [
          node.stored ? "stored" : "not stored",
          node.usedBy ? `used by ${node.usedBy}` : "",
          approved.length ? "" : "approved for no server yet",
        ].filter(Boolean).join(" · "),
        tooltip: node.stored
          ? `The key '${node.name}' is in VS Code's secret storage; it goes only to the ` +
            "servers listed under it (an export to another one asks first)."
          : `No key named '${node.name}' is stored: add it (+) before exporting.`,
      });
    // A key with servers is shown open on them: its id changes when its first server comes,
    // or VS Code would keep the state it drew it with (none to open) and show it closed.
    item.id = `${node.name}\u0000${approved.length ? "servers" : "none"}`;
    item.iconPath = new vscode.ThemeIcon(node.stored ? "key" : "warning");
    item.contextValue = node.stored ? "secret" : "missingSecret";
    return item;
  }

  private async remove(node?: Node): Promise<void> {
    if (node?.kind !== "secret") {
      return;
    }
    const sure = "Remove";
    if (await say.ask(`OpenLineage Export: remove the key '${node.name}' from VS Code's ` +
      "secret storage, and every server approved for it?", sure) !== sure) {
      return;
    }
    await this.ring.remove(node.name);
    void say.info(`OpenLineage Export: the key '${node.name}' was removed`);
  }

  private async approve(node?: Node): Promise<void> {
    if (node?.kind !== "secret") {
      return;
    }
    const origin = await this.host.destinationOrigin(node.name);
    if (typeof origin !== "string") {
      void say.error(`OpenLineage Export: ${origin.error}`);
      return;
    }
    const send = "Approve";
    if (await say.ask(`OpenLineage Export: let exports send the key '${node.name}' to ` +
      `${origin}?`, send) === send) {
      await this.ring.approve(node.name, origin);
    }
  }

  private async revoke(node?: Node): Promise<void> {
    if (node?.kind === "origin") {
      await this.ring.revoke(node.name, node.origin);
    }
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
    this.changed.dispose();
  }
}
