// One source of truth for the settings: the workspace's .workspace/settings.json, which the CLI
// reads (and a CI job running the CLI on the same workspace reads). VS Code's settings of the
// section "OpenLineage Export" are a way to change it:
//
// - a value typed in VS Code (the Settings UI's User or Workspace tab, a settings.json of VS
//   Code) is written there by the CLI itself, `openlineage-export settings set KEY VALUE` (or
//   `settings unset KEY` for an empty value), so the CLI's checks are the ones: a value it
//   refuses is refused with its message, and the scope it was typed in goes back to what it
//   held. A box emptied (or a value removed: VS Code removes one equal to the default) unsets
//   the setting. The last value typed wins, in whichever tab: a User-tab value is written through even
//   when the folder's file holds another one (VS Code would rank that one higher and ignore
//   the typed value).
// - a value reaches the file when the person leaves what they typed it in (another tab, another
//   window), once typing has ended (SETTLE_MS without another change to it), or before an
//   export reads the file (once VS Code stored what was being typed: STORE_GRACE_MS): never a
//   half-typed one. A view being drawn (RUNS, IN FORCE) reads the file as it is: it never
//   writes what is being typed. The Settings editor stores what is being
//   typed a second after each key (so a pause inside a word reaches us as a change), and not
//   at all while keys keep coming: the quiet that ends typing must outlast a person's pause
//   plus the rest of the word.
// - nothing is written on opening a folder: .vscode/settings.json is created only by VS Code
//   when the person sets something in the Workspace tab. When .workspace/settings.json changes
//   (edited, pulled from git, `settings set` in a terminal), the values the folder's VS Code
//   settings already hold are brought in line with it, so the Workspace tab never shows a value
//   nothing uses; no other file of the user's is touched.

import * as vscode from "vscode";
import { SettingsFile } from "./settingsFile";
import * as say from "./say";

export type Property = { default: unknown; type: string };
/** Writes one setting through the CLI; resolves to the CLI's warnings about it. */
export type WriteSetting = (key: string, value: string | undefined) => Promise<string[]>;

/** How long a typed value must stay unchanged, the person still where they typed it, before
 * it is written: a person's pause inside a word (looking up a port), then the rest of it typed
 * (the Settings editor stores nothing until keys stop coming for a second), fit in it. */
export const SETTLE_MS = 10_000;

/** How long VS Code may take to store what is being typed in the Settings editor (a second
 * after the last key), and a margin. */
const STORE_GRACE_MS = 1_500;

type Scope = "global" | "workspace";
const TARGETS: Record<Scope, vscode.ConfigurationTarget> = {
  global: vscode.ConfigurationTarget.Global,
  workspace: vscode.ConfigurationTarget.Workspace,
};

/** The value of a key in each scope a person can type in. */
interface Scopes { global: unknown; workspace: unknown }

interface Typed { scope: Scope; value: unknown; before: unknown }

export class SettingsMirror implements vscode.Disposable {
  private queue: Promise<void> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];
  /** Each key's values by scope as last seen, so a change says which scope it came from (and
   * the extension's own updates, recorded here first, are not taken for a person's). */
  private readonly seen = new Map<string, Scopes>();
  /** Typed values not written yet, by key. */
  private readonly typed = new Map<string, Typed>();
  private timer: NodeJS.Timeout | undefined;
  /** The editor tab active when the last value was typed (the Settings editor, a settings.json). */
  private typedIn: string | undefined;
  /** When the last value was typed (Date.now()). */
  private lastChange = 0;

  constructor(
    private readonly settings: SettingsFile,
    private readonly properties: Record<string, Property>,
    private readonly write: WriteSetting,
    private readonly log: (line: string) => void,
  ) {
    for (const key of Object.keys(properties)) {
      this.seen.set(key, scopes(key));
    }
    this.disposables.push(vscode.workspace.onDidChangeConfiguration((event) => {
      for (const key of Object.keys(this.properties)) {
        if (event.affectsConfiguration(key)) {
          this.changed(key);
        }
      }
    }));
    this.disposables.push(vscode.window.onDidChangeWindowState((state) => {
      if (!state.focused) {
        void this.settled("the window lost the focus");  // what they typed is done
      }
    }));
    const left = () => {
      if (this.typed.size && activeTab() !== this.typedIn) {
        void this.settled("another tab");  // the person left the box they typed in
      }
    };
    this.disposables.push(vscode.window.tabGroups.onDidChangeTabs(left),
      vscode.window.tabGroups.onDidChangeTabGroups(left));
    this.disposables.push(settings.onDidChange(() => this.enqueue(() => this.pullFromFile())));
  }

  get file(): string {
    return this.settings.path;
  }

  /** What settings.json holds now ({} when it is missing or not a JSON object). */
  readFile(): Record<string, unknown> {
    return this.settings.read();
  }

  /** Typed values written now, and every write done, before anything reads the file (an
   * export, Store API Key). Not before VS Code stored what was being typed: the Settings
   * editor stores a box's value a second after its last key, so a person who types a url and
   * at once exports, or clicks elsewhere, would otherwise have its first part written (seen:
   * "http://127" of "http://127.0.0.1:43369"). While that may be so (a value came in the last
   * seconds, or the Settings editor is where the person is), the values are taken
   * STORE_GRACE_MS later. */
  settled(why = "asked for"): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const pending = Date.now() - this.lastChange < SETTLE_MS || /^\d+:Settings$/.test(activeTab());
    if (this.typed.size || pending) {
      void this.enqueue(async () => {
        if (pending) {
          await new Promise((resolve) => setTimeout(resolve, STORE_GRACE_MS));
        }
        await this.pushTyped(why);
      });
    }
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

  /** A change of `key` in VS Code: which scope's value changed, kept until typing ends. */
  private changed(key: string): void {
    const now = scopes(key);
    const before = this.seen.get(key) ?? { global: undefined, workspace: undefined };
    this.seen.set(key, now);
    const scope = (["workspace", "global"] as Scope[]).find((s) => !same(now[s], before[s]));
    if (!scope) {
      return;
    }
    // A value removed (a box emptied: VS Code removes a value equal to the default; Reset
    // Setting) is typed too: it unsets the setting, as an empty one does.
    this.typedIn = activeTab();
    this.lastChange = Date.now();
    const earlier = this.typed.get(key);
    this.typed.set(key, {
      scope, value: now[scope],
      before: earlier?.scope === scope ? earlier.before : before[scope],
    });
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.timer = setTimeout(() => void this.settled("typing ended"), SETTLE_MS);
  }

  /** settings.json <- the values typed in VS Code, through the CLI. */
  /** `why`: what said the typing is done, for the output channel. */
  private async pushTyped(why: string): Promise<void> {
    const typed = [...this.typed];
    this.typed.clear();
    for (const [key, { scope, value, before }] of typed) {
      const raw = this.readFile();
      const unset = value === undefined || value === null || value === "";
      if (unset ? raw[key] === undefined || raw[key] === null :
        same(value, this.fileValue(raw, key))) {
        await this.alignWorkspace(key, raw);
        continue;
      }
      try {
        const warnings = await this.write(key, unset ? undefined : String(value));
        this.log(`${key} ${unset ? "removed from" : "written to"} ${this.file} (typed in the ` +
          `${scope === "global" ? "User" : "Workspace"} tab; ${why})`);
        for (const warning of warnings) {
          this.log(`warning: ${warning}`);
          void say.warn(`OpenLineage Export: ${warning}`);
        }
        await this.alignWorkspace(key, this.readFile());
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        void say.error(`OpenLineage Export: ${key} was not changed: ${reason}`);
        this.log(`${key} was not changed: ${reason}`);
        // Back to what that tab held, so the Settings UI never shows a value nothing uses.
        await this.update(key, scope, before);
      }
    }
  }

  /** The folder's VS Code value of `key`, where it has one, made the value in force: so a
   * value typed in the User tab and written through is also what the Workspace tab shows. */
  private async alignWorkspace(key: string, raw: Record<string, unknown>): Promise<void> {
    const held = this.seen.get(key)?.workspace;
    if (held !== undefined && !same(held, this.fileValue(raw, key))) {
      await this.update(key, "workspace", raw[key] ?? undefined);
    }
  }

  /** VS Code's settings <- settings.json: only the values the folder's VS Code settings hold
   * already (never a new .vscode/settings.json, never the user's own settings). */
  async pullFromFile(): Promise<void> {
    const raw = this.readFile();
    for (const key of Object.keys(this.properties)) {
      if (!this.typed.has(key)) {
        await this.alignWorkspace(key, raw);
      }
    }
  }

  /** The extension's own change of a scope, recorded first so it is not taken as typed. */
  private async update(key: string, scope: Scope, value: unknown): Promise<void> {
    const now = this.seen.get(key) ?? scopes(key);
    this.seen.set(key, { ...now, [scope]: value });
    await vscode.workspace.getConfiguration().update(key, value, TARGETS[scope]);
    this.seen.set(key, scopes(key));
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.disposables.forEach((d) => d.dispose());
  }
}

/** The active editor tab, as its group and label (the Settings editor has no other handle). */
function activeTab(): string {
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  return tab ? `${tab.group.viewColumn}:${tab.label}` : "";
}

function scopes(key: string): Scopes {
  const inspected = vscode.workspace.getConfiguration().inspect(key);
  return { global: inspected?.globalValue, workspace: inspected?.workspaceValue };
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? "") === JSON.stringify(b ?? "");
}
