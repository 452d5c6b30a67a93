// The keys: stored in VS Code's secret storage (never in settings, which travel with the
// workspace), listed in the SECRETS view, handed to an export in its environment only, and only
// where the CLI's trust model says they may go (`secrets check`).

import * as vscode from "vscode";
import { Cli, NAME } from "./cli";
import { KIND_SECRETS } from "./kindSecrets";
import { KeyRing, SecretsView } from "./secretsView";
import { SettingsFile } from "./settingsFile";
import { Property, SettingsMirror } from "./settingsMirror";
import { Tool } from "./tool";

const SECRET_NAME = /^[A-Za-z0-9._-]{1,128}$/;
const API_KEY_REF = "openlineage.apiKey.secretRef";
const SEND_THERE = "Send it there";

/** Asks whether the key `ref` may go to `origin`, which its owner has not approved for it. */
export type Ask = (ref: string, origin: string) => Promise<boolean>;

export class Keys implements vscode.Disposable {
  /** The keys' names and the servers each is approved for: the user's, never the workspace's. */
  readonly ring: KeyRing;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly cli: Cli,
    private readonly settings: SettingsFile | undefined,
    private readonly mirror: SettingsMirror | undefined,
    private readonly properties: Record<string, Property>,
  ) {
    this.ring = new KeyRing(context);
    const view = new SecretsView(this.ring, {
      inUse: () => {
        const values = settings?.read() ?? {};
        return new Map(KIND_SECRETS.flatMap(({ setting }) => {
          const name = values[setting];
          return typeof name === "string" && name ? [[name, setting] as [string, string]] : [];
        }));
      },
      destinationOrigin: async (name) => {
        const found = cli.root && await cli.tool();
        if (!cli.root || !found) {
          return { error: "the exporter is not available" };
        }
        await mirror?.settled();
        const verdict = await cli.checkKey(found, name, this.urlInForce(), []);
        return typeof verdict === "string" ? { error: verdict } : verdict.origin;
      },
      add: () => this.store(true),
    });
    this.disposables.push(this.ring, view);
    if (settings) {  // the names the workspace uses, as its settings change
      this.disposables.push(settings.onDidChange(() => view.refresh()));
    }
  }

  /** openlineage.url as the export will use it: settings.json's, else the default. */
  private urlInForce(): string {
    const url = this.settings?.read()["openlineage.url"];
    return typeof url === "string" && url ? url :
      String(this.properties["openlineage.url"]?.default ?? "");
  }

  /** The export's environment, with the key when it may go where the settings send events;
   * undefined when it may not (said). The key goes only where the CLI's trust model says it
   * may (`secrets check`: plain http only to this machine, and only to a server its owner
   * approved); the extension then vouches for the url (a key from the environment goes only
   * to a url from it). A workspace that names a server not approved for the key: `ask`
   * says whether its owner sends it there (and approves it for that server from now on). */
  async environment(found: Tool, base: NodeJS.ProcessEnv, dryRun: boolean, ask: Ask):
    Promise<NodeJS.ProcessEnv | undefined> {
    const values = this.settings?.read() ?? {};
    const env = { ...base };
    if (dryRun) {
      return env;  // a dry run sends nothing: it needs no key
    }
    // The keys the settings name, from VS Code's secret storage (the only way a key reaches
    // the exporter: never an argument, a file or a setting).
    for (const { setting, env: variable } of KIND_SECRETS) {
      const name = values[setting];
      if (typeof name === "string" && SECRET_NAME.test(name)) {
        const value = await this.context.secrets.get(name);
        if (value) {
          env[variable] = value;
        }
      }
    }
    const apiKey = KIND_SECRETS.find((secret) => secret.setting === API_KEY_REF);
    if (!apiKey || env[apiKey.env] === undefined) {
      return env;
    }
    const url = this.urlInForce();
    const ref = String(values[API_KEY_REF]);
    const verdict = await this.cli.checkKey(found, ref, url, this.ring.approved(ref));
    if (typeof verdict === "string" || (!verdict.may && verdict.reason !== "not approved")) {
      const why = typeof verdict === "string" ? verdict : verdict.message;
      this.cli.log(`export not started: ${why}`);
      void vscode.window.showErrorMessage(`${NAME}: ${why}`);
      return undefined;
    }
    if (!verdict.may) {
      if (!await ask(ref, verdict.origin)) {
        this.cli.log(`export not started: the key '${ref}' is not approved for ${verdict.origin}`);
        return undefined;
      }
      await this.ring.approve(ref, verdict.origin);
    }
    env.OPENLINEAGE_URL = url;
    return env;
  }

  /** A person's export asks, and waits for the answer. */
  readonly askModal: Ask = async (ref, origin) =>
    await vscode.window.showWarningMessage(question(ref, origin), { modal: true },
      SEND_THERE) === SEND_THERE;

  /** Nobody asked for this export just now (auto-export): a notice, not a modal; its answer
   * approves the server and calls `then`. */
  askLater(then: () => Promise<void>): Ask {
    return async (ref, origin) => {
      void vscode.window.showWarningMessage(question(ref, origin), SEND_THERE)
        .then(async (choice) => {
          if (choice === SEND_THERE) {
            await this.ring.approve(ref, origin);
            await then();
          }
        });
      return false;
    };
  }

  /** OpenLineage: Store API Key; `askName`: the SECRETS view's +, which asks for the name even
   * when the workspace names one (offered first). */
  async store(askName = false): Promise<void> {
    const folder = this.cli.root;
    const mirror = this.mirror;
    if (!folder || !mirror) {
      void vscode.window.showErrorMessage(`${NAME}: open a workspace folder (the one holding ` +
        ".workspace/) first");
      return;
    }
    await mirror.settled();
    const named = mirror.readFile()[API_KEY_REF];
    let name: unknown = named;
    if (askName || typeof name !== "string" || !name) {
      name = await vscode.window.showInputBox({
        title: "OpenLineage: Store API Key",
        prompt: "A name for the key, saying what it is for (e.g. marquez-prod): " +
          `${API_KEY_REF} will hold this name, never the key`,
        value: typeof named === "string" ? named : undefined,
        ignoreFocusOut: true,
        validateInput: (text) => SECRET_NAME.test(text) ? undefined :
          "1 to 128 letters, digits, '.', '_' or '-'",
      });
      if (!name) {
        return;
      }
    }
    if (typeof named !== "string" || !named) {
      try {
        await this.cli.writeSetting(API_KEY_REF, name as string);
      } catch (error) {
        void vscode.window.showErrorMessage(`${NAME}: ${error instanceof Error ? error.message : error}`);
        return;
      }
      await mirror.enqueue(() => mirror.pullFromFile());
    }
    const found = await this.cli.tool();
    const checked = found && await this.cli.checkKey(found, name as string, this.urlInForce(), []);
    const origin = checked && typeof checked !== "string" ? checked.origin : undefined;
    const key = await vscode.window.showInputBox({
      title: "OpenLineage: Store API Key",
      prompt: `The API key for '${name}', sent only to ` +
        `${origin ?? "the server in openlineage.url"} ` +
        "(kept in VS Code's secret storage; exports pass it to the exporter in its environment " +
        "only)",
      password: true,
      ignoreFocusOut: true,
      validateInput: (text) => !text ? "the key cannot be empty" :
        /[\s\x00-\x1f\x7f]/.test(text) ? "one line, without spaces" : undefined,
    });
    if (!key) {
      return;
    }
    await this.ring.store(name as string, key);
    if (origin) {
      await this.ring.approve(name as string, origin);  // the server it was stored for
    }
    this.cli.log(`API key stored in VS Code's secret storage as '${name}'` +
      (origin ? `, for ${origin}` : ""));
    void vscode.window.showInformationMessage(`${NAME}: API key stored as '${name}' in VS Code's ` +
      "secret storage; exports send it");
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }
}

function question(ref: string, origin: string): string {
  return `${NAME}: the workspace's settings send the API key '${ref}' to ${origin}, which you ` +
    "have not approved for it. Send it there, now and from now on?";
}
